package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
)

// Backend opens a fresh SQLite file per test.
var Backend = storetest.Backend{
	Name: "sqlite",
	Open: func(tb testing.TB, o sqlstore.Options) *sqlstore.DB {
		s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "signoff.db"), o)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	},
	OpenPair: func(tb testing.TB, o sqlstore.Options) (*sqlstore.DB, *sqlstore.DB) {
		path := filepath.Join(tb.TempDir(), "signoff.db")
		var out [2]*sqlstore.DB
		for i := range out {
			s, err := sqlite.Open(context.Background(), path, o)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			out[i] = s
		}
		return out[0], out[1]
	},
	Tamper: func(tb testing.TB, db *sql.DB) {
		for _, q := range []string{`DROP TRIGGER ledger_events_no_update`, `DROP TRIGGER ledger_events_no_delete`,
			`DROP TRIGGER ledger_checkpoints_no_update`, `DROP TRIGGER ledger_checkpoints_no_delete`,
			`DROP TRIGGER ledger_registry_no_update`, `DROP TRIGGER ledger_registry_no_delete`, `DROP TRIGGER ledger_registry_head_no_delete`} {
			if _, err := db.Exec(q); err != nil {
				tb.Fatal(err)
			}
		}
	},
}

func TestConformanceSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, Backend)
}

func BenchmarkAppend(b *testing.B) { storetest.BenchAppend(b, Backend) }

// BenchmarkVerify1M verifies a chain of one million events.
func BenchmarkVerify1M(b *testing.B) { storetest.BenchVerify(b, Backend, 1_000_000) }

func BenchmarkDeliver(b *testing.B) { storetest.BenchDeliver(b, Backend) }

// BenchmarkPickup measures enqueue-to-start latency, in process and from
// another process.
func BenchmarkPickup(b *testing.B) { storetest.BenchPickup(b, Backend) }

// BenchmarkIdleServe measures an idle `signoff serve` on a fresh SQLite
// file for 60 s (two minutes in all).
func BenchmarkIdleServe(b *testing.B) { storetest.BenchIdle(b, "") }
