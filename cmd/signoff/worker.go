package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
)

// parseQueues reads a --queues value: "all", "none", or queue names
// separated by commas ("outbox" names the notification queue). "none" is
// an empty, non-nil list: the process takes no jobs.
func parseQueues(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	switch v {
	case "", "all":
		return slices.Clone(signoff.Queues), nil
	case "none":
		return []string{}, nil
	}
	var out []string
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "outbox" {
			name = signoff.QueueOutbox
		}
		if !slices.Contains(signoff.Queues, name) {
			return nil, signoff.Errorf(signoff.EINVALID, "--queues: no queue %q (queues: triage, agent, sandbox, outbox, default; or all, none)", name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// jobsStopTimeout is how long a stopping process lets its running jobs
// finish before it cancels them. A cancelled job is retried by another
// process: every worker is idempotent.
const jobsStopTimeout = 30 * time.Second

// startJobs starts this process's share of the job queue, or nothing for
// no queues. The returned stop first waits for running jobs (up to
// jobsStopTimeout), then cancels what is left.
func startJobs(ctx context.Context, log *slog.Logger, s *sqlstore.DB, st *stack, queues []string, workers int) (func(), error) {
	if len(queues) == 0 {
		return func() {}, nil
	}
	stop, err := s.StartJobsWith(ctx, st.workers(log), sqlstore.JobsConfig{Workers: workers, Queues: queues})
	if err != nil {
		return nil, err
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), jobsStopTimeout)
		defer cancel()
		if err := stop(sctx); err != nil {
			log.Warn("job workers did not stop in time; their jobs will be retried", "err", err)
		}
	}, nil
}

// runWorker takes jobs and serves nothing: several of them, on other
// machines, share one PostgreSQL database's queue with the serve
// processes.
func runWorker(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var queues, logFormat string
	var workers int
	fs := newFlags("worker", "signoff worker [--queues triage,agent,sandbox,outbox,default] [--workers 4] [--db PATH|URL] [--key FILE]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&queues, "queues", "all", "the queues to take jobs from: all, or some of triage, agent, sandbox, outbox, default")
	fs.IntVar(&workers, "workers", 4, "jobs each queue runs at once (the outbox runs 64)")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	qs, err := parseQueues(queues)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return signoff.Errorf(signoff.EINVALID, "--queues none: a worker with no queues has nothing to do")
	}
	if workers < 1 || workers > 256 {
		return signoff.Errorf(signoff.EINVALID, "--workers must be between 1 and 256")
	}
	log := newLogger(e.stderr, logFormat)
	s, err := d.openRW(ctx, e, true)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := newStack(e, s, log, nil)
	if err != nil {
		return err
	}
	stop, err := startJobs(ctx, log, s, st, qs, workers)
	if err != nil {
		return err
	}
	log.Info("working", "queues", strings.Join(qs, ","), "workers", workers, "backend", s.Dialect())
	<-ctx.Done()
	log.Info("stopping: finishing running jobs", "timeout", jobsStopTimeout)
	stop()
	fmt.Fprintln(e.stderr, "worker stopped")
	return nil
}
