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
// jobCase is a gated report triaged through the jobs, with a crew whose
// investigator and writer decide the same on every run.
type jobCase struct {
	ctx   context.Context
	st    signoff.Store
	setup *crew.EvalSetup
	c     signoff.Case
}

func newJobCase(t *testing.T) *jobCase {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "jobs.db"), key)
	t.Cleanup(func() { st.Close() })
	rt := runtimeFor(st, map[string]agent.Policy{crew.RoleInvestigator: sameVerdict, crew.RoleWriter: terseWriter})
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	stop, err := st.StartJobs(ctx, setup.Runner.Workers(slog.New(slog.DiscardHandler)), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(context.Background()) })
	it := gatedItem(t, d, "billing")
	c, _, _, err := st.SubmitReport(ctx, signoff.ReportInput{ProjectID: setup.Project, Text: it.Text,
		Device: it.Metadata.Device, OS: it.Metadata.OS, AppVersion: it.Metadata.AppVersion})
	if err != nil {
		t.Fatal(err)
	}
	return &jobCase{ctx: ctx, st: st, setup: setup, c: c}
}

// waitState waits for the case to reach want.
func (j *jobCase) waitState(t *testing.T, want string) {
	t.Helper()
	j.waitUntil(t, "case in "+want, func(cur signoff.Case) bool { return cur.State == want })
}

// waitUntil waits for the case to satisfy ok.
func (j *jobCase) waitUntil(t *testing.T, what string, ok func(signoff.Case) bool) {
	t.Helper()
	sys := signoff.SystemActor(j.setup.Workspace)
	for {
		cur, err := j.st.GetCase(j.ctx, sys, j.c.ID)
		if err == nil && ok(cur) {
			return
		}
		select {
		case <-j.ctx.Done():
			t.Fatalf("case %s in %s, want %s (%v)", j.c.ID, cur.State, what, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pending lists the case's pending decisions.
func (j *jobCase) pending(t *testing.T) []signoff.Decision {
	t.Helper()
	ds, err := j.st.ListDecisions(j.ctx, j.setup.Operator, j.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []signoff.Decision
	for _, d := range ds {
		if d.Status == signoff.DecisionPending {
			out = append(out, d)
		}
	}
	return out
}

// decide answers the one pending decision.
func (j *jobCase) decide(t *testing.T, approve bool, reason string) signoff.Decision {
	t.Helper()
	p := j.pending(t)
	if len(p) != 1 {
		t.Fatalf("%d pending decisions, want 1", len(p))
	}
	d, err := j.st.Decide(j.ctx, j.setup.Operator, p[0].ID, p[0].SubjectDigest, approve, reason)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRetriageNeverReusesUsedApproval(t *testing.T) {
	t.Parallel()
	j := newJobCase(t)
	ctx, st, setup, c := j.ctx, j.st, j.setup, j.c
	sys := signoff.SystemActor(setup.Workspace)
	j.waitState(t, workflow.BugAwaitingTriageApproval)
	first := j.decide(t, true, "ok")
	j.waitState(t, workflow.BugTicketed)
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
	j.waitUntil(t, "out of triaging", func(cur signoff.Case) bool { return cur.State != workflow.BugTriaging })
	if n := len(filedTickets(t, st, setup)); n != 1 {
		t.Fatalf("the second run filed a ticket (%d in all) under decision %s, which a person approved for the first run", n, first.ID)
	}
	j.waitState(t, workflow.BugAwaitingTriageApproval)
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
