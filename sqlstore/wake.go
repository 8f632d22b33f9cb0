package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// Jobs start when the transaction that inserted them commits, not when a
// poll comes round.
//
// PostgreSQL: River's insert sends a NOTIFY inside the inserting
// transaction; every process's producers LISTEN, so the commit wakes
// them wherever they run.
//
// SQLite: River emulates LISTEN/NOTIFY with a table that each client
// polls every 50 ms (plus each queue's 50 ms fetch poll, five queues):
// about a tenth of a core and a stream of lock calls while nothing
// happens. Signoff runs River there in poll-only mode instead
// (pollOnlyDriver) and wakes its own producers after the commit
// (wakeDriver, settled): the same promptness in process, and no work at
// rest. Another process on the same SQLite file (a separate `signoff
// worker`) sees a job at its next fallback poll (JobsConfig.Poll).

// pollOnlyDriver is River's driver with its LISTEN/NOTIFY emulation
// turned off: River enters poll-only mode and writes no notification rows.
type pollOnlyDriver struct {
	riverdriver.Driver[*sql.Tx]
}

func (pollOnlyDriver) SupportsListener() bool     { return false }
func (pollOnlyDriver) SupportsListenNotify() bool { return false }

// wakeDriver hands River a pilot that keeps the client's own "a job was
// inserted and committed" trigger (PilotInitParams.NotifyNonTxJobInsert,
// which River gives pilots for exactly this: waking poll-only producers).
// River finds the pilot through the driver (its driver plugin interface).
// TestJobsWakeOnCommit fails if a River upgrade drops either hook.
type wakeDriver struct {
	riverdriver.Driver[*sql.Tx]
	pilot wakePilot
}

func (d *wakeDriver) PluginInit(*baseservice.Archetype) {}
func (d *wakeDriver) PluginPilot() riverpilot.Pilot     { return &d.pilot }

type wakePilot struct {
	riverpilot.StandardPilot
	mu     sync.Mutex
	notify func(context.Context, []*rivertype.JobInsertResult)
}

func (p *wakePilot) PilotInit(a *baseservice.Archetype, params *riverpilot.PilotInitParams) {
	p.StandardPilot.PilotInit(a, params)
	p.mu.Lock()
	p.notify = params.NotifyNonTxJobInsert
	p.mu.Unlock()
}

// wake tells the client that jobs of queues are available now.
func (p *wakePilot) wake(queues []string) {
	p.mu.Lock()
	notify := p.notify
	p.mu.Unlock()
	if notify == nil || len(queues) == 0 {
		return
	}
	res := make([]*rivertype.JobInsertResult, len(queues))
	for i, q := range queues {
		res[i] = &rivertype.JobInsertResult{Job: &rivertype.JobRow{Queue: q}}
	}
	notify(context.Background(), res)
}

// afterWork wakes the job's queue again when River will have made it
// available once more: a short snooze (the outbox waiting for an earlier
// message, a triage waiting its turn) or a first failed attempt. River
// keeps such a job `available` with a later scheduled_at when it is due
// sooner than its scheduler's 5 s cadence, and sends no notification for
// it, so nothing would start it before the fallback poll. Later ones are
// `scheduled`: the scheduler and the fallback poll take them.
func afterWork(job *rivertype.JobRow, err error, wake func(queue string)) {
	if err == nil || job == nil {
		return
	}
	var snooze *rivertype.JobSnoozeError
	var cancel *rivertype.JobCancelError
	var after time.Duration
	switch {
	case errors.As(err, &snooze):
		after = snooze.Duration
	case errors.As(err, &cancel) || job.Attempt >= job.MaxAttempts:
		return
	default:
		// River's default retry policy: (errors so far + 1)^4 seconds,
		// up to 10 % later.
		n := float64(len(job.Errors) + 1)
		after = time.Duration(n * n * n * n * 1.1 * float64(time.Second))
	}
	if after > schedulerInterval {
		return
	}
	queue := job.Queue
	time.AfterFunc(after+10*time.Millisecond, func() { wake(queue) })
}

// notifyInsert wakes every process's producers of queue on PostgreSQL the
// way River's own insert does: a notification on its insert topic, whose
// payload names the queue.
func notifyInsert(drv riverdriver.Driver[*sql.Tx], queue string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = drv.GetExecutor().NotifyMany(ctx, &riverdriver.NotifyManyParams{
		Topic:   riverInsertTopic,
		Payload: []string{fmt.Sprintf(`{"queue": %q}`, queue)},
	})
}

// riverInsertTopic is the channel River's producers listen on for new
// jobs; processes of different River versions share it, so it is as
// stable as River's wire behaviour.
const riverInsertTopic = "river_insert"

// schedulerInterval is River's JobSchedulerIntervalDefault.
const schedulerInterval = 5 * time.Second

// wakers are the job clients of this process that want a wake after
// commit (poll-only clients).
type wakers struct {
	mu      sync.Mutex
	clients []*wakePilot
	// pending holds the queues of available jobs each open transaction
	// inserted; its commit wakes them.
	pending map[*sql.Tx][]string
}

func (w *wakers) add(p *wakePilot) (remove func()) {
	w.mu.Lock()
	w.clients = append(w.clients, p)
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.clients = slices.DeleteFunc(w.clients, func(c *wakePilot) bool { return c == p })
		w.mu.Unlock()
	}
}

func (w *wakers) any() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.clients) > 0
}

// inserted notes that tx inserted a job that is available at once in
// queue.
func (w *wakers) inserted(tx *sql.Tx, queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[*sql.Tx][]string{}
	}
	if qs := w.pending[tx]; !slices.Contains(qs, queue) {
		w.pending[tx] = append(qs, queue)
	}
}

// settled wakes the queues tx inserted into, if it committed. Every
// transaction settles (commit, rollback or panic: tryTx), so no entry
// outlives its transaction.
func (w *wakers) settled(tx *sql.Tx, committed bool) {
	w.mu.Lock()
	queues, ok := w.pending[tx]
	delete(w.pending, tx)
	clients := slices.Clone(w.clients)
	w.mu.Unlock()
	if !ok || !committed {
		return
	}
	for _, c := range clients {
		c.wake(queues)
	}
}
