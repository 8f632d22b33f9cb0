package changedesk

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// No dead ends: a case whose approvals stopped counting while it waited
// (they lapsed, its plan expired, the policy changed) moves to a state
// whose next action is plain, and says so on the case.

// SetPolicy stores the workspace's change policy and then reviews every
// case waiting for approval, or approved and not executed, again under
// it. The store voids (supersedes) the approvals made under another
// policy in the same transaction as the write, so putting the old policy
// back does not bring them back.
func (d *Desk) SetPolicy(ctx context.Context, by signoff.Actor, yaml string, expectedVersion int64) (signoff.ChangePolicy, error) {
	rec, err := d.Store.SetChangePolicy(ctx, by, yaml, expectedVersion, change.PolicyDigest)
	if err != nil {
		return rec, err
	}
	if err := d.PolicyChanged(ctx, by.WorkspaceID); err != nil {
		// The policy is stored; each case is reviewed again when it is
		// next approved or executed.
		d.log().ErrorContext(ctx, "review pending changes under the new policy", "workspace_id", by.WorkspaceID, "err", err)
	}
	return rec, nil
}

// PolicyChanged reviews again, under the policy in force, every change
// case of the workspace awaiting approval or approved whose review was
// made under another policy.
func (d *Desk) PolicyChanged(ctx context.Context, ws string) error {
	pol, _, err := d.Policy(ctx, ws)
	if err != nil {
		return err
	}
	var first error
	for _, state := range []string{workflow.ChangeAwaitingApproval, workflow.ChangeApproved} {
		f := signoff.CaseFilter{Kind: signoff.KindChange, State: state, Limit: 100}
		for {
			page, err := d.Store.ListCases(ctx, ws, f)
			if err != nil {
				return fmt.Errorf("list %s changes: %w", state, err)
			}
			for _, c := range page.Cases {
				l, err := d.Store.GetChangeLoop(ctx, sys(ws), c.ID)
				if err != nil || l.State.PolicyDigest == pol.Digest() && (c.State != workflow.ChangeApproved || l.State.ApprovedPolicyDigest == pol.Digest()) {
					continue
				}
				if _, _, err := d.rereview(ctx, c, l, pol); err != nil && signoff.ErrorCode(err) != signoff.ECONFLICT && first == nil {
					first = fmt.Errorf("review %s again: %w", c.ID, err)
				}
			}
			if page.NextCursor == "" {
				break
			}
			f.Cursor = page.NextCursor
		}
	}
	return first
}

// rereview sends a case back to planned under the policy in force and
// reviews its current plan again: the approvals of the old policy are
// void, and the review says what is next (approve again, or re-plan).
func (d *Desk) rereview(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, pol change.Policy) (signoff.Case, signoff.ChangeLoop, error) {
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return c, l, err
	}
	st := l.State
	prev := st.PolicyDigest
	st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs, st.Preapproved = "", "", nil, false
	l, c, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "rereview",
		Note: "the policy changed: the plan is reviewed again under the policy in force",
		Events: []signoff.LoopEvent{{Type: "change.policy_changed", Payload: map[string]any{"plan_id": rec.ID, "previous_policy_digest": prev, "policy_digest": pol.Digest(),
			"message": "the change policy changed since this plan was reviewed: approvals made under the old policy no longer count, and the plan is reviewed again under the policy in force; approve it again (or re-plan if the review fails)"}}}})
	if err != nil {
		return c, l, err
	}
	// The store voided approvals of another policy when it was set; these
	// were made under a policy that is no longer the one reviewed.
	if _, err := d.Store.SupersedeApprovals(ctx, sys(c.WorkspaceID), c.ID, ""); err != nil {
		return c, l, err
	}
	return d.review(ctx, c, l, plan, rec)
}

// lapse sends an approved case whose quorum no longer holds (an approval
// expired before the gate ran) back to awaiting approval.
func (d *Desk) lapse(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, why string) (signoff.Case, error) {
	st := l.State
	ids := st.ApprovalIDs
	st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs = "", "", nil
	_, c, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "lapse", Note: why,
		Events: []signoff.LoopEvent{{Type: "change.approval_lapsed", Payload: map[string]any{"approvals": ids, "plan_id": st.PlanID,
			"message": why + ": the plan still stands and waits for a new signature (signoff approve)"}}}})
	return c, err
}

// expire moves an approved or awaiting case whose plan expired to expired.
func (d *Desk) expire(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, plan change.Plan) (signoff.Case, error) {
	_, c, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "expire",
		Note: "the plan expired before it was executed",
		Events: []signoff.LoopEvent{{Type: "change.expired", Payload: map[string]any{"plan_id": l.State.PlanID, "expires_at": plan.ExpiresAt, "was": c.State,
			"message": "the plan expired before it was executed: plan it again (signoff change plan) against the target as it is now"}}}})
	return c, err
}

