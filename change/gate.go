package change

import (
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
)

// Gate checks, in the order Check applies them (signoff.GateCheck*: the
// refusal's vocabulary lives in the domain, so that the store refuses a
// consumed or expired approval in the same words without importing this
// package).
const (
	CheckIDFormat      = signoff.GateCheckIDFormat
	CheckSignature     = signoff.GateCheckSignature
	CheckApprover      = signoff.GateCheckApprover
	CheckQuorum        = signoff.GateCheckQuorum
	CheckExpired       = signoff.GateCheckExpired
	CheckConsumed      = signoff.GateCheckConsumed
	CheckPlanDigest    = signoff.GateCheckPlanDigest
	CheckPolicyDigest  = signoff.GateCheckPolicyDigest
	CheckBeforeState   = signoff.GateCheckBeforeState
	CheckTargetAllowed = signoff.GateCheckTargetAllowed
	CheckLock          = signoff.GateCheckLock
)

// GateChecks lists the gate checks in order.
var GateChecks = signoff.GateChecks

// Decisions an approval may carry; the same strings as package approval.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// GateError is a refusal (signoff.GateError).
type GateError = signoff.GateError

// Quorum is the policy's approval rule as the gate applies it
// (Policy.Quorum).
type Quorum struct {
	Required              int
	Group                 []string
	NoSelfApproval        bool
	ProposerCannotApprove bool
}

// GateApproval is one stored approval as the gate sees it. The caller has
// already checked the DSSE signature against the approver's keys; the gate
// decides what the result means.
type GateApproval struct {
	ID       string
	Approver string
	Decision string
	// SignatureValid: the envelope verified. KeyRegistered: under a key
	// registered (and not revoked) for Approver.
	SignatureValid bool
	KeyRegistered  bool
	ExpiresAt      time.Time
	Consumed       bool
	SubjectDigest  string
	PolicyDigest   string
}

// GateInput is everything the gate knows at execution time. Its zero value
// is refused: every fact that permits must be stated.
type GateInput struct {
	CaseID string
	PlanID string
	// Plan is the stored plan; Check recomputes its digest itself. Once
	// that digest equals ApprovedDigest, the plan's BeforeStateDigest is
	// the approved before-state.
	Plan           Plan
	ApprovedDigest string
	// Approvals are the approvals this execution would consume: every one
	// must hold, not just enough of them, because one that does not is a
	// forgery, a race or a stale decision worth stopping for.
	Approvals []GateApproval
	Quorum    Quorum
	// Proposer drafted the plan; Opener opened the change request.
	Proposer string
	Opener   string
	// PolicyDigest is the workspace policy's digest now;
	// ApprovedPolicyDigest the one the case was approved under.
	PolicyDigest         string
	ApprovedPolicyDigest string
	// LiveBeforeState is the target's state digest read just now.
	LiveBeforeState string
	// TargetAllowed is Policy.AllowsNow(Plan.Target, Now) == nil.
	TargetAllowed bool
	// LockedTarget is the target whose per-target lock the caller holds.
	LockedTarget string
	Now          time.Time
	// Preapproved is set only for a compensating rollback of a kind the
	// policy pre-approves (Policy.RollbackPreapproved): no signature is
	// needed and Approvals must be empty. Every other check still holds;
	// ApprovedDigest is then the digest the service recorded when it
	// pre-approved the plan.
	Preapproved bool
}

