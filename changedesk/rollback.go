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
// now. The rollback rule (change.Compensate) decides what it needs: the
// exact inverse on exactly what the original left, of a kind the policy
// pre-approves, runs at once through the gate; a rollback of a rollback,
// or one over later changes or a live state the original did not leave,
// is an ordinary plan that people sign, with the difference on the case;
// and one that cannot be (not executed, already reverted, no rollback, a
// compensation under way) is refused before any case is opened. When it
// executes, the original case moves to reverted in the same transaction,
// and its receipt shows whether the restored content equals the original
// before-state.
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
	_, plan, err := d.currentPlan(ctx, orig, ol)
	if err != nil {
		return signoff.Case{}, nil, err
	}
	rb := plan
	rb.Params = plan.Rollback
	sc := Scope{WorkspaceID: orig.WorkspaceID, ProjectID: orig.ProjectID, CaseID: orig.ID}
	// What cannot be rolled back at all is said first (a longer reason
	// would not help); then the policy's limits, before anything opens.
	if _, err := d.decideRollback(ctx, orig, rb, d.liveContent(ctx, sc, plan.Target)); err != nil {
		return signoff.Case{}, nil, err
	}
	pol, _, err := d.Policy(ctx, orig.WorkspaceID)
	if err != nil {
		return signoff.Case{}, nil, err
	}
	if err := checkReason(pol, reason); err != nil {
		return signoff.Case{}, nil, err
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
	// The rule, on the live state now: a refusal opens nothing.
	dec, err := d.decideRollback(ctx, orig, rb, d.liveContent(ctx, sc, plan.Target))
	if err != nil {
		return signoff.Case{}, nil, err
	}
	c, err := d.Store.CreateCase(ctx, by, signoff.CaseInput{ProjectID: orig.ProjectID, Kind: signoff.KindChange, Title: firstLine("Roll back: "+orig.Title, 120)})
	if err != nil {
		return c, nil, err
	}
	// Claim the original first: a second rollback request fails here on
	// the loop's version instead of opening a second compensation. A
	// previous compensating case that ended without executing is
	// released: the claim moves to the new one.
	st := ol.State
	replaces := st.RevertedBy
	st.RevertedBy = c.ID
	payload := map[string]any{"compensating_case": c.ID, "by": by.ID, "reason": reason, "verdict": dec.Verdict, "rule": dec.Reason}
	if replaces != "" {
		payload["replaces"] = replaces
	}
	if _, _, err := d.Store.AdvanceChange(ctx, sys(orig.WorkspaceID), signoff.ChangeUpdate{CaseID: orig.ID, Version: ol.Version, State: st,
		Events: []signoff.LoopEvent{{Type: "change.rollback_requested", Payload: payload}}}); err != nil {
		return c, nil, err
	}
	if replaces != "" {
		if err := d.supersedeCompensation(ctx, orig.WorkspaceID, replaces, c.ID); err != nil {
			d.log().WarnContext(ctx, "supersede replaced compensation", "case_id", replaces, "by", c.ID, "err", err)
		}
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

// decideRollback applies the rollback rule to a rollback of orig whose
// plan is rb; a refusal is an ECONFLICT carrying the original's state.
func (d *Desk) decideRollback(ctx context.Context, orig signoff.Case, rb change.Plan, live string) (change.CompensationDecision, error) {
	dec, err := d.compensation(ctx, orig.WorkspaceID, orig.ID, "", rb, live)
	if err != nil {
		return dec, err
	}
	if dec.Verdict == change.CompensationRefused {
		return dec, &signoff.Error{Code: signoff.ECONFLICT, State: orig.State, Message: fmt.Sprintf("case %s cannot be rolled back: %s", orig.ID, dec.Reason)}
	}
	return dec, nil
}
