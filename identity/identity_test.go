package identity_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
)

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	id, secret, hash := identity.NewToken()
	if !signoff.ValidID(signoff.PrefixToken, id) || !strings.HasPrefix(secret, identity.TokenPrefix) {
		t.Fatalf("NewToken = %q, %q", id, secret)
	}
	got, ok := identity.ParseToken(secret)
	if !ok || got != id {
		t.Fatalf("ParseToken = %q, %v; want %q", got, ok, id)
	}
	if !identity.SecretMatches(secret, hash) {
		t.Fatal("secret does not match its own hash")
	}
	_, other, _ := identity.NewToken()
	if identity.SecretMatches(other, hash) {
		t.Fatal("another secret matches")
	}
	if strings.Contains(string(hash), secret) || len(hash) != 32 {
		t.Fatal("hash must be a SHA-256, not the secret")
	}
}

func TestParseTokenRejects(t *testing.T) {
	t.Parallel()
	_, good, _ := identity.NewToken()
	for _, s := range []string{"", "so_", "Bearer " + good, good[:len(good)-1], good + "x", "xx" + good[2:],
		"so_../../etc/passwd_" + strings.Repeat("a", 32), "so_" + strings.Repeat("z", 26) + "_" + strings.Repeat("a", 32)} {
		if _, ok := identity.ParseToken(s); ok {
			t.Errorf("ParseToken(%q) accepted", s)
		}
	}
}

// TestNoAgentDecides proves SPEC principle 4 at the policy layer: no agent
// role may attempt a decision, and only the people who run the desk may.
func TestNoAgentDecides(t *testing.T) {
	t.Parallel()
	for _, r := range append(signoff.AllRoles(), signoff.RoleSystem) {
		want := r == signoff.RoleOwner || r == signoff.RoleOperator
		for _, op := range []identity.Operation{identity.OpDecisionDecide, identity.OpApprove, identity.OpMerge, identity.OpKeyWrite, identity.OpHarnessReview,
			identity.OpChangeRequest, identity.OpChangeExecute} {
			if got := identity.Can(r, op); got != want {
				t.Errorf("Can(%s, %s) = %v, want %v", r, op, got, want)
			}
		}
	}
}

// TestNoOneSetsFlags: no operation lets an API caller change a flag's
// value, and declaring flags or managing their keys is the owner's alone.
func TestNoOneSetsFlags(t *testing.T) {
	t.Parallel()
	for _, op := range identity.Operations() {
		// The emergency bypass is the policy's to allow; the desk refuses
		// every role the policy does not name (changedesk.Bypass).
		if strings.HasPrefix(string(op), "flag.") && op != identity.OpFlagRead && op != identity.OpFlagDeclare && op != identity.OpFlagBypass {
			t.Errorf("operation %s: the only flag operations are read and declare; values change through the gate", op)
		}
	}
	for _, r := range append(signoff.AllRoles(), signoff.RoleSystem) {
		for _, op := range []identity.Operation{identity.OpFlagDeclare, identity.OpFlagKeyWrite} {
			if got := identity.Can(r, op); got != (r == signoff.RoleOwner) {
				t.Errorf("Can(%s, %s) = %v", r, op, got)
			}
		}
		if got := identity.Can(r, identity.OpFlagRead); got != (r != signoff.RoleReporter && r != signoff.RoleSystem) {
			t.Errorf("Can(%s, %s) = %v", r, identity.OpFlagRead, got)
		}
	}
}

