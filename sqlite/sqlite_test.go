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
	Tamper: func(tb testing.TB, db *sql.DB) {
		for _, q := range []string{`DROP TRIGGER ledger_events_no_update`, `DROP TRIGGER ledger_events_no_delete`} {
			if _, err := db.Exec(q); err != nil {
				tb.Fatal(err)
			}
		}
	},
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, Backend)
}
