package changedesk_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/workflow"
)

// Attacks on the rollback rule with a runbook: its state is its script,
// which running does not change, so the gate's before-state check cannot
// tell a runbook run since from none.

// fakeRunbook stands in for the sandboxed runbook actuator: the script
// never changes, and every run is recorded.
type fakeRunbook struct {
	mu   sync.Mutex
	runs []string
	// failRestore makes every compensating run fail.
	failRestore bool
}

func (*fakeRunbook) Kind() string { return change.KindRunbook }

func (*fakeRunbook) state() changedesk.State {
	sum := sha256.Sum256([]byte("#!/bin/sh\ndeploy \"$@\"\n"))
	d := hex.EncodeToString(sum[:])
	return changedesk.State{Digest: d, Content: d}
}

func (f *fakeRunbook) Read(context.Context, changedesk.Scope, change.Target) (changedesk.State, error) {
	return f.state(), nil
}

func (f *fakeRunbook) Draft(context.Context, changedesk.Scope, change.Target, json.RawMessage) (changedesk.Draft, error) {
	return changedesk.Draft{Before: f.state(), After: f.state().Digest}, nil
}

func (f *fakeRunbook) record(s string) {
	f.mu.Lock()
	f.runs = append(f.runs, s)
	f.mu.Unlock()
}

func (f *fakeRunbook) Apply(_ context.Context, _ changedesk.Scope, p change.Plan, _ changedesk.State) (changedesk.State, error) {
	f.record("apply " + string(p.Params))
	return f.state(), nil
}

func (f *fakeRunbook) Restore(_ context.Context, _ changedesk.Scope, p change.Plan, _ changedesk.State) (changedesk.State, error) {
	f.record("restore " + string(p.Rollback))
	f.mu.Lock()
	fail := f.failRestore
	f.mu.Unlock()
	if fail {
		return f.state(), &signoff.Error{Code: signoff.EUNAVAILABLE, Message: "runbook failed: exit 1"}
	}
	return f.state(), nil
}

func (f *fakeRunbook) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.runs...)
}

const runbookTarget = "runbook:deploy"

func runbookPolicy(group []string) string {
	return `allowed_targets: ["flag:prod/*", "runbook:deploy"]
environments: [prod]
runbooks:
  deploy: {}
preapproved_rollbacks: [runbook]
approvals:
  required: 1
  group: [` + strings.Join(group, ", ") + `]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`
}

func (e *env) withRunbook() *fakeRunbook {
	f := &fakeRunbook{}
	e.desk.Actuators[change.KindRunbook] = f
	e.setPolicy(runbookPolicy([]string{e.alice.ID, e.bob.ID}))
	return f
}

// failingHealth always fails: a plan's rollback then runs.
func (e *env) failingHealth() change.HealthCheck {
	e.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }))
	e.t.Cleanup(srv.Close)
	return change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: srv.URL + "/healthz", ExpectStatus: 200,
		WindowSeconds: 1, IntervalSeconds: 1}
}

// runbookExecuted runs the deploy runbook with args, signed by alice.
func (e *env) runbookExecuted(args, rollback string, hc change.HealthCheck) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "deploy " + args + " to production now"})
	must(e.t, err)
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: runbookTarget,
		Params: json.RawMessage(`{"args":` + args + `}`), Rollback: json.RawMessage(rollback), HealthCheck: hc, Via: "human"})
	must(e.t, err)
	e.approve(e.alice, c.ID)
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(e.t, err)
	if x.Outcome != changedesk.OutcomeExecuted {
		e.t.Fatalf("deploy %s: %s", args, x.Outcome)
	}
	return x.Case
}

