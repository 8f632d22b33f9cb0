package signoff

import (
	"time"

	"github.com/riverqueue/river"
)

// Jobs are enqueued in the same transaction as the state change that
// causes them (River, on both backends) and may run more than once: every
// worker is idempotent.

// TriageJob asks for a reported bug to be triaged. Runs of one project are
// processed in arrival order; the worker snoozes a job whose earlier runs
// are still active.
type TriageJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	// Version is the case version that sent it back to triage (an
	// answer, provide_info, resume_triage); zero for the first report.
	// Jobs are unique by their arguments, so each return is a job of its
	// own and a repeat of the same one is not.
	Version int64 `json:"version,omitempty"`
}

// Kind implements river.JobArgs.
func (TriageJob) Kind() string { return "triage_case" }

// InsertOpts puts the job on its queue.
func (TriageJob) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueTriage} }

// DecisionJob says a person answered a decision, so whatever waited on it
// can go on (a triage run parked at the gate resumes).
type DecisionJob struct {
	WorkspaceID  string `json:"workspace_id"`
	CaseID       string `json:"case_id"`
	DecisionID   string `json:"decision_id"`
	DecisionKind string `json:"decision_kind"`
}

// Kind implements river.JobArgs.
func (DecisionJob) Kind() string { return "decision_made" }

// InsertOpts puts the job on its queue.
func (DecisionJob) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueTriage} }

// Job queues. A process works the queues it is given (signoff worker
// --queues), so agent and sandbox work can run on other machines than the
// API. Every process registers every worker: the queue decides who fetches
// a job, not who could run it.
const (
	// QueueTriage runs the triage crew: reports to triage, decisions
	// that resume it.
	QueueTriage = "triage"
	// QueueAgent runs the bug loop's agents: reproduction and fixes (each
	// also runs the harness in the sandbox).
	QueueAgent = "agent"
	// QueueSandbox runs verifications of candidate fixes in the sandbox.
	QueueSandbox = "sandbox"
	// QueueOutbox delivers notifications and opens and expires cards.
	QueueOutbox = "notify"
	// QueueDefault runs the rest: deployments, timeouts, the change
	// desk's expiries and watchdogs.
	QueueDefault = river.QueueDefault
)

// Queues are every queue, in the order signoff worker names them.
var Queues = []string{QueueTriage, QueueAgent, QueueSandbox, QueueOutbox, QueueDefault}

// LongJobTimeout bounds jobs that run agents, sandboxes or health windows,
// and is the ceiling of every job timeout (BoundedTimeout).
const LongJobTimeout = 10 * time.Minute

// MinJobTimeout is the floor of BoundedTimeout: a job's own estimate of
// its work may miss a slow disk or a busy database, and below a couple of
// minutes a rescue would buy little anyway.
const MinJobTimeout = 2 * time.Minute

// BoundedTimeout is the timeout of a job whose work is known to take at
// most work: work itself, but no less than floor (MinJobTimeout when
// floor is not positive) and no more than LongJobTimeout. River cancels
// the job's context when it passes, and its rescuer retries the job of a
// process that died once it has passed (and RescueStuckJobsAfter has), so
// a tight bound is what makes a dead worker's job run again soon.
func BoundedTimeout(work, floor time.Duration) time.Duration {
	if floor <= 0 {
		floor = MinJobTimeout
	}
	return min(max(work, floor), LongJobTimeout)
}

// LongWorker is river.WorkerDefaults for such jobs. The job queue's
// default timeout is short (it is tuned to the notification lease, so a
// crashed worker's message is rescued within minutes); these jobs carry
// their own, and the rescuer leaves them alone until it has passed. A
// worker that can bound its job more tightly (the bug loop's
// verification) overrides Timeout with BoundedTimeout.
type LongWorker[T river.JobArgs] struct{ river.WorkerDefaults[T] }

// Timeout implements river.Worker.
func (LongWorker[T]) Timeout(*river.Job[T]) time.Duration { return LongJobTimeout }
