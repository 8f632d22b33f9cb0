package changedesk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// checkReason refuses, before any case is opened, a reason the policy's
// review would fail: a request that can only end in review_failed is a
// dead end, and for a rollback it would also hold the original's claim.
func checkReason(pol change.Policy, reason string) error {
	min := pol.MinReasonLength
	if min < 1 {
		min = 1
	}
	if n := change.ReasonLength(reason); n < min {
		return signoff.Errorf(signoff.EINVALID, "the reason must have at least %d characters (the policy's min_reason_length); it has %d", min, n)
	}
	return nil
}

// compensationLive reports whether a compensating case still holds its
// original: open, executing or executed. One that ended without executing
// (review failed, rejected, drifted, expired, superseded, rolled back by
// its health check) no longer does, and a new rollback may be requested.
func compensationLive(state string) bool {
	switch state {
	case workflow.ChangePlanned, workflow.ChangeReviewed, workflow.ChangeAwaitingApproval, workflow.ChangeApproved,
		workflow.ChangeExecuting, workflow.ChangeExecuted, workflow.ChangeReverted:
		return true
	}
	return false
}

// execution is an executed change's record: its execute receipt.
type execution struct {
	id   string
	at   time.Time
	body ReceiptBody
}

// executedReceipt returns the newest receipt of caseID whose outcome is
// executed, with when it was signed.
func (d *Desk) executedReceipt(ctx context.Context, ws, caseID string) (execution, bool, error) {
	return d.receiptWithOutcome(ctx, ws, caseID, OutcomeExecuted)
}

// receiptWithOutcome returns the newest receipt of caseID whose outcome is
// one of outcomes, with when it was signed.
func (d *Desk) receiptWithOutcome(ctx context.Context, ws, caseID string, outcomes ...string) (execution, bool, error) {
	rs, err := d.Store.ListReceipts(ctx, sys(ws), caseID)
	if err != nil {
		return execution{}, false, fmt.Errorf("receipts of %s: %w", caseID, err)
	}
	for i := len(rs) - 1; i >= 0; i-- {
		b, err := OpenReceipt(rs[i], nil)
		if err != nil {
			return execution{}, false, fmt.Errorf("receipt %s: %w", rs[i].ID, err)
		}
		if slices.Contains(outcomes, b.Outcome) {
			return execution{id: rs[i].ID, at: rs[i].CreatedAt, body: b}, true, nil
		}
	}
	return execution{}, false, nil
}