// pendingRollback requests a rollback of orig while another holder has
// the target's lock, so the pre-approved compensation is left approved
// and not executed (as when an execution is in flight on the target).
func (e *env) pendingRollback(orig string) signoff.Case {
	e.t.Helper()
	sys := signoff.SystemActor(e.owner.WorkspaceID)
	holder := signoff.NewID("lock")
	ok, err := e.store.LockTarget(e.ctx, sys, runbookTarget, holder, time.Minute)
	must(e.t, err)
	if !ok {
		e.t.Fatal("lock not taken")
	}
	wait := e.desk.LockWait
	e.desk.LockWait = 50 * time.Millisecond
	r, x, err := e.desk.Rollback(e.ctx, e.owner, orig, "the deploy broke checkout, roll it back now")
	e.desk.LockWait = wait
	must(e.t, e.store.UnlockTarget(e.ctx, sys, runbookTarget, holder))
	if gateCheck(err) != change.CheckLock || x == nil {
		e.t.Fatalf("rollback under a held lock: %v, %s", err, ran(x))
	}
	if s := e.state(r.ID); s != workflow.ChangeApproved || !e.loop(r.ID).State.Preapproved {
		e.t.Fatalf("the compensation is %s (pre-approved %t), want approved and pre-approved", s, e.loop(r.ID).State.Preapproved)
	}
	return r
}

// A compensating case re-planned with the original's rollback as its
// params but a rollback of its own (and a health check that fails) would
// run that rollback with nobody's signature: it is not the original's
// own rollback, so it needs signatures.
func TestReplannedCompensationWithOwnRollbackNeedsSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	rb := e.withRunbook()
	a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, e.okHealth())
	r := e.pendingRollback(a.ID)
	// Re-planned (by an operator, or a planner agent on its task): the
	// exact inverse as params, and a rollback nobody signed.
	c, _, err := e.desk.Propose(e.ctx, e.bob, r.ID, changedesk.Proposal{Target: runbookTarget,
		Params: json.RawMessage(`{"args":["v1"]}`), Rollback: json.RawMessage(`{"args":["drop-the-database"]}`),
		HealthCheck: e.failingHealth(), Via: "mcp"})
	must(t, err)
	if c.State != workflow.ChangeAwaitingApproval || e.loop(r.ID).State.Preapproved {
		t.Fatalf("re-planned compensation with its own rollback: %s (pre-approved %t), want awaiting_approval", c.State, e.loop(r.ID).State.Preapproved)
	}
	if d := e.decision(r.ID); d.Verdict != change.CompensationNeedsApproval {
		t.Fatalf("decision %+v", d)
	}
	x, err := e.desk.Execute(e.ctx, e.owner, r.ID)
	for _, run := range rb.ran() {
		if strings.Contains(run, "drop-the-database") {
			t.Fatalf("an unsigned rollback ran: %v (execute: %v, %s)", rb.ran(), err, ran(&x))
		}
	}
	if err == nil {
		t.Fatalf("executed without a signature: %s", x.Outcome)
	}
}

// A pre-approved rollback left waiting (its execution met a busy target)
// must not run once a later change of the target executed meanwhile: the
// rule is checked again at the gate, not only when it was reviewed.
func TestPreapprovedRollbackRecheckedAtGate(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			rb := e.withRunbook()
			hc := e.okHealth()
			a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, hc)
			r := e.pendingRollback(a.ID)
			// B deploys v3, signed: it stands.
			b := e.runbookExecuted(`["v3"]`, `{"args":["v2"]}`, hc)
			n := len(rb.ran())
			x, err := e.desk.Execute(e.ctx, e.owner, r.ID)
			if len(rb.ran()) != n {
				t.Fatalf("the pre-approved rollback of A ran over B without a signature: %v (%v, %s)", rb.ran()[n:], err, ran(&x))
			}
			if gateCheck(err) == "" {
				t.Fatalf("execute: %v, want a gate refusal", err)
			}
			if s := e.state(r.ID); s != workflow.ChangeAwaitingApproval || e.loop(r.ID).State.Preapproved {
				t.Fatalf("the compensation is %s (pre-approved %t), want awaiting_approval", s, e.loop(r.ID).State.Preapproved)
			}
			d := e.decision(r.ID)
			if d.Verdict != change.CompensationNeedsApproval || len(d.Later) != 1 || d.Later[0].CaseID != b.ID {
				t.Fatalf("decision %+v", d)
			}
			// Signed knowing it, it runs.
			e.approve(e.bob, r.ID)
			x, err = e.desk.Execute(e.ctx, e.bob, r.ID)
			must(t, err)
			if x.Outcome != changedesk.OutcomeExecuted || len(rb.ran()) != n+1 {
				t.Fatalf("signed: %s, runs %v", x.Outcome, rb.ran())
			}
		})
	}
}

