package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
)

// pickupArgs is a job that only says it started. N makes each one unique
// (enqueue de-duplicates by arguments).
type pickupArgs struct {
	N int64 `json:"n"`
	// Snooze and Fail make the first attempt snooze 200 ms or fail.
	Snooze, Fail bool
}

func (pickupArgs) Kind() string { return "storetest_probe" }

func (pickupArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: signoff.QueueDefault}
}

// pickupWorker records when each probe started.
type pickupWorker struct {
	river.WorkerDefaults[pickupArgs]
	mu      sync.Mutex
	started map[int64]time.Time
	ch      chan int64
}

func newPickupWorker() *pickupWorker {
	return &pickupWorker{started: map[int64]time.Time{}, ch: make(chan int64, 1024)}
}

func (w *pickupWorker) Work(_ context.Context, j *river.Job[pickupArgs]) error {
	if j.Attempt == 1 && j.Args.Fail {
		return fmt.Errorf("first attempt fails")
	}
	if j.Args.Snooze && j.Metadata != nil && !strings.Contains(string(j.Metadata), `"snoozes"`) {
		return river.JobSnooze(200 * time.Millisecond)
	}
	w.mu.Lock()
	w.started[j.Args.N] = time.Now()
	w.mu.Unlock()
	w.ch <- j.Args.N
	return nil
}

func (w *pickupWorker) startedAt(n int64) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started[n]
}

// startProbes starts a job client on s working only probes, with the
// given fallback poll.
func startProbes(tb testing.TB, s *sqlstore.DB, poll time.Duration) *pickupWorker {
	tb.Helper()
	w := newPickupWorker()
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	stop, err := s.StartJobsWith(context.Background(), workers, sqlstore.JobsConfig{Workers: 2, Queues: []string{signoff.QueueDefault}, Poll: poll})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = stop(ctx)
	})
	return w
}

// testJobsWakeOnCommit: a job starts when the transaction that inserted
// it commits, not at the next poll. The clients here poll once an hour,
// so a job that runs at all was woken: in this process on both engines,
// and on PostgreSQL from another process too (River's LISTEN/NOTIFY). On
// SQLite another process's job waits for the fallback poll (here 100 ms).
// A River upgrade that drops the hooks wake.go relies on fails here.
func testJobsWakeOnCommit(t *testing.T, b Backend) {
	ctx := context.Background()
	wait := func(t *testing.T, w *pickupWorker, n int64) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case got := <-w.ch:
				if got == n {
					return
				}
			case <-timeout:
				t.Fatalf("probe %d did not start within 30 s: the commit did not wake the job client", n)
			}
		}
	}
	t.Run("same process", func(t *testing.T) {
		s := b.Open(t, sqlstore.Options{})
		w := startProbes(t, s, time.Hour)
		for n := range int64(3) {
			if err := s.Enqueue(ctx, pickupArgs{N: n}); err != nil {
				t.Fatal(err)
			}
			wait(t, w, n)
		}
	})
	t.Run("other process", func(t *testing.T) {
		a, other := b.OpenPair(t, sqlstore.Options{})
		poll := time.Hour
		if b.Name == "sqlite" {
			poll = 100 * time.Millisecond
		}
		w := startProbes(t, other, poll)
		if err := a.Enqueue(ctx, pickupArgs{N: 7}); err != nil {
			t.Fatal(err)
		}
		wait(t, w, 7)
	})
	// A short snooze or a first failure leaves the job available for
	// later; the client is woken for it then, not at its hourly poll.
	t.Run("snoozed and retried", func(t *testing.T) {
		s := b.Open(t, sqlstore.Options{})
		w := startProbes(t, s, time.Hour)
		if err := s.Enqueue(ctx, pickupArgs{N: 1, Snooze: true}); err != nil {
			t.Fatal(err)
		}
		wait(t, w, 1)
		if err := s.Enqueue(ctx, pickupArgs{N: 2, Fail: true}); err != nil {
			t.Fatal(err)
		}
		wait(t, w, 2)
	})
	// A job scheduled for a moment soon starts once River's scheduler has
	// made it due, not at the hourly poll.
	t.Run("scheduled", func(t *testing.T) {
		s := b.Open(t, sqlstore.Options{})
		w := startProbes(t, s, time.Hour)
		at := time.Now().Add(1500 * time.Millisecond)
		if err := s.EnqueueAt(ctx, pickupArgs{N: 3}, at); err != nil {
			t.Fatal(err)
		}
		wait(t, w, 3)
		if got := w.startedAt(3); got.Before(at) {
			t.Fatalf("started at %s, before it was due (%s)", got, at)
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		s := b.Open(t, sqlstore.Options{})
		w := startProbes(t, s, time.Hour)
		err := s.InTx(ctx, func(tx *sql.Tx) error {
			if err := s.EnqueueTx(ctx, tx, pickupArgs{N: 1}); err != nil {
				return err
			}
			return fmt.Errorf("roll back")
		})
		if err == nil {
			t.Fatal("the transaction committed")
		}
		if err := s.Enqueue(ctx, pickupArgs{N: 2}); err != nil {
			t.Fatal(err)
		}
		wait(t, w, 2)
		if !w.startedAt(1).IsZero() {
			t.Fatal("a job of a rolled-back transaction ran")
		}
	})
}

// BenchPickup measures the latency from an enqueue (its transaction
// included) to its job starting, with the default fallback poll: in the process that inserted
// it, and in another (a second store on the same database, as a separate
// worker process has). One job at a time, so it is the wake's latency,
// not a backlog's.
func BenchPickup(b *testing.B, bk Backend) {
	run := func(b *testing.B, insert *sqlstore.DB, w *pickupWorker, probes int) {
		ctx := context.Background()
		var lat []time.Duration
		b.ResetTimer()
		for i := range b.N * probes {
			n := int64(i)
			t0 := time.Now()
			if err := insert.Enqueue(ctx, pickupArgs{N: n}); err != nil {
				b.Fatal(err)
			}
			select {
			case got := <-w.ch:
				if got != n {
					b.Fatalf("probe %d started, want %d", got, n)
				}
			case <-time.After(time.Minute):
				b.Fatalf("probe %d did not start", n)
			}
			lat = append(lat, w.startedAt(n).Sub(t0))
		}
		b.StopTimer()
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		b.Logf("%d jobs: commit to start p50 %s p99 %s max %s", len(lat), p50, p99, lat[len(lat)-1])
	}
	b.Run("same-process", func(b *testing.B) {
		s := bk.Open(b, sqlstore.Options{})
		run(b, s, startProbes(b, s, 0), 200)
	})
	b.Run("other-process", func(b *testing.B) {
		a, other := bk.OpenPair(b, sqlstore.Options{})
		// On SQLite another process finds a job at its fallback poll (on
		// average half of sqlstore.DefaultPoll): fewer probes keep this
		// under two minutes.
		probes := 200
		if bk.Name == "sqlite" {
			probes = 40
		}
		run(b, a, startProbes(b, other, 0), probes)
	})
}
