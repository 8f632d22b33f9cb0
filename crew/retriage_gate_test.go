package crew_test

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/workflow"
)

// A case whose gated ticket a person approved and the server filed, sent
// back to triage later (a person escalates it and resumes its triage),
// runs again from intake. A crew that decides the same again (a model
// can: the same verdict, confidence, severity and searches, and a ticket
// in words that leave the tracker's evidence as it was) must not take
// the first run's approval, already used, as its own and file a second
// ticket nobody approved: a person is asked again.
func TestRetriageNeverReusesUsedApproval(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "reuse.db"), key)
	defer st.Close()
	rt := runtimeFor(st, map[string]agent.Policy{crew.RoleInvestigator: sameVerdict, crew.RoleWriter: terseWriter})
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := st.StartJobs(ctx, setup.Runner.Workers(slog.New(slog.DiscardHandler)), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())
	it := gatedItem(t, d, "billing")
	c, _, _, err := st.SubmitReport(ctx, signoff.ReportInput{ProjectID: setup.Project, Text: it.Text,
		Device: it.Metadata.Device, OS: it.Metadata.OS, AppVersion: it.Metadata.AppVersion})
	if err != nil {
		t.Fatal(err)
	}
	sys := signoff.SystemActor(setup.Workspace)
	waitState := func(want string) {
		t.Helper()
		for {
			cur, err := st.GetCase(ctx, sys, c.ID)
			if err == nil && cur.State == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("case %s in %s, want %s (%v)", c.ID, cur.State, want, err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	approved := func() signoff.Decision {
		t.Helper()
		ds, err := st.ListDecisions(ctx, setup.Operator, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if d.Status == signoff.DecisionPending {
				if d, err = st.Decide(ctx, setup.Operator, d.ID, d.SubjectDigest, true, "ok"); err != nil {
					t.Fatal(err)
				}
				return d
			}
		}
		t.Fatalf("no pending decision among %d", len(ds))
		return signoff.Decision{}
	}
	waitState(workflow.BugAwaitingTriageApproval)
	first := approved()
	waitState(workflow.BugTicketed)
	for {
		run, err := st.GetTriage(ctx, sys, c.ID)
		if err == nil && run.Status == signoff.TriageDone {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the approved ticket was never filed (run %s)", run.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(filedTickets(t, st, setup)); n != 1 {
		t.Fatalf("%d tickets after the approval", n)
	}
	for _, cmd := range []string{"escalate", "resume_triage"} {
		if _, _, err := st.TransitionCase(ctx, setup.Operator, c.ID, signoff.TransitionInput{Command: cmd, Note: "look again"}); err != nil {
			t.Fatal(err)
		}
	}
	// The second run ends somewhere other than triaging: filed again, or
	// at the gate.
	for {
		cur, err := st.GetCase(ctx, sys, c.ID)
		if err == nil && cur.State != workflow.BugTriaging {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the second run never ended (case %s)", cur.State)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(filedTickets(t, st, setup)); n != 1 {
		t.Fatalf("the second run filed a ticket (%d in all) under decision %s, which a person approved for the first run", n, first.ID)
	}
	waitState(workflow.BugAwaitingTriageApproval)
}

// sameVerdict is an investigator that decides the same on every run: it
// reads the crash log and earlier reports (never the tracker, whose new
// tickets would change the evidence) and records a new bug at one
// confidence, then hands off to triage.
func sameVerdict(_ context.Context, req agent.Request) (agent.Response, error) {
	turns := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turns++
		}
	}
	var calls []agent.ToolCall
	switch turns {
	case 0:
		calls = []agent.ToolCall{
			{ID: "a", Name: "query_crash_log", Arguments: `{"query":"charged twice"}`},
			{ID: "b", Name: "search_recent_reports", Arguments: `{"query":"charged twice"}`},
		}
	case 1:
		calls = []agent.ToolCall{{ID: "c", Name: "record_investigation", Arguments: `{"verdict":"new","confidence":0.9,"rationale":"new"}`}}
	default:
		calls = []agent.ToolCall{{ID: "d", Name: agent.HandoffTool, Arguments: `{"to":"triage","reason":"new"}`}}
	}
	return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: calls}}, nil
}

// terseWriter files a ticket in words of its own that say nothing of the
// report (so the tracker's words for its component stay as they were).
func terseWriter(_ context.Context, req agent.Request) (agent.Response, error) {
	for _, m := range req.Messages {
		if m.Role == "tool" {
			return agent.Response{Message: agent.Message{Role: "assistant", Content: "done"}}, nil
		}
	}
	return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "w", Name: "create_ticket",
		Arguments: `{"title":"Zebra seven","body":"Quartz."}`}}}}, nil
}
