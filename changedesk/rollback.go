package changedesk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// Rollback opens a compensating change for an executed one: a new change
// case whose plan applies the original's rollback to the target as it is
// now (so its before-state is today's, and drift since is caught by its own
// gate). It needs approval like any plan unless the policy pre-approves
// rollbacks of its kind; a pre-approved one is executed at once, through
// the gate. When it executes, the original case moves to reverted in the
// same transaction, and its receipt shows whether the restored content
// equals the original before-state.
func (d *Desk) Rollback(ctx context.Context, by signoff.Actor, caseID, reason string) (signoff.Case, *Execution, error) {
	if !staff(by) {
		return signoff.Case{}, nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not roll changes back", by.Role)
	}
	reason = strings.TrimSpace(reason)
	if err := signoff.CheckText("reason", reason, true, maxReason); err != nil {
		return signoff.Case{}, nil, err
	}
	orig, ol, err := d.load(ctx, by, caseID)
	if err != nil {
		return signoff.Case{}, nil, err
	}
	if orig.State != workflow.ChangeExecuted {
		return signoff.Case{}, nil, &signoff.Error{Code: signoff.ECONFLICT, State: orig.State, Message: fmt.Sprintf("case %s is %s: only an executed change is rolled back", caseID, orig.State)}
	}
	if ol.State.RevertedBy != "" {
		return signoff.Case{}, nil, &signoff.Error{Code: signoff.ECONFLICT, State: orig.State, Message: fmt.Sprintf("case %s already has a compensating change, %s", caseID, ol.State.RevertedBy)}
	}
	_, plan, err := d.currentPlan(ctx, orig, ol)
	if err != nil {
		return signoff.Case{}, nil, err
	}
	if !hasRollback(plan) {
		return signoff.Case{}, nil, signoff.Errorf(signoff.EINVALID, "the plan of %s has no rollback", caseID)
	}
	p := Proposal{Target: plan.Target, Params: plan.Rollback, HealthCheck: plan.HealthCheck, Via: "rollback"}
	if plan.Kind == change.KindRunbook {
		p.Rollback = json.RawMessage("null")
	}
	// One rollback request of a case at a time, in any process: racing
	// requests (a double click) would each open a compensating case before
	// one of them claimed the original, leaving the others' cases behind.
	// Under the lock the original is read again, so the loser is told
	// about the winner's case and opens none.
	lock, holder := "rollback:"+orig.ID, signoff.NewID("lock")
	held, err := d.Store.LockTarget(ctx, sys(orig.WorkspaceID), lock, holder, d.lockTTL())
	if err != nil {
		return signoff.Case{}, nil, err
	}
	if !held {
		return signoff.Case{}, nil, &signoff.Error{Code: signoff.ECONFLICT, State: orig.State, Message: fmt.Sprintf("a rollback of %s is being requested right now", caseID)}
	}
	defer d.unlock(ctx, orig.WorkspaceID, lock, holder)
	if orig, ol, err = d.load(ctx, by, caseID); err != nil {
		return signoff.Case{}, nil, err
	}
	if orig.State != workflow.ChangeExecuted || ol.State.RevertedBy != "" {
		return signoff.Case{}, nil, &signoff.Error{Code: signoff.ECONFLICT, State: orig.State, Message: fmt.Sprintf("case %s is %s and already has a compensating change, %s", caseID, orig.State, ol.State.RevertedBy)}
	}
	c, err := d.Store.CreateCase(ctx, by, signoff.CaseInput{ProjectID: orig.ProjectID, Kind: signoff.KindChange, Title: firstLine("Roll back: "+orig.Title, 120)})
	if err != nil {
		return c, nil, err
	}
	// Claim the original first: a second rollback request fails here on
	// the loop's version instead of opening a second compensation.
	st := ol.State
	st.RevertedBy = c.ID
	if _, _, err := d.Store.AdvanceChange(ctx, sys(orig.WorkspaceID), signoff.ChangeUpdate{CaseID: orig.ID, Version: ol.Version, State: st,
		Events: []signoff.LoopEvent{{Type: "change.rollback_requested", Payload: map[string]any{"compensating_case": c.ID, "by": by.ID, "reason": reason}}}}); err != nil {
		return c, nil, err
	}
	l, c, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID,
		State:  signoff.ChangeLoopState{Reason: reason, Opener: by.ID, RevertOf: orig.ID},
		Events: []signoff.LoopEvent{{Type: "change.requested", Payload: map[string]any{"reason": reason, "opener": by.ID, "revert_of": orig.ID}}}})
	if err != nil {
		return c, nil, err
	}
	pl, err := d.draft(ctx, c, l.State, p)
	if err != nil {
		return c, nil, err
	}
	c, l, err = d.storePlan(ctx, by, c, l, pl, p.Via)
	if err != nil || c.State != workflow.ChangeApproved || !l.State.Preapproved {
		return c, nil, err
	}
	x, err := d.Execute(ctx, by, c.ID)
	if err != nil {
		return x.Case, &x, err
	}
	return x.Case, &x, nil
}
