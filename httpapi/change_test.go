package httpapi_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/workflow"
)

const (
	changeFlag   = "checkout_v2"
	changeTarget = "flag:prod/" + changeFlag
	changeReason = "Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"
)

// changePolicyYAML allows prod flags at any time, approved by one of group.
func changePolicyYAML(group ...string) string {
	return `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals:
  required: 1
  group: [` + strings.Join(group, ", ") + `]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`
}

// newChangeDesk is a change desk over store: the flag actuator, the HTTP
// prober, a server key, no waiting between probes.
func newChangeDesk(store *sqlstore.DB) *changedesk.Desk {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err)
	}
	return &changedesk.Desk{Store: store, Key: key,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: store}},
		Health:    changedesk.HTTPProber{},
		Sleep:     func(context.Context, time.Duration) error { return nil },
		LockWait:  5 * time.Second}
}

// changeEnv is a workspace whose project has the flag checkout_v2 in prod
// (on), a live app whose /checkout fails while the flag is on, repository
// settings naming the app as the live URL with a smoke check, a change
// policy with alice (an operator with a registered key) as the approver,
// and the API served with the bug and change desks.
type changeEnv struct {
	*workspace
	desk       *changedesk.Desk
	srv        *httptest.Server
	app        *httptest.Server
	alice      signoff.Actor
	aliceToken string
	aliceKey   ed25519.PrivateKey
	tokens     map[signoff.Role]string
}

