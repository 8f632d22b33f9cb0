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
// PostgreSQL: every process's job client LISTENs for River's insert
// notification. Signoff inserts without River's own NOTIFY (which River
// sends inside the inserting transaction) and sends it after the commit
// instead (remoteNotifier), so the commit wakes producers wherever they
// run without holding PostgreSQL's notification lock in the transaction.
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
	// River records the snooze or failure through its batch completer,
	// which flushes within 250 ms when little is happening; until then the
	// job is still running and a fetch finds nothing. So wake when it is
	// due, and twice more once the completer has surely written it.
	for _, extra := range []time.Duration{10 * time.Millisecond, 300 * time.Millisecond, time.Second} {
		time.AfterFunc(after+extra, func() { wake(queue) })
	}
}

// riverInsertTopic is the channel River's producers listen on for new
// jobs; processes of different River versions share it, so it is as
// stable as River's wire behaviour.
const riverInsertTopic = "river_insert"

// schedulerInterval is River's JobSchedulerIntervalDefault.
const schedulerInterval = 5 * time.Second

// wakers are the job clients of this process that want a wake after
// commit (poll-only clients), and on PostgreSQL the notifier that tells
// every process's clients.
type wakers struct {
	mu      sync.Mutex
	clients []*wakePilot
	// pending holds the jobs each open transaction made available (or
	// scheduled soon); its commit wakes their queues.
	pending map[*sql.Tx][]pendingJob
	// remote, when set (PostgreSQL), sends River's insert notification
	// for queues after the commit, outside the transaction.
	remote *remoteNotifier
}

type pendingJob struct {
	queue string
	at    time.Time // zero: available now
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

// has reports whether p is still a client: timers set for jobs due later
// (whenDue, afterWork) may fire after its job client stopped.
func (w *wakers) has(p *wakePilot) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.clients, p)
}

// wanted reports whether a commit's jobs need a wake at all: a local
// poll-only client, or other processes to notify.
func (w *wakers) wanted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.clients) > 0 || w.remote != nil
}

// inserted notes that tx inserted a job that is available at once in
// queue.
func (w *wakers) inserted(tx *sql.Tx, queue string) { w.note(tx, pendingJob{queue: queue}) }

// scheduledSoon notes that tx scheduled a job of queue for at.
func (w *wakers) scheduledSoon(tx *sql.Tx, queue string, at time.Time) {
	w.note(tx, pendingJob{queue: queue, at: at})
}

func (w *wakers) note(tx *sql.Tx, j pendingJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[*sql.Tx][]pendingJob{}
	}
	if js := w.pending[tx]; !slices.Contains(js, j) {
		w.pending[tx] = append(js, j)
	}
}

// settled wakes the queues tx made jobs available in, if it committed.
// Every transaction settles (commit, rollback or panic: tryTx), so no
// entry outlives its transaction.
func (w *wakers) settled(tx *sql.Tx, committed bool) {
	w.mu.Lock()
	jobs, ok := w.pending[tx]
	delete(w.pending, tx)
	clients := slices.Clone(w.clients)
	remote := w.remote
	w.mu.Unlock()
	if !ok || !committed {
		return
	}
	var now []string
	for _, j := range jobs {
		if j.at.IsZero() {
			if !slices.Contains(now, j.queue) {
				now = append(now, j.queue)
			}
			continue
		}
		q := []string{j.queue}
		for _, c := range clients {
			whenDue(j.at, func() {
				if w.has(c) {
					c.wake(q)
				}
			})
		}
		if remote != nil {
			whenDue(j.at, func() { remote.request(q) })
		}
	}
	if len(now) == 0 {
		return
	}
	for _, c := range clients {
		c.wake(now)
	}
	if remote != nil {
		remote.request(now)
	}
}

// whenDue calls wake from a job's due time, once a second until River's
// scheduler (every 5 s, on the leader) has surely made it available: it
// moves jobs due within its next interval to available ahead of time and
// tells nobody, and on SQLite it tells nobody at all. A job due more than
// soonHorizon away is left to the fallback poll.
func whenDue(at time.Time, wake func()) {
	d := time.Until(at)
	if d > soonHorizon {
		return
	}
	var tick func(n int)
	tick = func(n int) {
		wake()
		if n < int(schedulerInterval/time.Second) {
			time.AfterFunc(time.Second, func() { tick(n + 1) })
		}
	}
	time.AfterFunc(max(d, 0)+10*time.Millisecond, func() { tick(0) })
}

// soonHorizon bounds how far ahead a scheduled job gets its own wake.
const soonHorizon = time.Hour

// remoteNotifier sends River's insert notification for the queues that
// commits made jobs available in, after the commits and outside them
// (like the ledger's notifier, bus.go: a NOTIFY inside a transaction
// takes PostgreSQL's global notification lock at commit, with the
// ledger head still locked). Commits close together share one
// notification per queue; a lost one costs the fallback poll.
type remoteNotifier struct {
	drv           riverdriver.Driver[*sql.Tx]
	mu            sync.Mutex
	queues        []string
	kick          chan struct{}
	stop, stopped chan struct{}
}

func startRemoteNotifier(drv riverdriver.Driver[*sql.Tx]) *remoteNotifier {
	n := &remoteNotifier{drv: drv, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go n.run()
	return n
}

func (n *remoteNotifier) request(queues []string) {
	select {
	case <-n.stop: // closed: a timer set for a job due later fired
		return
	default:
	}
	n.mu.Lock()
	for _, q := range queues {
		if !slices.Contains(n.queues, q) {
			n.queues = append(n.queues, q)
		}
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *remoteNotifier) close() {
	close(n.stop)
	<-n.stopped
}

func (n *remoteNotifier) run() {
	defer close(n.stopped)
	for {
		select {
		case <-n.stop:
			return
		case <-n.kick:
		}
		n.mu.Lock()
		queues := n.queues
		n.queues = nil
		n.mu.Unlock()
		if len(queues) == 0 {
			continue
		}
		payloads := make([]string, len(queues))
		for i, q := range queues {
			payloads[i] = fmt.Sprintf(`{"queue": %q}`, q)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = n.drv.GetExecutor().NotifyMany(ctx, &riverdriver.NotifyManyParams{Topic: riverInsertTopic, Payload: payloads})
		cancel()
	}
}
