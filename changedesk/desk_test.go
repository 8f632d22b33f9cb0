package changedesk_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

const flagKey = "checkout_v2"

// clock is the desk's clock; tests move it to expire approvals.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.off += d
	c.mu.Unlock()
}

// env is one workspace with a project, a boolean flag in prod, an app
// whose /checkout fails while the flag is on, two approvers with keys and
// a desk over a real store.
type env struct {
	dbPath     string // the SQLite file, when the store is SQLite
	t          testing.TB
	ctx        context.Context
	store      *sqlstore.DB
	desk       *changedesk.Desk
	owner      signoff.Actor
	alice, bob signoff.Actor
	keys       map[string]ed25519.PrivateKey
	project    string
	app        *httptest.Server
	clock      *clock
	serverKey  ed25519.PrivateKey
}

type opener func(tb testing.TB, key ed25519.PrivateKey) *sqlstore.DB

// sqlitePaths remembers each test's SQLite file, for tests that open it
// a second time.
var sqlitePaths sync.Map

func openSQLite(tb testing.TB, key ed25519.PrivateKey) *sqlstore.DB {
	path := filepath.Join(tb.TempDir(), "signoff.db")
	sqlitePaths.Store(tb, path)
	tb.Cleanup(func() { sqlitePaths.Delete(tb) })
	s, err := sqlite.Open(context.Background(), path, sqlstore.Options{Signer: key})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func openPostgres(tb testing.TB, key ed25519.PrivateKey) *sqlstore.DB {
	s, err := postgres.Open(context.Background(), pgtest.NewDatabase(tb), sqlstore.Options{Signer: key})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func policyYAML(group []string, extra string) string {
	return `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals:
  required: 1
  group: [` + strings.Join(group, ", ") + `]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
` + extra
}

func newEnv(tb testing.TB, open opener) *env {
	tb.Helper()
	_, serverKey, _ := ed25519.GenerateKey(rand.Reader)
	e := &env{t: tb, ctx: context.Background(), store: open(tb, serverKey), keys: map[string]ed25519.PrivateKey{}, clock: &clock{}, serverKey: serverKey}
	if p, ok := sqlitePaths.Load(tb); ok {
		e.dbPath = p.(string)
	}
	var err error
	_, e.owner, err = e.store.CreateWorkspace(e.ctx, "shop", "olga")
	must(tb, err)
	e.alice = e.person("alice")
	e.bob = e.person("bob")
	p, err := e.store.CreateProject(e.ctx, e.owner, signoff.ProjectInput{Name: "shoplite"})
	must(tb, err)
	e.project = p.ID
	_, err = e.store.CreateFlag(e.ctx, e.owner, p.ID, "prod", flagKey, signoff.FlagBoolean, json.RawMessage("false"))
	must(tb, err)
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, ""))
	e.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := e.store.GetFlag(r.Context(), signoff.SystemActor(e.owner.WorkspaceID), e.project, "prod", flagKey)
		if err != nil || string(f.Value) == "true" {
			http.Error(w, "payment provider v2 unavailable", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("total 9000"))
	}))
	tb.Cleanup(e.app.Close)
	e.desk = &changedesk.Desk{Store: e.store, Key: serverKey, Now: e.clock.Now,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: e.store}},
		Health:    changedesk.HTTPProber{},
		Sleep:     func(context.Context, time.Duration) error { return nil },
		LockWait:  20 * time.Second}
	if ro := e.store.ReadOnly(); ro != nil {
		e.desk.Read = ro
	}
	return e
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func (e *env) person(name string) signoff.Actor {
	a, err := e.store.CreateActor(e.ctx, e.owner, name, signoff.RoleOperator)
	must(e.t, err)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	p, err := keys.EncodePublic(pub)
	must(e.t, err)
	_, err = e.store.RegisterKey(e.ctx, a, string(p))
	must(e.t, err)
	e.keys[a.ID] = priv
	return a
}

func (e *env) setPolicy(y string) {
	cur, err := e.store.GetChangePolicy(e.ctx, e.owner)
	var v int64
	if err == nil {
		v = cur.Version
	}
	_, err = e.store.SetChangePolicy(e.ctx, e.owner, y, v, change.PolicyDigest)
	must(e.t, err)
}

