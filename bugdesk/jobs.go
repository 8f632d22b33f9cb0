package bugdesk

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
)

// AddWorkers adds the loop's job workers to w. Every worker rereads the
// case and does nothing when it has moved on, so a repeated job is
// harmless.
func (d *Desk) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &reproduceWorker{d: d})
	river.AddWorker(w, &fixWorker{d: d})
	river.AddWorker(w, &verifyWorker{d: d})
	river.AddWorker(w, &reconcileWorker{d: d})
	river.AddWorker(w, &timeoutWorker{d: d})
	river.AddWorker(w, &duplicatesWorker{d: d})
}

// noRepo reports an error that retrying cannot fix: the project has no
// repository settings (yet). The case waits, ticketed, until someone
// starts it again.
func noRepo(err error) bool {
	return signoff.ErrorCode(err) == signoff.ENOTFOUND && strings.Contains(err.Error(), "repository")
}

type reproduceWorker struct {
	signoff.LongWorker[signoff.ReproduceJob]
	d *Desk
}

func (w *reproduceWorker) Work(ctx context.Context, job *river.Job[signoff.ReproduceJob]) error {
	err := w.d.StartReproduction(ctx, job.Args.WorkspaceID, job.Args.CaseID)
	if noRepo(err) {
		w.d.log().InfoContext(ctx, "ticketed bug waits: its project has no repository settings", "case_id", job.Args.CaseID)
		return nil
	}
	if err != nil {
		return err
	}
	return w.d.Drive(ctx, job.Args.WorkspaceID, job.Args.CaseID, RoleReproducer)
}

type fixWorker struct {
	signoff.LongWorker[signoff.FixJob]
	d *Desk
}

func (w *fixWorker) Work(ctx context.Context, job *river.Job[signoff.FixJob]) error {
	if err := w.d.StartFix(ctx, job.Args.WorkspaceID, job.Args.CaseID); notFrozen(err) {
		// Nothing to fix yet, and retrying cannot change that: the step
		// that freezes a reproduction enqueues its own job.
		w.d.log().InfoContext(ctx, "no fix started: the reproduction is not frozen", "case_id", job.Args.CaseID)
		return nil
	} else if err != nil {
		return err
	}
	return w.d.Drive(ctx, job.Args.WorkspaceID, job.Args.CaseID, RoleFixer)
}

type verifyWorker struct {
	signoff.LongWorker[signoff.VerifyJob]
	d *Desk
}

func (w *verifyWorker) Work(ctx context.Context, job *river.Job[signoff.VerifyJob]) error {
	return w.d.VerifyCandidate(ctx, job.Args.WorkspaceID, job.Args.CaseID, job.Args.CandidateID)
}

// Timeout is what the verification can take (VerifyTimeout) rather than
// signoff.LongJobTimeout, so the job of a worker that died mid-run is
// rescued soon after that. River asks both when it starts the job and
// when its rescuer finds it still running; both get the same answer (a
// candidate's harness never changes) unless the reviewer's configuration
// changed in between. It reads the store, within 10 s, and answers
// signoff.LongJobTimeout when it cannot.
func (w *verifyWorker) Timeout(job *river.Job[signoff.VerifyJob]) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.d.VerifyTimeout(ctx, job.Args.WorkspaceID, job.Args.CaseID, job.Args.CandidateID)
}

type reconcileWorker struct {
	signoff.LongWorker[signoff.ReconcileJob]
	d *Desk
}

func (w *reconcileWorker) Work(ctx context.Context, job *river.Job[signoff.ReconcileJob]) error {
	if commit, ok := strings.CutPrefix(job.Args.Cause, "merge:"); ok {
		// Deploying is the deployer's business; a failed deploy is logged
		// and the merge stays merged until a deployment contains it.
		if err := w.d.Deploy(ctx, job.Args.WorkspaceID, job.Args.ProjectID, commit); err != nil {
			w.d.log().ErrorContext(ctx, "deploy", "project_id", job.Args.ProjectID, "commit", commit, "err", err)
		}
	}
	return w.d.Reconcile(ctx, job.Args.WorkspaceID, job.Args.ProjectID)
}

type timeoutWorker struct {
	signoff.LongWorker[signoff.ConfirmTimeoutJob]
	d *Desk
}

func (w *timeoutWorker) Work(ctx context.Context, job *river.Job[signoff.ConfirmTimeoutJob]) error {
	wait, err := w.d.ConfirmTimeout(ctx, job.Args.WorkspaceID, job.Args.CaseID, job.Args.Round)
	if err != nil {
		return fmt.Errorf("confirmation timeout: %w", err)
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

type duplicatesWorker struct {
	signoff.LongWorker[signoff.DuplicatesJob]
	d *Desk
}

// Work carries the primary's news to its duplicates. The desk usually did
// it already, right after the change; this job is the backstop, and every
// step only acts on cases still in the state it expects.
func (w *duplicatesWorker) Work(ctx context.Context, job *river.Job[signoff.DuplicatesJob]) error {
	a := job.Args
	switch a.Action {
	case "ask":
		p, err := w.d.project(ctx, a.WorkspaceID, a.ProjectID)
		if err != nil {
			return err
		}
		return w.d.askDuplicates(ctx, p, a.Primary)
	case "withdraw":
		w.d.withdrawDuplicates(ctx, a.WorkspaceID, a.ProjectID, a.Primary, "")
		return nil
	case "reopen":
		return w.d.reopenPrimary(ctx, a.WorkspaceID, a.Primary, a.Duplicate, a.Reason)
	}
	return river.JobCancel(fmt.Errorf("unknown duplicates action %q", a.Action))
}
