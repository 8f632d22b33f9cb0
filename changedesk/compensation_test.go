package changedesk_test

import (
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
	"github.com/signoff-dev/signoff/workflow"
)

// Issue 21, "Only what was signed changes": a rollback is pre-approved
// only as the exact inverse of what ran on exactly what it left, and no
// failure leaves a case with nothing to do. Each test runs on SQLite and
// PostgreSQL.

var engines = map[string]opener{"sqlite": openSQLite, "postgres": openPostgres}

const bannerKey = "banner"

// okHealth is a health check that passes whatever the flags say: the
// rollback tests are about what is signed, not about checkout.
func (e *env) okHealth() change.HealthCheck {
	e.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	e.t.Cleanup(srv.Close)
	return change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: srv.URL + "/healthz", ExpectStatus: 200,
		ExpectBody: "ok", WindowSeconds: 1, IntervalSeconds: 1}
}

// executed requests, has alice approve and executes a change setting key
// to value; it fails the test unless the change is executed.
func (e *env) executed(key, value string, hc change.HealthCheck) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "set " + key + " to " + value + " for the release"})
	must(e.t, err)
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: "flag:prod/" + key,
		Params: json.RawMessage(`{"value":` + value + `}`), HealthCheck: hc, Via: "human"})
	must(e.t, err)
	e.approve(e.alice, c.ID)
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(e.t, err)
	if x.Outcome != changedesk.OutcomeExecuted {
		e.t.Fatalf("setting %s to %s: %s", key, value, x.Outcome)
	}
	return x.Case
}

func (e *env) loop(caseID string) signoff.ChangeLoop {
	e.t.Helper()
	l, err := e.store.GetChangeLoop(e.ctx, e.owner, caseID)
	must(e.t, err)
	return l
}

func (e *env) value(key string) string {
	e.t.Helper()
	f, err := e.store.GetFlag(e.ctx, e.owner, e.project, "prod", key)
	must(e.t, err)
	return string(f.Value)
}

// decision is the rollback rule's decision stored on a compensating case.
func (e *env) decision(caseID string) change.CompensationDecision {
	e.t.Helper()
	var d change.CompensationDecision
	raw := e.loop(caseID).State.Compensation
	if len(raw) == 0 {
		e.t.Fatalf("case %s has no compensation decision", caseID)
	}
	must(e.t, json.Unmarshal(raw, &d))
	return d
}

