package sqlstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ledger"
)

// The registry (ledger.RegistryEntry) records every workspace chain when it
// starts, so verification knows which chains must exist. Its head row is
// the lock that serializes registrations; workspaces are created rarely,
// so one lock for the database costs nothing that matters.

const registryHeadQuery = `SELECT seq, hash, key_id, signed_at, signature FROM ledger_registry_head WHERE id = 1`

func scanRegistryHead(sc scanner, h *ledger.RegistryHead) error {
	var at int64
	if err := sc.Scan(&h.Seq, &h.Hash, &h.KeyID, &at, &h.Signature); err != nil {
		return err
	}
	h.SignedAt = fromMicros(at)
	return nil
}

// lockRegistry reads the registry head under a row lock. A head no server
// has signed yet is established first (RegisterChains), so the caller can
// always register after it.
func (s *DB) lockRegistry(ctx context.Context, tx *sql.Tx) (ledger.RegistryHead, error) {
	var h ledger.RegistryHead
	err := scanRegistryHead(tx.QueryRowContext(ctx, registryHeadQuery+s.d.ForUpdate), &h)
	if errors.Is(err, sql.ErrNoRows) {
		return h, signoff.Errorf(signoff.ECONFLICT, "the ledger registry's head row is missing: refusing to register chains on a registry that was tampered with (run signoff ledger verify)")
	} else if err != nil {
		return h, fmt.Errorf("registry head: %w", err)
	}
	if h.Pending() {
		if err := s.establishRegistry(ctx, tx, &h); err != nil {
			return h, err
		}
	}
	return h, nil
}

// register appends the registration of ws, whose chain starts with the
// event hashed genesis, and signs the new registry head. h must be locked.
func (s *DB) register(ctx context.Context, tx *sql.Tx, h *ledger.RegistryHead, ws, genesis string) error {
	now := s.now()
	if now.Before(h.SignedAt) {
		now = h.SignedAt
	}
	e := ledger.RegistryEntry{WorkspaceID: ws, Genesis: genesis, Time: now}
	ledger.SealRegistryEntry(&e, h.Seq, h.Hash)
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_registry (seq, workspace_id, genesis_hash, registered_at, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.Seq, e.WorkspaceID, e.Genesis, micros(e.Time), e.PrevHash, e.Hash); err != nil {
		return fmt.Errorf("register %s: %w", ws, err)
	}
	h.Seq, h.Hash = e.Seq, e.Hash
	return s.signRegistryHead(ctx, tx, h, now)
}

func (s *DB) signRegistryHead(ctx context.Context, tx *sql.Tx, h *ledger.RegistryHead, now time.Time) error {
	h.Sign(s.signer, now)
	if _, err := tx.ExecContext(ctx, `UPDATE ledger_registry_head SET seq = $1, hash = $2, key_id = $3, signed_at = $4, signature = $5 WHERE id = 1`,
		h.Seq, h.Hash, h.KeyID, micros(h.SignedAt), h.Signature); err != nil {
		return fmt.Errorf("registry head: %w", err)
	}
	return nil
}

// RegisterChains registers the workspace chains that existed before the
// registry did, once, and signs the registry head. Every process with the
// key calls it on start; the head row's lock makes the first one do the
// work and the rest find it done. It never registers over evidence that a
// registry already existed (entries, a chain that was registered when it
// started, a ledger.registered event): re-registering what is left after
// a deletion would launder the deletion.
func (s *DB) RegisterChains(ctx context.Context) error {
	if s.signer == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "store opened read-only: no signing key")
	}
	// Signed once means signed for good: the usual start takes no lock.
	var h ledger.RegistryHead
	if err := scanRegistryHead(s.db.QueryRowContext(ctx, registryHeadQuery), &h); err == nil && !h.Pending() {
		return nil
	}
	return s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := s.lockRegistry(ctx, tx)
		return err
	})
}

