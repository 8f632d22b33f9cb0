package storetest

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/signoff-dev/signoff/sqlstore"
)

// KeyMigration checks migration 00014 on a database at version 13 with
// an approval key and an approval in it: both survive, a second workspace
// can then hold the same key id (refused before), an approval references
// a key of its own workspace only, and going back down works once no two
// workspaces share a key id. db is an empty database, not migrated;
// sc is its backend's schema.
func KeyMigration(t *testing.T, db *sql.DB, sc sqlstore.Schema) {
	ctx := context.Background()
	prov, err := goose.NewProvider(sc.Goose, db, sc.FS)
	if err != nil {
		t.Fatal(err)
	}
	migrate := func(v int64, up bool) {
		t.Helper()
		var err error
		if up {
			_, err = prov.UpTo(ctx, v)
		} else {
			_, err = prov.DownTo(ctx, v)
		}
		if err != nil {
			t.Fatalf("migrate to %d: %v", v, err)
		}
		if got, err := prov.GetDBVersion(ctx); err != nil || got != v {
			t.Fatalf("database at version %d (%v), want %d", got, err, v)
		}
	}
	exec := func(q string, args ...any) error {
		_, err := db.ExecContext(ctx, q, args...)
		return err
	}
	must := func(q string, args ...any) {
		t.Helper()
		if err := exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const keyID = "0123456789abcdef"
	digest := strings.Repeat("ab", 32)
	approval := func(id, ws, caseID, approver, key, nonce string) error {
		return exec(`INSERT INTO approvals (id, workspace_id, case_id, subject_digest, decision, approver_id, key_id, nonce, policy_digest,
			issued_at, expires_at, envelope, via, status, created_at) VALUES ($1, $2, $3, $4, 'approve', $5, $6, $7, $4, 1, 2, '{}', 'cli-signed', 'valid', 1)`,
			id, ws, caseID, digest, approver, key, nonce)
	}
	tenant := func(n string) {
		t.Helper()
		must(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $1, 1)`, "ws_"+n)
		must(`INSERT INTO actors (id, workspace_id, name, role, created_at) VALUES ($1, $2, 'owner', 'owner', 1)`, "act_"+n, "ws_"+n)
		must(`INSERT INTO projects (id, workspace_id, name, repo_url, description, created_at, updated_at) VALUES ($1, $2, 'p', '', '', 1, 1)`, "prj_"+n, "ws_"+n)
		must(`INSERT INTO cases (id, workspace_id, project_id, kind, title, state, version, fix_attempts, max_fix_attempts, reporter_id, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, 'bug', 't', 'received', 1, 0, 3, '', $4, 1, 1)`, "case_"+n, "ws_"+n, "prj_"+n, "act_"+n)
	}
	key := func(n string) error {
		return exec(`INSERT INTO approver_keys (id, workspace_id, actor_id, public_key, created_at) VALUES ($1, $2, $3, 'pem', 1)`, keyID, "ws_"+n, "act_"+n)
	}

	migrate(13, true)
	tenant("a")
	tenant("b")
	if err := key("a"); err != nil {
		t.Fatal(err)
	}
	if err := approval("apv_a", "ws_a", "case_a", "act_a", keyID, "n1"); err != nil {
		t.Fatal(err)
	}

	migrate(14, true)
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM approvals a JOIN approver_keys k ON k.workspace_id = a.workspace_id AND k.id = a.key_id
		WHERE a.id = 'apv_a' AND k.actor_id = 'act_a'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the key and its approval after 00014: %d rows, %v", n, err)
	}
	// Another workspace holds the same key id and approves with it.
	if err := key("b"); err != nil {
		t.Fatalf("a second workspace registers the same key id: %v", err)
	}
	if err := key("b"); err == nil {
		t.Fatal("one workspace registered one key id twice")
	}
	if err := approval("apv_b", "ws_b", "case_b", "act_b", keyID, "n2"); err != nil {
		t.Fatalf("approval under the second workspace's key: %v", err)
	}
	// An approval names a key of its own workspace only.
	if err := approval("apv_x", "ws_a", "case_a", "act_a", "fedcba9876543210", "n3"); err == nil {
		t.Fatal("an approval under an unregistered key was stored")
	}

	// Down refuses while the key id is shared, and works once it is not.
	if _, err := prov.DownTo(ctx, 13); err == nil {
		t.Fatal("00014 went down while two workspaces share a key id")
	}
	must(`DELETE FROM approvals WHERE workspace_id = 'ws_b'`)
	must(`DELETE FROM approver_keys WHERE workspace_id = 'ws_b'`)
	migrate(13, false)
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM approvals a JOIN approver_keys k ON k.id = a.key_id WHERE a.id = 'apv_a'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the key and its approval after going down: %d rows, %v", n, err)
	}
	migrate(14, true)
}
