package storetest

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlstore"
)

// raw runs statements ($1 = ws) as an attacker with database rights who
// also switches off foreign keys, so a workspace row can go while rows
// that reference it stay.
func raw(t *testing.T, tb *bundle, ws string, stmts ...string) {
	t.Helper()
	ctx := tb.ctx
	conn, err := tb.store.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	off, on := `PRAGMA foreign_keys = OFF`, `PRAGMA foreign_keys = ON`
	if tb.store.Dialect() == "postgres" {
		off, on = `SET session_replication_role = replica`, `RESET session_replication_role`
	}
	if _, err := conn.ExecContext(ctx, off); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, on)
	for _, q := range stmts {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{ws}
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("tamper %q: %v", q, err)
		}
	}
}

// dropChain removes a workspace's chain: events, checkpoints and head.
var dropChain = []string{
	`DELETE FROM ledger_events WHERE workspace_id = $1`,
	`DELETE FROM ledger_checkpoints WHERE workspace_id = $1`,
	`DELETE FROM ledger_heads WHERE workspace_id = $1`,
}

// everyTable lists the tables holding a workspace_id column, as an attacker
// erasing a workspace completely would find them.
func everyTable(t *testing.T, tb *bundle) []string {
	t.Helper()
	q := `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'workspace_id'`
	if tb.store.Dialect() == "sqlite" {
		q = `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'workspace_id'`
	}
	rows, err := tb.store.SQL().QueryContext(tb.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name != "ledger_registry" {
			out = append(out, `DELETE FROM `+name+` WHERE workspace_id = $1`)
		}
	}
	return append(out, `DELETE FROM workspaces WHERE id = $1`)
}