func (e *env) health() change.HealthCheck {
	return change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: e.app.URL + "/checkout", ExpectStatus: 200,
		ExpectBody: "total", WindowSeconds: 2, IntervalSeconds: 1}
}

// request opens a change request and drafts a plan setting the flag to
// value; it returns the case, awaiting approval.
func (e *env) request(value string) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "checkout fails with 500s since the v2 flow went live"})
	must(e.t, err)
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
		Params: json.RawMessage(`{"value":` + value + `}`), HealthCheck: e.health(), Via: "human"})
	must(e.t, err)
	if c.State != workflow.ChangeAwaitingApproval {
		l, _ := e.store.GetChangeLoop(e.ctx, e.owner, c.ID)
		e.t.Fatalf("state %s, want awaiting_approval; review %s", c.State, l.State.Review)
	}
	return c
}

func (e *env) approve(by signoff.Actor, caseID string) signoff.Case {
	e.t.Helper()
	card, err := e.desk.Card(e.ctx, by, caseID)
	must(e.t, err)
	st := approval.NewStatement(caseID, card.SubjectDigest, approval.Approve, card.PolicyDigest, by.ID, e.clock.Now(), card.Policy.TTL())
	envl, err := approval.Sign(st, e.keys[by.ID])
	must(e.t, err)
	raw, err := json.Marshal(envl)
	must(e.t, err)
	_, c, err := e.desk.Approve(e.ctx, by, caseID, raw, "cli-signed", "")
	must(e.t, err)
	return c
}

func (e *env) flag() signoff.Flag {
	f, err := e.store.GetFlag(e.ctx, e.owner, e.project, "prod", flagKey)
	must(e.t, err)
	return f
}

func (e *env) state(caseID string) string {
	c, err := e.store.GetCase(e.ctx, e.owner, caseID)
	must(e.t, err)
	return c.State
}

// revive marks a case's voided approvals valid again, as a database
// edit would: the gate must still refuse them on its own checks.
func (e *env) revive(caseID string) {
	_, err := e.store.SQL().ExecContext(e.ctx, `UPDATE approvals SET status = 'valid' WHERE case_id = $1 AND status = 'superseded'`, caseID)
	must(e.t, err)
}

func gateCheck(err error) string {
	var ge *change.GateError
	if errors.As(err, &ge) {
		return ge.Check
	}
	return ""
}

