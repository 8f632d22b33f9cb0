package change_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
)

// validGate is an execution the gate lets through: two distinct group
// members approved the plan's digest under the current policy, neither is
// the opener or the proposer, nothing expired, drifted or was used.
func validGate(tb testing.TB) change.GateInput {
	tb.Helper()
	pol := mustPolicy(tb, policyYAML)
	plan := basePlan()
	digest, err := change.PlanDigest(plan)
	if err != nil {
		tb.Fatal(err)
	}
	pd := pol.Digest()
	apv := func(n int, who string) change.GateApproval {
		return change.GateApproval{ID: id("apv", n), Approver: who, Decision: change.DecisionApprove,
			SignatureValid: true, KeyRegistered: true, ExpiresAt: now.Add(time.Hour),
			SubjectDigest: digest, PolicyDigest: pd}
	}
	return change.GateInput{
		CaseID: id("case", 1), PlanID: id("plan", 1),
		Plan: plan, ApprovedDigest: digest,
		Approvals: []change.GateApproval{apv(1, approver1), apv(2, approver2)},
		Quorum:    pol.Quorum(),
		Proposer:  proposer, Opener: opener,
		PolicyDigest: pd, ApprovedPolicyDigest: pd,
		LiveBeforeState: plan.BeforeStateDigest,
		TargetAllowed:   pol.AllowsNow(plan.Target, now) == nil,
		LockedTarget:    plan.Target,
		Now:             now,
	}
}

type gateRow struct {
	name    string
	mod     func(*change.GateInput)
	check   string // the failed check, "" for a pass
	detail  string
	drifted bool
}

