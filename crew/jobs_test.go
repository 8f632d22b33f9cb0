package crew_test

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/triage"
)

// Through intake: every public report is triaged as a job, in arrival
// order within its project, and a run parked at the gate releases its
// worker, does not hold later reports up, and resumes when a person
// answers.
func TestTriageJobs(t *testing.T) {
	d := loadOrbit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "jobs.db"), key)
	defer st.Close()
	ws, owner, err := st.CreateWorkspace(ctx, "acme", "owner")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateActor(ctx, owner, "triager", signoff.RoleTriager); err != nil {
		t.Fatal(err)
	}
	op, err := st.CreateActor(ctx, owner, "op", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, owner, signoff.ProjectInput{Name: "game"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ImportDataset(ctx, owner, p.ID, d); err != nil {
		t.Fatal(err)
	}
	rt := runtimeFor(st, nil)
	r := &crew.Runner{Store: st, Runtime: rt, Tools: rt.Tools}
	stop, err := st.StartJobs(ctx, r.Workers(slog.New(slog.DiscardHandler)), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())

	// The first shop-crash report, the double charge (gated), then a second
	// shop-crash report that must land on the ticket the first created.
	pick := func(outcome, component, dup string) triage.Item {
		for _, it := range d.Items {
			e := d.Expected[it.ID]
			if e.Outcome == outcome && e.Component == component && e.DuplicateOf == dup {
				return it
			}
		}
		t.Fatalf("no item %s/%s/%s", outcome, component, dup)
		return triage.Item{}
	}
	first := pick(triage.OutcomeNewTicket, "shop", "")
	gated := gatedItem(t, d, "billing")
	var second triage.Item
	for _, it := range d.Items {
		if d.Expected[it.ID].DuplicateOf == "batch:"+first.ID {
			second = it
			break
		}
	}
	var cases []string
	for _, it := range []triage.Item{first, gated, second} {
		c, _, _, err := st.SubmitReport(ctx, signoff.ReportInput{ProjectID: p.ID, Text: it.Text,
			Device: it.Metadata.Device, OS: it.Metadata.OS, AppVersion: it.Metadata.AppVersion})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c.ID)
	}
	wait := func(caseID, status string) signoff.TriageRun {
		t.Helper()
		for {
			run, err := st.GetTriage(ctx, op, caseID)
			if err == nil && run.Status == status {
				return run
			}
			select {
			case <-ctx.Done():
				t.Fatalf("case %s never reached %s (last %s/%s, %v)", caseID, status, run.Status, run.Outcome, err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	approve := func(caseID string) {
		t.Helper()
		gate, err := crew.GateOf(ctx, st, op, caseID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Decide(ctx, op, gate.DecisionID, gate.Digest, true, "looks right"); err != nil {
			t.Fatal(err)
		}
	}
	// Both new tickets are high: each waits at the gate. The second shop
	// report duplicates the first, whose ticket is not filed yet: it waits
	// for that decision instead of holding the project up.
	wait(cases[0], signoff.TriageParked)
	wait(cases[1], signoff.TriageParked)
	wait(cases[2], signoff.TriageParked)
	approve(cases[0])
	r1 := wait(cases[0], signoff.TriageDone)
	r3 := wait(cases[2], signoff.TriageDone)
	if r1.Outcome != triage.OutcomeNewTicket || r3.Outcome != triage.OutcomeDuplicate || r3.Resolves != r1.TicketID {
		t.Fatalf("first %s/%s, second %s → %s", r1.Outcome, r1.TicketID, r3.Outcome, r3.Resolves)
	}
	if r1.Seq > r3.Seq {
		t.Fatalf("arrival order lost: %d after %d", r1.Seq, r3.Seq)
	}
	approve(cases[1])
	r2 := wait(cases[1], signoff.TriageDone)
	if r2.Outcome != triage.OutcomeNewTicket || r2.TicketID == "" {
		t.Fatalf("gated run after the answer: %s/%s", r2.Status, r2.Outcome)
	}
	tk, err := st.GetTicket(ctx, op, p.ID, r2.TicketID)
	if err != nil || tk.ApprovedBy != "human:"+op.ID {
		t.Fatalf("gated ticket %+v %v", tk, err)
	}
	if _, err := st.VerifyLedger(ctx, ws.ID, nil); err != nil {
		t.Fatal(err)
	}
}
