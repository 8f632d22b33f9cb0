package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// Live streams (the API's SSE, the web desk) read the ledger by sequence,
// so any process sees what any other committed by polling the database.
// The event bus makes that prompt: a stream waits on EventsCommitted and is
// woken when this process commits ledger events, and, on PostgreSQL, when
// any process does (NOTIFY on EventsChannel, delivered at commit, and a
// listener per process; see ListenEvents). Polling stays as the fallback:
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
}

// EventsCommitted returns a channel closed at the next commit of ledger
// events: by this process, and on PostgreSQL while ListenEvents runs, by
// any process. Take it before reading, then wait on it: a commit between
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

// markAppended notes that tx appended events to ws; on PostgreSQL it also
// queues the notification, which the server sends at commit (and drops on
// rollback), to every listening process.
func (s *DB) markAppended(ctx context.Context, tx *sql.Tx, ws string) error {
	if _, dup := s.bus.appended.LoadOrStore(tx, struct{}{}); dup {
		return nil
	}
	if s.d.Notify {
		if _, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, EventsChannel, ws); err != nil {
			return err
		}
	}
	return nil
}

// settled is called when tx has committed or rolled back.
func (s *DB) settled(tx *sql.Tx, committed bool) {
	if _, ok := s.bus.appended.LoadAndDelete(tx); ok && committed {
		s.WakeEvents()
	}
}
