package crew_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// orbitRun is a copy of shared/datasets/orbit_run (MIT licence; see its
// SOURCE.md) kept in the repository so CI scores it on every run.
const orbitRun = "../samples/orbit_run"

func loadOrbit(t testing.TB) triage.Dataset {
	t.Helper()
	if _, err := os.Stat(orbitRun); err != nil {
		t.Fatalf("orbit_run dataset missing at %s", orbitRun)
	}
	d, err := triage.LoadDataset(os.DirFS(orbitRun))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func openStore(t testing.TB, path string, key ed25519.PrivateKey) *sqlstore.DB {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path, sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func runtimeFor(st signoff.Store, policies map[string]agent.Policy) *agent.Runtime {
	reg := agent.NewRegistry(agent.BaseTools()...)
	crew.Register(reg)
	b := agent.NewBuiltin()
	crew.RegisterBuiltin(b, st)
	for role, p := range policies {
		b.Register(role, p)
	}
	return &agent.Runtime{Store: st, Tools: reg, Providers: agent.Factory{Builtin: b}.Make}
}

// The whole inbox through the real runtime, tools, guards, gate and
// storage, scored on what happened.
func TestEvalOrbitRun(t *testing.T) {
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "eval.db"), key)
	defer st.Close()
	ctx := context.Background()
	rep, err := crew.Eval(ctx, st, runtimeFor(st, nil), d, crew.Roles(agent.ProviderBuiltin), "builtin")
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Table())
	if rep.Score != rep.Total || rep.Total != len(d.Items) {
		t.Errorf("score %d/%d", rep.Score, rep.Total)
	}
	for _, it := range rep.Items {
		if it.Evidence != signoff.EvidenceLive {
			t.Errorf("%s: evidence %s, want live (builtin code ran here)", it.ItemID, it.Evidence)
		}
	}
	for _, ws := range mustWorkspaces(t, st) {
		if res, err := st.VerifyLedger(ctx, ws, nil); err != nil || res.Events == 0 {
			t.Errorf("ledger of %s: %+v %v", ws, res, err)
		}
	}
}