// laterChanges lists the executed changes of target in the project that
// ran after since and still stand (one left executing by a failed restore
// counts: what it applied was never undone): a change reverted since does not, and
// neither does the compensation that reverted it (together they left the
// target as they found it), nor a change a rollback wrote over. skip
// names cases to leave out (the original, the compensating case).
func (d *Desk) laterChanges(ctx context.Context, ws, project, target string, since time.Time, skip ...string) ([]change.LaterChange, error) {
	// A change left executing with a restore_failed receipt was applied,
	// failed its health check and could not be restored: its effect
	// stands (for a runbook, whose state a run does not change, nothing
	// else would show it).
	// So does one the execution watchdog settled as drifted because it
	// could not tell whether an interrupted run did anything.
	loops, err := d.Store.ListChangeLoops(ctx, sys(ws), project, workflow.ChangeExecuted, workflow.ChangeReverted, workflow.ChangeExecuting, workflow.ChangeDrifted)
	if err != nil {
		return nil, fmt.Errorf("change loops of %s: %w", project, err)
	}
	type cand struct {
		l     signoff.ChangeLoop
		state string
		after string
		rcpt  string
	}
	var cands []cand
	after := map[string]bool{} // case ids on the target executed after since
	for _, l := range loops {
		if slices.Contains(skip, l.CaseID) || l.State.PlanID == "" {
			continue
		}
		rec, err := d.Store.GetPlan(ctx, sys(ws), l.State.PlanID)
		if err != nil {
			return nil, fmt.Errorf("plan of %s: %w", l.CaseID, err)
		}
		p, err := change.DecodePlan(rec.Body)
		if err != nil || p.Target != target {
			continue
		}
		c, err := d.Store.GetCase(ctx, sys(ws), l.CaseID)
		if err != nil {
			return nil, err
		}
		var x execution
		var ok bool
		switch c.State {
		case workflow.ChangeExecuting:
			x, ok, err = d.receiptWithOutcome(ctx, ws, l.CaseID, OutcomeRestoreFailed, OutcomeInterrupted)
		case workflow.ChangeDrifted:
			x, ok, err = d.receiptWithOutcome(ctx, ws, l.CaseID, OutcomeInterrupted)
		default:
			x, ok, err = d.executedReceipt(ctx, ws, l.CaseID)
		}
		if err != nil {
			return nil, err
		}
		if !ok || !x.at.After(since) {
			continue
		}
		after[l.CaseID] = true
		cands = append(cands, cand{l: l, state: c.State, after: contentDigest(x.body.After), rcpt: x.id})
	}
	reverted := map[string]bool{}
	for _, c := range cands {
		if c.state == workflow.ChangeReverted {
			reverted[c.l.CaseID] = true
		}
	}
	var out []change.LaterChange
	for _, c := range cands {
		standing := c.state != workflow.ChangeReverted && len(c.l.State.OverwrittenBy) == 0 &&
			!(c.l.State.RevertOf != "" && reverted[c.l.State.RevertOf] && after[c.l.State.RevertOf])
		if standing {
			title := ""
			if cs, err := d.Store.GetCase(ctx, sys(ws), c.l.CaseID); err == nil {
				title = cs.Title
			}
			out = append(out, change.LaterChange{CaseID: c.l.CaseID, Title: title, AfterStateDigest: c.after, ReceiptID: c.rcpt})
		}
	}
	return out, nil
}

// contentDigest is a state's content digest: what a flag holds without
// its version, so a change written and restored by a failed health check
// does not count as drift, while any other value does.
func contentDigest(s *State) string {
	if s == nil {
		return ""
	}
	if s.Content != "" {
		return s.Content
	}
	return s.Digest
}

// liveContent reads target's content digest now ("" when unreadable).
func (d *Desk) liveContent(ctx context.Context, sc Scope, target string) string {
	t, err := change.ParseTarget(target)
	if err != nil {
		return ""
	}
	act, err := d.actuator(t.Kind)
	if err != nil {
		return ""
	}
	s, err := act.Read(ctx, sc, t)
	if err != nil {
		return ""
	}
	return contentDigest(&s)
}

