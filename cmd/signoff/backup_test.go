package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
)

// backupJSON is what signoff backup --json prints.
type backupJSON struct {
	File      string `json:"file"`
	Bytes     int64  `json:"bytes"`
	Integrity string `json:"integrity"`
	Ledgers   []struct {
		WorkspaceID  string `json:"workspace_id"`
		HeadSeq      int64  `json:"head_seq"`
		Events       int64  `json:"events"`
		SignaturesOK bool   `json:"signatures_checked"`
		OK           bool   `json:"ok"`
	} `json:"ledgers"`
}

func jsonOf(t *testing.T, out string, v any) {
	t.Helper()
	i := strings.Index(out, "{")
	if i < 0 || json.Unmarshal([]byte(out[i:]), v) != nil {
		t.Fatalf("not JSON: %s", out)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// count runs a count query on a database file, read-only.
func count(t *testing.T, db, q string, args ...any) int64 {
	t.Helper()
	raw, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int64
	if err := raw.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestBackupRestore backs up a database while a writer keeps creating
// cases in it, restores the copy elsewhere and checks it is exactly the
// snapshot the backup reported, then checks what restore refuses.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The "server": a store with the key, writing while the backup runs.
	sd := seedWorkspace(t, "shop")
	s, db, keyPath, owner, p, w := sd.store, sd.db, sd.keyPath, sd.owner, sd.project, sd.ws
	if _, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "tamper me"}); err != nil {
		t.Fatal(err)
	}
	var created atomic.Int64
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: fmt.Sprintf("live case %d", i)}); err != nil {
				done <- err
				return
			}
			created.Add(1)
		}
	}()
	waitFor := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for created.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("the writer created only %d cases", created.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(20)

	backup := filepath.Join(t.TempDir(), "backup.db")
	before := created.Load()
	out, code := signoffCmd(t, "backup", "--db", db, "--out", backup, "--key", keyPath, "--json")
	during := created.Load() - before
	if code != 0 {
		t.Fatalf("backup: exit %d: %s", code, out)
	}
	waitFor(created.Load() + 5) // the source moves on past the snapshot
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("the writer failed during the backup: %v", err)
	}
	if during == 0 {
		t.Fatal("no case was created while the backup ran: it did not run online")
	}
	var rep backupJSON
	jsonOf(t, out, &rep)
	if rep.Integrity != "ok" || len(rep.Ledgers) != 1 || !rep.Ledgers[0].OK || !rep.Ledgers[0].SignaturesOK || rep.Ledgers[0].WorkspaceID != w.ID {
		t.Fatalf("backup report: %s", out)
	}
	head := rep.Ledgers[0].HeadSeq
	srcHead, err := s.HeadSeq(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if head <= 3 || head >= srcHead {
		t.Fatalf("backup head seq %d, source head now %d: want a snapshot taken mid-way", head, srcHead)
	}
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 || st.Size() != rep.Bytes {
		t.Fatalf("backup file: %v, mode %v, want 0600 and %d bytes", err, st.Mode().Perm(), rep.Bytes)
	}

	// Restore into a new place; the ledger verifies there and holds
	// exactly the backup's head.
	restored := filepath.Join(t.TempDir(), "data", "signoff.db")
	if out, code := signoffCmd(t, "restore", "--from", backup, "--db", restored, "--key", keyPath); code != 0 || !strings.Contains(out, fmt.Sprintf("head seq %d", head)) {
		t.Fatalf("restore: exit %d: %s", code, out)
	}
	if m, _ := filepath.Glob(restored + "*"); len(m) != 1 {
		t.Fatalf("beside the restored database, after restore: %v, want only the database", m)
	}
	if out, code := signoffCmd(t, "ledger", "verify", "--db", restored, "--key", keyPath); code != 0 || !strings.Contains(out, fmt.Sprintf("head seq %d,", head)) || !strings.Contains(out, "signatures checked") {
		t.Fatalf("ledger verify of the restored database: exit %d: %s", code, out)
	}
	if n := count(t, restored, `SELECT count(*) FROM ledger_events WHERE workspace_id = $1`, w.ID); n != head {
		t.Fatalf("restored database holds %d events, the backup's head is %d", n, head)
	}
	cases := count(t, restored, `SELECT count(*) FROM cases`)
	if ev := count(t, restored, `SELECT count(*) FROM ledger_events WHERE type = 'case.created'`); cases != ev {
		t.Fatalf("restored database: %d cases but %d case.created events: not one snapshot", cases, ev)
	}
	if src := count(t, db, `SELECT count(*) FROM cases`); cases >= src {
		t.Fatalf("restored %d cases, the source has %d: the writes after the snapshot should not be in it", cases, src)
	}

	// backup never overwrites.
	sum := fileSum(t, backup)
	if out, code := signoffCmd(t, "backup", "--db", db, "--out", backup, "--key", keyPath); code != 4 || !strings.Contains(out, "already exists") {
		t.Fatalf("backup over an existing file: exit %d: %s", code, out)
	}
	if fileSum(t, backup) != sum {
		t.Fatal("backup changed an existing file")
	}

	// restore refuses a database that holds anything, unless --force,
	// which keeps the old file aside.
	old := fileSum(t, restored)
	if out, code := signoffCmd(t, "restore", "--from", backup, "--db", restored, "--key", keyPath); code != 4 || !strings.Contains(out, "not empty") || !strings.Contains(out, "--force") {
		t.Fatalf("restore over a database: exit %d: %s", code, out)
	}
	if fileSum(t, restored) != old {
		t.Fatal("a refused restore changed the target")
	}
	out, code = signoffCmd(t, "restore", "--from", backup, "--db", restored, "--key", keyPath, "--force")
	if code != 0 || !strings.Contains(out, "moved the old database aside to "+restored+".before-restore-") {
		t.Fatalf("restore --force: exit %d: %s", code, out)
	}
	// Its -wal and -shm files, if any, go aside with it.
	aside, _ := filepath.Glob(restored + ".before-restore-*[0-9Z]")
	if len(aside) != 1 || fileSum(t, aside[0]) != old {
		t.Fatalf("the old database was not kept aside intact: %v", aside)
	}
	if out, code := signoffCmd(t, "ledger", "verify", "--db", restored, "--key", keyPath); code != 0 {
		t.Fatalf("ledger verify after restore --force: exit %d: %s", code, out)
	}

	// An empty file needs no --force, and is moved aside all the same.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := signoffCmd(t, "restore", "--from", backup, "--db", empty, "--key", keyPath); code != 0 || !strings.Contains(out, "moved the old database aside") {
		t.Fatalf("restore over an empty file: exit %d: %s", code, out)
	}

	// Damaged or foreign backups are refused, and leave nothing behind.
	raw, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	title := []byte(`"title":"tamper me"`)
	if bytes.Count(raw, title) == 0 {
		t.Fatal("the case.created payload is not in the backup file as expected")
	}
	bad := func(name string, b []byte) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ahead := bad("ahead.db", raw)
	func() {
		adb, err := sqlite.OpenDB(ahead)
		if err != nil {
			t.Fatal(err)
		}
		defer adb.Close()
		if _, err := adb.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)`); err != nil {
			t.Fatal(err)
		}
	}()
	for _, tt := range []struct {
		name, from string
		code       int
		want       string
	}{
		{"truncated", bad("truncated.db", raw[:len(raw)/2]), 1, "refusing to restore"},
		{"flipped bytes", bad("flipped.db", bytes.ReplaceAll(raw, title, []byte(`"title":"tamper mE"`))), 1, "failed verification"},
		{"not a database", bad("junk.db", bytes.Repeat([]byte("junk"), 4096)), 1, "refusing to restore"},
		{"schema ahead", ahead, 4, "newer than this signoff knows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "data", "signoff.db")
			out, code := signoffCmd(t, "restore", "--from", tt.from, "--db", target, "--key", keyPath)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("restore of a bad backup: exit %d, want %d and %q: %s", code, tt.code, tt.want, out)
			}
			if left, _ := os.ReadDir(filepath.Dir(target)); len(left) != 0 {
				t.Fatalf("a refused restore left %v", left)
			}
		})
	}

	// A wrong key: the backup's signatures do not verify with it.
	other := filepath.Join(t.TempDir(), "other.key")
	if _, _, err := keys.LoadOrCreate(other); err != nil {
		t.Fatal(err)
	}
	if out, code := signoffCmd(t, "restore", "--from", backup, "--db", filepath.Join(t.TempDir(), "x.db"), "--key", other); code != 1 || !strings.Contains(out, "failed verification") {
		t.Fatalf("restore with the wrong key: exit %d: %s", code, out)
	}
}

// TestBackupPostgresPrintsTheProcedure: for PostgreSQL, backup only prints
// the pg_dump and pg_restore commands, without the password.
func TestBackupPostgresPrintsTheProcedure(t *testing.T) {
	t.Parallel()
	out, code := signoffCmd(t, "backup", "--db", "postgres://signoff:hunter2@db.internal:5433/signoff", "--out", "nightly.dump", "--key", "/etc/signoff/signoff.key")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{
		"pg_dump --format=custom --no-owner --file=nightly.dump postgres://signoff@db.internal:5433/signoff",
		"pg_restore --no-owner --exit-on-error --dbname=postgres://signoff@db.internal:5433/signoff_restored nightly.dump",
		"signoff ledger verify --db postgres://signoff@db.internal:5433/signoff_restored --key /etc/signoff/signoff.key",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("the password is printed:\n%s", out)
	}
	if out, code := signoffCmd(t, "restore", "--from", "x.dump", "--db", "postgres://u@h/db"); code == 0 || !strings.Contains(out, "pg_restore") {
		t.Errorf("restore to PostgreSQL: exit %d: %s", code, out)
	}
}

func TestBackupRequiresItsFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"backup", "--db", "x.db"}, {"restore", "--db", "x.db"}} {
		if out, code := signoffCmd(t, args...); code != 2 || !strings.Contains(out, "is required") {
			t.Errorf("signoff %v: exit %d: %s", args, code, out)
		}
	}
	for _, args := range [][]string{{"backup", "--help"}, {"restore", "--help"}, {"doctor", "--help"}} {
		if out, code := signoffCmd(t, args...); code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("signoff %v: exit %d: %s", args, code, out)
		}
	}
	// No key, no backup: it could not be verified.
	db, _ := seedLedger(t, 1)
	if out, code := signoffCmd(t, "backup", "--db", db, "--out", filepath.Join(t.TempDir(), "b.db"), "--key", filepath.Join(t.TempDir(), "none.key")); code != 2 || !strings.Contains(out, "no key at") {
		t.Errorf("backup without a key: exit %d: %s", code, out)
	}
}
