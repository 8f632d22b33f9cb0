// Package postgres opens Signoff's scale-out store: one PostgreSQL database
// shared by any number of processes.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storerules"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Dialect is PostgreSQL's part of the shared store.
var Dialect = sqlstore.Dialect{
	Name:      "postgres",
	ForUpdate: " FOR UPDATE",
	Notify:    true,
	IsUnique: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505"
	},
	IsTransient: func(err error) bool {
		var e *pgconn.PgError
		// serialization_failure, deadlock_detected
		return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
	},
}

// migrationLockKey is an arbitrary constant shared by every Signoff process
// so that only one migrates at a time.
const migrationLockKey = 0x5167_6e6f_6666

// Schema is how a PostgreSQL database is migrated.
func Schema(db *sql.DB, pool *pgxpool.Pool) sqlstore.Schema {
	sub, _ := fs.Sub(migrations, "migrations")
	return sqlstore.Schema{
		Goose: goose.DialectPostgres,
		FS:    sub,
		River: riverdatabasesql.NewWithPgxListener(db, pool),
		Lock: func(ctx context.Context) (func(), error) {
			conn, err := db.Conn(ctx)
			if err != nil {
				return nil, err
			}
			if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockKey)); err != nil {
				conn.Close()
				return nil, err
			}
			return func() {
				_, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLockKey))
				conn.Close()
			}, nil
		},
	}
}

// OpenDB connects without migrating. The returned pool backs the
// database/sql handle and River's LISTEN connection.
func OpenDB(ctx context.Context, url string) (*sql.DB, *pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("open postgres: bad URL: %w", err)
	}
	if cfg.MaxConns < 20 {
		cfg.MaxConns = 20
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open postgres: %w", err)
	}
	return stdlib.OpenDBFromPool(pool), pool, nil
}

// Open connects to url and migrates the database.
func Open(ctx context.Context, url string, o sqlstore.Options) (*sqlstore.DB, error) {
	db, pool, err := OpenDB(ctx, url)
	if err != nil {
		return nil, err
	}
	// The engines always give the store its rules: reporter text reaches
	// models, so no opened store may skip the airlock.
	storerules.Fill(&o.Intake, &o.Passkeys, &o.Addressing, &o.Outbox)
	s, err := sqlstore.Open(ctx, db, Dialect, Schema(db, pool), o)
	if err != nil {
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	// The listener's connection is its own, outside the pool's limit
	// for queries, and ends before the pool closes.
	lctx, stopListen := context.WithCancel(context.Background())
	listening := make(chan struct{})
	go func() { defer close(listening); listenEvents(lctx, pool, s) }()
	s.OnClose(func() error { pool.Close(); return nil })
	s.OnClose(func() error { stopListen(); <-listening; return nil })
	ro, roPool, err := openReadOnly(ctx, url)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.AttachReadOnly(ro)
	s.OnClose(func() error { roPool.Close(); return nil })
	return s, nil
}

// openReadOnly opens a small pool whose sessions default to read-only
// transactions: PostgreSQL refuses any write on them (SQLSTATE 25006).
func openReadOnly(ctx context.Context, url string) (*sql.DB, *pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("open postgres read-only: bad URL: %w", err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open postgres read-only: %w", err)
	}
	return stdlib.OpenDBFromPool(pool), pool, nil
}
