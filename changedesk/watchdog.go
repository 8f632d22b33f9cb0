package changedesk

import (
	"context"
	"fmt"
	"slices"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// Settle finishes an execution that its process did not: a case still
// executing after its health window and lock lease (the process stopped,
// or its restore failed). It fails closed: the change was never confirmed
// healthy, so
//   - a target still in its before-state had nothing applied: rolled back,
//     nothing to restore;
//   - a target in the plan's after-state is restored: rolled back;
//   - a target in any other state was written by someone else since: the
//     case is drifted and nothing is written over them.
//
// Each ends with a receipt (outcome interrupted). A lock still held means
// the execution may be alive: Settle returns an error and is retried. A
// case that moved on is left alone.
func (d *Desk) Settle(ctx context.Context, ws, caseID string) error {
	c, l, err := d.load(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	if c.State != workflow.ChangeExecuting {
		return nil
	}
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return err
	}
	t, err := change.ParseTarget(plan.Target)
	if err != nil {
		return err
	}
	act, err := d.actuator(t.Kind)
	if err != nil {
		return err
	}
	holder := signoff.NewID("lock")
	ok, err := d.Store.LockTarget(ctx, sys(ws), plan.Target, holder, d.lockTTL())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("settle %s: the lock of %s is still held: the execution may be running; retried later", caseID, plan.Target)
	}
	defer d.unlock(ctx, ws, plan.Target, holder)
	sc := Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}
	live, err := act.Read(ctx, sc, t)
	if err != nil {
		return fmt.Errorf("settle %s: read %s: %w", caseID, plan.Target, err)
	}
	pol, _, err := d.Policy(ctx, ws)
	if err != nil {
		return err
	}
	_, used, err := d.gateApprovals(ctx, c, l.State)
	if err != nil {
		return err
	}
	now := d.now()
	b := ReceiptBody{Approvals: used, Case: c.ID, PlanID: rec.ID, PlanDigest: l.State.ApprovedDigest, PolicyDigest: pol.Digest(), Kind: plan.Kind, Target: plan.Target,
		// The gate passed at execution, so the before-state was the plan's.
		Executor: sys(ws).ID, GateChecks: change.GateChecks, Before: State{Digest: plan.BeforeStateDigest}, After: &live,
		Outcome: OutcomeInterrupted, Preapproved: l.State.Preapproved,
		StartedAt: now, AppliedAt: now, RevertOf: l.State.RevertOf,
		Health: HealthReport{Passed: false, Probes: []Probe{{At: now, Detail: "the execution stopped before its health check was recorded"}}}}
	b.ActionDigest, _ = change.ActionDigest(plan, pol.Digest())
	command, what := "rollback", ""
	switch {
	case plan.BeforeStateDigest == plan.AfterStateDigest:
		// A runbook's state is its script, which running does not
		// change: the live state cannot show whether the interrupted run
		// did anything. Nothing is claimed, nothing run again.
		command, what = "drift", "the target's state does not show whether the interrupted run did anything (a runbook's state is its script): nothing was run again and nothing is claimed restored; a person must check what it did"
	case live.Digest == plan.BeforeStateDigest:
		restored := live
		b.Restored, what = &restored, "nothing was applied; the before-state stands"
	case live.Digest == plan.AfterStateDigest && hasRollback(plan):
		restored, err := act.Restore(ctx, sc, plan, live)
		if err != nil {
			return fmt.Errorf("settle %s: restore %s: %w", caseID, plan.Target, err)
		}
		b.Restored, what = &restored, "the change was applied and never confirmed healthy: restored"
	default:
		command, what = "drift", "the target is in neither the before- nor the after-state: someone else wrote it; nothing was restored over their write"
	}
	b.Detail = what
	b.FinishedAt = d.now()
	rcpt, err := d.sign(c, signoff.ReceiptExecute, b)
	if err != nil {
		return err
	}
	st := l.State
	st.Receipts = append(slices.Clone(st.Receipts), rcpt.ID)
	_, _, err = d.Store.AdvanceChange(context.WithoutCancel(ctx), sys(ws), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
		Command: command, Note: "settled by the execution watchdog", Receipts: []signoff.Receipt{rcpt},
		Events: []signoff.LoopEvent{{Type: "change.settled", Payload: map[string]any{"receipt_id": rcpt.ID, "live_state_digest": live.Digest,
			"restored_state_digest": stateDigest(b.Restored), "detail": what}}}})
	return err
}

type watchdogWorker struct {
	signoff.LongWorker[signoff.ExecutionWatchdogJob]
	d *Desk
}

func (w *watchdogWorker) Work(ctx context.Context, job *river.Job[signoff.ExecutionWatchdogJob]) error {
	return w.d.Settle(ctx, job.Args.WorkspaceID, job.Args.CaseID)
}