func TestExecuteAndReceipts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))
	// Turning the flag on breaks checkout: health fails, the flag is
	// restored automatically.
	on := e.request("true")
	if c := e.approve(e.alice, on.ID); c.State != workflow.ChangeApproved {
		t.Fatalf("after approval: %s", c.State)
	}
	x, err := e.desk.Execute(e.ctx, e.alice, on.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeRolledBack || x.Case.State != workflow.ChangeRolledBack || x.Predicate.Health.Passed {
		t.Fatalf("execution %s, case %s, health %+v", x.Outcome, x.Case.State, x.Predicate.Health)
	}
	if f := e.flag(); string(f.Value) != "false" || f.Version != 3 {
		t.Fatalf("flag after rollback: %s v%d, want false v3", f.Value, f.Version)
	}
	if x.Predicate.Restored == nil || x.Predicate.Restored.Content != x.Predicate.Before.Content {
		t.Fatalf("restored %+v, before %+v", x.Predicate.Restored, x.Predicate.Before)
	}

	// A plan that keeps checkout healthy is executed and stays.
	e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
		Value: json.RawMessage("false"), ExpectedVersion: 3, Reason: "test: a no-op write"})
	keep := e.request(`false`)
	e.approve(e.bob, keep.ID)
	x, err = e.desk.Execute(e.ctx, e.bob, keep.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeExecuted || x.Case.State != workflow.ChangeExecuted || !x.Predicate.Health.Passed {
		t.Fatalf("execution %s, case %s", x.Outcome, x.Case.State)
	}
	b, err := changedesk.OpenReceipt(x.Receipt, e.serverKey.Public().(ed25519.PublicKey))
	must(t, err)
	if b.PlanDigest == "" || len(b.Approvals) != 1 || b.Approvals[0].Approver != e.bob.ID || b.Outcome != "executed" || b.After == nil {
		t.Fatalf("receipt %+v", b)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := changedesk.OpenReceipt(x.Receipt, other.Public().(ed25519.PublicKey)); err == nil {
		t.Fatal("receipt verified under another key")
	}

	// The compensating rollback is pre-approved for flags: it runs at
	// once, restores the original content and reverts the original.
	rc, rx, err := e.desk.Rollback(e.ctx, e.alice, keep.ID, "roll back the no-op change, it was only a drill")
	must(t, err)
	if rx == nil || rc.State != workflow.ChangeExecuted || rx.Predicate.RestoredMatchesOriginal == nil || !*rx.Predicate.RestoredMatchesOriginal {
		t.Fatalf("rollback case %s, execution %+v", rc.State, rx)
	}
	if s := e.state(keep.ID); s != workflow.ChangeReverted {
		t.Fatalf("original is %s, want reverted", s)
	}
	if _, _, err := e.desk.Rollback(e.ctx, e.alice, keep.ID, "roll back the no-op change a second time"); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("second rollback: %v", err)
	}
	rs, err := e.store.ListReceipts(e.ctx, e.owner, rc.ID)
	must(t, err)
	if len(rs) != 1 || rs[0].Kind != signoff.ReceiptRollback {
		t.Fatalf("rollback receipts %+v", rs)
	}
	if _, err := e.store.VerifyLedger(e.ctx, e.owner.WorkspaceID, map[string]ed25519.PublicKey{keys.ID(e.serverKey.Public().(ed25519.PublicKey)): e.serverKey.Public().(ed25519.PublicKey)}); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

// TestRollbackNeedsApprovalUnlessPreapproved: without preapproved
// rollbacks the compensating change waits for a signature.
func TestRollbackNeedsApprovalUnlessPreapproved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	_, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	rc, rx, err := e.desk.Rollback(e.ctx, e.owner, c.ID, "undo this change, we want the old behaviour back")
	must(t, err)
	if rx != nil || rc.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("rollback case %s, execution %v", rc.State, rx)
	}
	e.approve(e.bob, rc.ID)
	x, err := e.desk.Execute(e.ctx, e.bob, rc.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeExecuted || e.state(c.ID) != workflow.ChangeReverted {
		t.Fatalf("rollback outcome %s, original %s", x.Outcome, e.state(c.ID))
	}
}

