package workflow

import "github.com/signoff-dev/signoff"

// Change states, named as in SPEC section 4.
const (
	ChangeRequested        = "requested"
	ChangePlanned          = "planned"
	ChangeReviewed         = "reviewed"
	ChangeReviewFailed     = "review_failed"
	ChangeAwaitingApproval = "awaiting_approval"
	ChangeApproved         = "approved"
	ChangeExecuting        = "executing"
	ChangeExecuted         = "executed"
	ChangeRolledBack       = "rolled_back"
	ChangeDrifted          = "drifted"
	ChangeReverted         = "reverted"
	ChangeExpired          = "expired"
	ChangeSuperseded       = "superseded"
)

var changeStates = []string{
	ChangeRequested, ChangePlanned, ChangeReviewed, ChangeReviewFailed,
	ChangeAwaitingApproval, ChangeApproved, ChangeExecuting, ChangeExecuted,
	ChangeRolledBack, ChangeDrifted, ChangeReverted, ChangeExpired,
	ChangeSuperseded,
}

// Change is the change loop. Policy review, expiry and the outcome of
// execution are facts the system records; a human signs; the gate (system)
// executes only what was signed. Executing and reverting are open to the
// system because the gate is the system, never to an agent.
var Change = mustNew(signoff.KindChange, ChangeRequested, changeStates, changeRows())

func changeRows() []Transition {
	planner := one(signoff.RolePlanner)
	rows := []Transition{
		{From: ChangeRequested, Command: "plan", To: ChangePlanned, Roles: roles(planner, humans)},
		{From: ChangePlanned, Command: "review_pass", To: ChangeReviewed, Roles: roles(system)},
		{From: ChangePlanned, Command: "review_fail", To: ChangeReviewFailed, Roles: roles(system)},
		{From: ChangeReviewFailed, Command: "plan", To: ChangePlanned, Roles: roles(planner, humans)},
		{From: ChangeReviewed, Command: "request_approval", To: ChangeAwaitingApproval, Roles: roles(system, humans)},
		{From: ChangeAwaitingApproval, Command: "approve", To: ChangeApproved, Roles: roles(humans)},
		{From: ChangeAwaitingApproval, Command: "reject", To: ChangeRequested, Roles: roles(humans)},
		{From: ChangeAwaitingApproval, Command: "expire", To: ChangeExpired, Roles: roles(system)},
		{From: ChangeApproved, Command: "expire", To: ChangeExpired, Roles: roles(system)},
		{From: ChangeApproved, Command: "execute", To: ChangeExecuting, Roles: roles(humans, system)},
		// The gate found the target's live state is not the approved
		// before-state: nothing was applied, and the change needs a new
		// plan against the state as it is.
		{From: ChangeApproved, Command: "drift", To: ChangeDrifted, Roles: roles(system)},
		// A compensating rollback the policy pre-approves (its kind is in
		// preapproved_rollbacks) needs no signature; the gate still checks
		// everything else.
		{From: ChangeReviewed, Command: "preapprove", To: ChangeApproved, Roles: roles(system)},
		// An emergency bypass: the policy lets named roles write a flag
		// directly for a limited time. The desk records it as executed,
		// with a receipt, and reverts it when the time is up.
		{From: ChangeRequested, Command: "bypass", To: ChangeExecuted, Roles: roles(system)},
		{From: ChangeExecuting, Command: "complete", To: ChangeExecuted, Roles: roles(system)},
		{From: ChangeExecuting, Command: "rollback", To: ChangeRolledBack, Roles: roles(system)},
		{From: ChangeExecuting, Command: "drift", To: ChangeDrifted, Roles: roles(system)},
		{From: ChangeExecuted, Command: "revert", To: ChangeReverted, Roles: roles(humans, system)},
		// An approval of the quorum lapsed (its own expiry) before the
		// gate ran, while the plan still lives: the case waits for a new
		// signature instead of sitting approved with nothing to do.
		{From: ChangeApproved, Command: "lapse", To: ChangeAwaitingApproval, Roles: roles(system)},
		// The policy changed: approvals under the old one are void, and
		// the current plan is reviewed again under the policy in force.
		{From: ChangeAwaitingApproval, Command: "rereview", To: ChangePlanned, Roles: roles(system)},
		{From: ChangeApproved, Command: "rereview", To: ChangePlanned, Roles: roles(system)},
	}
	// A change that drifted, expired or was rolled back can be planned
	// again against the state as it is now; the new plan needs its own
	// review and approval.
	// An edit of a plan not yet executed is a new plan too: its digest is
	// new, so the approvals of the old one no longer count.
	for _, s := range []string{ChangeReviewed, ChangeAwaitingApproval, ChangeApproved, ChangeDrifted, ChangeExpired, ChangeRolledBack} {
		rows = append(rows, Transition{From: s, Command: "plan", To: ChangePlanned, Roles: roles(planner, humans)})
	}
	// A newer plan replaces any decision not yet acted on; once execution
	// starts, only its outcome or a revert can follow.
	// A compensating case that ended without executing (rejected back to
	// requested, drifted, expired) is superseded when a new rollback of
	// the same change replaces it.
	for _, s := range []string{ChangeRequested, ChangePlanned, ChangeReviewed, ChangeReviewFailed, ChangeAwaitingApproval, ChangeApproved, ChangeDrifted, ChangeExpired} {
		rows = append(rows, Transition{From: s, Command: "supersede", To: ChangeSuperseded, Roles: roles(planner, humans, system)})
	}
	return rows
}
