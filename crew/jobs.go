package crew

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
)

// Workers are the crew's job workers: triage of each reported bug, and the
// resumption of a run parked at the gate once a person answered.
func (r *Runner) Workers(log *slog.Logger) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &triageWorker{r: r, log: log})
	river.AddWorker(w, &decisionWorker{r: r, log: log})
	return w
}

// waitAhead is how long a run waits for earlier reports of its project.
const waitAhead = time.Second

type triageWorker struct {
	signoff.LongWorker[signoff.TriageJob]
	r   *Runner
	log *slog.Logger
}

// Work triages one reported bug. It is idempotent: a run already started
// is driven on from where it stands, a finished one is left alone.
func (w *triageWorker) Work(ctx context.Context, job *river.Job[signoff.TriageJob]) error {
	ws, caseID := job.Args.WorkspaceID, job.Args.CaseID
	sys := signoff.SystemActor(ws)
	ahead, err := w.r.Store.TriageAhead(ctx, sys, caseID)
	if err != nil {
		return err
	}
	if ahead > 0 {
		// Batch memory needs arrival order within a project; other
		// projects' jobs go on meanwhile.
		return river.JobSnooze(waitAhead)
	}
	run, err := w.r.Store.GetTriage(ctx, sys, caseID)
	switch {
	case signoff.ErrorCode(err) == signoff.ENOTFOUND:
		if err := w.start(ctx, ws, caseID); err != nil {
			return err
		}
	case err != nil:
		return err
	case run.Status == signoff.TriageDone:
		// Done, unless the case was sent back to triage since.
		again, err := w.r.retriage(ctx, ws, caseID, run)
		if err != nil || !again {
			return err
		}
	}
	run, err = w.r.Drive(ctx, ws, caseID)
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "triage", "case_id", caseID, "status", run.Status, "outcome", run.Outcome, "ticket", run.TicketID)
	return nil
}

func (w *triageWorker) start(ctx context.Context, ws, caseID string) error {
	sys := signoff.SystemActor(ws)
	c, err := w.r.Store.GetCase(ctx, sys, caseID)
	if err != nil {
		return err
	}
	reps, err := w.r.Store.ListReports(ctx, sys, caseID)
	if err != nil {
		return err
	}
	if len(reps) == 0 {
		return river.JobCancel(fmt.Errorf("case %s has no report to triage", caseID))
	}
	_, err = w.r.Start(ctx, ws, caseID, ItemFromReport(c, reps[0]))
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		return nil // another attempt started it; Drive goes on from there
	}
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		// No triager agent in the workspace: nobody can take the task.
		// The case goes to a person (so it holds no later report up) and
		// the job stops; retrying cannot help.
		if _, _, terr := w.r.Store.TransitionCase(ctx, sys, caseID, signoff.TransitionInput{Command: "escalate", Note: signoff.ErrorMessage(err)}); terr != nil {
			w.log.ErrorContext(ctx, "escalate untriageable case", "case_id", caseID, "err", terr)
		}
		return river.JobCancel(fmt.Errorf("triage of %s: %w", caseID, err))
	}
	return err
}

type decisionWorker struct {
	signoff.LongWorker[signoff.DecisionJob]
	r   *Runner
	log *slog.Logger
}

// Work resumes a triage run parked at the gate whose decision was just
// made. Other decision kinds are not the crew's.
func (w *decisionWorker) Work(ctx context.Context, job *river.Job[signoff.DecisionJob]) error {
	if job.Args.DecisionKind != GateKind {
		return nil
	}
	run, err := w.r.Resume(ctx, job.Args.WorkspaceID, job.Args.CaseID)
	if errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil {
		return fmt.Errorf("resume triage of %s: %w", job.Args.CaseID, err)
	}
	w.log.InfoContext(ctx, "triage resumed", "case_id", job.Args.CaseID, "status", run.Status, "outcome", run.Outcome, "ticket", run.TicketID)
	return nil
}