// TestGateRefusals reaches every gate check through the desk, the way
// API, CLI and MCP reach it, and checks that nothing was applied.
func TestGateRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env, caseID string)
		check string
		state string
	}{
		{"signature: key revoked", func(e *env, _ string) {
			ks, err := e.store.ListKeys(e.ctx, e.alice)
			must(e.t, err)
			_, err = e.store.SQL().ExecContext(e.ctx, `UPDATE approver_keys SET revoked_at = 1 WHERE id = $1`, ks[0].ID)
			must(e.t, err)
		}, change.CheckSignature, workflow.ChangeApproved},
		{"signature: stored envelope edited", func(e *env, caseID string) {
			_, err := e.store.SQL().ExecContext(e.ctx, `UPDATE approvals SET approver_id = $1 WHERE case_id = $2`, e.bob.ID, caseID)
			must(e.t, err)
		}, change.CheckSignature, workflow.ChangeApproved},
		{"approver: disabled", func(e *env, _ string) {
			_, err := e.store.SQL().ExecContext(e.ctx, `UPDATE actors SET disabled_at = 1 WHERE id = $1`, e.alice.ID)
			must(e.t, err)
		}, change.CheckSignature, workflow.ChangeApproved},
		// A policy change voids the approvals (approvals.superseded); the
		// two rows below revive them in the database to reach the gate's
		// own checks behind that. The refused case is reviewed again
		// under the new policy and waits for a signature.
		{"approver: left the group", func(e *env, caseID string) {
			e.setPolicy(policyYAML([]string{e.bob.ID}, ""))
			e.revive(caseID)
		}, change.CheckApprover, workflow.ChangeAwaitingApproval},
		{"quorum: the policy now needs two", func(e *env, caseID string) {
			e.setPolicy(strings.Replace(policyYAML([]string{e.alice.ID, e.bob.ID}, ""), "required: 1", "required: 2", 1))
			e.revive(caseID)
		}, change.CheckQuorum, workflow.ChangeAwaitingApproval},
		// The plan expired with the approval: the case is expired, to be
		// planned again.
		{"expired", func(e *env, _ string) { e.clock.Advance(24 * time.Hour) }, change.CheckExpired, workflow.ChangeExpired},
		{"plan digest: stored plan edited", func(e *env, caseID string) {
			_, err := e.store.SQL().ExecContext(e.ctx, `UPDATE change_plans SET body = replace(body, '"value":false', '"value":true') WHERE case_id = $1`, caseID)
			must(e.t, err)
		}, change.CheckPlanDigest, workflow.ChangeApproved},
		{"policy digest: policy edited", func(e *env, _ string) {
			e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "min_reason_length: 25\n"))
		}, change.CheckPolicyDigest, workflow.ChangeAwaitingApproval},
		{"before state: the flag drifted", func(e *env, _ string) {
			_, _, err := e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
				Value: json.RawMessage("true"), ExpectedVersion: 1, Reason: "test: someone else flips it"})
			must(e.t, err)
		}, change.CheckBeforeState, workflow.ChangeDrifted},
		{"lock: held by another execution", func(e *env, _ string) {
			ok, err := e.store.LockTarget(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), "flag:prod/"+flagKey, "someone-else", time.Hour)
			if err != nil || !ok {
				e.t.Fatalf("lock: %v %v", ok, err)
			}
			e.desk.LockWait = 200 * time.Millisecond
		}, change.CheckLock, workflow.ChangeApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, openSQLite)
			c := e.request("false")
			e.approve(e.alice, c.ID)
			before := e.flag()
			tt.setup(e, c.ID)
			_, err := e.desk.Execute(e.ctx, e.alice, c.ID)
			if got := gateCheck(err); got != tt.check {
				t.Fatalf("Execute = %v; want a refusal naming %s", err, tt.check)
			}
			if !strings.Contains(signoff.ErrorMessage(err), tt.check) {
				t.Fatalf("message %q does not name %s", signoff.ErrorMessage(err), tt.check)
			}
			if f := e.flag(); f.Version != before.Version && tt.check != change.CheckBeforeState {
				t.Fatalf("flag written: v%d -> v%d", before.Version, f.Version)
			}
			if s := e.state(c.ID); s != tt.state {
				t.Fatalf("case %s, want %s", s, tt.state)
			}
			evs, err := e.store.ListEvents(e.ctx, e.owner, c.ID, 0, 1000)
			must(t, err)
			found := false
			for _, ev := range evs {
				found = found || (ev.Type == "gate.refused" && strings.Contains(string(ev.Payload), `"check":"`+tt.check+`"`))
			}
			if !found {
				t.Fatal("no gate.refused event names the check")
			}
		})
	}
}

// TestGateRefusesOutsideWindow: the target is allowed only inside a
// change window; the same policy, later, refuses.
func TestGateRefusesOutsideWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	now := time.Now().UTC()
	from, to := now.Add(-time.Minute), now.Add(30*time.Minute)
	if from.Day() != to.Day() {
		t.Skip("the window would cross midnight UTC")
	}
	day := strings.ToLower(now.Weekday().String()[:3])
	e.setPolicy(`allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals: {required: 1, group: [` + e.alice.ID + `]}
windows:
  - days: [` + day + `]
    from: "` + from.Format("15:04") + `"
    to: "` + to.Format("15:04") + `"
`)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	e.clock.Advance(2 * time.Hour)
	_, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	if gateCheck(err) != change.CheckTargetAllowed {
		t.Fatalf("Execute = %v, want target_allowed", err)
	}
}

func TestGateRefusesBadIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	for _, id := range []string{"", "case_1", "prj_01h00000000000000000000000", "case_../../etc"} {
		if _, err := e.desk.Execute(e.ctx, e.alice, id); gateCheck(err) != change.CheckIDFormat {
			t.Errorf("Execute(%q) = %v, want id_format", id, err)
		}
	}
	for _, by := range []signoff.Actor{{ID: e.owner.ID, WorkspaceID: e.owner.WorkspaceID, Role: signoff.RolePlanner}, {ID: e.owner.ID, WorkspaceID: e.owner.WorkspaceID, Role: signoff.RoleViewer}} {
		if _, err := e.desk.Execute(e.ctx, by, "case_01h00000000000000000000000"); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("%s executes: %v", by.Role, err)
		}
	}
}

