package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Backend opens a fresh PostgreSQL database per test.
var Backend = storetest.Backend{
	Name: "postgres",
	Open: func(tb testing.TB, o sqlstore.Options) *sqlstore.DB {
		s, err := postgres.Open(context.Background(), pgtest.NewDatabase(tb), o)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	},
	OpenPair: func(tb testing.TB, o sqlstore.Options) (*sqlstore.DB, *sqlstore.DB) {
		url := pgtest.NewDatabase(tb)
		var out [2]*sqlstore.DB
		for i := range out {
			s, err := postgres.Open(context.Background(), url, o)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			out[i] = s
		}
		return out[0], out[1]
	},
	Tamper: func(tb testing.TB, db *sql.DB) {
		for _, q := range []string{`ALTER TABLE ledger_events DISABLE TRIGGER USER`, `ALTER TABLE ledger_checkpoints DISABLE TRIGGER USER`,
			`ALTER TABLE ledger_registry DISABLE TRIGGER USER`, `ALTER TABLE ledger_registry_head DISABLE TRIGGER USER`} {
			if _, err := db.Exec(q); err != nil {
				tb.Fatal(err)
			}
		}
	},
}

func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	storetest.Run(t, Backend)
}

func BenchmarkAppend(b *testing.B) { storetest.BenchAppend(b, Backend) }

func BenchmarkVerify1M(b *testing.B) { storetest.BenchVerify(b, Backend, 1_000_000) }

func BenchmarkDeliver(b *testing.B) { storetest.BenchDeliver(b, Backend) }

// BenchmarkPickup measures enqueue-to-start latency, in process and from
// another process.
func BenchmarkPickup(b *testing.B) { storetest.BenchPickup(b, Backend) }

// BenchmarkIdleServe measures an idle `signoff serve` on a fresh
// PostgreSQL database for 60 s (two minutes in all).
func BenchmarkIdleServe(b *testing.B) { storetest.BenchIdle(b, pgtest.NewDatabase(b)) }
