package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/riverqueue/river"
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
	if _, err := s.river.InsertTx(ctx, tx, args, opts); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// StartJobs starts a River client that works the store's jobs with
// workers, up to maxWorkers at once, until stop is called. Jobs run at
// least once: workers must be idempotent.
func (s *DB) StartJobs(ctx context.Context, workers *river.Workers, maxWorkers int) (stop func(context.Context) error, err error) {
	if s.driver == nil {
		return nil, fmt.Errorf("start jobs: this store has no job queue")
	}
	c, err := river.NewClient(s.driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}},
		Workers:           workers,
		FetchPollInterval: 100 * time.Millisecond,
		FetchCooldown:     20 * time.Millisecond,
		JobTimeout:        10 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("start jobs: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start jobs: %w", err)
	}
	return c.Stop, nil
}
