package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/workflow"
)

// agentWrites classifies every route an agent token may send a write to.
// A route added where an agent can reach it fails TestAgentAuthority until
// it is classified here:
//
//   - case: changes a case; needs the agent's open task on it and a
//     state no person decided (each has a request in caseWriteRequests);
//   - voice: a message or an attention note, which moves nothing;
//   - receipt: a task route, bound to the task's receipt by the store
//     (TestTaskReceipts);
//   - other: presence, a ticket comment, a new case.
var agentWrites = map[string]string{
	"POST /api/v1/cases/{id}/transitions":                  "case",
	"POST /api/v1/cases/{id}/plan":                         "case",
	"POST /api/v1/cases/{id}/attention":                    "voice",
	"POST /api/v1/cases/{id}/messages":                     "voice",
	"POST /api/v1/tasks/{id}/submit":                       "receipt",
	"POST /api/v1/tasks/{id}/handoff":                      "receipt",
	"POST /api/v1/tasks/{id}/close":                        "receipt",
	"POST /api/v1/agents/heartbeat":                        "other",
	"POST /api/v1/projects/{id}/tickets/{ticket}/comments": "other",
	"POST /api/v1/cases":                                   "other",
}

const authorityPlan = `{"target":"flag:prod/authority_flag","params":{"value":true},"health_check":{"kind":"http","method":"GET","url":"http://127.0.0.1:1/health","expect_status":200,"window_seconds":2,"interval_seconds":1}}`

// caseWriteRequests are the requests an agent could change case c with
// through route: every command an agent role appears on from c's state
// (and escalate), or a plan.
var caseWriteRequests = map[string]func(c signoff.Case) []request{
	"POST /api/v1/cases/{id}/transitions": func(c signoff.Case) []request {
		cmds := storetest.AgentCommands(c.Kind, c.State)
		if !slices.Contains(cmds, "escalate") {
			cmds = append(cmds, "escalate")
		}
		var out []request
		for _, cmd := range cmds {
			out = append(out, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/transitions",
				body: fmt.Sprintf(`{"command":%q,"note":"I know better than the approver"}`, cmd)})
		}
		return out
	},
	"POST /api/v1/cases/{id}/plan": func(c signoff.Case) []request {
		if c.Kind != signoff.KindChange {
			return nil
		}
		return []request{{method: "POST", path: "/api/v1/cases/" + c.ID + "/plan", body: authorityPlan}}
	},
}

// agentOf is the workspace's (first) agent of role.
func (w *workspace) agentOf(t testing.TB, role signoff.Role) signoff.Actor {
	t.Helper()
	as, err := w.store.ListActors(context.Background(), w.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Role == role && a.DisabledAt == nil {
			return a
		}
	}
	t.Fatalf("no %s agent", role)
	return signoff.Actor{}
}