// compensation gathers what the rollback rule looks at for a rollback of
// origID whose plan is plan and decides, live being the target's content
// digest now. self is the compensating case asking ("" before it
// exists). The gate still holds the plan to its exact before-state.
func (d *Desk) compensation(ctx context.Context, ws, origID, self string, plan change.Plan, live string) (change.CompensationDecision, error) {
	oc, err := d.Store.GetCase(ctx, sys(ws), origID)
	if err != nil {
		return change.CompensationDecision{}, fmt.Errorf("original %s: %w", origID, err)
	}
	ol, err := d.Store.GetChangeLoop(ctx, sys(ws), origID)
	if err != nil {
		return change.CompensationDecision{}, fmt.Errorf("loop of %s: %w", origID, err)
	}
	pol, _, err := d.Policy(ctx, ws)
	if err != nil {
		return change.CompensationDecision{}, err
	}
	_, orig, err := d.currentPlan(ctx, oc, ol)
	if err != nil {
		return change.CompensationDecision{}, err
	}
	// Propose refuses a compensating plan for another target; a case
	// stored before that rule reaches the gate here and is refused too
	// (a file's content digest is its bytes alone, so two files holding
	// the same bytes would otherwise pass the content check).
	if plan.Target != "" && plan.Target != orig.Target {
		return change.CompensationDecision{Verdict: change.CompensationRefused,
			Reason: fmt.Sprintf("the plan acts on %s, but %s changed %s: a compensation acts on its original's target only", plan.Target, origID, orig.Target)}, nil
	}
	in := change.CompensationInput{OriginalState: oc.State, OriginalKind: orig.Kind, OriginalIsCompensation: ol.State.RevertOf != "",
		HasRollback: hasRollback(orig), LiveDigest: live}
	if by := ol.State.RevertedBy; by != "" && by != self {
		bc, err := d.Store.GetCase(ctx, sys(ws), by)
		if err != nil {
			return change.CompensationDecision{}, fmt.Errorf("compensating case %s: %w", by, err)
		}
		// One that executed (or ran and was itself reverted) while the
		// original stayed executed did not revert it (its plan was not
		// the exact inverse): it holds nothing, and what it wrote counts
		// as a later change of the target.
		ranAside := oc.State == workflow.ChangeExecuted && (bc.State == workflow.ChangeExecuted || bc.State == workflow.ChangeReverted)
		if compensationLive(bc.State) && !ranAside {
			in.ActiveCompensation = by
		}
	}
	if a, err := canonical.Transform(orig.Rollback); err == nil && hasRollback(orig) {
		b, err := canonical.Transform(plan.Params)
		in.ExactInverse = err == nil && bytes.Equal(a, b) && orig.Target == plan.Target && orig.Kind == plan.Kind &&
			ownRollbackOnly(orig, plan)
	}
	if oc.State == workflow.ChangeExecuted {
		x, ok, err := d.executedReceipt(ctx, ws, origID)
		if err != nil {
			return change.CompensationDecision{}, err
		}
		if ok {
			in.RecordedAfterDigest = contentDigest(x.body.After)
			if in.Later, err = d.laterChanges(ctx, ws, oc.ProjectID, orig.Target, x.at, origID, self); err != nil {
				return change.CompensationDecision{}, err
			}
		}
	}
	return change.Compensate(in, pol), nil
}

// ownRollbackOnly reports whether plan, a compensation of orig whose
// params are orig's rollback, is otherwise exactly what Rollback drafts:
// the original's health check, and for a runbook no rollback of its own
// (Rollback gives none). A re-planned compensation may carry a rollback
// run nobody signed, which a failing health check would run: that is no
// longer the original's own rollback. A flag's or file's rollback is the
// value the desk read when drafting, never the proposer's.
func ownRollbackOnly(orig, plan change.Plan) bool {
	a, err1 := json.Marshal(orig.HealthCheck)
	b, err2 := json.Marshal(plan.HealthCheck)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		return false
	}
	return plan.Kind != change.KindRunbook || !hasRollback(plan)
}

// recheckPreapproval applies the rollback rule again at the gate, under
// the target's lock, to a pre-approved compensation about to run: a later
// change of the target may have executed since it was reviewed (a file
// written and written back, a runbook run again: the before-state check
// cannot tell), and the pre-approval covers only the exact inverse on
// what the original left with nothing standing after it. It returns the
// decision and, when the pre-approval no longer holds, the refusal.
func (d *Desk) recheckPreapproval(ctx context.Context, c signoff.Case, st signoff.ChangeLoopState, plan change.Plan, before State) (change.CompensationDecision, *change.GateError, error) {
	if st.RevertOf == "" {
		return change.CompensationDecision{}, &change.GateError{Check: change.CheckQuorum, Detail: "a pre-approved plan that compensates no change: it needs signatures"}, nil
	}
	dec, err := d.compensation(ctx, c.WorkspaceID, st.RevertOf, c.ID, plan, contentDigest(&before))
	if err != nil {
		return dec, nil, err
	}
	if !dec.Preapproved() {
		return dec, &change.GateError{Check: change.CheckQuorum, Detail: "the rollback's pre-approval no longer holds (" + dec.Reason + "): it needs signatures"}, nil
	}
	return dec, nil, nil
}

