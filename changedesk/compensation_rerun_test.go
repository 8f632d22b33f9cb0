package changedesk_test

import (
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/workflow"
)

// TestSignedRollbackRefusedAfterShownChangeRanAgain: the rollback of A is
// signed over B, a runbook run the watchdog settled as drifted (it could
// not tell what the interrupted run did). B is then planned again and
// runs a new script: the same case, so its id is among those the signers
// were shown, and a runbook's state is its script, so the target holds
// what they saw. The signatures covered B's first run, not its second:
// the gate refuses the rollback.
func TestSignedRollbackRefusedAfterShownChangeRanAgain(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			rb := e.withRunbook()
			a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, e.okHealth())
			b := e.unrestoredRunSettled(rb)
			if s := e.state(b.ID); s != workflow.ChangeDrifted {
				t.Fatalf("B settled as %s", s)
			}
			r, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 deploy broke checkout, roll it back")
			must(t, err)
			if x != nil || r.State != workflow.ChangeAwaitingApproval {
				t.Fatalf("rollback of A over B: %s, %s", r.State, ran(x))
			}
			if d := e.decision(r.ID); len(d.Later) != 1 || d.Later[0].CaseID != b.ID {
				t.Fatalf("decision %+v", d)
			}
			if c := e.approve(e.alice, r.ID); c.State != workflow.ChangeApproved {
				t.Fatalf("alice signs the rollback over B's interrupted run: %s", c.State)
			}
			// B is planned again and runs v9.
			_, _, err = e.desk.Propose(e.ctx, e.owner, b.ID, changedesk.Proposal{Target: runbookTarget,
				Params: json.RawMessage(`{"args":["v9"]}`), Rollback: json.RawMessage(`{"args":["v2"]}`), HealthCheck: e.okHealth(), Via: "human"})
			must(t, err)
			e.approve(e.alice, b.ID)
			if xb, err := e.desk.Execute(e.ctx, e.alice, b.ID); err != nil || xb.Outcome != changedesk.OutcomeExecuted {
				t.Fatalf("B again: %v, %v", xb.Outcome, err)
			}
			n := len(rb.ran())
			x2, err := e.desk.Execute(e.ctx, e.bob, r.ID)
			if err == nil || x2.Outcome == changedesk.OutcomeExecuted || len(rb.ran()) != n {
				t.Fatalf("the rollback signed over B's first run ran over its second: %s, %v, runs %v", x2.Outcome, err, rb.ran()[n:])
			}
			if s := e.state(r.ID); s == workflow.ChangeApproved || s == workflow.ChangeExecuted {
				t.Fatalf("the refused rollback is %s", s)
			}
		})
	}
}
