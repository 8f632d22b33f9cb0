package changedesk_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/changedesk"
)

// BenchmarkGate measures the gate's decision on SQLite: from Execute's
// call to the approvals consumed (reads, the per-target lock, signature
// re-verification, the live before-state, the checks and the atomic
// consume), excluding the actuator's write, the health check and the
// receipt. Each iteration executes a freshly approved change; the setup
// is not timed. It reports the p50 and p99 of the decisions.
func BenchmarkGate(b *testing.B) {
	e := newEnv(b, openSQLite)
	var mu sync.Mutex
	var ds []time.Duration
	e.desk.ObserveGate = func(d time.Duration, check string) {
		if check != "" {
			b.Errorf("gate refused: %s", check)
		}
		mu.Lock()
		ds = append(ds, d)
		mu.Unlock()
	}
	for b.Loop() {
		b.StopTimer()
		// Turning the flag on fails the app's health check, so the gate
		// restores it and every iteration plans against false.
		c := e.request("true")
		e.approve(e.alice, c.ID)
		b.StartTimer()
		if x, err := e.desk.Execute(e.ctx, e.alice, c.ID); err != nil || x.Outcome != changedesk.OutcomeRolledBack {
			b.Fatalf("execute: %s, %v", x.Outcome, err)
		}
	}
	b.StopTimer()
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
