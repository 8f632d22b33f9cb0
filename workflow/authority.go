package workflow

import (
	"slices"

	"github.com/signoff-dev/signoff"
)

// humanDecided lists, per kind, the states a person's decision produced
// and the states that follow from them by the server's own steps alone
// (the shipped fix and the reporter's last word; the executed change and
// its revert). Nothing an agent does may move a case out of one of them:
// an agent that disagrees asks for attention instead (SPEC principle 4,
// issue 21: an agent's escalate or re-plan would otherwise undo an
// approval).
//
// Left out on purpose: the states a person's decision hands back to the
// agents' work (fixing after a rejection, triaging after reject_triage,
// ticketed, reopened) and the change states that void an approval and
// ask for a new plan (drifted, expired, rolled_back); those need the
// agents to act.
var humanDecided = map[signoff.CaseKind][]string{
	signoff.KindBug: {
		BugReproduced, // the reporter's yes and the staff's harness approval
		BugApproved, BugMerged, BugReleased,
		BugAwaitingReporterConfirmation, BugVerified, BugUnconfirmed,
		BugClosed,
	},
	signoff.KindChange: {
		ChangeApproved, ChangeExecuting, ChangeExecuted, ChangeReverted,
	},
}

// HumanDecided reports whether state of a case of kind was produced by a
// person's decision (see humanDecided). It is the one list every agent
// path consults.
func HumanDecided(kind signoff.CaseKind, state string) bool {
	return slices.Contains(humanDecided[kind], state)
}

// HumanDecidedStates returns the states of kind HumanDecided holds, in
// table order.
func HumanDecidedStates(kind signoff.CaseKind) []string {
	return slices.Clone(humanDecided[kind])
}
