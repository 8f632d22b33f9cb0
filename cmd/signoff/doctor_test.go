package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/doctor"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storerules"
)

type doctorJSON struct {
	OK     bool           `json:"ok"`
	Checks []doctor.Check `json:"checks"`
}

func (r doctorJSON) check(t *testing.T, name string) doctor.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", name, r.Checks)
	return doctor.Check{}
}

// sandboxWorks says what doctor's sandbox check must report here.
func sandboxWorks() doctor.Status {
	if _, err := sandbox.Default(); err != nil {
		return doctor.Fail
	}
	return doctor.OK
}

func TestDoctorHealthySQLite(t *testing.T) {
	t.Parallel()
	db, _ := seedLedger(t, 2)
	out, code := signoffCmd(t, "doctor", "--db", db, "--json")
	var r doctorJSON
	jsonOf(t, out, &r)
	want := map[string]doctor.Status{
		doctor.CheckDatabase: doctor.OK, doctor.CheckSchema: doctor.OK, doctor.CheckLedger: doctor.OK,
		doctor.CheckJobs: doctor.OK, doctor.CheckSandbox: sandboxWorks(), doctor.CheckKey: doctor.OK,
		doctor.CheckSecretKey: doctor.OK, doctor.CheckClock: doctor.OK,
	}
	for name, st := range want {
		if c := r.check(t, name); c.Status != st {
			t.Errorf("%s: %s, want %s", name, doctor.Line(c), st)
		}
	}
	if c := r.check(t, doctor.CheckKey); !strings.Contains(c.Detail, "signs the ledger") {
		t.Errorf("key check: %s", doctor.Line(c))
	}
	if c := r.check(t, doctor.CheckClock); !strings.Contains(c.Detail, "shares this machine's clock") {
		t.Errorf("clock check: %s", doctor.Line(c))
	}
	if c := r.check(t, doctor.CheckSandbox); c.Status == doctor.OK && !strings.Contains(c.Detail, "failed as it must") {
		t.Errorf("sandbox check: %s", doctor.Line(c))
	}
	wantCode := 0
	if sandboxWorks() == doctor.Fail {
		wantCode = 1
	}
	if code != wantCode || r.OK != (wantCode == 0) {
		t.Fatalf("doctor: exit %d (ok %v), want %d:\n%s", code, r.OK, wantCode, out)
	}

	// The text report: one line per check, the status first.
	out, _ = signoffCmd(t, "doctor", "--db", db)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("text report has %d lines, want 8:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if st, _, _ := strings.Cut(l, " "); st != "ok" && st != "warn" && st != "FAIL" && st != "skip" {
			t.Errorf("line without a status: %q", l)
		}
	}
}

