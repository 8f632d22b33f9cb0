package crew_test

import (
	"context"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/openai/openaitest"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// A model that gives up on a report (a hostile report can make it) ends
// the run as needs_human and sends the case to a person; it does not leave
// the run active, which would hold every later report of the project
// behind it (TriageAhead) for ever.
func TestGiveUpDoesNotHoldTheProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := openaitest.NewServer(t)
	srv.Respond(func(r openaitest.ChatRequest) openaitest.Step {
		if slices.Contains(r.ToolNames(), "record_intake") {
			return openaitest.ToolCall(agent.GiveUpTool, `{"reason":"I cannot read this report"}`)
		}
		return openaitest.Text("unexpected role")
	})
	m := newModelCrew(t, srv)
	m.configure(t, srv, crew.RoleIntake)
	_, _, _, err := m.st.SubmitReport(ctx, signoff.ReportInput{ProjectID: m.proj, Text: "The leaderboard freezes after a match on my phone."})
	if err != nil {
		t.Fatal(err)
	}
	c1, rep1, _, err := m.st.SubmitReport(ctx, signoff.ReportInput{ProjectID: m.proj, Text: "The app closes when I open the shop screen, every time since the update."})
	if err != nil {
		t.Fatal(err)
	}
	c2, _, _, err := m.st.SubmitReport(ctx, signoff.ReportInput{ProjectID: m.proj, Text: "Sound stops after a phone call until I restart the game."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.runner.Start(ctx, m.ws, c1.ID, crew.ItemFromReport(c1, rep1)); err != nil {
		t.Fatal(err)
	}
	run, err := m.runner.Drive(ctx, m.ws, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != signoff.TriageDone || run.Outcome != triage.OutcomeNeedsHuman {
		t.Fatalf("run after the model gave up: %s/%s, want done/needs_human", run.Status, run.Outcome)
	}
	sys := signoff.SystemActor(m.ws)
	c, err := m.st.GetCase(ctx, sys, c1.ID)
	if err != nil || c.State != workflow.BugNeedsHuman {
		t.Fatalf("case after the model gave up: %s, %v; want %s", c.State, err, workflow.BugNeedsHuman)
	}
	if n, err := m.st.TriageAhead(ctx, sys, c2.ID); err != nil || n != 1 {
		// The first report (never started) is ahead; the given-up one is not.
		t.Fatalf("reports ahead of a later one: %d, %v; want 1 (only the unstarted report)", n, err)
	}
}