// gateFailures has at least one row per check, each breaking that check
// alone.
var gateFailures = []gateRow{
	{"pre-approved rollback with approvals", func(in *change.GateInput) { in.Preapproved = true }, change.CheckIDFormat, "consumes no approvals", false},
	{"pre-approved rollback, plan edited", func(in *change.GateInput) {
		in.Preapproved, in.Approvals = true, nil
		in.Plan.Params = json.RawMessage(`{"value":true}`)
	}, change.CheckPlanDigest, "changed after approval", false},
	{"case id malformed", func(in *change.GateInput) { in.CaseID = "case_1" }, change.CheckIDFormat, "invalid case id", false},
	{"case id of another kind", func(in *change.GateInput) { in.CaseID = id("prj", 1) }, change.CheckIDFormat, "invalid case id", false},
	{"plan id missing", func(in *change.GateInput) { in.PlanID = "" }, change.CheckIDFormat, "invalid plan id", false},
	{"plan id with a path", func(in *change.GateInput) { in.PlanID = "plan_../../etc" }, change.CheckIDFormat, "invalid plan id", false},
	{"approval id malformed", func(in *change.GateInput) { in.Approvals[1].ID = "apv_x" }, change.CheckIDFormat, "invalid approval id", false},
	{"approver id malformed", func(in *change.GateInput) { in.Approvals[0].Approver = "alice" }, change.CheckIDFormat, "invalid approver id", false},
	{"decision unknown", func(in *change.GateInput) { in.Approvals[0].Decision = "lgtm" }, change.CheckIDFormat, "neither approve nor reject", false},

	{"signature does not verify", func(in *change.GateInput) { in.Approvals[1].SignatureValid = false }, change.CheckSignature, "approval " + id("apv", 2) + ": the signature does not verify", false},
	{"key not registered", func(in *change.GateInput) { in.Approvals[0].KeyRegistered = false }, change.CheckSignature, "not registered to " + approver1, false},

	{"approver outside the group", func(in *change.GateInput) { in.Approvals[1].Approver = id("act", 7) }, change.CheckApprover, "not in the policy's approvers group", false},
	{"self-approval", func(in *change.GateInput) { in.Opener = approver2 }, change.CheckApprover, "no self-approval", false},
	{"the proposer approves", func(in *change.GateInput) { in.Proposer = approver1 }, change.CheckApprover, "the proposer cannot approve", false},
	{"empty group", func(in *change.GateInput) { in.Quorum.Group = nil }, change.CheckApprover, "not in the policy's approvers group", false},

	{"one approval of two", func(in *change.GateInput) { in.Approvals = in.Approvals[:1] }, change.CheckQuorum, "1 distinct approvers of the 2 required", false},
	{"no approvals", func(in *change.GateInput) { in.Approvals = nil }, change.CheckQuorum, "0 distinct approvers", false},
	{"the same approver twice counts once", func(in *change.GateInput) {
		in.Approvals[1].Approver = approver1
	}, change.CheckQuorum, "1 distinct approvers of the 2 required", false},
	{"a rejection vetoes", func(in *change.GateInput) {
		r := in.Approvals[0]
		r.ID, r.Approver, r.Decision = id("apv", 3), approver3, change.DecisionReject
		in.Approvals = append(in.Approvals, r)
	}, change.CheckQuorum, "vetoed: " + approver3 + " rejected", false},
	{"a rejection vetoes a reached quorum of one", func(in *change.GateInput) {
		in.Quorum.Required = 1
		in.Approvals[1].Decision = change.DecisionReject
	}, change.CheckQuorum, "vetoed", false},
	{"a quorum of zero", func(in *change.GateInput) { in.Quorum.Required = 0 }, change.CheckQuorum, "at least one", false},

	{"approval expired", func(in *change.GateInput) { in.Approvals[1].ExpiresAt = now.Add(-time.Minute) }, change.CheckExpired, "approval " + id("apv", 2) + " expired", false},
	{"approval expires exactly now", func(in *change.GateInput) { in.Approvals[0].ExpiresAt = now }, change.CheckExpired, "expired", false},
	{"approval without expiry", func(in *change.GateInput) { in.Approvals[0].ExpiresAt = time.Time{} }, change.CheckExpired, "expired", false},
	{"plan expired", func(in *change.GateInput) {
		in.Now = in.Plan.ExpiresAt
		for i := range in.Approvals {
			in.Approvals[i].ExpiresAt = in.Now.Add(time.Hour)
		}
	}, change.CheckExpired, "the plan expired", false},
	{"no time given", func(in *change.GateInput) { in.Now = time.Time{} }, change.CheckExpired, "no time given", false},

	{"approval consumed", func(in *change.GateInput) { in.Approvals[1].Consumed = true }, change.CheckConsumed, "approval " + id("apv", 2) + " has already been consumed", false},

	{"plan edited after approval", func(in *change.GateInput) { in.Plan.Params = json.RawMessage(`{"value":true}`) }, change.CheckPlanDigest, "changed after approval", false},
	{"health check edited after approval", func(in *change.GateInput) { in.Plan.HealthCheck.ExpectStatus = 500 }, change.CheckPlanDigest, "changed after approval", false},
	{"plan that cannot be encoded", func(in *change.GateInput) { in.Plan.Params = json.RawMessage(`{"a":1,"a":2}`) }, change.CheckPlanDigest, "cannot be encoded", false},
	{"no approved digest", func(in *change.GateInput) { in.ApprovedDigest = "" }, change.CheckPlanDigest, "(none)", false},
	{"an approval of another subject", func(in *change.GateInput) { in.Approvals[1].SubjectDigest = sha("older plan") }, change.CheckPlanDigest, "approval " + id("apv", 2) + " is for", false},

	{"policy changed since approval", func(in *change.GateInput) { in.PolicyDigest = sha("new policy") }, change.CheckPolicyDigest, "approved under", false},
	{"an approval under another policy", func(in *change.GateInput) { in.Approvals[0].PolicyDigest = sha("old policy") }, change.CheckPolicyDigest, "made under policy", false},
	{"no policy digest at all", func(in *change.GateInput) {
		in.PolicyDigest, in.ApprovedPolicyDigest = "", ""
		for i := range in.Approvals {
			in.Approvals[i].PolicyDigest = ""
		}
	}, change.CheckPolicyDigest, "no current policy digest", false},

	{"drift", func(in *change.GateInput) { in.LiveBeforeState = sha("checkout_v2_new_payment_flow=false v8") }, change.CheckBeforeState, "drifted", true},
	{"live state not read", func(in *change.GateInput) { in.LiveBeforeState = "" }, change.CheckBeforeState, "was not read", false},

	{"target not allowed now", func(in *change.GateInput) { in.TargetAllowed = false }, change.CheckTargetAllowed, "does not allow flag:prod/checkout_v2_new_payment_flow now", false},

	{"lock not held", func(in *change.GateInput) { in.LockedTarget = "" }, change.CheckLock, "lock for flag:prod/checkout_v2_new_payment_flow is not held", false},
	{"lock of another target", func(in *change.GateInput) { in.LockedTarget = "flag:prod/other" }, change.CheckLock, "not held", false},
}