// TestAgentAuthority walks every agent role through every route an agent
// may reach that changes a case, in every state a person's decision
// produced (workflow.HumanDecided), with and without an open task of its
// own on the case: every attempt is refused with a problem that says why
// and leaves the case and the ledger as they were. An agent's voice (a
// message, an attention note) still works there and moves nothing; on a
// case no person decided, an agent on its open task still acts, and
// without one it does not.
func TestAgentAuthority(t *testing.T) {
	t.Parallel()

	// Every write an agent may reach is classified, and every case write
	// has its requests.
	for _, rt := range httpapi.RouteTable() {
		if rt.Public || strings.HasPrefix(rt.Pattern, "GET ") {
			continue
		}
		reach := rt.Op == ""
		for _, r := range signoff.AgentRoles {
			reach = reach || identity.Can(r, rt.Op)
		}
		class, ok := agentWrites[rt.Pattern]
		switch {
		case reach && !ok:
			t.Errorf("agents reach %s, which agentWrites does not classify: does it change a case?", rt.Pattern)
		case !reach && ok:
			t.Errorf("agentWrites classifies %s, which no agent reaches", rt.Pattern)
		case class == "case" && caseWriteRequests[rt.Pattern] == nil:
			t.Errorf("case write %s has no requests to try", rt.Pattern)
		}
	}

	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	ctx := context.Background()
	op := w.actor(t, "olga", signoff.RoleOperator)
	reporter := w.actor(t, "rita", signoff.RoleReporter)
	if _, err := store.CreateFlag(ctx, w.owner, w.proj.ID, "prod", "authority_flag", signoff.FlagBoolean, json.RawMessage("false")); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetChangePolicy(ctx, w.owner, changePolicyYAML(op.ID), 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	desk := newChangeDesk(store)
	srv := serveDesk(t, store, httpapi.WithChangeDesk(desk))
	tokens := map[signoff.Role]string{}
	agents := map[signoff.Role]signoff.Actor{}
	for _, role := range signoff.AgentRoles {
		agents[role] = w.actor(t, string(role)+" agent", role)
		tokens[role] = w.token(t, agents[role])
	}
	newCase := func(t *testing.T, kind signoff.CaseKind) signoff.Case {
		t.Helper()
		if kind == signoff.KindChange {
			c, _, err := desk.Request(ctx, w.owner, changedesk.RequestInput{ProjectID: w.proj.ID, Reason: "turn authority_flag on in prod for the launch"})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		return w.newCase(t, kind, reporter.ID)
	}
	head := func() int64 { return w.head(t) }
	unchanged := func(t *testing.T, what string, c signoff.Case, before int64) {
		t.Helper()
		cur, err := store.GetCase(ctx, w.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State != c.State || cur.Version != c.Version {
			t.Fatalf("%s moved the case from %s v%d to %s v%d", what, c.State, c.Version, cur.State, cur.Version)
		}
		if h := head(); h != before {
			t.Fatalf("%s: ledger head moved from %d to %d", what, before, h)
		}
	}

	tried := 0
	for _, kind := range []signoff.CaseKind{signoff.KindBug, signoff.KindChange} {
		for _, state := range workflow.HumanDecidedStates(kind) {
			c, err := storetest.BringTo(ctx, store, w.owner, reporter, newCase(t, kind), state)
			if err != nil {
				t.Fatal(err)
			}
			for _, role := range signoff.AgentRoles {
				for _, withTask := range []bool{false, true} {
					var task signoff.Task
					if withTask {
						task = storetest.GiveTask(t, store, w.owner, agents[role], c.ID)
					}
					for _, route := range slices.Sorted(maps.Keys(caseWriteRequests)) {
						for _, rq := range caseWriteRequests[route](c) {
							what := fmt.Sprintf("%s (task %v) %s %s on a %s in %s", role, withTask, route, rq.body, kind, state)
							before := head()
							rq.token = tokens[role]
							got := do(t, srv, rq)
							if got.status != http.StatusForbidden && got.status != http.StatusConflict {
								t.Fatalf("%s: status %d, want 403 or 409 (%s)", what, got.status, got.body)
							}
							p := got.problem(t)
							if got.status == http.StatusConflict && !strings.Contains(p.Detail, "a person's decision") || p.Detail == "" {
								t.Fatalf("%s: %d %q does not say why", what, got.status, p.Detail)
							}
							unchanged(t, what, c, before)
							tried++
						}
					}
					if !withTask {
						continue
					}
					// The agent's voice: an attention note and a message,
					// neither of which moves the case.
					before := head()
					got := do(t, srv, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/attention", token: tokens[role],
						body: `{"note":"the approved plan misses the EU region"}`})
					if got.status != http.StatusCreated {
						t.Fatalf("%s asks for attention in %s: %d %s", role, state, got.status, got.body)
					}
					unchanged(t, "attention", c, before+1)
					if _, err := store.CloseTask(ctx, w.owner, task.ID, signoff.OutcomeCancelled, "next role"); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	if tried < 2*len(signoff.AgentRoles)*(len(workflow.HumanDecidedStates(signoff.KindBug))+len(workflow.HumanDecidedStates(signoff.KindChange))) {
		t.Fatalf("tried only %d refusals", tried)
	}

	// Where no person has decided, the receipt decides: without an open
	// task no agent escalates, with one every agent does.
	for _, role := range signoff.AgentRoles {
		c, err := storetest.BringTo(ctx, store, w.owner, reporter, newCase(t, signoff.KindBug), workflow.BugAwaitingApproval)
		if err != nil {
			t.Fatal(err)
		}
		rq := request{method: "POST", path: "/api/v1/cases/" + c.ID + "/transitions", token: tokens[role], body: `{"command":"escalate","note":"out of scope"}`}
		before := head()
		got := do(t, srv, rq)
		if got.status != http.StatusForbidden || !strings.Contains(got.problem(t).Detail, "open task") {
			t.Fatalf("%s escalates without a task: %d %s", role, got.status, got.body)
		}
		unchanged(t, "escalate without a task", c, before)
		storetest.GiveTask(t, store, w.owner, agents[role], c.ID)
		var res struct{ Case signoff.Case }
		got = do(t, srv, rq)
		if got.status != http.StatusOK {
			t.Fatalf("%s escalates on its task: %d %s", role, got.status, got.body)
		}
		got.decode(t, &res)
		if res.Case.State != workflow.BugNeedsHuman {
			t.Fatalf("%s escalated to %s", role, res.Case.State)
		}
	}
	// The planner drafts a plan for a request no one has decided, on its
	// task only.
	ch := newCase(t, signoff.KindChange)
	rq := request{method: "POST", path: "/api/v1/cases/" + ch.ID + "/plan", token: tokens[signoff.RolePlanner], body: authorityPlan}
	if got := do(t, srv, rq); got.status != http.StatusForbidden {
		t.Fatalf("plan without a task: %d %s", got.status, got.body)
	}
	storetest.GiveTask(t, store, w.owner, agents[signoff.RolePlanner], ch.ID)
	if got := do(t, srv, rq); got.status != http.StatusCreated {
		t.Fatalf("plan on the planner's task: %d %s", got.status, got.body)
	}
	// No task ever on a case: no attention either.
	other := newCase(t, signoff.KindBug)
	if got := do(t, srv, request{method: "POST", path: "/api/v1/cases/" + other.ID + "/attention", token: tokens[signoff.RoleFixer],
		body: `{"note":"look"}`}); got.status != http.StatusForbidden {
		t.Fatalf("attention on a case never worked: %d %s", got.status, got.body)
	}
	t.Logf("%d refusals", tried)
}

// TestAgentEventsFiltered: an agent's GET of a case's events shows
// exactly what its event stream shows of that case: everything of a case
// it has a task on, nothing of one it has none on.
func TestAgentEventsFiltered(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	fixer := w.actor(t, "fixer", signoff.RoleFixer)
	token := w.token(t, fixer)
	worked, other := w.newCase(t, signoff.KindBug, ""), w.newCase(t, signoff.KindBug, "")
	storetest.GiveTask(t, store, w.owner, fixer, worked.ID)
	w.move(t, worked, "start_triage")
	w.move(t, other, "start_triage", "escalate")

	type evs struct {
		Events []signoff.Event `json:"events"`
	}
	streamed := map[string][]int64{}
	got := do(t, srv, request{method: "GET", path: "/api/v1/events?after=0&once=1", token: token})
	if got.status != http.StatusOK {
		t.Fatalf("stream: %d %s", got.status, got.body)
	}
	for _, line := range strings.Split(string(got.body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e struct {
			Seq    int64  `json:"seq"`
			CaseID string `json:"case_id"`
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatal(err)
		}
		streamed[e.CaseID] = append(streamed[e.CaseID], e.Seq)
	}
	for _, c := range []signoff.Case{worked, other} {
		var listed, all evs
		do(t, srv, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/events", token: token}).decode(t, &listed)
		do(t, srv, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/events", token: w.ownerToken}).decode(t, &all)
		var seqs []int64
		for _, e := range listed.Events {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(seqs, streamed[c.ID]) {
			t.Fatalf("case %s: listed %v, streamed %v", c.ID, seqs, streamed[c.ID])
		}
		if want := map[string]int{worked.ID: len(all.Events), other.ID: 0}[c.ID]; len(seqs) != want || len(all.Events) < 2 {
			t.Fatalf("case %s: the fixer lists %d of %d events, want %d", c.ID, len(seqs), len(all.Events), want)
		}
	}
}