func mustWorkspaces(t *testing.T, st *sqlstore.DB) []string {
	ids, err := st.LedgerWorkspaceIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// itemWith finds the first item whose expected outcome is a gated new
// ticket (min severity high): the double-charge report in orbit_run.
func gatedItem(t *testing.T, d triage.Dataset, component string) triage.Item {
	t.Helper()
	for _, it := range d.Items {
		if e := d.Expected[it.ID]; e.Outcome == triage.OutcomeNewTicket && e.Component == component && e.MinSeverity == "high" {
			return it
		}
	}
	t.Fatalf("no gated %s item", component)
	return triage.Item{}
}

// The gate pauses a high-severity ticket for a person; the operator raises
// it to critical; the ticket records who approved; after a restart the
// decision is applied without asking again.
func TestGateAndRestart(t *testing.T) {
	d := loadOrbit(t)
	ctx := context.Background()
	dir := t.TempDir()
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(dir, "gate.db"), key)
	setup, err := crew.NewEvalSetup(ctx, st, runtimeFor(st, nil), d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	it := gatedItem(t, d, "billing")
	caseID, err := setup.Submit(ctx, it)
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := setup.Run(ctx, caseID, false)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != signoff.TriageParked {
		t.Fatalf("run %s, want parked at the gate", run.Status)
	}
	c, _ := st.GetCase(ctx, setup.Operator, caseID)
	if c.State != workflow.BugAwaitingTriageApproval {
		t.Fatalf("case %s, want awaiting_triage_approval", c.State)
	}
	// The gate's chat card records the case's state and version when its
	// job runs, which may be at once: the case is at the gate before the
	// decision is asked, or the card is stale before anyone sees it.
	evs, err := st.ListEvents(ctx, setup.Operator, caseID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var movedAt, askedAt int64
	for _, e := range evs {
		switch {
		case e.Type == "case.transitioned" && strings.Contains(string(e.Payload), `"to":"`+workflow.BugAwaitingTriageApproval+`"`):
			movedAt = e.Seq
		case e.Type == "decision.requested":
			askedAt = e.Seq
		}
	}
	if movedAt == 0 || askedAt == 0 || askedAt < movedAt {
		t.Fatalf("gate asked at seq %d, case moved to the gate at seq %d: the card would be stale", askedAt, movedAt)
	}
	tickets, _ := st.ListTickets(ctx, setup.Operator, setup.Project)
	before := len(tickets)
	gate, err := crew.GateOf(ctx, st, setup.Operator, caseID)
	if err != nil {
		t.Fatal(err)
	}
	var proposal map[string]any
	json.Unmarshal(gate.Proposal, &proposal)
	if proposal["severity"] != "high" && proposal["severity"] != "critical" {
		t.Fatalf("proposal %v", proposal)
	}
	// Agents cannot answer the gate.
	tri, _ := agentOf(t, st, setup.Workspace, signoff.RoleTriager)
	if _, err := st.DecideAmended(ctx, tri, gate.DecisionID, gate.Digest, true, "", nil); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("agent decided: %v", err)
	}
	// A wrong digest or a bad severity is refused.
	if _, err := st.DecideAmended(ctx, setup.Operator, gate.DecisionID, strings.Repeat("0", 64), true, "", nil); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("other digest: %v", err)
	}
	if _, err := st.DecideAmended(ctx, setup.Operator, gate.DecisionID, gate.Digest, true, "", json.RawMessage(`{"severity":"urgent"}`)); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("bad severity: %v", err)
	}
	// The operator raises it to critical, then the server restarts.
	if _, err := st.DecideAmended(ctx, setup.Operator, gate.DecisionID, gate.Digest, true, "double charge: critical", json.RawMessage(`{"severity":"critical"}`)); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = openStore(t, filepath.Join(dir, "gate.db"), key)
	defer st.Close()
	rt := runtimeFor(st, nil)
	r2 := &crew.Runner{Store: st, Runtime: rt, Tools: rt.Tools}
	run, err = r2.Drive(ctx, setup.Workspace, caseID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != signoff.TriageDone || run.Outcome != triage.OutcomeNewTicket {
		t.Fatalf("after restart: %s/%s", run.Status, run.Outcome)
	}
	tk, err := st.GetTicket(ctx, setup.Operator, setup.Project, run.TicketID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Severity != "critical" || tk.ApprovedBy != "human:"+setup.Operator.ID {
		t.Errorf("ticket %s severity %s approved by %q", tk.ID, tk.Severity, tk.ApprovedBy)
	}
	ds, _ := st.ListDecisions(ctx, setup.Operator, caseID)
	if len(ds) != 1 {
		t.Errorf("%d decisions: the gate asked again", len(ds))
	}
	tickets, _ = st.ListTickets(ctx, setup.Operator, setup.Project)
	if len(tickets) != before+1 {
		t.Errorf("%d tickets filed, want 1", len(tickets)-before)
	}
	c, _ = st.GetCase(ctx, setup.Operator, caseID)
	if c.State != workflow.BugTicketed {
		t.Errorf("case %s, want ticketed", c.State)
	}
}

func agentOf(t *testing.T, st *sqlstore.DB, ws string, role signoff.Role) (signoff.Actor, error) {
	t.Helper()
	as, err := st.ListAgents(context.Background(), ws, signoff.DefaultPresenceWindow)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Role == role {
			return a.Actor, nil
		}
	}
	t.Fatalf("no %s", role)
	return signoff.Actor{}, nil
}