// freshChain writes a new one-event chain for ws with a head signed by key:
// a genuine-looking chain from elsewhere (another database with the same
// key, or the key's holder starting the workspace over).
func freshChain(t *testing.T, tb *bundle, ws string, key ed25519.PrivateKey) {
	t.Helper()
	body, err := canonical.Marshal(map[string]any{"workspace_id": ws, "name": "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	e := signoff.Event{WorkspaceID: ws, Type: "workspace.created", ActorID: signoff.SystemActor(ws).ID, Payload: body, Time: tb.clock.Now()}
	ledger.Seal(&e, 0, ledger.Genesis)
	head := ledger.Checkpoint{WorkspaceID: ws, Seq: 1, Hash: e.Hash, Head: true}
	head.Sign(key, e.Time)
	db := tb.store.SQL()
	if _, err := db.ExecContext(tb.ctx, `INSERT INTO ledger_events (workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash) VALUES ($1, 1, '', $2, $3, $4, $5, $6, $7)`,
		ws, e.Type, e.ActorID, e.Time.UnixMicro(), string(e.Payload), e.PrevHash, e.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(tb.ctx, `INSERT INTO ledger_heads (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, 1, $2, $3, $4, $5)`,
		ws, head.Hash, head.KeyID, head.SignedAt.UnixMicro(), head.Signature); err != nil {
		t.Fatal(err)
	}
}

// testLedgerRegistry plays an attacker with database access who removes or
// replaces a whole workspace chain, which per-chain verification cannot
// see: a chain that is not there cannot fail.
func testLedgerRegistry(t *testing.T, b Backend) {
	const (
		victim = "victim" // the first workspace (registry entry 1)
		last   = "last"   // the second one (entry 2, the registry's end)
		stray  = "stray"  // a workspace id nobody registered
	)
	tests := []struct {
		name   string
		target string
		attack func(t *testing.T, tb *bundle, ws string)
		// fooled: each remaining chain still verifies on its own, as it
		// did before the registry existed; the registry is the only check
		// that fails.
		fooled bool
		wantWS string // victim, last, stray, or "" for the registry itself
		want   string
	}{
		{"workspace deleted, its rows left behind", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, append(dropChain, `DELETE FROM workspaces WHERE id = $1`)...)
		}, true, victim, "chain and workspace are gone (workspace deleted), while rows of it remain in actors"},
		{"workspace erased from every table", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, everyTable(t, tb)...)
		}, true, victim, "chain and workspace are gone"},
		{"chain deleted, workspace row kept", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, dropChain...)
		}, false, victim, "its chain is gone"},
		{"chain truncated to nothing, then the server carries on", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, `DELETE FROM ledger_events WHERE workspace_id = $1`, `DELETE FROM ledger_checkpoints WHERE workspace_id = $1`,
				`UPDATE ledger_heads SET seq = 0, hash = '`+ledger.Genesis+`', key_id = '', signed_at = 0 WHERE workspace_id = $1`)
			// The next append starts a new chain at seq 1, signed by the
			// server itself.
			if _, err := tb.store.Append(tb.ctx, ws, sqlstore.EventInput{Type: "test.event", ActorID: tb.owner.ID, Payload: map[string]int{"n": 1}}); err != nil {
				t.Fatal(err)
			}
		}, true, victim, "chain was replaced"},
		{"chain replaced by a fresh one signed with the key", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, dropChain...)
			freshChain(t, tb, ws, tb.key)
		}, true, victim, "chain was replaced"},
		{"rows of a workspace that was never registered", stray, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, `INSERT INTO actors (id, workspace_id, name, role, created_at) VALUES ('`+signoff.NewID(signoff.PrefixActor)+`', $1, 'mallory', 'owner', 0)`)
		}, true, stray, "not in the registry"},
		{"unregistered chain signed with the key", stray, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, `INSERT INTO workspaces (id, name, created_at) VALUES ($1, 'Shadow', 0)`)
			freshChain(t, tb, ws, tb.key)
		}, true, stray, "not in the registry: no chain was registered for this workspace, yet rows of it remain in workspaces, ledger_events, ledger_heads"},
		{"last workspace and its registration deleted", last, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, everyTable(t, tb)...)
			raw(t, tb, ws, `DELETE FROM ledger_registry WHERE workspace_id = $1`)
		}, true, "", "registrations removed"},
		{"first workspace's registration deleted", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, everyTable(t, tb)...)
			raw(t, tb, ws, `DELETE FROM ledger_registry WHERE workspace_id = $1`)
		}, true, "", "entry 1 missing"},
		{"registry rewritten without the key", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, everyTable(t, tb)...)
			raw(t, tb, ws, `DELETE FROM ledger_registry WHERE workspace_id = $1`)
			rewriteRegistry(t, tb)
		}, true, "", "registry head signature does not verify"},
		{"registry reset to unsigned", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, everyTable(t, tb)...)
			raw(t, tb, ws, `DELETE FROM ledger_registry`, `UPDATE ledger_registry_head SET seq = 0, hash = '`+ledger.Genesis+`', key_id = '', signed_at = 0`)
			// A server with the key must not rebuild the registry from
			// what is left: the remaining chain says it was registered.
			if err := tb.store.RegisterChains(tb.ctx); signoff.ErrorCode(err) != signoff.ECONFLICT {
				t.Fatalf("RegisterChains over a removed registry = %v, want a conflict", err)
			}
		}, true, "", "no server has signed the registry yet"},
		{"registry head row deleted", victim, func(t *testing.T, tb *bundle, ws string) {
			raw(t, tb, ws, `DELETE FROM ledger_registry_head`)
		}, true, "", "signed registry head missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b)
			fill(t, tb, 5)
			other, otherOwner, err := tb.store.CreateWorkspace(tb.ctx, "Other", "bob")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.store.Append(tb.ctx, other.ID, sqlstore.EventInput{Type: "test.event", ActorID: otherOwner.ID, Payload: map[string]int{"n": 1}}); err != nil {
				t.Fatal(err)
			}
			trusted := ledger.Trust(tb.key.Public().(ed25519.PublicKey))
			if res, err := tb.store.VerifyRegistry(tb.ctx, trusted); err != nil || res.Workspaces != 2 || !res.SignaturesOK {
				t.Fatalf("untouched registry: %+v, %v", res, err)
			}
			ids := map[string]string{victim: tb.ws.ID, last: other.ID, stray: signoff.NewID(signoff.PrefixWorkspace)}
			tb.tamper(t, tb.store.SQL())
			tt.attack(t, tb, ids[tt.target])
			if tt.fooled {
				// What verification saw before the registry: every chain
				// it can find verifies.
				chains, err := tb.store.LedgerWorkspaceIDs(tb.ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, ws := range chains {
					if _, err := tb.store.VerifyLedger(tb.ctx, ws, trusted); err != nil {
						t.Fatalf("chain %s: %v; the attack should leave every remaining chain verifying", ws, err)
					}
				}
			}
			_, err = tb.store.VerifyRegistry(tb.ctx, trusted)
			var f *ledger.RegistryFailure
			if !errors.As(err, &f) {
				t.Fatalf("VerifyRegistry = %v, want a registry failure", err)
			}
			wantWS := ids[tt.wantWS]
			for _, p := range f.Problems {
				if p.WorkspaceID == wantWS && strings.Contains(p.Reason, tt.want) {
					return
				}
			}
			t.Fatalf("problems %+v: none for %q mentions %q", f.Problems, wantWS, tt.want)
		})
	}
}