// events returns the types of a case's ledger events.
func (e *env) events(caseID string) []string {
	e.t.Helper()
	evs, err := e.store.ListEvents(e.ctx, e.owner, caseID, 0, 500)
	must(e.t, err)
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// ran says what an execution did, briefly, for failure messages.
func ran(x *changedesk.Execution) string {
	if x == nil {
		return "nothing executed"
	}
	return "executed with outcome " + x.Outcome
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// bannerFlag declares the string flag bannerKey, "v1" in prod.
func (e *env) bannerFlag() {
	e.t.Helper()
	_, err := e.store.CreateFlag(e.ctx, e.owner, e.project, "prod", bannerKey, signoff.FlagString, json.RawMessage(`"v1"`))
	must(e.t, err)
}

// TestRollbackOfRollbackNeedsSignature is hole 1: the rollback of a
// compensating change re-applies the original; it must wait for a
// signature even where the policy pre-approves rollbacks of its kind.
func TestRollbackOfRollbackNeedsSignature(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))
			hc := e.okHealth()
			on := e.executed(flagKey, "true", hc)
			// The exact compensation is pre-approved and runs at once.
			r1, x1, err := e.desk.Rollback(e.ctx, e.owner, on.ID, "the new payment flow breaks checkout, turn it off")
			must(t, err)
			if x1 == nil || x1.Outcome != changedesk.OutcomeExecuted || e.value(flagKey) != "false" || e.state(on.ID) != workflow.ChangeReverted {
				t.Fatalf("first rollback: case %s, %s, flag %s", r1.State, ran(x1), e.value(flagKey))
			}
			if d := e.decision(r1.ID); !d.Preapproved() {
				t.Fatalf("the exact compensation: %+v", d)
			}
			// Its rollback turns the flag on again: nobody signed that.
			r2, x2, err := e.desk.Rollback(e.ctx, e.owner, r1.ID, "turn the new payment flow back on, it was fine")
			must(t, err)
			if x2 != nil || r2.State != workflow.ChangeAwaitingApproval || e.value(flagKey) != "false" {
				t.Fatalf("rollback of the rollback: case %s, %s, flag %s; want awaiting_approval and nothing applied", r2.State, ran(x2), e.value(flagKey))
			}
			d := e.decision(r2.ID)
			if d.Verdict != change.CompensationNeedsApproval || !strings.Contains(d.Reason, "itself a compensating rollback") {
				t.Fatalf("decision %+v", d)
			}
			if l := e.loop(r2.ID); l.State.Preapproved {
				t.Fatal("the rollback of a rollback is marked pre-approved")
			}
			if _, err := e.desk.Execute(e.ctx, e.owner, r2.ID); signoff.ErrorCode(err) != signoff.ECONFLICT || e.value(flagKey) != "false" {
				t.Fatalf("executing it unsigned: %v, flag %s", err, e.value(flagKey))
			}
			card, err := e.desk.Card(e.ctx, e.bob, r2.ID)
			must(t, err)
			if card.Compensation == nil || card.Compensation.Verdict != change.CompensationNeedsApproval {
				t.Fatalf("the card does not say why it needs a signature: %+v", card.Compensation)
			}
			// Signed, it runs like any change.
			e.approve(e.bob, r2.ID)
			x, err := e.desk.Execute(e.ctx, e.bob, r2.ID)
			must(t, err)
			if x.Outcome != changedesk.OutcomeExecuted || e.value(flagKey) != "true" {
				t.Fatalf("signed: %s, flag %s", x.Outcome, e.value(flagKey))
			}
		})
	}
}

// TestRollbackOverLaterChange is hole 2: rolling back A after B changed
// the same target would write A's before-state over B. It needs a
// signature with the difference shown, and once signed and executed, B
// says it was overwritten.
func TestRollbackOverLaterChange(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))
			e.bannerFlag()
			hc := e.okHealth()
			a := e.executed(bannerKey, `"v2"`, hc)
			b := e.executed(bannerKey, `"v3"`, hc)
			r, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 banner was wrong, put v1 back please")
			must(t, err)
			if x != nil || r.State != workflow.ChangeAwaitingApproval || e.value(bannerKey) != `"v3"` {
				t.Fatalf("rollback of A over B: case %s, %s, banner %s; want awaiting_approval, v3", r.State, ran(x), e.value(bannerKey))
			}
			d := e.decision(r.ID)
			if d.Verdict != change.CompensationNeedsApproval || len(d.Later) != 1 || d.Later[0].CaseID != b.ID ||
				d.LiveDigest == "" || d.LiveDigest == d.RecordedAfterDigest || !strings.Contains(d.Reason, b.ID) {
				t.Fatalf("decision %+v", d)
			}
			card, err := e.desk.Card(e.ctx, e.bob, r.ID)
			must(t, err)
			if card.Compensation == nil || len(card.Compensation.Later) != 1 {
				t.Fatalf("the card does not show the later change: %+v", card.Compensation)
			}
			if !has(e.events(r.ID), "change.compensation") {
				t.Fatalf("no change.compensation event on %s: %v", r.ID, e.events(r.ID))
			}
			// Signed knowing it, it runs; B no longer looks current.
			e.approve(e.bob, r.ID)
			rx, err := e.desk.Execute(e.ctx, e.bob, r.ID)
			must(t, err)
			if rx.Outcome != changedesk.OutcomeExecuted || e.value(bannerKey) != `"v1"` || e.state(a.ID) != workflow.ChangeReverted {
				t.Fatalf("signed rollback: %s, banner %s, A %s", rx.Outcome, e.value(bannerKey), e.state(a.ID))
			}
			if bl := e.loop(b.ID); len(bl.State.OverwrittenBy) != 1 || bl.State.OverwrittenBy[0] != r.ID {
				t.Fatalf("B's overwritten_by %v, want [%s]", bl.State.OverwrittenBy, r.ID)
			}
			if !has(e.events(b.ID), "change.overwritten") {
				t.Fatalf("no change.overwritten event on B: %v", e.events(b.ID))
			}
			// B's own rollback now would write over the rollback: signed.
			rb, xb, err := e.desk.Rollback(e.ctx, e.owner, b.ID, "bring the v3 banner back after all")
			must(t, err)
			if xb != nil || rb.State != workflow.ChangeAwaitingApproval || e.value(bannerKey) != `"v1"` {
				t.Fatalf("rollback of the overwritten B: %s, %s", rb.State, ran(xb))
			}
		})
	}
}

