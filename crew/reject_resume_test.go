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

// A person rejects the proposed ticket; the case goes to a person. When
// staff resume its triage, a new run starts through the jobs and asks a
// person again: the case does not sit in triaging for ever behind the
// rejected run, and the rejection is never read as an approval.
func TestRejectedGateResumedAsksAgain(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "reject.db"), key)
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
	pending := func() []signoff.Decision {
		t.Helper()
		ds, err := st.ListDecisions(ctx, setup.Operator, c.ID)
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
	waitState(workflow.BugAwaitingTriageApproval)
	p := pending()
	if len(p) != 1 {
		t.Fatalf("%d pending decisions at the gate", len(p))
	}
	if _, err := st.Decide(ctx, setup.Operator, p[0].ID, p[0].SubjectDigest, false, "severity is overstated"); err != nil {
		t.Fatal(err)
	}
	waitState(workflow.BugNeedsHuman)
	if _, _, err := st.TransitionCase(ctx, setup.Operator, c.ID, signoff.TransitionInput{Command: "resume_triage", Note: "look again"}); err != nil {
		t.Fatal(err)
	}
	waitState(workflow.BugAwaitingTriageApproval)
	if p := pending(); len(p) != 1 {
		t.Fatalf("%d pending decisions after resuming, want one new one", len(p))
	}
	if n := len(filedTickets(t, st, setup)); n != 0 {
		t.Fatalf("%d tickets filed after a rejection", n)
	}
}
