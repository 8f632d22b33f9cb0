package crew_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// A worker taking over a crashed worker's claim looks for the ticket that
// worker may have filed: a ticket of the project that only shares the
// approved title, the approver and the component (another report's, whose
// writer copied the title) is not it. The run files the body and severity
// the person approved, and the other ticket stays the other case's.
func TestGateClaimTakeoverIgnoresLookalikeTicket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, b := parkedStore(t, &rewording{})
	g, p := b.proposal(t)
	if _, err := st.Decide(ctx, b.setup.Operator, g.DecisionID, g.Digest, true, "ok"); err != nil {
		t.Fatal(err)
	}
	tri, _ := agentOf(t, st, b.setup.Workspace, signoff.RoleTriager)
	other, err := st.CreateTicket(ctx, tri, b.setup.Project, triage.Ticket{Title: p["title"].(string), Status: "open",
		Severity: "low", Component: p["component"].(string), Owner: p["owner"].(string),
		Description: "Another report's ticket: nothing to see.", ApprovedBy: "human:" + b.setup.Operator.ID})
	if err != nil {
		t.Fatal(err)
	}
	// A worker claimed the filing and crashed before filing anything.
	sys := signoff.SystemActor(b.setup.Workspace)
	run, err := st.GetTriage(ctx, sys, b.caseID)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	json.Unmarshal(run.State, &state)
	gate := state["gate"].(map[string]any)
	gate["filing"], gate["filing_at"] = true, time.Now().Add(-2*time.Minute).UTC()
	run.State, _ = json.Marshal(state)
	if _, err := st.SaveTriage(ctx, sys, run); err != nil {
		t.Fatal(err)
	}
	run, err = b.setup.Runner.Resume(ctx, b.setup.Workspace, b.caseID)
	if err != nil || run.Status != signoff.TriageDone {
		t.Fatalf("resume: %s %v", run.Status, err)
	}
	if run.TicketID == other.ID {
		t.Fatalf("the run took %s, another report's ticket that shares only its title, as the one it filed", other.ID)
	}
	tk, err := st.GetTicket(ctx, sys, b.setup.Project, run.TicketID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Description != p["body"] || tk.Severity != p["severity"] {
		t.Fatalf("filed %s with severity %s and body %q: want the approved subject", tk.ID, tk.Severity, tk.Description)
	}
}