// Check is the gate: nil only if every check in GateChecks holds, else a
// *GateError naming the first that fails. It is pure and deterministic;
// consuming the approvals atomically is the caller's next step.
func Check(in GateInput) error {
	if e := checkIDs(in); e != nil {
		return e
	}
	if in.Preapproved && len(in.Approvals) > 0 {
		return refuse(CheckIDFormat, "a pre-approved rollback consumes no approvals, %d given", len(in.Approvals))
	}
	for _, a := range in.Approvals {
		switch {
		case !a.SignatureValid:
			return refuse(CheckSignature, "approval %s: the signature does not verify", a.ID)
		case !a.KeyRegistered:
			return refuse(CheckSignature, "approval %s: signed with a key not registered to %s", a.ID, a.Approver)
		}
	}
	q := in.Quorum
	for _, a := range in.Approvals {
		switch {
		case !slices.Contains(q.Group, a.Approver):
			return refuse(CheckApprover, "approval %s: %s is not in the policy's approvers group", a.ID, a.Approver)
		case q.NoSelfApproval && a.Approver == in.Opener:
			return refuse(CheckApprover, "approval %s: no self-approval, %s opened this change", a.ID, a.Approver)
		case q.ProposerCannotApprove && a.Approver == in.Proposer:
			return refuse(CheckApprover, "approval %s: the proposer cannot approve, %s drafted this plan", a.ID, a.Approver)
		}
	}
	if !in.Preapproved {
		if e := checkQuorum(in.Approvals, q.Required); e != nil {
			return e
		}
	}
	if in.Now.IsZero() {
		return refuse(CheckExpired, "no time given, so expiry cannot be decided")
	}
	for _, a := range in.Approvals {
		if !in.Now.Before(a.ExpiresAt) {
			return refuse(CheckExpired, "approval %s expired at %s", a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
		}
	}
	if !in.Now.Before(in.Plan.ExpiresAt) {
		return refuse(CheckExpired, "the plan expired at %s", in.Plan.ExpiresAt.UTC().Format(time.RFC3339))
	}
	for _, a := range in.Approvals {
		if a.Consumed {
			return refuse(CheckConsumed, "approval %s has already been consumed", a.ID)
		}
	}
	digest, err := PlanDigest(in.Plan)
	if err != nil {
		return refuse(CheckPlanDigest, "%s", signoff.ErrorMessage(err))
	}
	if digest != in.ApprovedDigest {
		return refuse(CheckPlanDigest, "the plan's digest is now %s, the approved digest is %s: the plan changed after approval", short(digest), short(in.ApprovedDigest))
	}
	for _, a := range in.Approvals {
		if a.SubjectDigest != digest {
			return refuse(CheckPlanDigest, "approval %s is for %s, not the plan's %s", a.ID, short(a.SubjectDigest), short(digest))
		}
	}
	switch {
	case !ValidDigest(in.PolicyDigest):
		return refuse(CheckPolicyDigest, "no current policy digest")
	case in.PolicyDigest != in.ApprovedPolicyDigest:
		return refuse(CheckPolicyDigest, "the policy is now %s, the change was approved under %s", short(in.PolicyDigest), short(in.ApprovedPolicyDigest))
	}
	for _, a := range in.Approvals {
		if a.PolicyDigest != in.PolicyDigest {
			return refuse(CheckPolicyDigest, "approval %s was made under policy %s, the policy is now %s", a.ID, short(a.PolicyDigest), short(in.PolicyDigest))
		}
	}
	switch {
	case !ValidDigest(in.LiveBeforeState):
		// Not drift: nothing says the state changed, only that it was
		// not read. Refuse without sending the case to drifted.
		return refuse(CheckBeforeState, "the live before-state of %s was not read", in.Plan.Target)
	case in.LiveBeforeState != in.Plan.BeforeStateDigest:
		return &GateError{Check: CheckBeforeState, Drifted: true, Detail: fmt.Sprintf("%s drifted: its live state is %s, the approved before-state is %s; the change needs a new plan and approval",
			in.Plan.Target, short(in.LiveBeforeState), short(in.Plan.BeforeStateDigest))}
	}
	if !in.TargetAllowed {
		return refuse(CheckTargetAllowed, "the policy does not allow %s now", in.Plan.Target)
	}
	if in.LockedTarget == "" || in.LockedTarget != in.Plan.Target {
		return refuse(CheckLock, "the per-target lock for %s is not held", in.Plan.Target)
	}
	return nil
}

func checkIDs(in GateInput) *GateError {
	switch {
	case !signoff.ValidID(signoff.PrefixCase, in.CaseID):
		return refuse(CheckIDFormat, "invalid case id %q", in.CaseID)
	case !signoff.ValidID(PrefixPlan, in.PlanID):
		return refuse(CheckIDFormat, "invalid plan id %q", in.PlanID)
	}
	for i, a := range in.Approvals {
		switch {
		case !signoff.ValidID(signoff.PrefixApproval, a.ID):
			return refuse(CheckIDFormat, "approvals[%d]: invalid approval id %q", i, a.ID)
		case !signoff.ValidID(signoff.PrefixActor, a.Approver):
			return refuse(CheckIDFormat, "approval %s: invalid approver id %q", a.ID, a.Approver)
		case a.Decision != DecisionApprove && a.Decision != DecisionReject:
			return refuse(CheckIDFormat, "approval %s: decision %q is neither %s nor %s", a.ID, a.Decision, DecisionApprove, DecisionReject)
		}
	}
	return nil
}

// checkQuorum: any rejection vetoes; otherwise Required distinct approvers
// must approve. An approver who approved twice counts once.
func checkQuorum(list []GateApproval, required int) *GateError {
	distinct := 0
	for i, a := range list {
		if a.Decision == DecisionReject {
			return refuse(CheckQuorum, "vetoed: %s rejected the change (approval %s)", a.Approver, a.ID)
		}
		seen := false
		for _, b := range list[:i] {
			if b.Approver == a.Approver && b.Decision == DecisionApprove {
				seen = true
				break
			}
		}
		if !seen {
			distinct++
		}
	}
	switch {
	case required < 1:
		return refuse(CheckQuorum, "the policy requires no approvals, and the gate needs at least one")
	case distinct < required:
		return refuse(CheckQuorum, "%d distinct approvers of the %d required", distinct, required)
	}
	return nil
}

func refuse(check, format string, args ...any) *GateError {
	return &GateError{Check: check, Detail: fmt.Sprintf(format, args...)}
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	if d == "" {
		return "(none)"
	}
	return d
}