func newChangeEnv(t *testing.T) *changeEnv {
	t.Helper()
	ctx := context.Background()
	store := openStore(t)
	e := &changeEnv{workspace: newWorkspace(t, store, "Acme"), tokens: map[signoff.Role]string{}}
	e.alice = e.actor(t, "alice", signoff.RoleOperator)
	e.aliceToken = e.token(t, e.alice)
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.RegisterKey(ctx, e.alice, string(pemKey)); err != nil {
		t.Fatal(err)
	}
	e.aliceKey = priv
	for _, r := range signoff.AllRoles() {
		if r == signoff.RoleOwner {
			e.tokens[r] = e.ownerToken
			continue
		}
		e.tokens[r] = e.token(t, e.actor(t, string(r)+" one", r))
	}
	if _, err := store.CreateFlag(ctx, e.owner, e.proj.ID, "prod", changeFlag, signoff.FlagBoolean, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	e.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := store.GetFlag(r.Context(), signoff.SystemActor(e.ws.ID), e.proj.ID, "prod", changeFlag)
		if err != nil || string(f.Value) == "true" {
			http.Error(w, "payment provider v2 unavailable", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("order total 9000"))
	}))
	t.Cleanup(e.app.Close)
	if _, err := store.SetRepoSettings(ctx, signoff.CLIActor(e.ws.ID), e.proj.ID, signoff.RepoSettings{Path: t.TempDir(), LiveURL: e.app.URL,
		Smoke: []signoff.SmokeCheck{{Name: "checkout", Method: "GET", Path: "/checkout", ExpectStatus: 200, ExpectBody: "total"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetChangePolicy(ctx, e.owner, changePolicyYAML(e.alice.ID), 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	e.desk = newChangeDesk(store)
	e.srv = serve(t, store, nil, unlimited(), httpapi.WithChangeDesk(e.desk))
	return e
}

func (e *changeEnv) do(t *testing.T, rq request) response {
	t.Helper()
	return do(t, e.srv, rq)
}

// changeResult is the body of a request or a plan.
type changeResult struct {
	Case         signoff.Case       `json:"case"`
	Loop         signoff.ChangeLoop `json:"loop"`
	Plan         signoff.ChangePlan `json:"plan"`
	Review       change.Result      `json:"review"`
	PlannerError *struct {
		Code, Detail string
	} `json:"planner_error"`
}

// request opens a change request as the owner with the builtin planner
// and returns the case, awaiting approval.
func (e *changeEnv) request(t *testing.T) signoff.Case {
	t.Helper()
	got := e.do(t, request{method: "POST", path: "/api/v1/projects/" + e.proj.ID + "/changes", token: e.ownerToken,
		body: mustJSON(t, map[string]string{"reason": changeReason, "plan": "builtin"})})
	if got.status != http.StatusCreated {
		t.Fatalf("request: %d %s", got.status, got.body)
	}
	var res changeResult
	got.decode(t, &res)
	if res.PlannerError != nil || res.Case.State != workflow.ChangeAwaitingApproval || res.Case.Kind != signoff.KindChange {
		t.Fatalf("request: case %s, planner error %+v, loop %+v", res.Case.State, res.PlannerError, res.Loop.State)
	}
	return res.Case
}

// changeCardBody is the approval card of a change case as served.
type changeCardBody struct {
	Kind string `json:"kind"`
	changedesk.Card
}

func (e *changeEnv) card(t *testing.T, caseID string) changeCardBody {
	t.Helper()
	got := e.do(t, request{method: "GET", path: "/api/v1/cases/" + caseID + "/approval", token: e.aliceToken})
	if got.status != http.StatusOK {
		t.Fatalf("card: %d %s", got.status, got.body)
	}
	var card changeCardBody
	got.decode(t, &card)
	return card
}

// approve signs the card of caseID as alice, the way signoff approve
// does, and posts it.
func (e *changeEnv) approve(t *testing.T, caseID string) response {
	t.Helper()
	card := e.card(t, caseID)
	st := approval.NewStatement(caseID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, e.aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	return e.do(t, request{method: "POST", path: "/api/v1/cases/" + caseID + "/approvals", token: e.aliceToken,
		body: mustJSON(t, map[string]any{"envelope": env, "via": "cli-signed"})})
}

// approved returns a case whose builtin plan alice approved.
func (e *changeEnv) approved(t *testing.T) signoff.Case {
	t.Helper()
	c := e.request(t)
	got := e.approve(t, c.ID)
	if got.status != http.StatusCreated {
		t.Fatalf("approve: %d %s", got.status, got.body)
	}
	var res struct{ Case signoff.Case }
	got.decode(t, &res)
	if res.Case.State != workflow.ChangeApproved {
		t.Fatalf("after approval: %s", res.Case.State)
	}
	return res.Case
}

func (e *changeEnv) execute(t *testing.T, token, caseID string) response {
	t.Helper()
	return e.do(t, request{method: "POST", path: "/api/v1/cases/" + caseID + "/execute", token: token})
}

func (e *changeEnv) flag(t *testing.T) signoff.Flag {
	t.Helper()
	f, err := e.store.GetFlag(context.Background(), e.owner, e.proj.ID, "prod", changeFlag)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (e *changeEnv) state(t *testing.T, caseID string) string {
	t.Helper()
	c, err := e.store.GetCase(context.Background(), e.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	return c.State
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChangeLoopHTTP walks a change through the API: the policy, a
// request with the builtin plan, the card, a signed approval, the gate,
// the receipt, a second execution refused as consumed, and a
// compensating rollback.
func TestChangeLoopHTTP(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)

	// The policy as stored and parsed.
	got := e.do(t, request{method: "GET", path: "/api/v1/change-policy", token: e.tokens[signoff.RolePlanner]})
	var pol struct {
		Set    bool
		Policy signoff.ChangePolicy
		Parsed change.Policy
		Digest string
	}
	got.decode(t, &pol)
	if !pol.Set || pol.Policy.Version != 1 || pol.Digest == "" || pol.Digest != pol.Policy.Digest || len(pol.Parsed.Approvals.Group) != 1 || pol.Parsed.Approvals.Group[0] != e.alice.ID {
		t.Fatalf("policy %+v", pol)
	}

	c := e.request(t)
	card := e.card(t, c.ID)
	if card.Kind != "change" || card.CaseID != c.ID || card.State != workflow.ChangeAwaitingApproval || card.Via != "builtin" || card.Reason != changeReason {
		t.Fatalf("card %+v", card)
	}
	var view struct {
		Case     signoff.Case
		Loop     signoff.ChangeLoop
		Plans    []signoff.ChangePlan
		Receipts []json.RawMessage
	}
	e.do(t, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/change", token: e.tokens[signoff.RoleViewer]}).decode(t, &view)
	if len(view.Plans) != 1 || len(view.Receipts) != 0 || view.Loop.State.PlanDigest != card.SubjectDigest || view.Plans[0].Digest != card.SubjectDigest {
		t.Fatalf("change view %+v, card digest %s", view, card.SubjectDigest)
	}
	// The card shows the whole plan, exactly as stored and signed.
	if !bytes.Equal(card.Plan, view.Plans[0].Body) {
		t.Fatalf("card plan %s, stored %s", card.Plan, view.Plans[0].Body)
	}
	plan, err := change.DecodePlan(card.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := change.PlanDigest(plan); d != card.SubjectDigest || plan.Target != changeTarget || string(plan.Params) != `{"value":false}` ||
		plan.HealthCheck.URL != e.app.URL+"/checkout" || string(plan.Rollback) != `{"value":true}` {
		t.Fatalf("plan %+v, digest %s", plan, d)
	}

	got = e.approve(t, c.ID)
	if got.status != http.StatusCreated {
		t.Fatalf("approve: %d %s", got.status, got.body)
	}
	var ar struct {
		Approval signoff.Approval
		Case     signoff.Case
	}
	got.decode(t, &ar)
	if ar.Case.State != workflow.ChangeApproved || ar.Approval.SubjectDigest != card.SubjectDigest || ar.Approval.ApproverID != e.alice.ID {
		t.Fatalf("approval %+v", ar)
	}

	got = e.execute(t, e.aliceToken, c.ID)
	if got.status != http.StatusOK {
		t.Fatalf("execute: %d %s", got.status, got.body)
	}
	var x changedesk.Execution
	got.decode(t, &x)
	if x.Outcome != changedesk.OutcomeExecuted || x.Case.State != workflow.ChangeExecuted || !x.Predicate.Health.Passed || x.Receipt.ID == "" {
		t.Fatalf("execution %s, case %s, health %+v", x.Outcome, x.Case.State, x.Predicate.Health)
	}
	if f := e.flag(t); string(f.Value) != "false" {
		t.Fatalf("flag after the change: %s", f.Value)
	}

	// One approval, one execution.
	p := e.execute(t, e.aliceToken, c.ID).problem(t)
	if p.Status != http.StatusConflict || p.Check != change.CheckConsumed || p.Drifted {
		t.Fatalf("second execution: %+v", p)
	}

	var rs struct {
		Receipts []struct {
			signoff.Receipt
			Predicate changedesk.ReceiptBody
		}
	}
	e.do(t, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/receipts", token: e.tokens[signoff.RoleRecorder]}).decode(t, &rs)
	if len(rs.Receipts) != 1 || rs.Receipts[0].ID != x.Receipt.ID || rs.Receipts[0].Predicate.Outcome != changedesk.OutcomeExecuted ||
		rs.Receipts[0].Predicate.PlanDigest != card.SubjectDigest {
		t.Fatalf("receipts %+v", rs)
	}
	if _, err := changedesk.OpenReceipt(rs.Receipts[0].Receipt, e.desk.Key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("receipt does not verify: %v", err)
	}

	// A compensating rollback is a new change that needs its own signature
	// (this policy pre-approves none).
	for _, role := range []signoff.Role{signoff.RoleViewer, signoff.RolePlanner, signoff.RoleFixer} {
		if got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/rollback", token: e.tokens[role], body: `{"reason":"undo"}`}); got.status != http.StatusForbidden {
			t.Fatalf("rollback as %s: %d", role, got.status)
		}
	}
	// The owner asks, so alice may sign it: no self-approval.
	got = e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/rollback", token: e.ownerToken, body: `{"reason":"the v2 flow is fixed; turn it back on"}`})
	if got.status != http.StatusCreated {
		t.Fatalf("rollback: %d %s", got.status, got.body)
	}
	var rb struct {
		Case      signoff.Case
		Execution *changedesk.Execution
	}
	got.decode(t, &rb)
	if rb.Execution != nil || rb.Case.State != workflow.ChangeAwaitingApproval || rb.Case.ID == c.ID {
		t.Fatalf("rollback %+v", rb)
	}
	if got := e.approve(t, rb.Case.ID); got.status != http.StatusCreated {
		t.Fatalf("approve the rollback: %d %s", got.status, got.body)
	}
	got = e.execute(t, e.aliceToken, rb.Case.ID)
	if got.status != http.StatusOK {
		t.Fatalf("execute the rollback: %d %s", got.status, got.body)
	}
	x = changedesk.Execution{}
	got.decode(t, &x)
	// Turning v2 back on breaks checkout again: the health check fails and
	// the gate restores the state it found.
	if x.Outcome != changedesk.OutcomeRolledBack || x.Predicate.Health.Passed || string(e.flag(t).Value) != "false" {
		t.Fatalf("rollback execution %s, health %+v, flag %s", x.Outcome, x.Predicate.Health, e.flag(t).Value)
	}
}

// TestChangeGateRefusalsHTTP reaches the gate's checks through the API:
// each refusal is a problem naming its check, and nothing is applied.
func TestChangeGateRefusalsHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, e *changeEnv, caseID string) string // returns the case id to execute
		status int
		check  string
		state  string // the case's state after the refusal; "" when none
	}{
		{"id_format", func(*testing.T, *changeEnv, string) string { return "case_1" }, 422, change.CheckIDFormat, ""},
		{"consumed", func(t *testing.T, e *changeEnv, caseID string) string {
			if got := e.execute(t, e.aliceToken, caseID); got.status != http.StatusOK {
				t.Fatalf("first execution: %d %s", got.status, got.body)
			}
			return caseID
		}, 409, change.CheckConsumed, workflow.ChangeExecuted},
		{"before_state", func(t *testing.T, e *changeEnv, caseID string) string {
			f := e.flag(t)
			if _, _, err := e.store.SetFlag(context.Background(), signoff.SystemActor(e.ws.ID), signoff.FlagWrite{ProjectID: e.proj.ID, Env: "prod", Key: changeFlag,
				Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "test: someone flips it by hand"}); err != nil {
				t.Fatal(err)
			}
			return caseID
		}, 409, change.CheckBeforeState, workflow.ChangeDrifted},
		{"plan_digest", func(t *testing.T, e *changeEnv, caseID string) string {
			res, err := e.store.SQL().ExecContext(context.Background(), `UPDATE change_plans SET body = replace(body, '"value":false', '"value":true') WHERE case_id = $1`, caseID)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("edited %d plans", n)
			}
			return caseID
		}, 409, change.CheckPlanDigest, workflow.ChangeApproved},
		// A policy PUT through the API reviews waiting cases again at once
		// (TestPolicyChangeReviewsAgain); set in the store alone, it voids
		// the approval, which the gate refuses, and the case then waits
		// for a signature under the policy in force.
		{"policy_digest", func(t *testing.T, e *changeEnv, caseID string) string {
			e.setPolicyBehindTheDesk(t, changePolicyYAML(e.alice.ID)+"min_reason_length: 25\n", "")
			return caseID
		}, 409, change.CheckPolicyDigest, workflow.ChangeAwaitingApproval},
		{"signature", func(t *testing.T, e *changeEnv, caseID string) string {
			if _, err := e.store.SQL().ExecContext(context.Background(), `UPDATE approver_keys SET revoked_at = 1 WHERE actor_id = $1`, e.alice.ID); err != nil {
				t.Fatal(err)
			}
			return caseID
		}, 403, change.CheckSignature, workflow.ChangeApproved},
		// These two revive the voided approvals in the database to reach
		// the gate's own checks; the refused case is then reviewed under
		// the policy in force, which leaves no eligible approver.
		{"approver_allowed", func(t *testing.T, e *changeEnv, caseID string) string {
			e.setPolicyBehindTheDesk(t, changePolicyYAML(e.owner.ID), caseID)
			return caseID
		}, 403, change.CheckApprover, workflow.ChangeReviewFailed},
		{"quorum", func(t *testing.T, e *changeEnv, caseID string) string {
			e.setPolicyBehindTheDesk(t, strings.Replace(changePolicyYAML(e.alice.ID, e.owner.ID), "required: 1", "required: 2", 1), caseID)
			return caseID
		}, 403, change.CheckQuorum, workflow.ChangeReviewFailed},
		// The plan expired with the approval: expired, to be planned again.
		{"expired", func(t *testing.T, e *changeEnv, caseID string) string {
			e.desk.Now = func() time.Time { return time.Now().Add(24 * time.Hour) }
			return caseID
		}, 409, change.CheckExpired, workflow.ChangeExpired},
		{"lock", func(t *testing.T, e *changeEnv, caseID string) string {
			ok, err := e.store.LockTarget(context.Background(), signoff.SystemActor(e.ws.ID), changeTarget, "another-execution", time.Hour)
			if err != nil || !ok {
				t.Fatalf("lock: %v %v", ok, err)
			}
			e.desk.LockWait = 200 * time.Millisecond
			return caseID
		}, 409, change.CheckLock, workflow.ChangeApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newChangeEnv(t)
			c := e.approved(t)
			id := tt.setup(t, e, c.ID)
			before := e.flag(t)
			got := e.execute(t, e.aliceToken, id)
			p := got.problem(t)
			if p.Status != tt.status || p.Check != tt.check || !strings.Contains(p.Detail, tt.check) {
				t.Fatalf("execute: %+v, want %d naming %s", p, tt.status, tt.check)
			}
			if p.Drifted != (tt.check == change.CheckBeforeState) {
				t.Fatalf("drifted = %v", p.Drifted)
			}
			if tt.state != "" && id == c.ID {
				if s := e.state(t, c.ID); s != tt.state {
					t.Fatalf("case %s, want %s", s, tt.state)
				}
				if p.CurrentState != tt.state {
					t.Fatalf("current_state %q, want %q", p.CurrentState, tt.state)
				}
			}
			if f := e.flag(t); f.Version != before.Version {
				t.Fatalf("flag written: v%d -> v%d", before.Version, f.Version)
			}
		})
	}
}

// TestPolicyChangeReviewsAgain: a policy PUT through the API voids the
// approvals of waiting cases and reviews them again under the new policy,
// so an approved case waits for a new signature instead of sitting
// approved with nothing the gate will pass.
func TestPolicyChangeReviewsAgain(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	c := e.approved(t)
	e.putPolicy(t, changePolicyYAML(e.alice.ID)+"min_reason_length: 25\n")
	if s := e.state(t, c.ID); s != workflow.ChangeAwaitingApproval {
		t.Fatalf("after a policy change the approved case is %s, want awaiting_approval", s)
	}
	before := e.flag(t)
	if got := e.execute(t, e.aliceToken, c.ID); got.status != http.StatusConflict || e.flag(t).Version != before.Version {
		t.Fatalf("execute after the policy change: %d %s", got.status, got.body)
	}
}

// TestChangeRoles: agents and viewers neither request, sign nor run a
// change; the planner drafts plans (recorded as an agent's, via mcp) and
// still cannot run one.
func TestChangeRoles(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	c := e.approved(t)
	card := e.card(t, c.ID)
	st := approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, time.Now(), time.Hour)
	env, err := approval.Sign(st, e.aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	approvalJSON := mustJSON(t, map[string]any{"envelope": env, "via": "cli-signed"})
	requestJSON := mustJSON(t, map[string]string{"reason": changeReason})
	for _, role := range append([]signoff.Role{signoff.RoleViewer}, signoff.AgentRoles...) {
		tok := e.tokens[role]
		for _, rq := range []request{
			{method: "POST", path: "/api/v1/cases/" + c.ID + "/execute"},
			{method: "POST", path: "/api/v1/cases/" + c.ID + "/approvals", body: approvalJSON},
			{method: "GET", path: "/api/v1/cases/" + c.ID + "/approval"},
			{method: "POST", path: "/api/v1/projects/" + e.proj.ID + "/changes", body: requestJSON},
			{method: "PUT", path: "/api/v1/change-policy", body: `{"yaml":"","expected_version":1}`},
		} {
			rq.token = tok
			if p := e.do(t, rq).problem(t); p.Status != http.StatusForbidden {
				t.Errorf("%s %s as %s: %+v", rq.method, rq.path, role, p)
			}
		}
	}
	if s := e.state(t, c.ID); s != workflow.ChangeApproved {
		t.Fatalf("case %s after the refusals", s)
	}

	// The planner drafts a plan over the API; people draft too. The server
	// records how: mcp for an agent, human for a person.
	planBody := mustJSON(t, map[string]any{"target": changeTarget, "params": map[string]any{"value": false},
		"health_check": map[string]any{"kind": "http", "method": "GET", "url": e.app.URL + "/checkout", "expect_status": 200, "window_seconds": 2, "interval_seconds": 1}})
	for _, tc := range []struct {
		role signoff.Role
		via  string
	}{{signoff.RolePlanner, "mcp"}, {signoff.RoleOperator, "human"}} {
		req := e.do(t, request{method: "POST", path: "/api/v1/projects/" + e.proj.ID + "/changes", token: e.ownerToken, body: requestJSON})
		var opened changeResult
		req.decode(t, &opened)
		if opened.Case.State != workflow.ChangeRequested {
			t.Fatalf("request without a plan: %s", opened.Case.State)
		}
		if tc.role.IsAgent() {
			// An agent plans on its open task on the case.
			storetest.GiveTask(t, e.store, e.owner, e.agentOf(t, tc.role), opened.Case.ID)
		}
		got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + opened.Case.ID + "/plan", token: e.tokens[tc.role], body: planBody})
		if got.status != http.StatusCreated {
			t.Fatalf("plan as %s: %d %s", tc.role, got.status, got.body)
		}
		var res changeResult
		got.decode(t, &res)
		if res.Case.State != workflow.ChangeAwaitingApproval || res.Plan.Via != tc.via || res.Plan.Digest != res.Loop.State.PlanDigest || !res.Review.OK || len(res.Review.Rules) == 0 {
			t.Fatalf("plan as %s: %+v", tc.role, res)
		}
		// The caller cannot choose via.
		if p := e.do(t, request{method: "POST", path: "/api/v1/cases/" + opened.Case.ID + "/plan", token: e.tokens[tc.role],
			body: strings.Replace(planBody, `{`, `{"via":"builtin",`, 1)}).problem(t); p.Status != http.StatusUnprocessableEntity {
			t.Fatalf("plan with via: %+v", p)
		}
		if p := e.execute(t, e.tokens[signoff.RolePlanner], opened.Case.ID).problem(t); p.Status != http.StatusForbidden {
			t.Fatalf("planner executes: %+v", p)
		}
	}
	// Other agents and viewers do not draft plans.
	for _, role := range []signoff.Role{signoff.RoleViewer, signoff.RoleFixer, signoff.RoleReviewer} {
		if p := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/plan", token: e.tokens[role], body: `{"builtin":true}`}).problem(t); p.Status != http.StatusForbidden {
			t.Fatalf("plan as %s: %+v", role, p)
		}
	}
}

// TestChangeRequestBuiltinFails: a request the builtin planner cannot read
// is opened all the same, with the planner's error beside it.
func TestChangeRequestBuiltinFails(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	got := e.do(t, request{method: "POST", path: "/api/v1/projects/" + e.proj.ID + "/changes", token: e.aliceToken,
		body: mustJSON(t, map[string]string{"title": "cache", "reason": "restart the cache cluster, it is slow since noon", "plan": "builtin"})})
	if got.status != http.StatusCreated {
		t.Fatalf("request: %d %s", got.status, got.body)
	}
	var res changeResult
	got.decode(t, &res)
	if res.PlannerError == nil || res.PlannerError.Code != signoff.EINVALID || res.PlannerError.Detail == "" || res.Case.State != workflow.ChangeRequested || res.Case.Title != "cache" {
		t.Fatalf("request %+v, planner error %+v", res.Case, res.PlannerError)
	}
	// The builtin planner through /plan says the same as a problem.
	if p := e.do(t, request{method: "POST", path: "/api/v1/cases/" + res.Case.ID + "/plan", token: e.aliceToken, body: `{"builtin":true}`}).problem(t); p.Code != signoff.EINVALID {
		t.Fatalf("builtin plan: %+v", p)
	}
	if p := e.do(t, request{method: "POST", path: "/api/v1/cases/" + res.Case.ID + "/plan", token: e.aliceToken, body: `{"builtin":true,"target":"` + changeTarget + `"}`}).problem(t); p.Code != signoff.EINVALID {
		t.Fatalf("builtin plan with a target: %+v", p)
	}
	if p := e.do(t, request{method: "POST", path: "/api/v1/projects/" + e.proj.ID + "/changes", token: e.aliceToken,
		body: mustJSON(t, map[string]string{"reason": changeReason, "plan": "model"})}).problem(t); p.Code != signoff.EINVALID {
		t.Fatalf("plan model: %+v", p)
	}
	// A bug is not a change.
	if p := e.do(t, request{method: "GET", path: "/api/v1/cases/" + e.bug.ID + "/change", token: e.aliceToken}).problem(t); p.Code != signoff.EINVALID {
		t.Fatalf("change view of a bug: %+v", p)
	}
}

// TestChangePolicyHTTP: the policy before one is set, setting it, and a
// stale version.
func TestChangePolicyHTTP(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	var pol struct {
		Set    bool
		Policy signoff.ChangePolicy
		Parsed change.Policy
		Digest string
	}
	do(t, srv, request{method: "GET", path: "/api/v1/change-policy", token: w.ownerToken}).decode(t, &pol)
	empty, err := change.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Set || pol.Policy.Version != 0 || pol.Policy.WorkspaceID != w.ws.ID || pol.Digest != empty.Digest() || len(pol.Parsed.AllowedTargets) != 0 {
		t.Fatalf("unset policy %+v", pol)
	}
	body := mustJSON(t, map[string]any{"yaml": changePolicyYAML(w.owner.ID), "expected_version": 0})
	got := do(t, srv, request{method: "PUT", path: "/api/v1/change-policy", token: w.ownerToken, body: body})
	if got.status != http.StatusOK {
		t.Fatalf("put: %d %s", got.status, got.body)
	}
	got.decode(t, &pol)
	if !pol.Set || pol.Policy.Version != 1 || pol.Digest != pol.Policy.Digest || pol.Parsed.Approvals.Required != 1 {
		t.Fatalf("set policy %+v", pol)
	}
	if p := do(t, srv, request{method: "PUT", path: "/api/v1/change-policy", token: w.ownerToken, body: body}).problem(t); p.Status != http.StatusConflict {
		t.Fatalf("stale version: %+v", p)
	}
	if p := do(t, srv, request{method: "PUT", path: "/api/v1/change-policy", token: w.ownerToken,
		body: `{"yaml":"no_such_rule: true","expected_version":1}`}).problem(t); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad policy: %+v", p)
	}
	// Without the change desk the actions are unavailable; reads are not.
	if p := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/changes", token: w.ownerToken,
		body: `{"reason":"` + changeReason + `"}`}).problem(t); p.Status != http.StatusServiceUnavailable {
		t.Fatalf("request without the desk: %+v", p)
	}
	c := w.newCase(t, signoff.KindChange, "")
	for _, path := range []string{"/execute", "/plan", "/rollback", "/approvals"} {
		body := `{}`
		if path == "/execute" {
			body = ""
		}
		if p := do(t, srv, request{method: "POST", path: "/api/v1/cases/" + c.ID + path, token: w.ownerToken, body: body}).problem(t); p.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s without the desk: %+v", path, p)
		}
	}
	if p := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/approval", token: w.ownerToken}).problem(t); p.Status != http.StatusServiceUnavailable {
		t.Fatalf("card without the desk: %+v", p)
	}
	if got := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + c.ID + "/receipts", token: w.ownerToken}); got.status != http.StatusOK {
		t.Fatalf("receipts without the desk: %d %s", got.status, got.body)
	}
}

