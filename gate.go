package signoff

// A refusal of the change gate. The checks are package change's
// (change.Check); they live here so that the store refuses an approval
// already consumed or expired, inside the transaction that consumes it,
// in the same words without importing that package (issue 27).

// Gate checks, in the order change.Check applies them. The first that
// fails is the one a refusal names, so a caller that fixes it and retries
// meets the next. The order puts who may act before what they approved: a
// forged or foreign approval is refused as such even if the plan also
// changed.
const (
	GateCheckIDFormat      = "id_format"        // case, plan, approval and approver ids; decisions
	GateCheckSignature     = "signature"        // each approval verifies under a registered key
	GateCheckApprover      = "approver_allowed" // in the group; no self-approval; proposer excluded
	GateCheckQuorum        = "quorum"           // no rejection; enough distinct approvers
	GateCheckExpired       = "expired"          // no approval and not the plan past its expiry
	GateCheckConsumed      = "consumed"         // no approval used before
	GateCheckPlanDigest    = "plan_digest"      // the plan recomputed now is what was approved
	GateCheckPolicyDigest  = "policy_digest"    // the policy is the one approved under
	GateCheckBeforeState   = "before_state"     // the live state is the approved before-state
	GateCheckTargetAllowed = "target_allowed"   // the policy allows the target now
	GateCheckLock          = "lock"             // the caller holds the target's lock
)

// GateChecks lists the gate checks in order.
var GateChecks = []string{GateCheckIDFormat, GateCheckSignature, GateCheckApprover, GateCheckQuorum,
	GateCheckExpired, GateCheckConsumed, GateCheckPlanDigest, GateCheckPolicyDigest, GateCheckBeforeState,
	GateCheckTargetAllowed, GateCheckLock}

// gateCheckCodes maps each check to the error code of its refusal:
// EINVALID for malformed input, EFORBIDDEN for who may not act or what
// may not change, ECONFLICT for what no longer holds (expired, used,
// edited, drifted, locked by another execution).
var gateCheckCodes = map[string]string{
	GateCheckIDFormat:      EINVALID,
	GateCheckSignature:     EFORBIDDEN,
	GateCheckApprover:      EFORBIDDEN,
	GateCheckQuorum:        EFORBIDDEN,
	GateCheckExpired:       ECONFLICT,
	GateCheckConsumed:      ECONFLICT,
	GateCheckPlanDigest:    ECONFLICT,
	GateCheckPolicyDigest:  ECONFLICT,
	GateCheckBeforeState:   ECONFLICT,
	GateCheckTargetAllowed: EFORBIDDEN,
	GateCheckLock:          ECONFLICT,
}

// GateError is a refusal. Check names the failed check (one of
// GateChecks); Drifted is set when the live before-state differs from the
// approved one, which moves the case to drifted and needs a new approval.
// ErrorCode finds its code through Unwrap.
type GateError struct {
	Check   string
	Detail  string
	Drifted bool
}

func (e *GateError) Error() string { return "gate refused (" + e.Check + "): " + e.Detail }

// Code is the error code of the refusal.
func (e *GateError) Code() string {
	if c, ok := gateCheckCodes[e.Check]; ok {
		return c
	}
	return EINTERNAL
}

// Unwrap returns the refusal as an *Error, so transports map it like any
// other application error.
func (e *GateError) Unwrap() error { return &Error{Code: e.Code(), Message: e.Error()} }

// EmptyChangePolicyDigest is the digest of the change policy a workspace
// has before one is set: the policy an empty document parses to
// (change.Parse(nil), which allows nothing). Approvals made then name it.
const EmptyChangePolicyDigest = "6ee03e74b64c1b3a815fc1d17b1f6be8a1606188308ca805d6a5c3caa9c0aceb"

// PolicyDigester parses a change policy document and returns the digest
// of the policy it states, or EINVALID when it does not parse
// (change.PolicyDigest). The store is handed it so that it never stores a
// policy that does not parse, without importing package change.
type PolicyDigester func(yaml []byte) (string, error)
