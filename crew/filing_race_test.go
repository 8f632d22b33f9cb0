package crew_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/triage"
)

// Writers racing on one ungated ticket (two workers driving the same
// case, each asking its model, both calling create_ticket at once) file
// one ticket: the run's version decides which one files, and the others
// are refused, never file a second ticket. The window between reading
// the run and saving it is short, so the race is run on several stores.
func TestUngatedTicketRacedWritersFileOnce(t *testing.T) {
	t.Parallel()
	for round := range 6 {
		t.Run(fmt.Sprint(round), raceUngatedWriters)
	}
}

func raceUngatedWriters(t *testing.T) {
	ctx := context.Background()
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "race.db"), key)
	defer st.Close()
	offline := func(context.Context, agent.Request) (agent.Response, error) {
		return agent.Response{}, errors.New("model offline")
	}
	rt := runtimeFor(st, map[string]agent.Policy{crew.RoleWriter: offline})
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := agent.LoadConfig(ctx, st, setup.Workspace, rt.Tools)
	if err != nil {
		t.Fatal(err)
	}
	tool := rt.Tools.Get("create_ticket")
	args, _, err := tool.Prepare(`{"title":"Gems are lost after a purchase","body":"What happens, where, the evidence."}`)
	if err != nil {
		t.Fatal(err)
	}
	// The first item the crew files without a person (a new bug below
	// high), raced by writers.
	raced := 0
	for _, it := range d.Items {
		if e := d.Expected[it.ID]; e.Outcome != triage.OutcomeNewTicket || e.MinSeverity == "high" || e.MinSeverity == "critical" || e.DuplicateOf != "" {
			continue
		}
		caseID, err := setup.Submit(ctx, it)
		if err != nil {
			t.Fatal(err)
		}
		setup.Runner.Drive(ctx, setup.Workspace, caseID) // stops at the offline writer
		var s crew.State
		run, err := st.GetTriage(ctx, setup.Operator, caseID)
		if err != nil || json.Unmarshal(run.State, &s) != nil || s.Assessment == nil || s.Investigation == nil ||
			s.Investigation.Verdict != triage.VerdictNew || s.Investigation.Confidence < crew.MinConfidence ||
			triage.SeverityRank(s.Assessment.Severity) >= triage.SeverityRank(crew.GateSeverity) {
			continue
		}
		ts, err := st.ListTasks(ctx, setup.Operator, signoff.TaskFilter{CaseID: caseID, Status: signoff.TaskOpen, Limit: 10})
		if err != nil || len(ts) != 1 || ts[0].Kind != crew.RoleWriter {
			t.Fatalf("open tasks %+v, %v: want the writer's", ts, err)
		}
		wt := ts[0]
		a, err := st.GetActor(ctx, setup.Workspace, wt.AssigneeID)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := cfg.ForTask(wt)
		if err != nil {
			t.Fatal(err)
		}
		before := len(filedTickets(t, st, setup))
		const writers = 12
		var wg sync.WaitGroup
		start := make(chan struct{})
		answers := make([]string, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				env := &agent.Env{Task: wt, Actor: a, Role: rc, Store: st, Config: cfg, Evidence: signoff.EvidenceLive}
				res, err := tool.Call(ctx, env, args)
				if err != nil {
					answers[i] = "error: " + err.Error()
				} else if out, ok := res.Output.(map[string]any); ok {
					answers[i], _ = out["ticket_id"].(string)
				}
			}()
		}
		close(start)
		wg.Wait()
		filed := filedTickets(t, st, setup)[before:]
		run, _ = st.GetTriage(ctx, setup.Operator, caseID)
		if len(filed) != 1 || run.TicketID != filed[0] {
			t.Fatalf("%d racing writers on %s filed %v; the run records %q: want one ticket, the run's", writers, caseID, filed, run.TicketID)
		}
		// Every writer is answered with that ticket: the losers waited
		// for the winner instead of being refused (a refused writer
		// gives up and sends the case to a person).
		for i, got := range answers {
			if got != run.TicketID {
				t.Errorf("writer %d was answered %q, want %s", i, got, run.TicketID)
			}
		}
		raced++
		break
	}
	if raced == 0 {
		t.Fatal("no item reaches the writer ungated")
	}
}

// filedTickets are the ids of the tickets the crew filed, oldest first.
func filedTickets(t *testing.T, st signoff.Store, setup *crew.EvalSetup) []string {
	t.Helper()
	all, err := st.ListTickets(context.Background(), setup.Operator, setup.Project)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tk := range all {
		if tk.ApprovedBy != "" {
			out = append(out, tk.ID)
		}
	}
	return out
}
