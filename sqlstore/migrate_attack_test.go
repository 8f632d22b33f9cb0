package sqlstore_test

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestMigrateAttackUpgradeFrom15 runs migrations 00016 (passkeys) and
// 00017 (the inbox's index) on both backends over a database at 00015
// that holds data: a workspace, a project, reports and their ledger. The
// data a server wrote before the upgrade is read after it, the desk's
// inbox (which reads through the new index) lists it, the passkeys table
// is there, the ledger still verifies, and opening again migrates
// nothing (the second open is not refused and Ready says no migration is
// pending).
func TestMigrateAttackUpgradeFrom15(t *testing.T) {
	t.Parallel()
	type backend struct {
		open func(t *testing.T, o sqlstore.Options) *sqlstore.DB
		raw  func(t *testing.T) (*sql.DB, sqlstore.Schema)
	}
	dbPath := func(t *testing.T) string { return filepath.Join(t.TempDir(), "upgrade.db") }
	backends := map[string]func(t *testing.T) backend{
		"sqlite": func(t *testing.T) backend {
			p := dbPath(t)
			return backend{
				open: func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
					s, err := sqlite.Open(context.Background(), p, o)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				raw: func(t *testing.T) (*sql.DB, sqlstore.Schema) {
					db, err := sqlite.OpenDB(p)
					if err != nil {
						t.Fatal(err)
					}
					return db, sqlite.Schema(db)
				},
			}
		},
		"postgres": func(t *testing.T) backend {
			u := pgtest.NewDatabase(t)
			return backend{
				open: func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
					s, err := postgres.Open(context.Background(), u, o)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				raw: func(t *testing.T) (*sql.DB, sqlstore.Schema) {
					db, pool, err := postgres.OpenDB(context.Background(), u)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(pool.Close)
					return db, postgres.Schema(db, pool)
				},
			}
		},
	}
	for name, mk := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := mk(t)
			_, key, _ := ed25519.GenerateKey(nil)
			o := sqlstore.Options{Signer: key}

			// A server at 00017 writes data, then the database is taken
			// back to 00015: the schema a server before issue 24 had, with
			// that server's data in it.
			s := b.open(t, o)
			_, owner, err := s.CreateWorkspace(ctx, "Acme", "olivia")
			if err != nil {
				t.Fatal(err)
			}
			proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
			if err != nil {
				t.Fatal(err)
			}
			var cases []signoff.Case
			for _, text := range []string{"the coupon is applied twice", "the total goes negative"} {
				c, _, _, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: proj.ID, Text: text})
				if err != nil {
					t.Fatal(err)
				}
				cases = append(cases, c)
			}
			head, err := s.HeadSeq(ctx, owner.WorkspaceID)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			db, sc := b.raw(t)
			prov, err := goose.NewProvider(sc.Goose, db, sc.FS)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := prov.DownTo(ctx, 15); err != nil {
				t.Fatalf("down to 00015: %v", err)
			}
			if v, err := prov.GetDBVersion(ctx); err != nil || v != 15 {
				t.Fatalf("version %d %v", v, err)
			}
			if _, err := db.ExecContext(ctx, `SELECT count(*) FROM passkeys`); err == nil {
				t.Fatal("00016's table is still there at 00015")
			}
			db.Close()

			// The upgrade, twice: the second open finds nothing to do.
			for round := range 2 {
				s := b.open(t, o)
				if err := s.Ready(ctx); err != nil {
					t.Fatalf("round %d: ready: %v", round, err)
				}
				for _, c := range cases {
					if got, err := s.GetCase(ctx, owner, c.ID); err != nil || got.Title != c.Title {
						t.Fatalf("round %d: case %s after the upgrade: %+v %v", round, c.ID, got, err)
					}
				}
				desk, err := s.DeskCases(ctx, owner, sqlstore.DeskFilter{States: []string{cases[0].State}, Limit: 10})
				if err != nil || len(desk) != len(cases) {
					t.Fatalf("round %d: inbox after the upgrade: %d cases, %v", round, len(desk), err)
				}
				var n int
				if err := s.SQL().QueryRowContext(ctx, `SELECT count(*) FROM passkeys`).Scan(&n); err != nil || n != 0 {
					t.Fatalf("round %d: passkeys table: %d %v", round, n, err)
				}
				if h, err := s.HeadSeq(ctx, owner.WorkspaceID); err != nil || h != head {
					t.Fatalf("round %d: head %d, was %d (%v)", round, h, head, err)
				}
				if _, err := s.VerifyLedger(ctx, owner.WorkspaceID, ledger.Trust(key.Public().(ed25519.PublicKey))); err != nil {
					t.Fatalf("round %d: ledger after the upgrade: %v", round, err)
				}
				s.Close()
			}
		})
	}
}