// An approval checked under one policy and recorded after another was
// set (the policy write commits between the desk's checks and its
// RecordApproval) escaped the policy write's voiding: once the old policy
// came back, it counted. The store refuses it instead.
func TestApprovalRacingAPolicyChangeIsNotRecorded(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			p1 := strings.Replace(policyYAML([]string{e.alice.ID, e.bob.ID}, ""), "required: 1", "required: 2", 1)
			p2 := p1 + "protected_targets: [\"flag:prod/payments_*\"]\n"
			e.setPolicy(p1)
			c := e.request("true")
			card, err := e.desk.Card(e.ctx, e.alice, c.ID)
			must(t, err)
			st := approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, e.clock.Now(), time.Hour)
			envl, err := approval.Sign(st, e.keys[e.alice.ID])
			must(t, err)
			raw, err := json.Marshal(envl)
			must(t, err)
			// The desk checked alice's statement under p1; p2 is set now.
			e.setPolicy(p2)
			sys := signoff.SystemActor(e.owner.WorkspaceID)
			_, err = e.store.RecordApproval(e.ctx, sys, signoff.Approval{CaseID: c.ID, SubjectDigest: st.SubjectDigest, Decision: st.Decision,
				ApproverID: e.alice.ID, KeyID: envl.Signatures[0].KeyID, Nonce: st.Nonce, PolicyDigest: st.PolicyDigest, IssuedAt: st.IssuedAt,
				ExpiresAt: st.ExpiresAt, Envelope: raw, Via: "cli-signed"})
			if signoff.ErrorCode(err) != signoff.ECONFLICT {
				t.Fatalf("an approval under a policy no longer in force was recorded: %v", err)
			}
			// p1 back, bob signs: alice's raced approval must not count.
			e.setPolicy(p1)
			if c := e.approve(e.bob, c.ID); c.State == workflow.ChangeApproved {
				t.Fatal("the quorum counted an approval recorded after its policy was replaced")
			}
		})
	}
}

// A later runbook run whose health check failed and whose compensating run
// failed too (restore_failed: the case stays executing) still stands: a
// rollback of an earlier run over it is not the exact inverse on what the
// earlier one left, and needs signatures.
func TestRollbackOverRestoreFailedChangeNeedsSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	rb := e.withRunbook()
	a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, e.okHealth())
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "deploy v3 to production now"})
	must(t, err)
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: runbookTarget,
		Params: json.RawMessage(`{"args":["v3"]}`), Rollback: json.RawMessage(`{"args":["v2"]}`), HealthCheck: e.failingHealth(), Via: "human"})
	must(t, err)
	e.approve(e.alice, c.ID)
	rb.mu.Lock()
	rb.failRestore = true
	rb.mu.Unlock()
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	if x.Outcome != changedesk.OutcomeRestoreFailed || e.state(c.ID) != workflow.ChangeExecuting {
		t.Fatalf("B: %v, %s, %s", err, x.Outcome, e.state(c.ID))
	}
	rb.mu.Lock()
	rb.failRestore = false
	rb.mu.Unlock()
	n := len(rb.ran())
	r, rx, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 deploy broke checkout, roll it back")
	must(t, err)
	if rx != nil || len(rb.ran()) != n || r.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("rollback of A over B's unrestored run: %s, %s, runs %v", r.State, ran(rx), rb.ran()[n:])
	}
	if d := e.decision(r.ID); d.Verdict != change.CompensationNeedsApproval || len(d.Later) != 1 || d.Later[0].CaseID != c.ID {
		t.Fatalf("decision %+v", d)
	}
}

