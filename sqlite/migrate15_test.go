package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
)

// TestRegistryMigrationSQLite: a database from before migration 00015 gets
// its chains registered when the server next starts. Processes start one
// after another: SQLite migrations take no cross-process lock.
func TestRegistryMigrationSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "signoff.db")
	db, err := sqlite.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	storetest.RegistryMigration(t, db, sqlite.Schema(db), func(tb testing.TB, o sqlstore.Options) *sqlstore.DB {
		s, err := sqlite.Open(context.Background(), path, o)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}, false)
}