// preapprovalLapsed sends a pre-approved compensation whose pre-approval
// no longer holds back through review: under the rule it now needs
// signatures, and the card says why. It returns the case as it is now.
func (d *Desk) preapprovalLapsed(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, ge *change.GateError) signoff.Case {
	ctx = context.WithoutCancel(ctx)
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err == nil {
		st := l.State
		st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs, st.Preapproved = "", "", nil, false
		var c2 signoff.Case
		l, c2, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "rereview",
			Note: "the rollback's pre-approval no longer holds: the plan is reviewed again",
			Events: []signoff.LoopEvent{{Type: "change.preapproval_lapsed", Payload: map[string]any{"plan_id": rec.ID, "revert_of": st.RevertOf,
				"message": ge.Detail + "; it was reviewed again and waits for signatures (signoff approve)"}}}})
		if err == nil {
			c = c2
			if c2, _, err = d.review(ctx, c, l, plan, rec); err == nil {
				c = c2
			}
		}
	}
	if err != nil {
		d.log().ErrorContext(ctx, "review a compensation again after its pre-approval lapsed", "case_id", c.ID, "err", err)
	}
	return c
}

// compensationMoved compares the rollback rule's decision now, at the
// gate under the target's lock, with the decision stored on the
// compensating case when it was reviewed: the one its signers were shown
// (and, for a pre-approved case, the one the desk approved on). A runbook
// run again, or a file written and written back, passes the gate's
// before-state check, so without this a signed rollback would also
// overwrite a later change nobody who signed it saw. It returns nil when
// the signatures still cover what the rollback overwrites (the later
// changes still standing are among those shown, the target holds the
// content shown); otherwise the refusal and the payload of
// change.compensation_changed, naming the old and the new difference.
func compensationMoved(st signoff.ChangeLoopState, now change.CompensationDecision) (*change.GateError, map[string]any) {
	var was change.CompensationDecision
	known := len(st.Compensation) > 0 && json.Unmarshal(st.Compensation, &was) == nil && was.Verdict != ""
	// A later change is the one shown only if it is the same execution
	// (a drifted case planned again runs again under its id).
	shown := map[[2]string]bool{}
	for _, l := range was.Later {
		shown[[2]string{l.CaseID, l.ReceiptID}] = true
	}
	var added []string
	for _, l := range now.Later {
		if !shown[[2]string{l.CaseID, l.ReceiptID}] {
			added = append(added, l.CaseID)
		}
	}
	var why []string
	if !known {
		why = append(why, "the case holds no rollback-rule decision that its signers were shown")
	}
	if now.Verdict == change.CompensationRefused {
		why = append(why, "the rollback rule now refuses it: "+now.Reason)
	} else {
		if len(added) > 0 {
			why = append(why, fmt.Sprintf("later changes executed on the target after it was reviewed (%s): the rollback would overwrite them too, and nobody who signed saw them", strings.Join(added, ", ")))
		}
		if known && now.LiveDigest != was.LiveDigest {
			why = append(why, fmt.Sprintf("the target holds %s now, not %s as when it was reviewed", unread(now.LiveDigest), unread(was.LiveDigest)))
		}
	}
	if len(why) == 0 {
		return nil, nil
	}
	msg := "the rollback's difference changed since it was reviewed: " + strings.Join(why, "; ")
	ids := func(ls []change.LaterChange) []string {
		out := make([]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, l.CaseID)
		}
		return out
	}
	payload := map[string]any{"revert_of": st.RevertOf, "approvals": st.ApprovalIDs,
		"signed_later_changes": ids(was.Later), "later_changes": ids(now.Later), "new_later_changes": added,
		"signed_live_content_digest": was.LiveDigest, "live_content_digest": now.LiveDigest,
		"signed_verdict": was.Verdict, "verdict": now.Verdict,
		"message": msg + "; the approvals no longer count, and the case was reviewed again with the new difference: sign it again (signoff approve), or leave it"}
	return &change.GateError{Check: change.CheckQuorum, Detail: msg + ": it needs new signatures"}, payload
}

// unread is a content digest, shortened, or "an unreadable state".
func unread(d string) string {
	if d == "" {
		return "an unreadable state"
	}
	return short(d)
}

