// Package sqlstore implements the Signoff services over database/sql. The
// sqlite and postgres packages open a database, run their own dialect's
// migrations and hand it here, so both backends share one implementation and
// one conformance suite.
package sqlstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
)

// Dialect holds what differs between the databases.
type Dialect struct {
	Name string
	// ForUpdate locks the chain head row on databases with row locks. SQLite
	// needs none: its write transactions are serialized (BEGIN IMMEDIATE).
	ForUpdate string
	// IsUnique reports a unique-constraint violation.
	IsUnique func(error) bool
	// IsTransient reports an error worth retrying the whole transaction for
	// (busy database, serialization failure, deadlock).
	IsTransient func(error) bool
	// SingleWriter databases (SQLite) take one write transaction at a time.
	// The store then queues its own writers on a mutex instead of letting
	// them poll the database's busy handler, whose growing sleeps (up to
	// 100 ms) would otherwise set the tail latency.
	SingleWriter bool
	// Notify databases (PostgreSQL) send a notification on EventsChannel
	// after commits that append ledger events.
	Notify bool
}

// Options configure a DB.
type Options struct {
	// Signer signs chain heads and checkpoints. Without one the store is
	// read-only: every write fails before it starts.
	Signer ed25519.PrivateKey
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Ready checks the schema is current; nil means only a ping.
	Ready func(context.Context) error
	// River inserts jobs in the caller's transaction; nil disables jobs.
	River *river.Client[*sql.Tx]
	// RiverDriver lets the store start a client that works jobs too.
	RiverDriver riverdriver.Driver[*sql.Tx]
	// MaxRetries bounds re-reads after a lost optimistic race (default 8).
	MaxRetries int
	// VerifySegment is the fewest events verified as one parallel piece
	// (default 100,000) and VerifyParallelism the most pieces at once
	// (default GOMAXPROCS); tests set them to exercise the joins.
	VerifySegment     int64
	VerifyParallelism int
	// Intake are the rules reporter and agent text pass before the store
	// keeps it (the intake package). Required: New refuses to open a
	// store without them, so no write path can skip the airlock.
	Intake signoff.IntakeRules
	// Passkeys are the WebAuthn rules a passkey's registration and
	// counter pass (the passkey package). Required, as Intake.
	Passkeys signoff.PasskeyRules
	// Addressing are the rules for who may address an agent (the
	// addressing package). Required, as Intake.
	Addressing signoff.AddressingRules
	// Outbox are the rules of channels and their outbox (the
	// channelrules package). Required, as Intake.
	Outbox signoff.OutboxRules
}

// DB is the storage implementation shared by both backends.
type DB struct {
	db       *sql.DB
	d        Dialect
	signer   ed25519.PrivateKey
	keyID    string
	now      func() time.Time
	ready    func(context.Context) error
	river    *river.Client[*sql.Tx]
	driver   riverdriver.Driver[*sql.Tx]
	retries  int
	segment  int64
	parallel int
	closer   []func() error
	heads    headCache
	writeMu  sync.Mutex
	// intake are the rules hostile text passes before it is stored
	// (Options.Intake).
	intake signoff.IntakeRules
	// passkeys are the WebAuthn rules (Options.Passkeys).
	passkeys signoff.PasskeyRules
	// addressing are the rules for mentions and policies
	// (Options.Addressing).
	addressing signoff.AddressingRules
	// outbox are the channel and outbox rules (Options.Outbox).
	outbox signoff.OutboxRules
	// ro is a view over a pool that cannot write (AttachReadOnly).
	ro *DB
	// sealer seals channel secrets (SetSealer).
	sealer Sealer
	// group commits the outbox's small writes together (grouped).
	group grouper
	// subsStmt reads a workspace's channels in every append (subscribers).
	// Open prepares it before any transaction: preparing it lazily inside
	// the first append took a second pool connection while holding the
	// ledger head, and when appends waiting on that head held every
	// connection, the process deadlocked and stalled the whole cluster.
	subsStmt *sql.Stmt
	// bus wakes live streams when ledger events commit (bus.go).
	bus eventBus
	// wake starts this process's poll-only job clients on the jobs a
	// commit inserted (wake.go).
	wake wakers
	// onCommit run after each commit (OnCommit).
	onCommit []func()
}

var _ signoff.Store = (*DB)(nil)

// checkRules refuses options without the rules the store applies in its
// transactions (storerules.Fill sets them all).
func (o Options) checkRules(engine string) error {
	switch {
	case noRule(o.Intake):
		return fmt.Errorf("open %s: no intake rules: the store keeps no reporter text that has not passed them", engine)
	case noRule(o.Passkeys):
		return fmt.Errorf("open %s: no passkey rules: the store registers no passkey and moves no counter unchecked", engine)
	case noRule(o.Addressing):
		return fmt.Errorf("open %s: no addressing rules: the store opens no task for a mention unchecked", engine)
	case noRule(o.Outbox):
		return fmt.Errorf("open %s: no outbox rules: the store stores no channel unchecked", engine)
	}
	return nil
}