// setPolicyBehindTheDesk sets the policy in the store alone (the desk is
// not told) and, when revive names a case, makes its voided approvals
// valid again as an edit of the database would.
func (e *changeEnv) setPolicyBehindTheDesk(t *testing.T, yaml, revive string) {
	t.Helper()
	ctx := context.Background()
	cur, err := e.store.GetChangePolicy(ctx, e.owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.SetChangePolicy(ctx, e.owner, yaml, cur.Version, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	if revive != "" {
		if _, err := e.store.SQL().ExecContext(ctx, `UPDATE approvals SET status = 'valid' WHERE case_id = $1 AND status = 'superseded'`, revive); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *changeEnv) putPolicy(t *testing.T, yaml string) {
	t.Helper()
	cur, err := e.store.GetChangePolicy(context.Background(), e.owner)
	if err != nil {
		t.Fatal(err)
	}
	got := e.do(t, request{method: "PUT", path: "/api/v1/change-policy", token: e.ownerToken,
		body: mustJSON(t, map[string]any{"yaml": yaml, "expected_version": cur.Version})})
	if got.status != http.StatusOK {
		t.Fatalf("put policy: %d %s", got.status, got.body)
	}
}

// TestChangeGateOutsideWindowHTTP: the same policy, later, is outside its
// only change window: the gate refuses target_allowed (403).
func TestChangeGateOutsideWindowHTTP(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	now := time.Now().UTC()
	from, to := now.Add(-time.Minute), now.Add(30*time.Minute)
	if from.Day() != to.Day() {
		t.Skip("the window would cross midnight UTC")
	}
	day := strings.ToLower(now.Weekday().String()[:3])
	e.putPolicy(t, strings.Replace(changePolicyYAML(e.alice.ID), `days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"`, "days: ["+day+"]\n    from: \""+from.Format("15:04")+"\"\n    to: \""+to.Format("15:04")+"\"", 1))
	c := e.approved(t)
	e.desk.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	p := e.execute(t, e.aliceToken, c.ID).problem(t)
	if p.Status != http.StatusForbidden || p.Check != change.CheckTargetAllowed {
		t.Fatalf("execute: %+v, want 403 target_allowed", p)
	}
}

// TestChangeRollbackRefusedNamesTheCase: a pre-approved compensation the
// gate refuses still exists; the problem names it.
func TestChangeRollbackRefusedNamesTheCase(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	e.putPolicy(t, changePolicyYAML(e.alice.ID)+"preapproved_rollbacks: [flag]\n")
	c := e.approved(t)
	if got := e.execute(t, e.aliceToken, c.ID); got.status != http.StatusOK {
		t.Fatalf("execute: %d %s", got.status, got.body)
	}
	ok, err := e.store.LockTarget(context.Background(), signoff.SystemActor(e.ws.ID), changeTarget, "another-execution", time.Hour)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	e.desk.LockWait = 100 * time.Millisecond
	p := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/rollback", token: e.ownerToken,
		body: `{"reason":"roll it back: checkout fails since this change"}`}).problem(t)
	if p.Status != http.StatusConflict || p.Check != change.CheckLock || !strings.Contains(p.Detail, "compensating change case_") || p.CurrentState != workflow.ChangeApproved {
		t.Fatalf("rollback: %+v", p)
	}
}
