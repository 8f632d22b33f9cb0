// Package sqlite opens Signoff's embedded store: one SQLite file in WAL mode,
// zero setup.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storerules"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect is SQLite's part of the shared store.
var Dialect = sqlstore.Dialect{
	Name:         "sqlite",
	SingleWriter: true,
	IsUnique: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
	IsTransient: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED)
	},
}

// DSN returns the connection string for a database file. Write transactions
// begin IMMEDIATE so that they take the write lock up front and never fail
// half-way on a lock upgrade; WAL lets readers run beside the one writer.
func DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// Checkpoints run in the background (see checkpointer), not in the
	// commit that happens to cross the WAL's threshold: that commit would
	// otherwise pay for the fsyncs, several milliseconds on a VM disk.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	q.Set("_time_format", "sqlite")
	return "file:" + path + "?" + q.Encode()
}

// ReadOnlyDSN is the connection string of a pool that cannot write: the
// file is opened read-only and every connection is query_only, so a query
// that tries to write fails in SQLite itself, whatever the code above it.
func ReadOnlyDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("_time_format", "sqlite")
	return "file:" + path + "?" + q.Encode()
}

// OpenDB opens the file without migrating it.
func OpenDB(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetMaxOpenConns(16)
	// Keep as many idle as may be open: a new SQLite connection re-runs
	// its setup (pragmas), which under concurrent reads cost about 40% of
	// OFREP throughput with database/sql's default of 2 idle.
	db.SetMaxIdleConns(16)
	return db, nil
}

// Schema is how a SQLite database is migrated.
func Schema(db *sql.DB) sqlstore.Schema {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlstore.Schema{Goose: goose.DialectSQLite3, FS: sub, River: riversqlite.New(db), PollOnly: true}
}

// Open opens (creating if needed) and migrates the database file at path.
func Open(ctx context.Context, path string, o sqlstore.Options) (*sqlstore.DB, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	// The engines always give the store its rules: reporter text reaches
	// models, so no opened store may skip the airlock.
	storerules.Fill(&o.Intake, &o.Passkeys, &o.Addressing, &o.Outbox)
	s, err := sqlstore.Open(ctx, db, Dialect, Schema(db), o)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	ro, err := sql.Open("sqlite", ReadOnlyDSN(path))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite %s read-only: %w", path, err)
	}
	ro.SetMaxOpenConns(4)
	ro.SetMaxIdleConns(4)
	s.AttachReadOnly(ro)
	cp := startCheckpointer(db, path, checkpointPolicy{})
	s.OnCommit(cp.kick)
	// OnClose hooks run before the pool closes: the last checkpoint
	// empties the WAL into the database file.
	s.OnClose(func() error {
		cp.stop()
		var busy, log, done int64
		err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done)
		if err != nil || busy != 0 || done < log {
			// Another process's reader held the WAL: this process's
			// commits are in it, unsynced; sync it before leaving.
			syncWAL(path + "-wal")
		}
		return err
	})
	return s, nil
}
