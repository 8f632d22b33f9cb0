package postgres_test

import (
	"context"
	"testing"

	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/storetest"
)

func TestKeyMigrationPostgres(t *testing.T) {
	t.Parallel()
	db, pool, err := postgres.OpenDB(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(); pool.Close() })
	storetest.KeyMigration(t, db, postgres.Schema(db, pool))
}
