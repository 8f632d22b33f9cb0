package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
)

// enqueue inserts a job in tx, so it exists exactly when the change that
// asked for it commits. Without River (a store opened without it) jobs are
// not kept.
func (s *DB) enqueue(ctx context.Context, tx *sql.Tx, args river.JobArgs) error {
	return s.enqueueAt(ctx, tx, args, time.Time{})
}

// enqueueAt is enqueue for a job that runs no earlier than at (a zero at
// runs it now).
func (s *DB) enqueueAt(ctx context.Context, tx *sql.Tx, args river.JobArgs, at time.Time) error {
	if s.river == nil {
		return nil
	}
	// One job per argument set: a repeat of the same request is the same
	// job, whatever state it is in.
	opts := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}, ScheduledAt: at}
	if _, err := s.insertTx(ctx, tx, args, opts); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// insertTx, insertManyTx and retryTx are the store's only ways into
// River's job table (TestRiverOnlyThroughWake): each notes the jobs it
// made available or scheduled, so that when tx commits the job clients
// are woken for them, at once or when they are due (wake.go).
func (s *DB) insertTx(ctx context.Context, tx *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := s.river.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return nil, err
	}
	s.madeAvailable(tx, res.Job)
	return res, nil
}

func (s *DB) insertManyTx(ctx context.Context, tx *sql.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	res, err := s.river.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		s.madeAvailable(tx, r.Job)
	}
	return res, nil
}

func (s *DB) retryTx(ctx context.Context, tx *sql.Tx, jobID int64) (*rivertype.JobRow, error) {
	job, err := s.river.JobRetryTx(ctx, tx, jobID)
	if err != nil {
		return nil, err
	}
	s.madeAvailable(tx, job)
	return job, nil
}

func (s *DB) madeAvailable(tx *sql.Tx, job *rivertype.JobRow) {
	if job == nil || !s.wake.wanted() {
		return
	}
	switch job.State {
	case rivertype.JobStateAvailable:
		s.wake.inserted(tx, job.Queue)
	case rivertype.JobStateScheduled:
		s.wake.scheduledSoon(tx, job.Queue, job.ScheduledAt)
	}
}

// DefaultPoll is how often a job client looks for work nobody woke it
// for. Seconds, not milliseconds: every poll is a query per queue (five
// queues), and an idle server should cost nothing.
const DefaultPoll = 5 * time.Second

// ShortJobTimeout is the timeout of jobs that set none (signoff.LongWorker
// jobs set their own); RescueAfter is when the rescuer looks at a job
// still running, never before its own timeout has passed. River's
// rescuer runs every 30 s (not configurable), so the job of a worker that
// died is retried between max(timeout, RescueAfter) and 30 s more (plus
// the retry's backoff and the scheduler's 5 s) after that attempt began.
const (
	ShortJobTimeout = 60 * time.Second
	RescueAfter     = 70 * time.Second
)

// clientID names this process's job client: River records it in every
// job's attempted_by, so an operator (or the cluster test) can tell which
// host and process ran, or died running, a job. River's default has only
// the host and a time.
func clientID(now time.Time) string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown_host"
	}
	host = strings.NewReplacer(".", "_", "-", "_", ":", "_").Replace(host)
	if len(host) > 60 {
		host = host[:60]
	}
	return fmt.Sprintf("%s_pid%d_%s", host, os.Getpid(), strings.ReplaceAll(now.UTC().Format("2006_01_02T15_04_05.000000"), ".", "_"))
}

// StartJobs starts a River client that works the store's jobs with
// workers, up to maxWorkers at once, until stop is called. Jobs run at
// least once: workers must be idempotent.
func (s *DB) StartJobs(ctx context.Context, workers *river.Workers, maxWorkers int) (stop func(context.Context) error, err error) {
	return s.StartJobsWith(ctx, workers, JobsConfig{Workers: maxWorkers})
}

// JobsConfig sizes a job client.
type JobsConfig struct {
	// Workers is how many jobs each of the triage, agent, sandbox and
	// default queues runs at once; Notify the outbox's (default 64:
	// deliveries mostly wait on the network, and on SQLite fewer workers
	// leave the database idle between fetches).
	Workers, Notify int
	// Queues are the queues this process works (signoff.Queues when
	// empty). Jobs of the others wait for a process that works them.
	Queues []string
	// Poll is how often the client looks for jobs it was not woken for
	// (default DefaultPoll): jobs another process inserted into a SQLite
	// file, jobs scheduled more than an hour ahead once River's scheduler
	// made them due, and any wake that was lost. Jobs inserted by this
	// process, and on PostgreSQL by any process, start at once; short
	// snoozes, first retries and jobs due within the hour when due
	// (wake.go).
	Poll time.Duration
	// JobTimeout is the timeout of jobs whose worker sets none (default
	// ShortJobTimeout); RescueAfter is how long a job runs before the
	// rescuer considers it (default RescueAfter; at least JobTimeout).
	// Tests shorten them.
	JobTimeout, RescueAfter time.Duration
}