// establishRegistry is RegisterChains inside tx with the pending head h
// locked.
func (s *DB) establishRegistry(ctx context.Context, tx *sql.Tx, h *ledger.RegistryHead) error {
	if s.signer == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "store opened read-only: no signing key")
	}
	refuse := func(why string) error {
		return signoff.Errorf(signoff.ECONFLICT, "the ledger registry is unsigned but %s: it was removed, and registering what is left would hide what was deleted (run signoff ledger verify)", why)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM ledger_registry`).Scan(&n); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if n > 0 {
		return refuse(fmt.Sprintf("holds %d entries", n))
	}
	type chain struct{ ws, genesis, payload string }
	chains, err := queryAll(ctx, tx, func(sc scanner, c *chain) error { return sc.Scan(&c.ws, &c.genesis, &c.payload) },
		`SELECT h.workspace_id, e.hash, e.payload FROM ledger_heads h JOIN ledger_events e ON e.workspace_id = h.workspace_id AND e.seq = 1 ORDER BY h.workspace_id`)
	if err != nil {
		return fmt.Errorf("registry: chains: %w", err)
	}
	for _, c := range chains {
		var p struct {
			RegistrySeq *int64 `json:"registry_seq"`
		}
		if json.Unmarshal([]byte(c.payload), &p) == nil && p.RegistrySeq != nil {
			return refuse(fmt.Sprintf("workspace %s was registered when it was created (registry entry %d)", c.ws, *p.RegistrySeq))
		}
	}
	var marked string
	err = tx.QueryRowContext(ctx, `SELECT workspace_id FROM ledger_events WHERE type = $1 LIMIT 1`, registeredEvent).Scan(&marked)
	if err == nil {
		return refuse(fmt.Sprintf("workspace %s's chain records its registration", marked))
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("registry: %w", err)
	}
	for _, c := range chains {
		if err := s.register(ctx, tx, h, c.ws, c.genesis); err != nil {
			return err
		}
		// The chain itself records that it was registered, so a registry
		// removed later cannot be quietly rebuilt from what is left.
		if _, err := s.appendEvent(ctx, tx, c.ws, "", registeredEvent, signoff.SystemActor(c.ws).ID,
			map[string]any{"registry_seq": h.Seq, "genesis": c.genesis}); err != nil {
			return fmt.Errorf("register %s: %w", c.ws, err)
		}
	}
	if len(chains) == 0 {
		return s.signRegistryHead(ctx, tx, h, s.now())
	}
	return nil
}

// registeredEvent is the event a chain that existed before the registry
// gets when it is registered.
const registeredEvent = "ledger.registered"

// VerifyRegistry checks the registry chain and its signed head, that every
// registered workspace still has its chain starting with the registered
// event, and that no table holds rows of a workspace that is not
// registered. Per-chain verification (VerifyLedger) is separate.
// As there, the head is read first and entries beyond it are either
// registrations committed meanwhile (the head has moved on by the end) or
// forgeries (it has not).
func (s *DB) VerifyRegistry(ctx context.Context, trusted map[string]ed25519.PublicKey) (ledger.RegistryResult, error) {
	var head *ledger.RegistryHead
	var h ledger.RegistryHead
	upTo := int64(math.MaxInt64)
	if err := scanRegistryHead(s.db.QueryRowContext(ctx, registryHeadQuery), &h); err == nil {
		head = &h
		if !h.Pending() {
			upTo = h.Seq
		}
	} else if !errors.Is(err, sql.ErrNoRows) {
		return ledger.RegistryResult{}, fmt.Errorf("verify registry: head: %w", err)
	}
	entries, err := queryAll(ctx, s.db, scanRegistered, `SELECT r.seq, r.workspace_id, r.genesis_hash, r.registered_at, r.prev_hash, r.hash,
			EXISTS (SELECT 1 FROM workspaces w WHERE w.id = r.workspace_id),
			EXISTS (SELECT 1 FROM ledger_heads h WHERE h.workspace_id = r.workspace_id),
			coalesce((SELECT e.hash FROM ledger_events e WHERE e.workspace_id = r.workspace_id AND e.seq = 1), '')
		FROM ledger_registry r WHERE r.seq <= $1 ORDER BY r.seq`, upTo)
	if err != nil {
		return ledger.RegistryResult{}, fmt.Errorf("verify registry: %w", err)
	}
	found, err := s.traces(ctx)
	if err != nil {
		return ledger.RegistryResult{}, fmt.Errorf("verify registry: %w", err)
	}
	known := make(map[string]bool, len(entries))
	for _, e := range entries {
		known[e.WorkspaceID] = true
	}
	for id := range found {
		if known[id] {
			continue
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM ledger_registry WHERE workspace_id = $1 AND seq > $2`, id, upTo).Scan(&n); err != nil {
			return ledger.RegistryResult{}, fmt.Errorf("verify registry: %w", err)
		}
		if n > 0 {
			delete(found, id) // registered since the head was read; checked below
		}
	}
	res, verr := ledger.VerifyRegistry(head, entries, found, trusted)
	if verr != nil || upTo == math.MaxInt64 {
		return res, verr
	}
	var top int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM ledger_registry WHERE seq > $1`, upTo).Scan(&top); err != nil {
		return res, fmt.Errorf("verify registry: %w", err)
	}
	if top > 0 {
		var now ledger.RegistryHead
		if err := scanRegistryHead(s.db.QueryRowContext(ctx, registryHeadQuery), &now); err != nil {
			return res, fmt.Errorf("verify registry: head: %w", err)
		}
		if now.Seq < top {
			return res, &ledger.RegistryFailure{Problems: []ledger.Problem{{Reason: fmt.Sprintf("entries stored beyond the signed registry head (up to %d, head at %d)", top, upTo)}}}
		}
	}
	return res, nil
}

func scanRegistered(sc scanner, r *ledger.Registered) error {
	var at int64
	if err := sc.Scan(&r.Seq, &r.WorkspaceID, &r.Genesis, &at, &r.PrevHash, &r.Hash, &r.HasWorkspace, &r.HasHead, &r.Stored); err != nil {
		return err
	}
	r.Time = fromMicros(at)
	return nil
}

// traces maps every workspace id that some table holds rows of to those
// tables. The tables are found in the schema (every column named
// workspace_id, and workspaces itself), so tables later migrations add are
// covered without a list to keep up. A workspace registered and created
// while this runs may show up here but not in the entries read before: it
// is dropped if the registry holds it by now.
func (s *DB) traces(ctx context.Context) (map[string][]string, error) {
	q := `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'workspace_id' ORDER BY table_name`
	if s.d.Name == "sqlite" {
		q = `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'workspace_id' ORDER BY m.name`
	}
	tables, err := queryAll(ctx, s.db, scanString, q)
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	out := map[string][]string{}
	scan := func(table, query string) error {
		ids, err := queryAll(ctx, s.db, scanString, query)
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		for _, id := range ids {
			out[id] = append(out[id], table)
		}
		return nil
	}
	if err := scan("workspaces", `SELECT id FROM workspaces`); err != nil {
		return nil, err
	}
	for _, t := range tables {
		// Table names come from the schema, not from input.
		q := `SELECT DISTINCT workspace_id FROM ` + t
		switch t {
		case "ledger_registry":
			continue
		case "ledger_events", "ledger_checkpoints":
			// Their primary key leads with workspace_id: hop from one
			// workspace to the next instead of reading every event.
			q = `WITH RECURSIVE w(id) AS (SELECT min(workspace_id) FROM ` + t + `
				UNION ALL SELECT (SELECT min(workspace_id) FROM ` + t + ` WHERE workspace_id > w.id) FROM w WHERE w.id IS NOT NULL)
				SELECT id FROM w WHERE id IS NOT NULL`
		}
		if err := scan(t, q); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Heads returns the signed registry head and every workspace's signed
// chain head, as statements to publish outside the database: a copy kept
// elsewhere is what shows a later rollback to an older, genuinely signed
// state, which nothing inside the database can.
func (s *DB) Heads(ctx context.Context) (ledger.RegistryHead, []ledger.Checkpoint, error) {
	var reg ledger.RegistryHead
	if err := scanRegistryHead(s.db.QueryRowContext(ctx, registryHeadQuery), &reg); err != nil {
		return reg, nil, fmt.Errorf("heads: registry: %w", err)
	}
	heads, err := queryAll(ctx, s.db, scanCheckpoint, `SELECT workspace_id, seq, hash, key_id, signed_at, signature FROM ledger_heads ORDER BY workspace_id`)
	if err != nil {
		return reg, nil, fmt.Errorf("heads: %w", err)
	}
	for i := range heads {
		heads[i].Head = true
	}
	return reg, heads, nil
}

// Contains reports whether the stored chains still hold a published
// statement: the workspace event at seq has hash (or, for ws "", the
// registry entry at seq). A statement that is no longer there means the
// history it vouched for was rolled back or rewritten.
func (s *DB) Contains(ctx context.Context, ws string, seq int64, hash string) (bool, error) {
	q, args := `SELECT hash FROM ledger_events WHERE workspace_id = $1 AND seq = $2`, []any{ws, seq}
	if ws == "" {
		q, args = `SELECT hash FROM ledger_registry WHERE seq = $1`, []any{seq}
	}
	if seq == 0 {
		return hash == ledger.Genesis, nil
	}
	var got string
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("published head: %w", err)
	}
	return got == hash, nil
}