// unstick runs after the gate refused an approved case for a reason a
// person answers with a new signature or a new plan, and moves it there.
// It returns the case as it is now.
func (d *Desk) unstick(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, plan change.Plan, pol change.Policy, ge *change.GateError) signoff.Case {
	if c.State != workflow.ChangeApproved {
		return c
	}
	ctx = context.WithoutCancel(ctx)
	now := d.now()
	var err error
	next := c
	switch {
	case !plan.ExpiresAt.IsZero() && !now.Before(plan.ExpiresAt):
		next, err = d.expire(ctx, c, l, plan)
	case l.State.PolicyDigest != pol.Digest() || (!l.State.Preapproved && l.State.ApprovedPolicyDigest != pol.Digest()):
		next, _, err = d.rereview(ctx, c, l, pol)
	case ge.Check == change.CheckExpired || d.quorumVoided(ctx, c, l.State):
		next, err = d.lapse(ctx, c, l, "an approval of the quorum lapsed or was voided before the gate ran")
	default:
		return c
	}
	if err != nil {
		d.log().ErrorContext(ctx, "move a refused case on", "case_id", c.ID, "check", ge.Check, "err", err)
		return c
	}
	return next
}

// quorumVoided reports whether an approval the quorum was made of was
// superseded since (a policy change voided it) or voided (its key was
// revoked, or its approver disabled).
func (d *Desk) quorumVoided(ctx context.Context, c signoff.Case, st signoff.ChangeLoopState) bool {
	all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return false
	}
	for _, a := range all {
		for _, id := range st.ApprovalIDs {
			if a.ID == id && (a.Status == signoff.ApprovalSuperseded || a.Status == signoff.ApprovalVoided) {
				return true
			}
		}
	}
	return false
}

// SettleVoided moves every approved change case of the workspace whose
// quorum holds an approval that no longer counts (voided by a revoked key
// or a disabled approver, superseded) back to awaiting approval, at once:
// without it such a case would sit approved, refusing new signatures,
// until someone tried to execute it. Revoking a key and disabling a
// person call it after the store voided their approvals.
func (d *Desk) SettleVoided(ctx context.Context, ws string) error {
	f := signoff.CaseFilter{Kind: signoff.KindChange, State: workflow.ChangeApproved, Limit: 100}
	var first error
	for {
		page, err := d.Store.ListCases(ctx, ws, f)
		if err != nil {
			return fmt.Errorf("list approved changes: %w", err)
		}
		for _, c := range page.Cases {
			l, err := d.Store.GetChangeLoop(ctx, sys(ws), c.ID)
			if err != nil {
				continue
			}
			if _, err := d.lapseVoided(ctx, c, l); err != nil && first == nil {
				first = fmt.Errorf("settle %s: %w", c.ID, err)
			}
		}
		if page.NextCursor == "" {
			return first
		}
		f.Cursor = page.NextCursor
	}
}

// lapseVoided moves approved case c back to awaiting approval when an
// approval of its quorum no longer counts, and reports whether it did. A
// concurrent move (a version conflict) is not an error: someone else
// moved the case.
func (d *Desk) lapseVoided(ctx context.Context, c signoff.Case, l signoff.ChangeLoop) (bool, error) {
	if c.State != workflow.ChangeApproved || l.State.Preapproved || !d.quorumVoided(ctx, c, l.State) {
		return false, nil
	}
	_, err := d.lapse(ctx, c, l, "an approval of the quorum was voided (its key was revoked or its approver disabled)")
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		return false, nil
	}
	return err == nil, err
}

// LapseApprovals is the job that runs when the first approval of an
// approved case's quorum expires: if the case is still approved and that
// approval has lapsed, the case waits for a new signature. A case that
// moved on, or was approved again since, is left alone.
func (d *Desk) LapseApprovals(ctx context.Context, ws, caseID, planID string) error {
	c, l, err := d.load(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	if c.State != workflow.ChangeApproved || l.State.PlanID != planID || l.State.Preapproved {
		return nil
	}
	all, err := d.Store.ListApprovals(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	now := d.now()
	var first time.Time
	for _, a := range all {
		for _, id := range l.State.ApprovalIDs {
			if a.ID == id && (first.IsZero() || a.ExpiresAt.Before(first)) {
				first = a.ExpiresAt
			}
		}
	}
	if first.IsZero() || now.Before(first) {
		return nil // approved again since, with approvals that still live
	}
	_, err = d.lapse(ctx, c, l, fmt.Sprintf("approval of the quorum expired at %s before the gate ran", first.Format(time.RFC3339)))
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		return nil
	}
	return err
}
