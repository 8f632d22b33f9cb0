package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// rawExec runs statements on one connection of the file with foreign keys
// off and the append-only triggers dropped, as an attacker would.
func rawExec(t *testing.T, db string, stmts ...string) {
	t.Helper()
	raw, err := sqlite.OpenDB(db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1) // PRAGMA foreign_keys is per connection
	for _, q := range append([]string{`PRAGMA foreign_keys = OFF`}, stmts...) {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

var dropLedgerTriggers = []string{`DROP TRIGGER ledger_events_no_update`, `DROP TRIGGER ledger_events_no_delete`,
	`DROP TRIGGER ledger_checkpoints_no_update`, `DROP TRIGGER ledger_checkpoints_no_delete`}

// secondWorkspace adds a workspace with a few events to the database db
// (seedLedger's), signed with the key beside it.
func secondWorkspace(t *testing.T, db string) string {
	t.Helper()
	ctx := context.Background()
	key, err := keys.Load(filepath.Join(filepath.Dir(db), "signoff.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(ctx, db, sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, owner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Append(ctx, w.ID, sqlstore.EventInput{Type: "test.event", ActorID: owner.ID, Payload: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	return w.ID
}

// TestLedgerVerifyDeletedWorkspace: a workspace whose chain, head and row
// were deleted (its cases and actors left behind) fails ledger verify,
// which before the registry listed only the other workspace and exited 0.
func TestLedgerVerifyDeletedWorkspace(t *testing.T) {
	t.Parallel()
	db, ws := seedLedger(t, 5)
	other := secondWorkspace(t, db)
	if out, code := signoffCmd(t, "ledger", "verify", "--db", db); code != 0 || !strings.Contains(out, other+": OK") || !strings.Contains(out, ws+": OK") {
		t.Fatalf("untampered: exit %d: %s", code, out)
	}
	rawExec(t, db, append(dropLedgerTriggers,
		`DELETE FROM ledger_events WHERE workspace_id = '`+ws+`'`,
		`DELETE FROM ledger_heads WHERE workspace_id = '`+ws+`'`,
		`DELETE FROM workspaces WHERE id = '`+ws+`'`)...)
	out, code := signoffCmd(t, "ledger", "verify", "--db", db)
	if code != 1 || !strings.Contains(out, ws+": FAIL") || !strings.Contains(out, "workspace deleted") || !strings.Contains(out, other+": OK") {
		t.Fatalf("deleted workspace: exit %d, output %q; want exit 1 naming %s as deleted", code, out, ws)
	}
	// Asking about the other workspace alone still checks the registry.
	if out, code := signoffCmd(t, "ledger", "verify", "--db", db, "--workspace", other, "--json"); code != 1 || !strings.Contains(out, `"registry": true`) {
		t.Fatalf("--workspace %s: exit %d, output %q; want exit 1 with the registry's finding", other, code, out)
	}
}

// TestLedgerPublishedHeads: a rollback to an older, genuinely signed head
// verifies on its own (the documented limit) and fails against heads
// published before it with signoff ledger head --json.
func TestLedgerPublishedHeads(t *testing.T) {
	t.Parallel()
	db, ws := seedLedger(t, 4)
	raw, err := sqlite.OpenDB(db)
	if err != nil {
		t.Fatal(err)
	}
	var oldSeq, oldAt int64
	var oldHash, oldKey string
	var oldSig []byte
	if err := raw.QueryRow(`SELECT seq, hash, key_id, signed_at, signature FROM ledger_heads WHERE workspace_id = $1`, ws).Scan(&oldSeq, &oldHash, &oldKey, &oldAt, &oldSig); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	secondWorkspace(t, db) // the registry moves on too
	ctx := context.Background()
	key, _ := keys.Load(filepath.Join(filepath.Dir(db), "signoff.key"))
	s, err := sqlite.Open(ctx, db, sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Append(ctx, ws, sqlstore.EventInput{Type: "test.event", ActorID: "", Payload: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	out, code := signoffCmd(t, "ledger", "head", "--db", db, "--json")
	if code != 0 || !strings.Contains(out, ws) || !strings.Contains(out, `"registry"`) {
		t.Fatalf("ledger head: exit %d: %s", code, out)
	}
	published := filepath.Join(t.TempDir(), "heads.json")
	if err := os.WriteFile(published, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	rawExec(t, db, append(dropLedgerTriggers,
		`DELETE FROM ledger_events WHERE workspace_id = '`+ws+`' AND seq > `+strconv.FormatInt(oldSeq, 10))...)
	raw, _ = sqlite.OpenDB(db)
	if _, err := raw.Exec(`UPDATE ledger_heads SET seq = $1, hash = $2, key_id = $3, signed_at = $4, signature = $5 WHERE workspace_id = $6`, oldSeq, oldHash, oldKey, oldAt, oldSig, ws); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if out, code := signoffCmd(t, "ledger", "verify", "--db", db); code != 0 {
		t.Fatalf("a rollback to a genuine head verifies locally (documented); got exit %d: %s", code, out)
	}
	out, code = signoffCmd(t, "ledger", "verify", "--db", db, "--published", published)
	if code != 1 || !strings.Contains(out, ws+": FAIL") || !strings.Contains(out, "rolled back") {
		t.Fatalf("against published heads: exit %d, output %q; want exit 1 naming the rollback", code, out)
	}
}