var gatePasses = []gateRow{
	{"valid", func(*change.GateInput) {}, "", "", false},
	{"pre-approved rollback without approvals", func(in *change.GateInput) {
		in.Preapproved, in.Approvals = true, nil
	}, "", "", false},
	{"more approvals than required", func(in *change.GateInput) {
		a := in.Approvals[0]
		a.ID, a.Approver = id("apv", 3), approver3
		in.Approvals = append(in.Approvals, a)
	}, "", "", false},
	{"the opener approves when the policy allows", func(in *change.GateInput) {
		in.Opener, in.Quorum.NoSelfApproval = approver1, false
	}, "", "", false},
	{"the proposer approves when the policy allows", func(in *change.GateInput) {
		in.Proposer, in.Quorum.ProposerCannotApprove = approver1, false
	}, "", "", false},
	{"an approval expiring a second later", func(in *change.GateInput) { in.Approvals[0].ExpiresAt = now.Add(time.Second) }, "", "", false},
	{"the plan re-encoded the same", func(in *change.GateInput) { in.Plan.Params = json.RawMessage(` { "value" : false } `) }, "", "", false},
}

func TestCheck(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, tt := range append(slices.Clone(gatePasses), gateFailures...) {
		covered[tt.check] = true
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := validGate(t)
			tt.mod(&in)
			assertGate(t, change.Check(in), tt)
		})
	}
	for _, c := range change.GateChecks {
		if !covered[c] {
			t.Errorf("no row fails check %s", c)
		}
	}
}

func assertGate(t *testing.T, err error, tt gateRow) {
	t.Helper()
	if tt.check == "" {
		if err != nil {
			t.Fatalf("Check = %v, want nil", err)
		}
		return
	}
	var ge *change.GateError
	if !errors.As(err, &ge) {
		t.Fatalf("Check = %v, want a *GateError", err)
	}
	if ge.Check != tt.check || ge.Drifted != tt.drifted || !strings.Contains(ge.Detail, tt.detail) {
		t.Fatalf("Check = %+v; want check %s, drifted %v, detail containing %q", ge, tt.check, tt.drifted, tt.detail)
	}
	wantCode := map[string]string{
		change.CheckIDFormat: signoff.EINVALID, change.CheckSignature: signoff.EFORBIDDEN,
		change.CheckApprover: signoff.EFORBIDDEN, change.CheckQuorum: signoff.EFORBIDDEN,
		change.CheckExpired: signoff.ECONFLICT, change.CheckConsumed: signoff.ECONFLICT,
		change.CheckPlanDigest: signoff.ECONFLICT, change.CheckPolicyDigest: signoff.ECONFLICT,
		change.CheckBeforeState: signoff.ECONFLICT, change.CheckTargetAllowed: signoff.EFORBIDDEN,
		change.CheckLock: signoff.ECONFLICT,
	}[tt.check]
	if got := signoff.ErrorCode(err); got != wantCode || ge.Code() != wantCode {
		t.Fatalf("code %s (Code() %s), want %s", got, ge.Code(), wantCode)
	}
	if msg := signoff.ErrorMessage(err); !strings.Contains(msg, tt.check) || !strings.Contains(msg, tt.detail) {
		t.Fatalf("caller-safe message %q does not name the check and detail", msg)
	}
}

