package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/storetest"
)

func TestKeyMigrationSQLite(t *testing.T) {
	t.Parallel()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "signoff.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	storetest.KeyMigration(t, db, sqlite.Schema(db))
}
