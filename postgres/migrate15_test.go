package postgres_test

import (
	"context"
	"testing"

	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
)

// TestRegistryMigrationPostgres: a database from before migration 00015
// gets its chains registered once when three server processes start on it
// at the same moment.
func TestRegistryMigrationPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	db, pool, err := postgres.OpenDB(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); pool.Close() })
	storetest.RegistryMigration(t, db, postgres.Schema(db, pool), func(tb testing.TB, o sqlstore.Options) *sqlstore.DB {
		s, err := postgres.Open(context.Background(), url, o)
		if err != nil {
			tb.Error(err)
			return nil
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}, true)
}