// compensationChanged sends an approved compensating case whose
// difference moved since its signers saw it (compensationMoved) back
// through review: its approvals are superseded (they were given over
// another difference, and the plan's digest, which they name, has not
// changed), change.compensation_changed records the old and the new
// difference, and the review stores the decision now and asks for
// signatures again. It returns the case as it is now. The approvals are
// superseded first: if anything after fails, the case stays approved
// with nothing the gate passes, and the next execution tries again.
func (d *Desk) compensationChanged(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, payload map[string]any) signoff.Case {
	ctx = context.WithoutCancel(ctx)
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err == nil {
		_, err = d.Store.SupersedeApprovals(ctx, sys(c.WorkspaceID), c.ID, "")
	}
	if err == nil {
		st := l.State
		st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs, st.Preapproved = "", "", nil, false
		payload["plan_id"] = rec.ID
		var c2 signoff.Case
		l, c2, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "rereview",
			Note:   "the rollback's difference changed since it was signed: the plan is reviewed again",
			Events: []signoff.LoopEvent{{Type: "change.compensation_changed", Payload: payload}}})
		if err == nil {
			c = c2
			if c2, _, err = d.review(ctx, c, l, plan, rec); err == nil {
				c = c2
			}
		}
	}
	if err != nil {
		d.log().ErrorContext(ctx, "review a compensation again after its difference changed", "case_id", c.ID, "err", err)
	}
	return c
}

// markOverwritten records, on every later change that a compensating
// rollback wrote over, that its effect no longer stands: a ledger event
// and the loop's overwritten_by, so it does not silently look current.
// later is the rule's list decided at the gate under the target's lock
// (runbook runs and files as flags), which the signatures covered.
// Best effort after the outcome is recorded; a failure is logged.
func (d *Desk) markOverwritten(ctx context.Context, c signoff.Case, st signoff.ChangeLoopState, later []change.LaterChange, rcpt signoff.Receipt) {
	for _, lc := range later {
		for attempt := 0; attempt < 3; attempt++ {
			l, err := d.Store.GetChangeLoop(ctx, sys(c.WorkspaceID), lc.CaseID)
			if err != nil || slices.Contains(l.State.OverwrittenBy, c.ID) {
				break
			}
			ns := l.State
			ns.OverwrittenBy = append(slices.Clone(ns.OverwrittenBy), c.ID)
			_, _, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: lc.CaseID, Version: l.Version, State: ns,
				Events: []signoff.LoopEvent{{Type: "change.overwritten", Payload: map[string]any{"by": c.ID, "revert_of": st.RevertOf, "receipt_id": rcpt.ID,
					"message": fmt.Sprintf("compensating change %s (a rollback of %s) wrote over this change: its effect no longer stands", c.ID, st.RevertOf)}}}})
			if err == nil {
				break
			}
			if signoff.ErrorCode(err) != signoff.ECONFLICT {
				d.log().ErrorContext(ctx, "mark overwritten change", "case_id", lc.CaseID, "by", c.ID, "err", err)
				break
			}
		}
	}
}

// supersedeCompensation closes a compensating case that ended without
// executing when a new rollback of its original replaces it, so it cannot
// be planned and run beside the new one. A case in rolled_back keeps its
// outcome; Propose refuses to plan it again.
func (d *Desk) supersedeCompensation(ctx context.Context, ws, caseID, replacedBy string) error {
	c, l, err := d.load(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	switch c.State {
	case workflow.ChangeRequested, workflow.ChangeReviewFailed, workflow.ChangeDrifted, workflow.ChangeExpired:
	default:
		return nil
	}
	_, _, err = d.Store.AdvanceChange(ctx, sys(ws), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "supersede",
		Note: "replaced by compensating change " + replacedBy,
		Events: []signoff.LoopEvent{{Type: "change.superseded", Payload: map[string]any{"by": replacedBy, "revert_of": l.State.RevertOf,
			"message": fmt.Sprintf("a new rollback of %s, %s, replaces this compensating change", l.State.RevertOf, replacedBy)}}}})
	return err
}