// TestExecuteRace: 50 concurrent executions of one approved plan apply it
// exactly once; the other 49 are refused naming the consumed approval.
func TestExecuteRace(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]opener{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			c := e.request("false")
			e.approve(e.alice, c.ID)
			var ok, consumed atomic.Int32
			var other sync.Map
			var wg sync.WaitGroup
			for i := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
					switch {
					case err == nil && x.Outcome == changedesk.OutcomeExecuted:
						ok.Add(1)
					case gateCheck(err) == change.CheckConsumed:
						consumed.Add(1)
					default:
						other.Store(i, err)
					}
				}()
			}
			wg.Wait()
			other.Range(func(k, v any) bool {
				t.Errorf("execution %v: %v", k, v)
				return true
			})
			if ok.Load() != 1 || consumed.Load() != 49 {
				t.Fatalf("%d executed, %d refused as consumed; want 1 and 49", ok.Load(), consumed.Load())
			}
			if f := e.flag(); f.Version != 2 {
				t.Fatalf("flag at version %d: applied %d times", f.Version, f.Version-1)
			}
			rs, err := e.store.ListReceipts(e.ctx, e.owner, c.ID)
			must(t, err)
			if len(rs) != 1 {
				t.Fatalf("%d receipts", len(rs))
			}
		})
	}
}

// TestReplanSupersedesApprovals: an edit of the plan is a new digest, and
// the approvals of the old one no longer count.
func TestReplanSupersedesApprovals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	c2, _, err := e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
		Params: json.RawMessage(`{"value":true}`), HealthCheck: e.health(), Via: "human"})
	must(t, err)
	if c2.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("after re-plan: %s", c2.State)
	}
	apvs, err := e.store.ListApprovals(e.ctx, e.owner, c.ID)
	must(t, err)
	if len(apvs) != 1 || apvs[0].Status != signoff.ApprovalSuperseded {
		t.Fatalf("approvals %+v", apvs)
	}
	if _, err := e.desk.Execute(e.ctx, e.alice, c.ID); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("execute without approval: %v", err)
	}
}

// TestApproveRefusals: the proposer, the opener and people outside the
// group cannot approve; a stale digest is refused.
func TestApproveRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	card, err := e.desk.Card(e.ctx, e.alice, c.ID)
	must(t, err)
	sign := func(by signoff.Actor, digest string) []byte {
		st := approval.NewStatement(c.ID, digest, approval.Approve, card.PolicyDigest, by.ID, e.clock.Now(), time.Hour)
		k := e.keys[by.ID]
		if k == nil {
			_, k, _ = ed25519.GenerateKey(rand.Reader)
		}
		envl, err := approval.Sign(st, k)
		must(t, err)
		raw, _ := json.Marshal(envl)
		return raw
	}
	carol := e.person("carol") // not in the group
	if _, _, err := e.desk.Approve(e.ctx, carol, c.ID, sign(carol, card.SubjectDigest), "cli-signed", ""); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Errorf("outsider: %v", err)
	}
	if _, _, err := e.desk.Approve(e.ctx, e.owner, c.ID, sign(e.owner, card.SubjectDigest), "cli-signed", ""); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Errorf("owner without a key: %v", err)
	}
	stale := strings.Repeat("a", 64)
	if _, _, err := e.desk.Approve(e.ctx, e.alice, c.ID, sign(e.alice, stale), "cli-signed", ""); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Errorf("stale digest: %v", err)
	}
	if s := e.state(c.ID); s != workflow.ChangeAwaitingApproval {
		t.Fatalf("case %s after refused approvals", s)
	}
}

