package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// Schema describes how a backend brings its database up to date.
type Schema struct {
	Goose goose.Dialect
	FS    fs.FS // the dialect's migrations, at the root of FS
	River riverdriver.Driver[*sql.Tx]
	// PollOnly runs River without its LISTEN/NOTIFY: for SQLite, where
	// River emulates it by polling a table every 50 ms. Jobs then start
	// on this process's commits and on the fallback poll (wake.go).
	PollOnly bool
	// Lock, when set, serializes migrations across processes that start at
	// the same time against one database.
	Lock func(ctx context.Context) (unlock func(), err error)
}

// Open migrates db (Signoff's tables, then River's) and returns the store.
// The store's Ready check reports migrations this binary knows of that the
// database lacks. (A database migrated by a newer binary is not detected:
// goose reports nothing pending then.)
func Open(ctx context.Context, db *sql.DB, d Dialect, sc Schema, o Options) (*DB, error) {
	// Refused before any migration runs (New refuses them too).
	if err := o.checkRules(d.Name); err != nil {
		return nil, err
	}
	prov, err := goose.NewProvider(sc.Goose, db, sc.FS)
	if err != nil {
		return nil, fmt.Errorf("open %s: migrations: %w", d.Name, err)
	}
	if err := migrate(ctx, prov, sc); err != nil {
		return nil, fmt.Errorf("open %s: %w", d.Name, err)
	}
	drv := sc.River
	if sc.PollOnly {
		drv = pollOnlyDriver{sc.River}
	}
	// The inserting client sends no notification of its own (River would
	// send it inside the transaction, and skip those within 100 ms of
	// another); the store sends one after each commit (wake.go).
	rc, err := river.NewClient(pollOnlyDriver{sc.River}, &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("open %s: river client: %w", d.Name, err)
	}
	o.River, o.RiverDriver = rc, drv
	o.Ready = func(ctx context.Context) error {
		pending, err := prov.HasPending(ctx)
		if err != nil {
			return err
		}
		if pending {
			return fmt.Errorf("migrations pending")
		}
		return nil
	}
	s, err := New(db, d, o)
	if err != nil {
		return nil, err
	}
	if drv.SupportsListener() {
		s.wake.remote = startRemoteNotifier(drv)
		s.OnClose(func() error { s.wake.remote.close(); return nil })
	}
	if s.subsStmt, err = db.PrepareContext(ctx, subscribersQuery); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: prepare: %w", d.Name, err)
	}
	s.closer = append(s.closer, s.subsStmt.Close)
	// A process with the key registers chains that predate the registry
	// (once per database; see RegisterChains). Stores given the key later
	// (SetSigner) do it when their caller asks.
	if o.Signer != nil {
		if err := s.RegisterChains(ctx); err != nil {
			s.Close()
			return nil, fmt.Errorf("open %s: %w", d.Name, err)
		}
	}
	return s, nil
}

func migrate(ctx context.Context, prov *goose.Provider, sc Schema) error {
	if sc.Lock != nil {
		unlock, err := sc.Lock(ctx)
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer unlock()
	}
	if _, err := prov.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	rm, err := rivermigrate.New(sc.River, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrate: %w", err)
	}
	return nil
}

// SchemaVersion returns the current and latest known migration versions.
func (s *DB) SchemaVersion(ctx context.Context, sc Schema) (current, latest int64, err error) {
	prov, err := goose.NewProvider(sc.Goose, s.db, sc.FS)
	if err != nil {
		return 0, 0, err
	}
	return prov.GetVersions(ctx)
}