// TestRollbackOfNewestChangeIsPreapproved: the rule still pre-approves
// the exact inverse of the newest change on the state it left, also when
// an earlier change of the target exists, and refuses what cannot be
// compensated before opening a case.
func TestRollbackOfNewestChangeIsPreapproved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\n"))
	e.bannerFlag()
	hc := e.okHealth()
	e.executed(bannerKey, `"v2"`, hc)
	b := e.executed(bannerKey, `"v3"`, hc)
	r, x, err := e.desk.Rollback(e.ctx, e.owner, b.ID, "the v3 banner was wrong, put v2 back please")
	must(t, err)
	if x == nil || x.Outcome != changedesk.OutcomeExecuted || e.value(bannerKey) != `"v2"` {
		t.Fatalf("rollback of the newest change: %s, %s", r.State, ran(x))
	}
	cases := func() int {
		p, err := e.store.ListCases(e.ctx, e.owner.WorkspaceID, signoff.CaseFilter{Kind: signoff.KindChange, Limit: 100})
		must(t, err)
		return len(p.Cases)
	}
	n := cases()
	if _, _, err := e.desk.Rollback(e.ctx, e.owner, b.ID, "the v3 banner was wrong, roll back again"); signoff.ErrorCode(err) != signoff.ECONFLICT || !strings.Contains(signoff.ErrorMessage(err), "already reverted") {
		t.Fatalf("rollback of a reverted change: %v", err)
	}
	if cases() != n {
		t.Fatal("a refused rollback opened a case")
	}
}