// TestDoctorFindsProblems breaks one thing at a time and checks that doctor
// names it, with a fix, and exits 1.
func TestDoctorFindsProblems(t *testing.T) {
	t.Parallel()
	const secret = "this-is-the-secret-value"
	tests := []struct {
		name   string
		breakf func(t *testing.T, db, key string) (env []string, args []string)
		check  string
		status doctor.Status
		want   string
	}{
		{"key readable by others", func(t *testing.T, db, key string) ([]string, []string) {
			if err := os.Chmod(key, 0o644); err != nil {
				t.Fatal(err)
			}
			return nil, nil
		}, doctor.CheckKey, doctor.Fail, "chmod 600 " + "KEY"},
		{"another key", func(t *testing.T, db, key string) ([]string, []string) {
			other := filepath.Join(t.TempDir(), "other.key")
			if _, _, err := keys.LoadOrCreate(other); err != nil {
				t.Fatal(err)
			}
			return nil, []string{"--key", other}
		}, doctor.CheckKey, doctor.Fail, "but the ledger is signed by key"},
		{"no key", func(t *testing.T, db, key string) ([]string, []string) {
			return nil, []string{"--key", filepath.Join(t.TempDir(), "none.key")}
		}, doctor.CheckKey, doctor.Fail, "restore signoff.key from your backup"},
		{"bad secret key", func(t *testing.T, db, key string) ([]string, []string) {
			return []string{"SIGNOFF_SECRET_KEY=" + secret}, nil
		}, doctor.CheckSecretKey, doctor.Fail, "openssl rand -hex 32"},
		{"no database", func(t *testing.T, db, key string) ([]string, []string) {
			return nil, []string{"--db", filepath.Join(t.TempDir(), "nope.db")}
		}, doctor.CheckDatabase, doctor.Fail, "no SQLite database at"},
		{"migrations pending", func(t *testing.T, db, key string) ([]string, []string) {
			tamper(t, db, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`)
			return nil, nil
		}, doctor.CheckSchema, doctor.Fail, "signoff migrate"},
		{"schema ahead", func(t *testing.T, db, key string) ([]string, []string) {
			tamper(t, db, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)`)
			return nil, nil
		}, doctor.CheckSchema, doctor.Fail, "newer than this binary knows"},
		{"river table dropped", func(t *testing.T, db, key string) ([]string, []string) {
			tamper(t, db, `DROP TABLE river_leader`)
			return nil, nil
		}, doctor.CheckJobs, doctor.Fail, "river_leader"},
		{"chain head removed", func(t *testing.T, db, key string) ([]string, []string) {
			tamper(t, db, `DELETE FROM ledger_heads`)
			return nil, nil
		}, doctor.CheckLedger, doctor.Fail, "no chain head"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, _ := seedLedger(t, 2)
			key := filepath.Join(filepath.Dir(db), "signoff.key")
			env, args := tt.breakf(t, db, key)
			out, code := signoffEnv(t, env, "", append([]string{"doctor", "--db", db}, args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			var line string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l[min(len(l), 6):], tt.check+" ") {
					line = l
				}
			}
			want := strings.ReplaceAll(tt.want, "KEY", key)
			if !strings.HasPrefix(line, string(tt.status)+" ") || !strings.Contains(line, want) || !strings.Contains(line, "fix:") {
				t.Fatalf("want a %s %s line containing %q and a fix:\n%s", tt.status, tt.check, want, out)
			}
			if strings.Contains(out, secret) {
				t.Fatalf("doctor printed SIGNOFF_SECRET_KEY:\n%s", out)
			}
		})
	}
}

// TestDoctorPostgres needs a PostgreSQL server named by
// SIGNOFF_TEST_POSTGRES (this package has no pgtest.Main to stop a
// throwaway cluster).
func TestDoctorPostgres(t *testing.T) {
	t.Parallel()
	if os.Getenv("SIGNOFF_TEST_POSTGRES") == "" {
		t.Skip("SIGNOFF_TEST_POSTGRES is not set")
	}
	url := pgtest.NewDatabase(t)
	key := filepath.Join(t.TempDir(), "signoff.key")
	if _, _, err := keys.LoadOrCreate(key); err != nil {
		t.Fatal(err)
	}
	out, _ := signoffCmd(t, "doctor", "--db", url, "--key", key, "--json")
	var r doctorJSON
	jsonOf(t, out, &r)
	if c := r.check(t, doctor.CheckSchema); c.Status != doctor.Fail || !strings.Contains(c.Detail, "no Signoff schema") {
		t.Errorf("empty database: %s", doctor.Line(c))
	}

	ctx := context.Background()
	db, pool, err := postgres.OpenDB(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var o sqlstore.Options
	storerules.Fill(&o.Intake, &o.Passkeys, &o.Addressing, &o.Outbox)
	s, err := sqlstore.Open(ctx, db, postgres.Dialect, postgres.Schema(db, pool), o)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	pool.Close()
	out, _ = signoffCmd(t, "doctor", "--db", url, "--key", key, "--json")
	jsonOf(t, out, &r)
	for _, name := range []string{doctor.CheckDatabase, doctor.CheckSchema, doctor.CheckLedger, doctor.CheckJobs, doctor.CheckKey} {
		if c := r.check(t, name); c.Status != doctor.OK {
			t.Errorf("%s", doctor.Line(c))
		}
	}
	if c := r.check(t, doctor.CheckClock); c.Status == doctor.Skip || !strings.Contains(c.Detail, "this machine's (round trip") {
		t.Errorf("clock: %s", doctor.Line(c))
	}
}
