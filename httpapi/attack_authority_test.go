package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/storetest"
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
	if _, err := e.store.SetChangePolicy(ctx, e.owner, two, 1); err != nil {
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
