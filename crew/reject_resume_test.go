package crew_test

import (
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// A person rejects the proposed ticket; the case goes to a person. When
// staff resume its triage, a new run starts through the jobs and asks a
// person again: the case does not sit in triaging for ever behind the
// rejected run, and the rejection is never read as an approval.
func TestRejectedGateResumedAsksAgain(t *testing.T) {
	t.Parallel()
	j := newJobCase(t)
	j.waitState(t, workflow.BugAwaitingTriageApproval)
	j.decide(t, false, "severity is overstated")
	j.waitState(t, workflow.BugNeedsHuman)
	if _, _, err := j.st.TransitionCase(j.ctx, j.setup.Operator, j.c.ID, signoff.TransitionInput{Command: "resume_triage", Note: "look again"}); err != nil {
		t.Fatal(err)
	}
	j.waitState(t, workflow.BugAwaitingTriageApproval)
	if p := j.pending(t); len(p) != 1 {
		t.Fatalf("%d pending decisions after resuming, want one new one", len(p))
	}
	if n := len(filedTickets(t, j.st, j.setup)); n != 0 {
		t.Fatalf("%d tickets filed after a rejection", n)
	}
}