// TestPolicy lists, per operation, exactly the roles that may attempt it.
// It is written out by hand so that a change to the policy is a deliberate
// change to this table too.
func TestPolicy(t *testing.T) {
	t.Parallel()
	agents := "concierge triager reproducer fixer reviewer planner recorder"
	want := map[identity.Operation]string{
		identity.OpWorkspaceRead:   "owner operator viewer",
		identity.OpWorkspaceUpdate: "owner",
		identity.OpProjectRead:     "owner operator viewer " + agents,
		identity.OpProjectWrite:    "owner",
		identity.OpActorRead:       "owner operator",
		identity.OpActorWrite:      "owner",
		identity.OpTokenWrite:      "owner",
		identity.OpCaseCreate:      "owner operator concierge",
		identity.OpCaseList:        "owner operator viewer " + agents,
		identity.OpCaseRead:        "reporter owner operator viewer " + agents,
		identity.OpCaseTransition:  "reporter owner operator " + agents,
		identity.OpLedgerRead:      "reporter owner operator viewer " + agents,
		identity.OpTaskCreate:      "owner operator",
		identity.OpTaskRead:        "owner operator viewer " + agents,
		identity.OpTaskSubmit:      agents,
		identity.OpTaskClose:       "owner operator " + agents,
		identity.OpCallRead:        "owner operator viewer " + agents,
		identity.OpMessagePost:     "owner operator " + agents,
		identity.OpMessageRead:     "owner operator viewer " + agents,
		identity.OpAddressingRead:  "owner operator " + agents,
		identity.OpAddressingWrite: "owner operator",
		identity.OpDecisionRead:    "owner operator viewer " + agents,
		identity.OpDecisionDecide:  "owner operator",
		identity.OpAgentRead:       "owner operator viewer",
		identity.OpHeartbeat:       agents,
		identity.OpRolesRead:       "owner operator viewer",
		identity.OpRolesWrite:      "owner",

		identity.OpProjectDataRead:  "owner operator viewer " + agents,
		identity.OpTicketWrite:      "owner operator " + agents,
		identity.OpProjectDataWrite: "owner operator",

		identity.OpRepoRead:        "owner operator viewer " + agents,
		identity.OpRepoWrite:       "owner",
		identity.OpLoopRead:        "owner operator viewer " + agents,
		identity.OpLoopStart:       "owner operator",
		identity.OpCandidateSubmit: "owner operator",
		identity.OpApprovalRead:    "owner operator",
		identity.OpApprove:         "owner operator",
		identity.OpMerge:           "owner operator",
		identity.OpHarnessRead:     "owner operator viewer",
		identity.OpHarnessReview:   "owner operator",
		identity.OpKeyRead:         "owner operator",
		identity.OpKeyWrite:        "owner operator",

		identity.OpFlagRead:     "owner operator viewer " + agents,
		identity.OpFlagDeclare:  "owner",
		identity.OpFlagKeyWrite: "owner",

		identity.OpChangeRead:    "owner operator viewer " + agents,
		identity.OpChangeRequest: "owner operator",
		identity.OpChangePlan:    "owner operator planner",
		identity.OpChangeExecute: "owner operator",
		identity.OpPolicyRead:    "owner operator viewer " + agents,
		identity.OpPolicyWrite:   "owner",
		identity.OpFlagBypass:    "owner operator",

		identity.OpChannelRead:   "owner operator viewer",
		identity.OpChannelWrite:  "owner",
		identity.OpOutboxRead:    "owner operator viewer",
		identity.OpOutboxRetry:   "owner operator",
		identity.OpCardRead:      "owner operator viewer",
		identity.OpChatUserWrite: "owner",
	}
	for _, op := range identity.Operations() {
		if _, ok := want[op]; !ok {
			t.Errorf("operation %s is in the policy but not in this table", op)
		}
	}
	roles := append(signoff.AllRoles(), signoff.RoleSystem)
	for op, allowed := range want {
		set := map[string]bool{}
		for _, r := range strings.Fields(allowed) {
			set[r] = true
		}
		for _, r := range roles {
			if got := identity.Can(r, op); got != set[string(r)] {
				t.Errorf("Can(%s, %s) = %v, want %v", r, op, got, set[string(r)])
			}
			err := identity.Authorize(r, op)
			if (err == nil) != set[string(r)] || (err != nil && signoff.ErrorCode(err) != signoff.EFORBIDDEN) {
				t.Errorf("Authorize(%s, %s) = %v", r, op, err)
			}
		}
	}
}