// TestBypass: the policy's emergency bypass lets an owner write a flag
// directly, with a receipt; an operator it does not name is refused; when
// the time is up the previous value comes back, unless the flag changed
// since.
func TestBypass(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	in := changedesk.BypassInput{ProjectID: e.project, Env: "prod", Key: flagKey, Value: json.RawMessage("true"),
		Reason: "payments are failing, turning the v2 flow on by hand"}
	if _, err := e.desk.Bypass(e.ctx, e.owner, in); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("bypass without a policy bypass: %v", err)
	}
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "emergency_bypass: {roles: [owner], minutes: 30}\n"))
	if _, err := e.desk.Bypass(e.ctx, e.alice, in); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("operator bypass: %v", err)
	}
	short := in
	short.Reason = "now"
	if _, err := e.desk.Bypass(e.ctx, e.owner, short); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("short reason: %v", err)
	}
	x, err := e.desk.Bypass(e.ctx, e.owner, in)
	must(t, err)
	if x.Case.State != workflow.ChangeExecuted || x.Receipt.Kind != signoff.ReceiptBypass || string(e.flag().Value) != "true" {
		t.Fatalf("bypass: %s, receipt %s, flag %s", x.Case.State, x.Receipt.Kind, e.flag().Value)
	}
	b, err := changedesk.OpenReceipt(x.Receipt, e.serverKey.Public().(ed25519.PublicKey))
	must(t, err)
	if !b.Bypass || b.BypassUntil == nil || len(b.Approvals) != 0 {
		t.Fatalf("receipt %+v", b)
	}
	// Too early: the job is retried later.
	if err := e.desk.ExpireBypass(e.ctx, e.owner.WorkspaceID, x.Case.ID); err == nil {
		t.Fatal("expired before its time")
	}
	e.clock.Advance(31 * time.Minute)
	must(t, e.desk.ExpireBypass(e.ctx, e.owner.WorkspaceID, x.Case.ID))
	if f := e.flag(); string(f.Value) != "false" || e.state(x.Case.ID) != workflow.ChangeReverted {
		t.Fatalf("after expiry: flag %s, case %s", f.Value, e.state(x.Case.ID))
	}
	must(t, e.desk.ExpireBypass(e.ctx, e.owner.WorkspaceID, x.Case.ID)) // repeated: nothing

	// A bypass the desk overtook is not undone.
	x, err = e.desk.Bypass(e.ctx, e.owner, in)
	must(t, err)
	f := e.flag()
	_, _, err = e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
		Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "test: a later change"})
	must(t, err)
	e.clock.Advance(31 * time.Minute)
	must(t, e.desk.ExpireBypass(e.ctx, e.owner.WorkspaceID, x.Case.ID))
	if f2 := e.flag(); f2.Version != f.Version+1 || e.state(x.Case.ID) != workflow.ChangeExecuted {
		t.Fatalf("overtaken bypass: flag v%d (want v%d), case %s", f2.Version, f.Version+1, e.state(x.Case.ID))
	}
}

// racingFlags writes the flag as someone else just before the gate's
// write, as a concurrent writer would.
type racingFlags struct {
	changedesk.FlagActuator
	before func()
}

func (r racingFlags) Apply(ctx context.Context, sc changedesk.Scope, p change.Plan, st changedesk.State) (changedesk.State, error) {
	r.before()
	return r.FlagActuator.Apply(ctx, sc, p, st)
}

// TestWriteBetweenGateAndApply: the actuator's compare-and-swap refuses,
// nothing of the plan is applied, and the other writer's value stands
// (no restore over it); the case is drifted.
func TestWriteBetweenGateAndApply(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	e.desk.Actuators[change.KindFlag] = racingFlags{FlagActuator: changedesk.FlagActuator{Flags: e.store}, before: func() {
		_, _, err := e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
			Value: json.RawMessage("true"), ExpectedVersion: 1, Reason: "test: someone else writes first"})
		must(t, err)
	}}
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeDrifted || x.Case.State != workflow.ChangeDrifted || x.Predicate.Restored != nil {
		t.Fatalf("outcome %s, case %s, restored %v", x.Outcome, x.Case.State, x.Predicate.Restored)
	}
	if f := e.flag(); string(f.Value) != "true" || f.Version != 2 {
		t.Fatalf("flag %s v%d: the other writer's value must stand", f.Value, f.Version)
	}
}

