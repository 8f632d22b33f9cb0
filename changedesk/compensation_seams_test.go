package changedesk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/workflow"
)

// Seams an outside attacker found on the demo after the rollback rule
// landed. Each runs on SQLite and PostgreSQL.

// TestCompensationStaysOnItsTarget: a compensating case re-planned for
// another target was judged, listed and marked against its original's
// target, so the later changes of that target were marked overwritten by
// a write that never touched them, and the original's next rollback was
// pre-approved over them. A compensation acts on its original's target
// only.
func TestCompensationStaysOnItsTarget(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, ""))
			e.bannerFlag()
			hc := e.okHealth()
			a := e.executed(bannerKey, `"v2"`, hc)
			r, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 banner was wrong, put v1 back please")
			must(t, err)
			if x != nil || r.State != workflow.ChangeAwaitingApproval {
				t.Fatalf("rollback: %s, %s", r.State, ran(x))
			}
			_, _, err = e.desk.Propose(e.ctx, e.owner, r.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
				Params: json.RawMessage(`{"value":true}`), HealthCheck: hc, Via: "human"})
			if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), "acts on that target only") {
				t.Fatalf("re-planning the compensation of %s onto %s: %v", bannerKey, flagKey, err)
			}
			if e.value(flagKey) != "false" || e.loop(r.ID).State.PlanID == "" {
				t.Fatalf("flag %s, plan %q", e.value(flagKey), e.loop(r.ID).State.PlanID)
			}
		})
	}
}

// TestCompensationThatRanAsideFreesItsOriginal: a compensating case
// re-planned to something other than the exact inverse and executed
// leaves its original executed (it did not revert it). The original's
// claim no longer holds it: a new rollback can be requested, and what
// the aside compensation wrote counts as a later change to sign over.
func TestCompensationThatRanAsideFreesItsOriginal(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			// No rollback is pre-approved, so the compensating case waits
			// and can be re-planned to "v9", which is not A's inverse.
			e.setPolicy(policyYAML([]string{e.alice.ID, e.bob.ID}, ""))
			e.bannerFlag()
			hc := e.okHealth()
			a := e.executed(bannerKey, `"v2"`, hc)
			r, _, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 banner was wrong, put v1 back please")
			must(t, err)
			_, _, err = e.desk.Propose(e.ctx, e.owner, r.ID, changedesk.Proposal{Target: "flag:prod/" + bannerKey,
				Params: json.RawMessage(`{"value":"v9"}`), HealthCheck: hc, Via: "human"})
			must(t, err)
			e.approve(e.bob, r.ID)
			x, err := e.desk.Execute(e.ctx, e.bob, r.ID)
			must(t, err)
			if x.Outcome != changedesk.OutcomeExecuted || e.value(bannerKey) != `"v9"` || e.state(a.ID) != workflow.ChangeExecuted {
				t.Fatalf("aside compensation: %s, banner %s, A %s", x.Outcome, e.value(bannerKey), e.state(a.ID))
			}
			r2, x2, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "put the v1 banner back, properly this time")
			if err != nil {
				t.Fatalf("a new rollback of A after the aside compensation ran: %v", err)
			}
			if x2 != nil || r2.State != workflow.ChangeAwaitingApproval || e.value(bannerKey) != `"v9"` {
				t.Fatalf("new rollback: %s, %s, banner %s", r2.State, ran(x2), e.value(bannerKey))
			}
			if d := e.decision(r2.ID); d.Verdict != change.CompensationNeedsApproval || len(d.Later) != 1 || d.Later[0].CaseID != r.ID {
				t.Fatalf("decision %+v, want the aside compensation %s listed", d, r.ID)
			}
		})
	}
}

// TestVoidedQuorumMovesTheCaseBack: disabling an approver (and enabling
// them again) voids their approval; the approved case must not sit
// approved with an approval the store will not consume. The gate refuses
// it as a signature that no longer counts and the case waits for a new
// one; a new signature on the still-approved case moves it back first;
// SettleVoided moves it back at once.
func TestVoidedQuorumMovesTheCaseBack(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		for _, how := range []string{"execute", "approve", "settle"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, open)
				c := e.request("false")
				if c = e.approve(e.alice, c.ID); c.State != workflow.ChangeApproved {
					t.Fatalf("alice signs: %s", c.State)
				}
				_, n, err := e.store.DisableActor(e.ctx, e.owner, e.alice.ID)
				must(t, err)
				if _, err := e.store.EnableActor(e.ctx, e.owner, e.alice.ID); err != nil || n != 1 {
					t.Fatalf("enable: %v (voided %d)", err, n)
				}
				switch how {
				case "execute":
					x, err := e.desk.Execute(e.ctx, e.owner, c.ID)
					if gateCheck(err) != change.CheckSignature || e.flag().Version != 1 {
						t.Fatalf("execute on a voided approval: %v (flag version %d)", err, e.flag().Version)
					}
					if x.Case.State != workflow.ChangeAwaitingApproval {
						t.Fatalf("after the refusal the case answers %s", x.Case.State)
					}
				case "approve":
					if got := e.approve(e.bob, c.ID); got.State != workflow.ChangeApproved {
						t.Fatalf("bob signs the case whose quorum was voided: %s", got.State)
					}
					if x, err := e.desk.Execute(e.ctx, e.owner, c.ID); err != nil || x.Outcome != changedesk.OutcomeExecuted {
						t.Fatalf("after bob's signature: %v", err)
					}
					return
				case "settle":
					must(t, e.desk.SettleVoided(e.ctx, c.WorkspaceID))
				}
				if s := e.state(c.ID); s != workflow.ChangeAwaitingApproval {
					t.Fatalf("the case is %s, want awaiting_approval", s)
				}
				if !has(e.events(c.ID), "change.approval_lapsed") {
					t.Fatalf("no change.approval_lapsed on the case: %v", e.events(c.ID))
				}
			})
		}
	}
}