// TestNoDeadEnds is hole 6: a short reason is refused before a case is
// opened; a rollback that ended without executing can be requested again;
// a lapsed approval and a policy change leave the case with a next
// action; approvals a policy change voided stay void when the old policy
// comes back.
func TestNoDeadEnds(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("short reason refused before a case opens", func(t *testing.T) {
				e := newEnv(t, open)
				e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, "preapproved_rollbacks: [flag]\nmin_reason_length: 30\n"))
				a := e.executed(flagKey, "true", e.okHealth())
				count := func() int {
					p, err := e.store.ListCases(e.ctx, e.owner.WorkspaceID, signoff.CaseFilter{Kind: signoff.KindChange, Limit: 100})
					must(t, err)
					return len(p.Cases)
				}
				n := count()
				_, _, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "prod is broken")
				if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), "at least 30 characters") {
					t.Fatalf("short rollback reason: %v", err)
				}
				_, _, err = e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "prod is broken"})
				if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), "at least 30 characters") {
					t.Fatalf("short request reason: %v", err)
				}
				if count() != n || e.loop(a.ID).State.RevertedBy != "" {
					t.Fatalf("a refused reason opened a case (%d, was %d) or claimed the original (%q)", count(), n, e.loop(a.ID).State.RevertedBy)
				}
				// With a reason long enough, the rollback runs.
				_, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "prod is broken since the new flow, roll it back")
				must(t, err)
				if x == nil || x.Outcome != changedesk.OutcomeExecuted {
					t.Fatalf("rollback: %s", ran(x))
				}
			})
			t.Run("a rollback that ended without executing can be tried again", func(t *testing.T) {
				e := newEnv(t, open)
				a := e.executed(flagKey, "true", e.okHealth()) // rollbacks need a signature here
				r1, _, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the new flow breaks checkout, turn it off")
				must(t, err)
				e.approve(e.bob, r1.ID)
				// Someone writes the flag before the gate runs: r1 drifts.
				f := e.flag()
				_, _, err = e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
					Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "test: a write outside the desk"})
				must(t, err)
				if _, err := e.desk.Execute(e.ctx, e.bob, r1.ID); gateCheck(err) != change.CheckBeforeState || e.state(r1.ID) != workflow.ChangeDrifted {
					t.Fatalf("r1: %v, %s", err, e.state(r1.ID))
				}
				// Prod is still broken: a new rollback is allowed.
				r2, _, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the new flow still breaks checkout, turn it off")
				must(t, err)
				if r2.ID == r1.ID || r2.State != workflow.ChangeAwaitingApproval || e.loop(a.ID).State.RevertedBy != r2.ID {
					t.Fatalf("second rollback %s (%s); original reverted_by %q", r2.ID, r2.State, e.loop(a.ID).State.RevertedBy)
				}
				if e.state(r1.ID) != workflow.ChangeSuperseded {
					t.Fatalf("the replaced compensation is %s, want superseded", e.state(r1.ID))
				}
				// The live state is not what a left: the card says so.
				if d := e.decision(r2.ID); d.LiveDigest == d.RecordedAfterDigest || d.Verdict != change.CompensationNeedsApproval {
					t.Fatalf("decision %+v", d)
				}
				// While r2 is open, a third is refused.
				if _, _, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the new flow still breaks checkout, again"); signoff.ErrorCode(err) != signoff.ECONFLICT {
					t.Fatalf("rollback while one is open: %v", err)
				}
				e.approve(e.bob, r2.ID)
				x, err := e.desk.Execute(e.ctx, e.bob, r2.ID)
				must(t, err)
				if x.Outcome != changedesk.OutcomeExecuted || e.value(flagKey) != "false" || e.state(a.ID) != workflow.ChangeReverted {
					t.Fatalf("second rollback: %s, flag %s, original %s", x.Outcome, e.value(flagKey), e.state(a.ID))
				}
			})
			t.Run("a lapsed approval goes back for a signature", func(t *testing.T) {
				e := newEnv(t, open)
				c := e.request("false")
				card, err := e.desk.Card(e.ctx, e.alice, c.ID)
				must(t, err)
				st := approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, e.clock.Now(), time.Hour)
				envl, err := approval.Sign(st, e.keys[e.alice.ID])
				must(t, err)
				raw, err := json.Marshal(envl)
				must(t, err)
				_, c, err = e.desk.Approve(e.ctx, e.alice, c.ID, raw, "cli-signed", "")
				must(t, err)
				if c.State != workflow.ChangeApproved {
					t.Fatalf("approved: %s", c.State)
				}
				e.clock.Advance(2 * time.Hour)
				x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
				if gateCheck(err) != change.CheckExpired || x.Case.State != workflow.ChangeAwaitingApproval || e.state(c.ID) != workflow.ChangeAwaitingApproval {
					t.Fatalf("lapsed approval: %v, case %s", err, e.state(c.ID))
				}
				if !has(e.events(c.ID), "change.approval_lapsed") {
					t.Fatalf("no change.approval_lapsed event: %v", e.events(c.ID))
				}
				// The next action works: sign again, execute.
				e.approve(e.bob, c.ID)
				if x, err := e.desk.Execute(e.ctx, e.bob, c.ID); err != nil || x.Outcome != changedesk.OutcomeExecuted {
					t.Fatalf("after a new signature: %v", err)
				}
				// The job does the same without anyone trying the gate.
				c2 := e.request("true")
				card, err = e.desk.Card(e.ctx, e.alice, c2.ID)
				must(t, err)
				st = approval.NewStatement(c2.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, e.clock.Now(), time.Hour)
				envl, err = approval.Sign(st, e.keys[e.alice.ID])
				must(t, err)
				raw, err = json.Marshal(envl)
				must(t, err)
				_, _, err = e.desk.Approve(e.ctx, e.alice, c2.ID, raw, "cli-signed", "")
				must(t, err)
				l := e.loop(c2.ID)
				must(t, e.desk.LapseApprovals(e.ctx, e.owner.WorkspaceID, c2.ID, l.State.PlanID))
				if s := e.state(c2.ID); s != workflow.ChangeApproved {
					t.Fatalf("lapsed early: %s", s)
				}
				e.clock.Advance(2 * time.Hour)
				must(t, e.desk.LapseApprovals(e.ctx, e.owner.WorkspaceID, c2.ID, l.State.PlanID))
				if s := e.state(c2.ID); s != workflow.ChangeAwaitingApproval {
					t.Fatalf("after the lapse job: %s", s)
				}
			})
			t.Run("a policy change voids approvals for good", func(t *testing.T) {
				e := newEnv(t, open)
				p1 := policyYAML([]string{e.alice.ID, e.bob.ID}, "")
				p2 := policyYAML([]string{e.alice.ID, e.bob.ID}, "protected_targets: [\"flag:prod/payments_*\"]\n")
				version := func() int64 {
					cur, err := e.store.GetChangePolicy(e.ctx, e.owner)
					must(t, err)
					return cur.Version
				}
				approved := e.request("false")
				e.approve(e.alice, approved.ID)
				waiting := e.request("false")
				// Through the desk: pending cases are reviewed again at once.
				_, err := e.desk.SetPolicy(e.ctx, e.owner, p2, version())
				must(t, err)
				if s := e.state(approved.ID); s != workflow.ChangeAwaitingApproval {
					t.Fatalf("the approved case after a policy change is %s, want awaiting_approval", s)
				}
				if !has(e.events(approved.ID), "change.policy_changed") || !has(e.events(approved.ID), "approvals.superseded") {
					t.Fatalf("events %v", e.events(approved.ID))
				}
				// The waiting case can be approved under the new policy
				// without a re-plan.
				if c := e.approve(e.bob, waiting.ID); c.State != workflow.ChangeApproved {
					t.Fatalf("waiting case: %s", c.State)
				}
				// The old policy back: alice's approval stays void.
				_, err = e.desk.SetPolicy(e.ctx, e.owner, p1, version())
				must(t, err)
				if _, err := e.desk.Execute(e.ctx, e.alice, approved.ID); err == nil || e.value(flagKey) != "false" || e.flag().Version != 1 {
					t.Fatalf("executed on a voided approval: %v", err)
				}
				if s := e.state(approved.ID); s != workflow.ChangeAwaitingApproval {
					t.Fatalf("the case is %s after the policy came back", s)
				}
				for _, a := range e.approvals(approved.ID) {
					if a.Status == signoff.ApprovalValid {
						t.Fatalf("approval %s is valid again", a.ID)
					}
				}
				// Through the store alone (the desk not told): the same.
				again := e.request("false")
				e.approve(e.alice, again.ID)
				_, err = e.store.SetChangePolicy(e.ctx, e.owner, p2, version(), change.PolicyDigest)
				must(t, err)
				_, err = e.store.SetChangePolicy(e.ctx, e.owner, p1, version(), change.PolicyDigest)
				must(t, err)
				if _, err := e.desk.Execute(e.ctx, e.alice, again.ID); err == nil || e.flag().Version != 1 {
					t.Fatalf("executed on an approval voided through the store: %v", err)
				}
				if s := e.state(again.ID); s != workflow.ChangeAwaitingApproval {
					t.Fatalf("the refused case is %s, want awaiting_approval", s)
				}
				if c := e.approve(e.bob, again.ID); c.State != workflow.ChangeApproved {
					t.Fatalf("approved again: %s", c.State)
				}
			})
		})
	}
}

func (e *env) approvals(caseID string) []signoff.Approval {
	e.t.Helper()
	as, err := e.store.ListApprovals(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), caseID)
	must(e.t, err)
	return as
}