// TestPreapprovalCoversOnlyTheCompensation: a compensating case re-planned
// with anything but the original's rollback needs a signature.
func TestPreapprovalCoversOnlyTheCompensation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	// The only approver opens the rollback: a pre-approved compensation
	// needs no approver, so the review still passes.
	e.setPolicy(policyYAML([]string{e.alice.ID}, "preapproved_rollbacks: [flag]\n"))
	c := e.request("false")
	e.approve(e.alice, c.ID)
	_, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	rc, rx, err := e.desk.Rollback(e.ctx, e.alice, c.ID, "drill: roll the change back to the original value")
	must(t, err)
	if rx == nil || rx.Outcome != changedesk.OutcomeExecuted || e.state(c.ID) != workflow.ChangeReverted {
		t.Fatalf("the sole approver's pre-approved rollback: %s, %+v", rc.State, rx)
	}
	// Another executed change (after one that was rolled back
	// automatically); its compensation is re-planned before it runs.
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))
	c2 := e.request("true")
	e.approve(e.alice, c2.ID)
	x2, err := e.desk.Execute(e.ctx, e.alice, c2.ID)
	must(t, err)
	if x2.Outcome != changedesk.OutcomeRolledBack {
		t.Fatalf("turning the flag on: %s", x2.Outcome)
	}
	c3 := e.request("false")
	e.approve(e.alice, c3.ID)
	x3, err := e.desk.Execute(e.ctx, e.alice, c3.ID)
	must(t, err)
	if x3.Outcome != changedesk.OutcomeExecuted {
		t.Fatalf("c3: %s", x3.Outcome)
	}
	// Open the compensation but keep it from running: another writer
	// holds the target's lock, so the pre-approved execution is refused.
	ok, err := e.store.LockTarget(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), "flag:prod/"+flagKey, "someone-else", time.Hour)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	e.desk.LockWait = 100 * time.Millisecond
	rc3, _, err := e.desk.Rollback(e.ctx, e.owner, c3.ID, "drill: roll the third change back to the original")
	if gateCheck(err) != change.CheckLock || rc3.State != workflow.ChangeApproved {
		t.Fatalf("locked compensation: %s, %v", rc3.State, err)
	}
	must(t, e.store.UnlockTarget(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), "flag:prod/"+flagKey, "someone-else"))
	// Re-planned to turn the flag on: not the compensation, so it waits
	// for a signature, and nothing runs.
	rc3, _, err = e.desk.Propose(e.ctx, e.owner, rc3.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
		Params: json.RawMessage(`{"value":true}`), HealthCheck: e.health(), Via: "human"})
	must(t, err)
	if rc3.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("a re-planned compensation is %s, want awaiting_approval", rc3.State)
	}
	if _, err := e.desk.Execute(e.ctx, e.owner, rc3.ID); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("executing it unsigned: %v", err)
	}
}

// TestSettleInterruptedExecution: a process that stops after the gate
// consumed the approvals leaves the case executing; the watchdog settles
// it from the live state, fail closed, with a receipt.
func TestSettleInterruptedExecution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		writes  []string // flag writes after the consume: the apply, or others' writes
		state   string
		value   string
		lockErr bool
	}{
		{"nothing applied", nil, workflow.ChangeRolledBack, "false", false},
		{"applied, never confirmed: restored", []string{"true"}, workflow.ChangeRolledBack, "false", false},
		{"someone else wrote since: left alone", []string{"true", "true"}, workflow.ChangeDrifted, "true", false},
		{"the execution may still run: retried", nil, workflow.ChangeExecuting, "false", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, openSQLite)
			c := e.request("true")
			e.approve(e.alice, c.ID)
			// What Execute does up to the apply, then the process stops.
			l, err := e.store.GetChangeLoop(e.ctx, e.owner, c.ID)
			must(t, err)
			_, _, err = e.store.AdvanceChange(e.ctx, e.alice, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State,
				Command: "execute", Consume: l.State.ApprovalIDs})
			must(t, err)
			for i, v := range tt.writes {
				_, _, err := e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
					Value: json.RawMessage(v), ExpectedVersion: int64(i + 1), Reason: "test: a write after the consume"})
				must(t, err)
			}
			ws := e.owner.WorkspaceID
			if tt.lockErr {
				ok, err := e.store.LockTarget(e.ctx, signoff.SystemActor(ws), "flag:prod/"+flagKey, "the-running-execution", time.Hour)
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				if err := e.desk.Settle(e.ctx, ws, c.ID); err == nil {
					t.Fatal("settled while the lock is held")
				}
			} else {
				must(t, e.desk.Settle(e.ctx, ws, c.ID))
				must(t, e.desk.Settle(e.ctx, ws, c.ID)) // a repeated job does nothing
			}
			if s := e.state(c.ID); s != tt.state {
				t.Fatalf("case %s, want %s", s, tt.state)
			}
			if f := e.flag(); string(f.Value) != tt.value {
				t.Fatalf("flag %s, want %s", f.Value, tt.value)
			}
			rs, err := e.store.ListReceipts(e.ctx, e.owner, c.ID)
			must(t, err)
			if tt.lockErr {
				if len(rs) != 0 {
					t.Fatalf("%d receipts", len(rs))
				}
				return
			}
			b, err := changedesk.OpenReceipt(rs[0], e.serverKey.Public().(ed25519.PublicKey))
			must(t, err)
			if len(rs) != 1 || b.Outcome != changedesk.OutcomeInterrupted || b.Detail == "" || len(b.Approvals) != 1 {
				t.Fatalf("receipts %d, %+v", len(rs), b)
			}
			// The settled case's evidence verifies offline like any other.
			e.verifyExport(t, c.ID)
		})
	}
}