// scripted is an investigator that insists on its own claim, as a stubborn
// model would: searches first, then the claim, again and again.
func scripted(claim string) agent.Policy {
	return func(ctx context.Context, req agent.Request) (agent.Response, error) {
		turns := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turns++
			}
		}
		var calls []agent.ToolCall
		if turns == 0 {
			calls = []agent.ToolCall{
				{ID: "a", Name: "search_tracker", Arguments: `{"query":"the app crashes"}`},
				{ID: "b", Name: "search_recent_reports", Arguments: `{"query":"the app crashes"}`},
			}
		} else {
			calls = []agent.ToolCall{{ID: "c", Name: "record_investigation", Arguments: claim}}
		}
		return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: calls}}, nil
	}
}

// Guards through the tools: a model that insists on a weak duplicate, or
// names a ticket it never saw, is refused every time and ends with a
// person, never with a duplicate recorded.
func TestGuardsRefuseStubbornModel(t *testing.T) {
	d := loadOrbit(t)
	ctx := context.Background()
	tests := []struct{ name, claim, want string }{
		{"ticket never seen", `{"verdict":"duplicate","duplicate_of":"XX-999","confidence":0.9,"rationale":"sure"}`, "never saw"},
		{"batch item never seen", `{"verdict":"duplicate","duplicate_of":"batch:nothing","confidence":0.9,"rationale":"sure"}`, "never saw"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, key, _ := ed25519.GenerateKey(nil)
			st := openStore(t, filepath.Join(t.TempDir(), "g.db"), key)
			defer st.Close()
			rt := runtimeFor(st, map[string]agent.Policy{crew.RoleInvestigator: scripted(tc.claim)})
			setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
			if err != nil {
				t.Fatal(err)
			}
			caseID, err := setup.Submit(ctx, d.Items[0])
			if err != nil {
				t.Fatal(err)
			}
			run, _, err := setup.Run(ctx, caseID, true)
			if err != nil {
				t.Fatal(err)
			}
			// The run ends with a person (done as needs_human, so later
			// reports are not held behind it), never as a duplicate.
			if run.Status != signoff.TriageDone || run.Outcome != triage.OutcomeNeedsHuman {
				t.Fatalf("run ended %s/%s, want done/needs_human", run.Status, run.Outcome)
			}
			ts, _ := st.ListTasks(ctx, setup.Operator, signoff.TaskFilter{CaseID: caseID, Limit: 20})
			var inv *signoff.Task
			for i := range ts {
				if ts[i].Kind == crew.RoleInvestigator {
					inv = &ts[i]
				}
			}
			if inv == nil || inv.Outcome != signoff.OutcomeNeedsHuman {
				t.Fatalf("investigator task %+v", inv)
			}
			calls, _ := st.ListCalls(ctx, setup.Operator, inv.ID)
			refused := 0
			for _, c := range calls {
				if strings.Contains(string(c.Request), tc.want) {
					refused++
				}
			}
			if refused == 0 {
				t.Errorf("no refusal mentioning %q reached the model", tc.want)
			}
		})
	}
}

// A weak hit the investigator did see is still not a duplicate.
func TestGuardRefusesWeakDuplicate(t *testing.T) {
	hits := []triage.Hit{{ID: "T-1", Score: 0.4}, {ID: "T-2", Score: 0.9, Strong: true}}
	if err := triage.CheckDuplicate("T-1", hits); err == nil {
		t.Fatal("a weak hit was accepted as the duplicate")
	}
	if err := triage.CheckDuplicate("T-2", hits); err != nil {
		t.Fatal(err)
	}
}

// The example configuration for a local model is valid against the real
// tools.
func TestExampleRolesParse(t *testing.T) {
	b, err := os.ReadFile("../docs/examples/triage-ollama.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := agent.NewRegistry(agent.BaseTools()...)
	crew.Register(reg)
	cfg, err := agent.ParseConfig(b, reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{crew.RoleIntake, crew.RoleInvestigator, crew.RoleTriage, crew.RoleWriter} {
		if cfg.Roles[r].Provider != agent.ProviderOpenAI || cfg.Roles[r].Actor != signoff.RoleTriager {
			t.Errorf("%s: %+v", r, cfg.Roles[r])
		}
	}
}