// unrestoredRunSettled runs a signed runbook change (v3, rollback v2)
// whose health check fails and whose restore fails too, then has the
// execution watchdog settle it: a run whose effect stands though its case
// did not end executed.
func (e *env) unrestoredRunSettled(rb *fakeRunbook) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "deploy v3 to production now"})
	must(e.t, err)
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: runbookTarget,
		Params: json.RawMessage(`{"args":["v3"]}`), Rollback: json.RawMessage(`{"args":["v2"]}`), HealthCheck: e.failingHealth(), Via: "human"})
	must(e.t, err)
	e.approve(e.alice, c.ID)
	rb.mu.Lock()
	rb.failRestore = true
	rb.mu.Unlock()
	if x, _ := e.desk.Execute(e.ctx, e.alice, c.ID); x.Outcome != changedesk.OutcomeRestoreFailed {
		e.t.Fatalf("B: %s", x.Outcome)
	}
	rb.mu.Lock()
	rb.failRestore = false
	rb.mu.Unlock()
	must(e.t, e.desk.Settle(e.ctx, e.owner.WorkspaceID, c.ID))
	return c
}

// The execution watchdog settling an interrupted (or unrestored) runbook
// run must not claim nothing was applied: the script digest it compares
// is the same before and after a run. Had it, the run would stop counting
// and a rollback of an earlier run would be pre-approved over it.
func TestWatchdogDoesNotClaimARunbookDidNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	rb := e.withRunbook()
	a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, e.okHealth())
	c := e.unrestoredRunSettled(rb)
	rs, err := e.store.ListReceipts(e.ctx, e.owner, c.ID)
	must(t, err)
	last, err := changedesk.OpenReceipt(rs[len(rs)-1], nil)
	must(t, err)
	if last.Outcome != changedesk.OutcomeInterrupted || strings.Contains(last.Detail, "nothing was applied") || e.state(c.ID) == workflow.ChangeRolledBack {
		t.Fatalf("the watchdog settled the unrestored run as %s: %q", e.state(c.ID), last.Detail)
	}
	n := len(rb.ran())
	r, rx, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 deploy broke checkout, roll it back")
	must(t, err)
	if rx != nil || len(rb.ran()) != n || r.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("rollback of A over B's settled run: %s, %s, runs %v", r.State, ran(rx), rb.ran()[n:])
	}
	if d := e.decision(r.ID); len(d.Later) != 1 || d.Later[0].CaseID != c.ID {
		t.Fatalf("decision %+v", d)
	}
}

// An approved case whose approver's key is revoked (or who is disabled)
// before the gate runs is refused, and goes back to waiting for a
// signature instead of sitting approved with nothing the gate will pass.
func TestRevokedApprovalRefusedAndCaseWaitsForASignature(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			c := e.request("false")
			e.approve(e.alice, c.ID)
			keys, err := e.store.ListKeys(e.ctx, e.alice)
			must(t, err)
			if len(keys) != 1 {
				t.Fatalf("alice has %d keys", len(keys))
			}
			_, n, err := e.store.RevokeKey(e.ctx, e.alice, keys[0].ID)
			must(t, err)
			if n != 1 {
				t.Fatalf("revocation voided %d approvals, want 1", n)
			}
			x, err := e.desk.Execute(e.ctx, e.owner, c.ID)
			if gateCheck(err) != change.CheckSignature || e.flag().Version != 1 {
				t.Fatalf("execute on a revoked key's approval: %v (flag version %d)", err, e.flag().Version)
			}
			if s := e.state(c.ID); s != workflow.ChangeAwaitingApproval || x.Case.State != workflow.ChangeAwaitingApproval {
				t.Fatalf("after the refusal the case is %s (answer %s), want awaiting_approval", s, x.Case.State)
			}
			if c := e.approve(e.bob, c.ID); c.State != workflow.ChangeApproved {
				t.Fatalf("bob signs: %s", c.State)
			}
			if x, err := e.desk.Execute(e.ctx, e.owner, c.ID); err != nil || x.Outcome != changedesk.OutcomeExecuted {
				t.Fatalf("after bob's signature: %v", err)
			}
		})
	}
}
