package workflow

import (
	"slices"

	"github.com/signoff-dev/signoff"
)

// asksPerson lists, per kind, the states in which a case waits for a
// person's answer that a card asks for (card.ForState gives each its
// card). The store enqueues a card job when a case enters one of them; the
// triage gate is not here, as it is a requested decision with a card of
// its own.
var asksPerson = map[signoff.CaseKind][]string{
	signoff.KindBug:    {BugAwaitingReporterRepro, BugAwaitingReporterConfirmation, BugAwaitingApproval},
	signoff.KindChange: {ChangeAwaitingApproval},
}

// AsksPerson reports whether a case of kind in state waits for a person's
// answer on a card.
func AsksPerson(kind signoff.CaseKind, state string) bool {
	return slices.Contains(asksPerson[kind], state)
}
