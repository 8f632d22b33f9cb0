package main

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/metrics"
	"github.com/signoff-dev/signoff/sqlstore"
)

// registerStoreMetrics adds the database's metrics to r, each read at scrape
// time under the scrape's deadline: signoff_jobs, signoff_outbox_messages,
// signoff_outbox_lag_seconds, signoff_gate_refusals_total and
// signoff_sandbox_runs_total (docs/operations.md says what each means).
func registerStoreMetrics(r *metrics.Registry, s *sqlstore.DB) {
	r.GaugeFunc("signoff_jobs", "River jobs in the database, by queue and state.", []string{"queue", "state"},
		func(ctx context.Context) ([]metrics.Sample, error) {
			counts, err := s.JobCounts(ctx)
			if err != nil {
				return nil, err
			}
			// Every state of both queues, zero when empty, so that an
			// alert on a state sees 0 rather than nothing.
			n := map[[2]string]int64{}
			for _, q := range []string{river.QueueDefault, sqlstore.NotifyQueue} {
				for _, st := range rivertype.JobStates() {
					n[[2]string{q, string(st)}] = 0
				}
			}
			for _, c := range counts {
				n[[2]string{c.Queue, c.State}] += c.N
			}
			out := make([]metrics.Sample, 0, len(n))
			for k, v := range n {
				out = append(out, metrics.Sample{Labels: []string{k[0], k[1]}, Value: float64(v)})
			}
			return out, nil
		})
	r.GaugeFunc("signoff_outbox_messages", "Outbox messages not delivered, by state: pending (to be delivered) or dead (attempts ran out).", []string{"state"},
		func(ctx context.Context) ([]metrics.Sample, error) {
			b, err := s.Backlog(ctx)
			if err != nil {
				return nil, err
			}
			return []metrics.Sample{{Labels: []string{signoff.OutboxPending}, Value: float64(b.Pending)},
				{Labels: []string{signoff.OutboxDead}, Value: float64(b.Dead)}}, nil
		})
	r.GaugeFunc("signoff_outbox_lag_seconds", "Age of the oldest pending outbox message in seconds; 0 when none is pending.", nil,
		func(ctx context.Context) ([]metrics.Sample, error) {
			b, err := s.Backlog(ctx)
			if err != nil {
				return nil, err
			}
			if b.OldestPending.IsZero() {
				return metrics.Value(0), nil
			}
			return metrics.Value(max(0, s.Now().Sub(b.OldestPending).Seconds())), nil
		})
	t := s.NewLedgerTally()
	r.CounterFunc("signoff_gate_refusals_total", "Change gate refusals recorded on the ledger (gate.refused), all workspaces.", nil,
		func(ctx context.Context) ([]metrics.Sample, error) {
			c, err := t.Tally(ctx)
			if err != nil || !c.CaughtUp {
				return nil, err
			}
			return metrics.Value(float64(c.GateRefusals)), nil
		})
	r.CounterFunc("signoff_sandbox_runs_total", "Candidate verifications in the sandbox recorded on the ledger (verification.completed), by verdict, all workspaces.", []string{"verdict"},
		func(ctx context.Context) ([]metrics.Sample, error) {
			c, err := t.Tally(ctx)
			if err != nil || !c.CaughtUp {
				return nil, err
			}
			for _, v := range sqlstore.VerificationVerdicts() {
				c.Verdicts[v] += 0
			}
			out := make([]metrics.Sample, 0, len(c.Verdicts))
			for v, n := range c.Verdicts {
				out = append(out, metrics.Sample{Labels: []string{v}, Value: float64(n)})
			}
			return out, nil
		})
}
