package pgtest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/signoff-dev/signoff/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func currentDatabase(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var name string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func databaseExists(t *testing.T, conn *pgx.Conn, name string) bool {
	t.Helper()
	var exists bool
	err := conn.QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

func TestNewDatabase(t *testing.T) {
	url1, url2 := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if url1 == url2 {
		t.Fatalf("two calls returned the same URL %s", url1)
	}
	conn1, conn2 := connect(t, url1), connect(t, url2)
	name1, name2 := currentDatabase(t, conn1), currentDatabase(t, conn2)
	if name1 == name2 {
		t.Fatalf("both URLs connect to database %s", name1)
	}

	ctx := context.Background()
	for i, conn := range []*pgx.Conn{conn1, conn2} {
		// Each database starts empty, so the same table can be created in both.
		if _, err := conn.Exec(ctx, "CREATE TABLE item (id int PRIMARY KEY, label text NOT NULL)"); err != nil {
			t.Fatalf("db%d: create table: %v", i+1, err)
		}
		label := fmt.Sprintf("from db%d", i+1)
		if _, err := conn.Exec(ctx, "INSERT INTO item VALUES (1, $1)", label); err != nil {
			t.Fatalf("db%d: insert: %v", i+1, err)
		}
	}
	for i, conn := range []*pgx.Conn{conn1, conn2} {
		rows, _ := conn.Query(ctx, "SELECT label FROM item ORDER BY id")
		labels, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("db%d: select: %v", i+1, err)
		}
		if want := fmt.Sprintf("from db%d", i+1); len(labels) != 1 || labels[0] != want {
			t.Errorf("db%d: got rows %q, want [%q]", i+1, labels, want)
		}
	}
}

func TestDatabaseDroppedAtCleanup(t *testing.T) {
	outer := t
	observer := connect(t, pgtest.NewDatabase(t)) // pg_database is shared, visible from any database

	var name string
	t.Run("sub", func(t *testing.T) {
		// Left open past the subtest, so the drop must force it closed.
		conn, err := pgx.Connect(context.Background(), pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		outer.Cleanup(func() { conn.Close(context.Background()) })
		name = currentDatabase(t, conn)
		if !databaseExists(t, observer, name) {
			t.Fatalf("database %s not visible in pg_database", name)
		}
	})
	if name == "" {
		t.Fatal("subtest did not get a database")
	}
	if databaseExists(t, observer, name) {
		t.Errorf("database %s still exists after its test's cleanup", name)
	}
}

func TestParallelDatabases(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			conn := connect(t, pgtest.NewDatabase(t))
			if _, err := conn.Exec(context.Background(), "CREATE TABLE t (x int)"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	pgtest.NewDatabase(t) // skips (or fails, if required) when PostgreSQL is missing
	if reason, ok := pgtest.Available(); !ok {
		t.Errorf("Available() = %q, false after NewDatabase succeeded", reason)
	}
}