// TestPlanExpiry: an approved plan not executed by its expiry makes the
// case expired; it can be planned again. A case planned again meanwhile
// is left alone, and an early job is retried.
func TestPlanExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	l, err := e.store.GetChangeLoop(e.ctx, e.owner, c.ID)
	must(t, err)
	ws := e.owner.WorkspaceID
	if err := e.desk.ExpirePlan(e.ctx, ws, c.ID, l.State.PlanID); err == nil {
		t.Fatal("expired early")
	}
	e.clock.Advance(24 * time.Hour)
	must(t, e.desk.ExpirePlan(e.ctx, ws, c.ID, "plan_01h00000000000000000000000")) // another plan's job: nothing
	if s := e.state(c.ID); s != workflow.ChangeApproved {
		t.Fatalf("a stale job moved the case to %s", s)
	}
	must(t, e.desk.ExpirePlan(e.ctx, ws, c.ID, l.State.PlanID))
	if s := e.state(c.ID); s != workflow.ChangeExpired {
		t.Fatalf("case %s, want expired", s)
	}
	must(t, e.desk.ExpirePlan(e.ctx, ws, c.ID, l.State.PlanID)) // repeated: nothing
	c2, _, err := e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
		Params: json.RawMessage(`{"value":false}`), HealthCheck: e.health(), Via: "human"})
	must(t, err)
	if c2.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("planned again: %s", c2.State)
	}
}

// TestExecuteRaceAcrossProcesses: two stores over one SQLite file stand
// for two server processes, each with its own desk. 20 executions split
// between them apply the plan once: the approval's consumption and the
// per-target lock live in the database, not in a process.
func TestExecuteRaceAcrossProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	// A second process: another store on e's database file.
	other, err := sqlite.Open(e.ctx, e.dbPath, sqlstore.Options{Signer: e.serverKey})
	must(t, err)
	t.Cleanup(func() { other.Close() })
	d2 := *e.desk
	d2.Store, d2.Read = other, other.ReadOnly()
	d2.Actuators = map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: other}}
	c := e.request("false")
	e.approve(e.alice, c.ID)
	var ok, consumed atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := e.desk
			if i%2 == 1 {
				d = &d2
			}
			x, err := d.Execute(e.ctx, e.alice, c.ID)
			switch {
			case err == nil && x.Outcome == changedesk.OutcomeExecuted:
				ok.Add(1)
			case gateCheck(err) == change.CheckConsumed:
				consumed.Add(1)
			default:
				t.Errorf("execution %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || consumed.Load() != 19 {
		t.Fatalf("%d executed, %d consumed; want 1 and 19", ok.Load(), consumed.Load())
	}
	if f := e.flag(); f.Version != 2 {
		t.Fatalf("flag at version %d", f.Version)
	}
}

// TestRollbackRace: racing rollback requests of one change (a double
// click, two people) open exactly one compensating case; every other
// request is refused and leaves no case behind.
func TestRollbackRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	c := e.request("false")
	e.approve(e.alice, c.ID)
	_, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	count := func() int {
		var n int
		must(t, e.store.SQL().QueryRowContext(e.ctx, `SELECT count(*) FROM cases WHERE kind = 'change'`).Scan(&n))
		return n
	}
	before := count()
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, _, err := e.desk.Rollback(e.ctx, e.owner, c.ID, "undo this change, we want the old behaviour back")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case signoff.ErrorCode(err) != signoff.ECONFLICT:
			t.Errorf("a losing rollback: %v, want ECONFLICT", err)
		}
	}
	if ok != 1 || count() != before+1 {
		t.Fatalf("%d rollbacks accepted, %d new change cases; want 1 and 1", ok, count()-before)
	}
}
