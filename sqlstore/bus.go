package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Live streams (the API's SSE, the web desk) read the ledger by sequence,
// so any process sees what any other committed by polling the database.
// The event bus makes that prompt: a stream waits on EventsCommitted and is
// woken when this process commits ledger events, and, on PostgreSQL, when
// any process does (a NOTIFY on EventsChannel sent after each such commit,
// and one listening connection per process, package postgres). Polling stays as the fallback:
// a wake only says "read now", never what to read, so a missed or
// spurious one costs at most one poll interval or one empty read.

// EventsChannel is the PostgreSQL notification channel of ledger commits.
const EventsChannel = "signoff_events"

type eventBus struct {
	mu sync.Mutex
	ch chan struct{}
	// appended marks the open transactions that appended events, so their
	// commit wakes the streams.
	appended sync.Map // *sql.Tx → struct{}
	// remote is set while a listener delivers other processes' commits.
	remote bool
	// The notifier (PostgreSQL): pending holds one request to notify,
	// stop ends it, stopped says it has.
	pending       chan struct{}
	stop, stopped chan struct{}
}

// startNotifier runs the notifier until the store closes.
func (s *DB) startNotifier() {
	s.bus.pending = make(chan struct{}, 1)
	s.bus.stop, s.bus.stopped = make(chan struct{}), make(chan struct{})
	go s.notifier()
	s.OnClose(func() error { close(s.bus.stop); <-s.bus.stopped; return nil })
}

// EventsCommitted returns a channel closed at the next commit of ledger
// events: by this process, and on PostgreSQL while the listener is
// connected, by any process. Take it before reading, then wait on it: a commit between
// the read and the wait still wakes the waiter.
func (s *DB) EventsCommitted() <-chan struct{} {
	b := &s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// WakeEvents wakes every waiter of EventsCommitted.
func (s *DB) WakeEvents() {
	b := &s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// EventsFromEverywhere reports whether a listener currently delivers other
// processes' commits (PostgreSQL with ListenEvents connected).
func (s *DB) EventsFromEverywhere() bool {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.bus.remote
}

// SetEventsFromEverywhere records whether the listener is connected; the
// listener calls it.
func (s *DB) SetEventsFromEverywhere(on bool) {
	s.bus.mu.Lock()
	s.bus.remote = on
	s.bus.mu.Unlock()
}

// markAppended notes that tx appended events; its commit wakes the
// streams (settled).
func (s *DB) markAppended(_ context.Context, tx *sql.Tx, _ string) error {
	s.bus.appended.LoadOrStore(tx, struct{}{})
	return nil
}

// settled is called when tx has committed or rolled back. A commit wakes
// this process's job clients on the jobs it inserted; one that appended
// events wakes this process's streams and, on PostgreSQL, asks
// the notifier to tell the other processes.
func (s *DB) settled(tx *sql.Tx, committed bool) {
	s.wake.settled(tx, committed)
	if committed {
		for _, fn := range s.onCommit {
			fn()
		}
	}
	if _, ok := s.bus.appended.LoadAndDelete(tx); !ok || !committed {
		return
	}
	s.WakeEvents()
	if s.bus.pending != nil {
		select {
		case s.bus.pending <- struct{}{}:
		default: // one is pending already: it covers this commit too
		}
	}
}

// notifier sends the NOTIFY of commits, after them and outside them: a
// NOTIFY inside the appending transaction would take PostgreSQL's global
// notification lock at every commit, with the ledger head's row lock
// still held, and stall every other append in the cluster behind it.
// Commits close together share one notification; a lost one costs the
// other processes' streams one poll interval.
func (s *DB) notifier() {
	defer close(s.bus.stopped)
	for {
		select {
		case <-s.bus.stop:
			return
		case <-s.bus.pending:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.db.ExecContext(ctx, `SELECT pg_notify($1, '')`, EventsChannel)
		cancel()
	}
}
