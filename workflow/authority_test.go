package workflow_test

import (
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// TestHumanDecided classifies every state of both tables: a state added
// to a table fails here until someone decides whether an agent may move
// a case out of it.
func TestHumanDecided(t *testing.T) {
	t.Parallel()
	want := map[signoff.CaseKind]map[string]bool{
		signoff.KindBug: {
			workflow.BugReceived: false, workflow.BugTriaging: false, workflow.BugDropped: false, workflow.BugDuplicate: false,
			workflow.BugNeedsInfo: false, workflow.BugAwaitingTriageApproval: false, workflow.BugTicketed: false,
			workflow.BugReproducing: false, workflow.BugAwaitingReporterRepro: false, workflow.BugReproduced: true,
			workflow.BugFixing: false, workflow.BugVerifying: false, workflow.BugAwaitingApproval: false,
			workflow.BugNeedsHuman: false, workflow.BugApproved: true, workflow.BugMerged: true, workflow.BugReleased: true,
			workflow.BugAwaitingReporterConfirmation: true, workflow.BugVerified: true, workflow.BugReopened: false,
			workflow.BugUnconfirmed: true, workflow.BugClosed: true,
		},
		signoff.KindChange: {
			workflow.ChangeRequested: false, workflow.ChangePlanned: false, workflow.ChangeReviewed: false,
			workflow.ChangeReviewFailed: false, workflow.ChangeAwaitingApproval: false, workflow.ChangeApproved: true,
			workflow.ChangeExecuting: true, workflow.ChangeExecuted: true, workflow.ChangeRolledBack: false,
			workflow.ChangeDrifted: false, workflow.ChangeReverted: true, workflow.ChangeExpired: false,
			workflow.ChangeSuperseded: false,
		},
	}
	for kind, states := range want {
		table, err := workflow.For(kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range table.States {
			exp, ok := states[s]
			if !ok {
				t.Errorf("%s state %s is not classified here: decide whether a person's decision produced it", kind, s)
				continue
			}
			if got := workflow.HumanDecided(kind, s); got != exp {
				t.Errorf("HumanDecided(%s, %s) = %v, want %v", kind, s, got, exp)
			}
		}
		for s := range states {
			if !table.IsState(s) {
				t.Errorf("%s has no state %s", kind, s)
			}
		}
		for _, s := range workflow.HumanDecidedStates(kind) {
			if !states[s] {
				t.Errorf("HumanDecidedStates(%s) lists %s", kind, s)
			}
		}
	}
	if workflow.HumanDecided("ticket", workflow.BugApproved) {
		t.Error("an unknown kind has human-decided states")
	}
}

// TestSignOffsLandInHumanDecidedStates: wherever a person signs off
// (approve, merge, execute, the reporter's confirmations, close) the case
// lands in a state no agent may move it out of, unless the row sends the
// work back (a rejection's own command is not a sign-off).
func TestSignOffsLandInHumanDecidedStates(t *testing.T) {
	t.Parallel()
	signOffs := map[string]bool{"approve": true, "merge": true, "execute": true, "confirm_reproduction": true,
		"approve_harness": true, "confirm_fix": true, "close": true, "revert": true, "preapprove": true}
	for _, table := range []*workflow.Table{workflow.Bug, workflow.Change} {
		seen := 0
		for _, tr := range table.Transitions {
			if !signOffs[tr.Command] {
				continue
			}
			seen++
			if !workflow.HumanDecided(table.Kind, tr.To) {
				t.Errorf("%s: %s from %s lands in %s, which an agent could move the case out of", table.Kind, tr.Command, tr.From, tr.To)
			}
		}
		if seen == 0 {
			t.Errorf("%s: no sign-off rows found", table.Kind)
		}
	}
}