// noRule reports whether a rule is missing: nil, or a nil pointer in an
// interface (which would pass == nil and panic on the first write).
func noRule(r any) bool {
	if r == nil {
		return true
	}
	v := reflect.ValueOf(r)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// New wraps an opened, migrated database.
func New(db *sql.DB, d Dialect, o Options) (*DB, error) {
	if err := o.checkRules(d.Name); err != nil {
		return nil, err
	}
	s := &DB{db: db, d: d, intake: o.Intake, passkeys: o.Passkeys, addressing: o.Addressing, outbox: o.Outbox, signer: o.Signer, now: o.Now, ready: o.Ready, river: o.River, driver: o.RiverDriver, retries: o.MaxRetries}
	if o.Signer != nil {
		s.keyID = identity.KeyID(o.Signer.Public().(ed25519.PublicKey))
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.retries <= 0 {
		s.retries = 8
	}
	s.segment, s.parallel = o.VerifySegment, o.VerifyParallelism
	if s.segment <= 0 {
		s.segment = 100_000
	}
	if s.parallel <= 0 {
		s.parallel = runtime.GOMAXPROCS(0)
	}
	if d.Notify {
		s.startNotifier()
	}
	return s, nil
}

// SetSigner gives a store opened read-only its signing key. Call it before
// the store is used; it is not safe to change the key under load.
func (s *DB) SetSigner(k ed25519.PrivateKey) {
	s.signer, s.keyID = k, identity.KeyID(k.Public().(ed25519.PublicKey))
}

// OnClose registers cleanup to run, in reverse order, when the DB closes.
func (s *DB) OnClose(fn func() error) { s.closer = append(s.closer, fn) }

// OnCommit registers fn to run after every committed transaction (SQLite's
// checkpointer, which makes commits durable). Register before use; fn
// must not block.
func (s *DB) OnCommit(fn func()) { s.onCommit = append(s.onCommit, fn) }

// Close closes the database and everything registered with OnClose.
func (s *DB) Close() error {
	var errs []error
	for i := len(s.closer) - 1; i >= 0; i-- {
		errs = append(errs, s.closer[i]())
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

// AttachReadOnly gives the store a second pool whose connections the
// database itself keeps from writing (SQLite: mode=ro and query_only;
// PostgreSQL: default_transaction_read_only), and closes it with the store.
// ReadOnly serves agents' diagnostic reads from it.
func (s *DB) AttachReadOnly(db *sql.DB) {
	s.ro = &DB{db: db, d: s.d, intake: s.intake, passkeys: s.passkeys, addressing: s.addressing, outbox: s.outbox, now: s.now, ready: s.ready, retries: s.retries, segment: s.segment, parallel: s.parallel}
	s.closer = append(s.closer, db.Close)
}

// ReadOnly returns the store over the read-only pool: no signer (so every
// write is refused before it starts) on connections that cannot write
// either. Without an attached pool it is nil.
func (s *DB) ReadOnly() *DB { return s.ro }

// SQL returns the underlying pool, for benchmarks and tools.
func (s *DB) SQL() *sql.DB { return s.db }

// Dialect returns the backend name.
func (s *DB) Dialect() string { return s.d.Name }

// River returns the job client (insert-only in the API process), or nil.
func (s *DB) River() *river.Client[*sql.Tx] { return s.river }

// Ready implements signoff.Store.
func (s *DB) Ready(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "database unreachable")
	}
	if s.ready != nil {
		if err := s.ready(ctx); err != nil {
			return signoff.Errorf(signoff.EUNAVAILABLE, "database schema not current")
		}
	}
	return nil
}

// InTx runs fn in one transaction, retrying the whole function when the
// database reports a transient failure. fn must not have side effects outside
// the transaction.
func (s *DB) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for attempt := 0; ; attempt++ {
		err := s.tryTx(ctx, fn)
		if err == nil || s.d.IsTransient == nil || !s.d.IsTransient(err) || attempt >= s.retries {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

func (s *DB) tryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if s.d.SingleWriter {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// A panicking fn still ends its transaction.
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			s.settled(tx, false)
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		s.settled(tx, false)
		return err
	}
	if err := tx.Commit(); err != nil {
		s.settled(tx, false)
		return fmt.Errorf("commit: %w", err)
	}
	s.settled(tx, true)
	return nil
}

// backoff sleeps a jittered, exponentially growing interval (1 ms doubling
// to 64 ms) so that racing writers spread out instead of colliding again.
func backoff(ctx context.Context, attempt int) error {
	d := time.Millisecond << min(attempt, 6)
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// rowsQueryer is a *sql.DB or a *sql.Tx.
type rowsQueryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// queryAll runs q and scans every row with scan. It never returns a nil
// slice, so an empty list encodes as [] rather than null.
func queryAll[T any](ctx context.Context, db rowsQueryer, scan func(scanner, *T) error, q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