// StartJobsWith is StartJobs with both queues sized. Jobs without a
// timeout of their own (signoff.LongWorker, signoff.BoundedTimeout) get
// ShortJobTimeout; one whose worker died is rescued once both its timeout
// and RescueAfter have passed since its attempt began (measured from the
// attempt, not added up), so a crashed delivery is taken up again within
// minutes.
func (s *DB) StartJobsWith(ctx context.Context, workers *river.Workers, cfg JobsConfig) (stop func(context.Context) error, err error) {
	if s.driver == nil {
		return nil, fmt.Errorf("start jobs: this store has no job queue")
	}
	if cfg.Notify <= 0 {
		cfg.Notify = 64
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = ShortJobTimeout
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = RescueAfter
	}
	if cfg.RescueAfter < cfg.JobTimeout {
		return nil, fmt.Errorf("start jobs: rescue after %s is shorter than the job timeout %s", cfg.RescueAfter, cfg.JobTimeout)
	}
	queues := map[string]river.QueueConfig{}
	names := cfg.Queues
	if len(names) == 0 {
		names = signoff.Queues
	}
	for _, q := range names {
		if !slices.Contains(signoff.Queues, q) {
			return nil, fmt.Errorf("start jobs: no queue %q (queues: %s)", q, strings.Join(signoff.Queues, ", "))
		}
		n := cfg.Workers
		if q == NotifyQueue {
			n = cfg.Notify
		}
		queues[q] = river.QueueConfig{MaxWorkers: max(n, 1)}
	}
	drv := s.driver
	var pilot *wakePilot
	if !drv.SupportsListener() {
		wd := &wakeDriver{Driver: drv}
		drv, pilot = wd, &wd.pilot
	}
	var wake func(queue string)
	switch {
	case pilot != nil:
		wake = func(queue string) {
			if s.wake.has(pilot) { // the client may have stopped since
				pilot.wake([]string{queue})
			}
		}
	case s.wake.remote != nil:
		wake = func(queue string) { s.wake.remote.request([]string{queue}) }
	default:
		wake = func(string) {}
	}
	hooks := []rivertype.Hook{river.HookWorkEndFunc(func(_ context.Context, job *rivertype.JobRow, err error) error {
		afterWork(job, err, wake)
		return err
	})}
	c, err := river.NewClient(drv, &river.Config{
		Hooks:             hooks,
		ID:                clientID(time.Now()),
		Queues:            queues,
		Workers:           workers,
		FetchPollInterval: cfg.Poll,
		// The cooldown spaces fetches a burst of wakes asks for (the first
		// fetches at once, the rest once after it): a job inserted right
		// after another starts within it.
		FetchCooldown:        min(cfg.Poll, 5*time.Millisecond),
		JobTimeout:           cfg.JobTimeout,
		RescueStuckJobsAfter: cfg.RescueAfter,
	})
	if err != nil {
		return nil, fmt.Errorf("start jobs: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start jobs: %w", err)
	}
	if pilot == nil {
		return c.Stop, nil
	}
	remove := s.wake.add(pilot)
	return func(ctx context.Context) error {
		defer remove()
		return c.Stop(ctx)
	}, nil
}

// Enqueue inserts one job in a transaction of its own: for tools and
// benchmarks; the desks enqueue inside the transaction of the change that
// asks for the job.
func (s *DB) Enqueue(ctx context.Context, args river.JobArgs) error {
	return s.EnqueueAt(ctx, args, time.Time{})
}

// EnqueueAt is Enqueue for a job that runs no earlier than at (zero: now).
func (s *DB) EnqueueAt(ctx context.Context, args river.JobArgs, at time.Time) error {
	return s.InTx(ctx, func(tx *sql.Tx) error { return s.enqueueAt(ctx, tx, args, at) })
}

// EnqueueTx inserts a job in tx (a transaction of InTx): it exists, and
// this process's job clients are woken for it, exactly when tx commits.
func (s *DB) EnqueueTx(ctx context.Context, tx *sql.Tx, args river.JobArgs) error {
	return s.enqueue(ctx, tx, args)
}