// TestCheckPrecedence breaks two or more checks at once: the refusal
// names the earliest in GateChecks order.
func TestCheckPrecedence(t *testing.T) {
	t.Parallel()
	find := func(name string) func(*change.GateInput) {
		for _, r := range gateFailures {
			if r.name == name {
				return r.mod
			}
		}
		panic("no row " + name)
	}
	tests := []struct {
		name    string
		rows    []string
		check   string
		drifted bool
	}{
		{"bad id beats a forged signature", []string{"signature does not verify", "plan id missing"}, change.CheckIDFormat, false},
		{"a forged signature beats an outsider", []string{"approver outside the group", "signature does not verify"}, change.CheckSignature, false},
		{"an outsider beats a missing quorum", []string{"one approval of two", "the proposer approves"}, change.CheckApprover, false},
		{"a veto beats expiry", []string{"approval expired", "a rejection vetoes"}, change.CheckQuorum, false},
		{"expiry beats consumption", []string{"approval consumed", "approval expired"}, change.CheckExpired, false},
		{"consumption beats an edited plan", []string{"plan edited after approval", "approval consumed"}, change.CheckConsumed, false},
		{"an edited plan beats a changed policy", []string{"policy changed since approval", "plan edited after approval"}, change.CheckPlanDigest, false},
		{"a changed policy beats drift", []string{"drift", "policy changed since approval"}, change.CheckPolicyDigest, false},
		{"drift beats a disallowed target", []string{"target not allowed now", "drift"}, change.CheckBeforeState, true},
		{"a disallowed target beats a missing lock", []string{"lock not held", "target not allowed now"}, change.CheckTargetAllowed, false},
		{"everything broken names the id", []string{"lock not held", "target not allowed now", "drift", "policy changed since approval",
			"plan edited after approval", "approval consumed", "approval expired", "one approval of two", "self-approval",
			"key not registered", "case id malformed"}, change.CheckIDFormat, false},
		{"everything but ids broken names the signature", []string{"lock not held", "drift", "approval consumed", "key not registered"}, change.CheckSignature, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := validGate(t)
			for _, r := range tt.rows {
				find(r)(&in)
			}
			var ge *change.GateError
			if err := change.Check(in); !errors.As(err, &ge) || ge.Check != tt.check || ge.Drifted != tt.drifted {
				t.Fatalf("Check = %v; want check %s (drifted %v)", err, tt.check, tt.drifted)
			}
		})
	}
}

// TestCheckDoesNotMutate: the gate reads its input only.
func TestCheckDoesNotMutate(t *testing.T) {
	t.Parallel()
	in := validGate(t)
	approvals := slices.Clone(in.Approvals)
	if err := change.Check(in); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(approvals, in.Approvals, func(a, b change.GateApproval) bool { return a == b }) {
		t.Fatal("Check changed the approvals")
	}
}

// TestDecisionsMatchApproval: the gate reads the decisions package
// approval signs.
func TestDecisionsMatchApproval(t *testing.T) {
	t.Parallel()
	if change.DecisionApprove != approval.Approve || change.DecisionReject != approval.Reject {
		t.Fatal("decision strings differ from package approval")
	}
}

func TestGateErrorUnknownCheck(t *testing.T) {
	t.Parallel()
	if got := (&change.GateError{Check: "nope"}).Code(); got != signoff.EINTERNAL {
		t.Fatalf("Code() = %s, want %s", got, signoff.EINTERNAL)
	}
}

// BenchmarkGateCheck measures one full gate decision that passes, the
// plan digest recomputation included; the actuator and storage are not
// part of it.
func BenchmarkGateCheck(b *testing.B) {
	in := validGate(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := change.Check(in); err != nil {
			b.Fatal(err)
		}
	}
}
