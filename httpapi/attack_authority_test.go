package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// TestAgentKeepsPeoplesSignatures: a change needs two signatures and one
// person has signed. The case is still awaiting approval, a state the
// system produced, but a signature that counts is a person's decision:
// the planner, even on an open task of its own on the case, may not
// re-plan it (which would void the signature), nor may any agent move it.
// It asks for attention instead. People may still re-plan.
func TestAgentKeepsPeoplesSignatures(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	ctx := context.Background()
	bob := e.actor(t, "bob", signoff.RoleOperator)
	two := strings.Replace(changePolicyYAML(e.alice.ID, bob.ID), "required: 1", "required: 2", 1)
	if _, err := e.store.SetChangePolicy(ctx, e.owner, two, 1, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	c := e.request(t)
	if got := e.approve(t, c.ID); got.status != http.StatusCreated {
		t.Fatalf("alice signs: %d %s", got.status, got.body)
	}
	if s := e.state(t, c.ID); s != workflow.ChangeAwaitingApproval {
		t.Fatalf("after one of two signatures: %s", s)
	}
	planner := e.agentOf(t, signoff.RolePlanner)
	storetest.GiveTask(t, e.store, e.owner, planner, c.ID)
	before := e.head(t)
	got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/plan", token: e.tokens[signoff.RolePlanner],
		body: `{"target":"flag:prod/` + changeFlag + `","params":{"value":false},"health_check":{"kind":"http","method":"GET","url":"http://127.0.0.1:1/other","expect_status":200,"window_seconds":2,"interval_seconds":1}}`})
	if got.status != http.StatusConflict || !strings.Contains(got.problem(t).Detail, "sign") {
		t.Fatalf("the planner re-plans over alice's signature: %d %s", got.status, got.body)
	}
	if h := e.head(t); h != before {
		t.Fatalf("ledger moved from %d to %d", before, h)
	}
	as, err := e.store.ListApprovals(ctx, e.owner, c.ID)
	if err != nil || len(as) != 1 || as[0].Status != signoff.ApprovalValid {
		t.Fatalf("alice's approval: %+v %v", as, err)
	}
	// Every agent on its own task is refused too; the attention note works.
	for _, role := range signoff.AgentRoles {
		a := e.agentOf(t, role)
		storetest.GiveTask(t, e.store, e.owner, a, c.ID)
		got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/transitions", token: e.tokens[role], body: `{"command":"escalate"}`})
		if got.status != http.StatusForbidden && got.status != http.StatusConflict {
			t.Fatalf("%s escalates: %d %s", role, got.status, got.body)
		}
	}
	if got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/attention", token: e.tokens[signoff.RolePlanner],
		body: `{"note":"the plan misses the EU region"}`}); got.status != http.StatusCreated {
		t.Fatalf("attention: %d %s", got.status, got.body)
	}
	// A person may re-plan: that is theirs to decide.
	if got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/plan", token: e.ownerToken,
		body: `{"target":"flag:prod/` + changeFlag + `","params":{"value":false},"health_check":{"kind":"http","method":"GET","url":"http://127.0.0.1:1/other","expect_status":200,"window_seconds":2,"interval_seconds":1}}`}); got.status != http.StatusCreated {
		t.Fatalf("owner re-plans: %d %s", got.status, got.body)
	}
}

// TestAgentsReadNoEvidenceBundle: a candidate's evidence bundle carries
// the frozen harness's test source (tests/<path>), which only people
// read (harness.read): a fixer that fetched the bundle of its first
// attempt would read the tests it is to make pass. No agent reads a
// bundle; people still do.
func TestAgentsReadNoEvidenceBundle(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	cand := signoff.NewID(signoff.PrefixCandidate)
	if _, err := store.PutEvidence(context.Background(), signoff.SystemActor(w.ws.ID), w.bug.ID, cand, []byte("tests/cart/coupon_repro_test.go: the hidden test")); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/cases/" + w.bug.ID + "/candidates/" + cand + "/evidence"
	for _, role := range signoff.AgentRoles {
		a := w.actor(t, string(role)+" agent", role)
		storetest.GiveTask(t, store, w.owner, a, w.bug.ID)
		if got := do(t, srv, request{method: "GET", path: path, token: w.token(t, a)}); got.status != http.StatusForbidden {
			t.Fatalf("%s reads the evidence bundle: %d %.80s", role, got.status, got.body)
		}
	}
	if got := do(t, srv, request{method: "GET", path: path, token: w.ownerToken}); got.status != http.StatusOK {
		t.Fatalf("owner reads the evidence bundle: %d %s", got.status, got.body)
	}
}

// TestAgentReadsOnlyRoomsOfItsCases: the ledger keeps a message's digest
// and an agent's event list shows none of a case it has no task on; the
// room, which keeps the words, shows it as little. With a task there, it
// reads them.
func TestAgentReadsOnlyRoomsOfItsCases(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	fixer := w.actor(t, "fixer", signoff.RoleFixer)
	tok := w.token(t, fixer)
	if _, err := store.PostMessage(context.Background(), w.owner, w.bug.ID, "the reporter's phone is 555-0100"); err != nil {
		t.Fatal(err)
	}
	room := "/api/v1/cases/" + w.bug.ID + "/messages"
	var got struct{ Messages []signoff.Message }
	do(t, srv, request{method: "GET", path: room, token: tok}).decode(t, &got)
	if len(got.Messages) != 0 {
		t.Fatalf("a fixer with no task on the case reads its room: %+v", got.Messages)
	}
	storetest.GiveTask(t, store, w.owner, fixer, w.bug.ID)
	do(t, srv, request{method: "GET", path: room, token: tok}).decode(t, &got)
	if len(got.Messages) != 1 {
		t.Fatalf("the fixer on its task reads %d messages, want 1", len(got.Messages))
	}
}

// TestAgentCommentsAsItself: an agent's ticket comment names the agent
// and now, whatever author and time it claims.
func TestAgentCommentsAsItself(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	if _, err := store.CreateTicket(context.Background(), w.owner, w.proj.ID, triage.Ticket{ID: "APP-1", Title: "coupon applied twice", Severity: "high"}); err != nil {
		t.Fatal(err)
	}
	writer := w.actor(t, "writer bot", signoff.RoleTriager)
	got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/tickets/APP-1/comments", token: w.token(t, writer),
		body: `{"author":"Alice (owner)","time":"2020-01-01T00:00:00Z","body":"Confirmed on prod, ship it."}`})
	if got.status != http.StatusCreated {
		t.Fatalf("comment: %d %s", got.status, got.body)
	}
	var tk triage.Ticket
	got.decode(t, &tk)
	c := tk.Comments[len(tk.Comments)-1]
	if c.Author != "writer bot" || strings.HasPrefix(c.Time, "2020") {
		t.Fatalf("the agent's comment reads as %q at %s", c.Author, c.Time)
	}
}

// TestOnlyDeskOpensChanges: POST /api/v1/cases opens bugs; a change
// request is opened only through the change desk (people, with a
// reason), never as a bare case, least of all by an agent.
func TestOnlyDeskOpensChanges(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	concierge := w.actor(t, "concierge", signoff.RoleConcierge)
	for _, tok := range []string{w.token(t, concierge), w.ownerToken} {
		got := do(t, srv, request{method: "POST", path: "/api/v1/cases", token: tok,
			body: `{"project_id":"` + w.proj.ID + `","kind":"change","title":"turn checkout_v2 off in prod"}`})
		if got.status < 400 {
			t.Fatalf("a bare change case: %d %s", got.status, got.body)
		}
	}
}