// rewriteRegistry renumbers and rehashes what is left of the registry and
// moves the head to its end without re-signing, as someone without the key
// covering up a removed registration would.
func rewriteRegistry(t *testing.T, tb *bundle) {
	t.Helper()
	db := tb.store.SQL()
	rows, err := db.QueryContext(tb.ctx, `SELECT seq, workspace_id, genesis_hash, registered_at FROM ledger_registry ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var es []ledger.RegistryEntry
	for rows.Next() {
		var e ledger.RegistryEntry
		var at int64
		if err := rows.Scan(&e.Seq, &e.WorkspaceID, &e.Genesis, &at); err != nil {
			t.Fatal(err)
		}
		e.Time = timeFromMicros(at)
		es = append(es, e)
	}
	rows.Close()
	seq, hash := int64(0), ledger.Genesis
	for _, e := range es {
		old := e.Seq
		ledger.SealRegistryEntry(&e, seq, hash)
		if _, err := db.ExecContext(tb.ctx, `UPDATE ledger_registry SET seq = $1, prev_hash = $2, hash = $3 WHERE seq = $4`, e.Seq, e.PrevHash, e.Hash, old); err != nil {
			t.Fatal(err)
		}
		seq, hash = e.Seq, e.Hash
	}
	if _, err := db.ExecContext(tb.ctx, `UPDATE ledger_registry_head SET seq = $1, hash = $2`, seq, hash); err != nil {
		t.Fatal(err)
	}
}

// oldChain writes a workspace as a binary from before the registry did:
// its row, a one-event chain without a registry entry, a signed head.
func oldChain(t *testing.T, db *sql.DB, key ed25519.PrivateKey, name string) string {
	t.Helper()
	ctx := context.Background()
	ws := signoff.NewID(signoff.PrefixWorkspace)
	body, err := canonical.Marshal(map[string]any{"workspace_id": ws, "name": name})
	if err != nil {
		t.Fatal(err)
	}
	e := signoff.Event{WorkspaceID: ws, Type: "workspace.created", ActorID: signoff.SystemActor(ws).ID, Payload: body, Time: time.Now()}
	ledger.Seal(&e, 0, ledger.Genesis)
	head := ledger.Checkpoint{WorkspaceID: ws, Seq: 1, Hash: e.Hash, Head: true}
	head.Sign(key, e.Time)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, []any{ws, name, e.Time.UnixMicro()}},
		{`INSERT INTO ledger_heads (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, 1, $2, $3, $4, $5)`, []any{ws, head.Hash, head.KeyID, head.SignedAt.UnixMicro(), head.Signature}},
		{`INSERT INTO ledger_events (workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash) VALUES ($1, 1, '', $2, $3, $4, $5, $6, $7)`,
			[]any{ws, e.Type, e.ActorID, e.Time.UnixMicro(), string(e.Payload), e.PrevHash, e.Hash}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// testRegistryBackfill: a database from before the registry (migration
// 00015 leaves its head unsigned) is registered once by whichever of
// several processes with the key gets there first, while another creates
// a workspace; every chain is registered exactly once and verifies.
func testRegistryBackfill(t *testing.T, b Backend) {
	_, key, _ := ed25519.GenerateKey(nil)
	a, c := b.OpenPair(t, sqlstore.Options{Signer: key})
	ctx := context.Background()
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	old := []string{oldChain(t, a.SQL(), key, "Old one"), oldChain(t, a.SQL(), key, "Old two")}
	if _, err := a.SQL().ExecContext(ctx, `UPDATE ledger_registry_head SET seq = 0, hash = $1, key_id = '', signed_at = 0`, ledger.Genesis); err != nil {
		t.Fatal(err)
	}
	var f *ledger.RegistryFailure
	if _, err := a.VerifyRegistry(ctx, trusted); !errors.As(err, &f) || !strings.Contains(err.Error(), "open this database once with the server key") {
		t.Fatalf("verify before registration = %v, want the unsigned registry named", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	var created string
	for i, s := range []*sqlstore.DB{a, c, a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.RegisterChains(ctx)
			if i == 1 {
				w, _, err := s.CreateWorkspace(ctx, "New", "carol")
				created = w.ID
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.VerifyRegistry(ctx, trusted)
	if err != nil || res.Workspaces != 3 || res.HeadSeq != 3 {
		t.Fatalf("registry after backfill = %+v, %v; want 3 workspaces", res, err)
	}
	for _, ws := range append(old, created) {
		if _, err := a.VerifyLedger(ctx, ws, trusted); err != nil {
			t.Fatalf("chain %s: %v", ws, err)
		}
	}
	for _, ws := range old {
		var n int
		if err := a.SQL().QueryRowContext(ctx, `SELECT count(*) FROM ledger_events WHERE workspace_id = $1 AND type = 'ledger.registered'`, ws).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s has %d ledger.registered events (%v), want 1", ws, n, err)
		}
	}
	// Registered once means registered for good: another start changes
	// nothing.
	if err := a.RegisterChains(ctx); err != nil {
		t.Fatal(err)
	}
	if res2, err := a.VerifyRegistry(ctx, trusted); err != nil || res2 != res {
		t.Fatalf("registry after a second start = %+v, %v; want %+v", res2, err, res)
	}
}

// RegistryMigration upgrades a database written before the registry: db
// (with schema sc) is migrated to the version before 00015 and given two
// workspaces as that binary wrote them; then open (a whole store on the
// same database, as a server process starts) runs three times, at once
// when parallel. Migration 00015 runs once, the first process registers
// both chains, the others find it done, and everything verifies.
func RegistryMigration(t *testing.T, db *sql.DB, sc sqlstore.Schema, open func(testing.TB, sqlstore.Options) *sqlstore.DB, parallel bool) {
	ctx := context.Background()
	prov, err := goose.NewProvider(sc.Goose, db, sc.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prov.UpTo(ctx, 14); err != nil {
		t.Fatal(err)
	}
	if v, err := prov.GetDBVersion(ctx); err != nil || v >= 15 {
		t.Fatalf("database at version %d (%v), want before 15", v, err)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	old := []string{oldChain(t, db, key, "Old one"), oldChain(t, db, key, "Old two")}
	stores := make([]*sqlstore.DB, 3)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Add(1)
		start := func() {
			defer wg.Done()
			stores[i] = open(t, sqlstore.Options{Signer: key})
		}
		if parallel {
			go start()
		} else {
			start()
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow() // a process failed to start
	}
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	res, err := stores[2].VerifyRegistry(ctx, trusted)
	if err != nil || res.Workspaces != 2 || res.HeadSeq != 2 || !res.SignaturesOK {
		t.Fatalf("registry after the upgrade = %+v, %v; want both workspaces registered", res, err)
	}
	for _, ws := range old {
		r, err := stores[0].VerifyLedger(ctx, ws, trusted)
		if err != nil || r.Events != 2 { // workspace.created, ledger.registered
			t.Fatalf("chain %s after the upgrade = %+v, %v; want 2 events", ws, r, err)
		}
	}
	// Workspaces created from now on are registered as they start.
	w, _, err := stores[1].CreateWorkspace(ctx, "New", "carol")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := stores[0].VerifyRegistry(ctx, trusted); err != nil || res.Workspaces != 3 {
		t.Fatalf("registry after a new workspace = %+v, %v", res, err)
	}
	if _, err := stores[0].VerifyLedger(ctx, w.ID, trusted); err != nil {
		t.Fatal(err)
	}
}
