package changedesk

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// ExpirePlan moves a case awaiting approval, or approved and not yet
// executed, to expired once its plan's expires_at has passed. The gate
// refuses an expired plan anyway; this makes the desk say so, and frees
// the case to be planned again. A case planned again since, executed or
// otherwise moved on is left alone; a job that runs early is retried.
func (d *Desk) ExpirePlan(ctx context.Context, ws, caseID, planID string) error {
	c, l, err := d.load(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	if l.State.PlanID != planID || (c.State != workflow.ChangeAwaitingApproval && c.State != workflow.ChangeApproved) {
		return nil
	}
	_, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return err
	}
	if now := d.now(); now.Before(plan.ExpiresAt) {
		return fmt.Errorf("plan %s expires at %s, not yet (now %s); retried later", planID, plan.ExpiresAt.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	_, err = d.expire(ctx, c, l, plan)
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		return nil // it moved on meanwhile: nothing to expire
	}
	return err
}

type expiryWorker struct {
	signoff.LongWorker[signoff.PlanExpiryJob]
	d *Desk
}

func (w *expiryWorker) Work(ctx context.Context, job *river.Job[signoff.PlanExpiryJob]) error {
	if job.Args.Lapse {
		return w.d.LapseApprovals(ctx, job.Args.WorkspaceID, job.Args.CaseID, job.Args.PlanID)
	}
	return w.d.ExpirePlan(ctx, job.Args.WorkspaceID, job.Args.CaseID, job.Args.PlanID)
}
