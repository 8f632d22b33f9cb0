package sqlstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/ledger"
)

// appendEvent chains one event onto the workspace ledger inside tx. The head
// row is the serialization point: it is locked (or, on SQLite, the write
// transaction already serializes), the event is sealed after it, and the
// head is re-signed in the same transaction as the state change it records.
func (s *DB) appendEvent(ctx context.Context, tx *sql.Tx, ws, caseID, typ, actorID string, payload any) (signoff.Event, error) {
	body, err := canonical.Marshal(payload)
	if err != nil {
		return signoff.Event{}, fmt.Errorf("append %s: payload: %w", typ, err)
	}
	var prevSeq int64
	var prevHash string
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM ledger_heads WHERE workspace_id = $1`+s.d.ForUpdate, ws).Scan(&prevSeq, &prevHash)
	if err != nil {
		return signoff.Event{}, fmt.Errorf("append %s: read head of %s: %w", typ, ws, err)
	}
	e := signoff.Event{WorkspaceID: ws, CaseID: caseID, Type: typ, ActorID: actorID, Time: s.now(), Payload: body}
	ledger.Seal(&e, prevSeq, prevHash)
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_events (workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.WorkspaceID, e.Seq, e.CaseID, e.Type, e.ActorID, micros(e.Time), string(e.Payload), e.PrevHash, e.Hash); err != nil {
		return signoff.Event{}, fmt.Errorf("append %s: insert event %d: %w", typ, e.Seq, err)
	}
	head := ledger.Checkpoint{WorkspaceID: ws, Seq: e.Seq, Hash: e.Hash}
	head.Sign(s.signer, e.Time)
	if _, err := tx.ExecContext(ctx, `UPDATE ledger_heads SET seq = $1, hash = $2, key_id = $3, signed_at = $4, signature = $5 WHERE workspace_id = $6`,
		head.Seq, head.Hash, head.KeyID, micros(head.SignedAt), head.Signature, ws); err != nil {
		return signoff.Event{}, fmt.Errorf("append %s: update head: %w", typ, err)
	}
	if e.Seq%ledger.CheckpointInterval == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_checkpoints (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, $2, $3, $4, $5, $6)`,
			head.WorkspaceID, head.Seq, head.Hash, head.KeyID, micros(head.SignedAt), head.Signature); err != nil {
			return signoff.Event{}, fmt.Errorf("append %s: checkpoint: %w", typ, err)
		}
	}
	return e, nil
}

// createHead starts an empty chain for a new workspace.
func (s *DB) createHead(ctx context.Context, tx *sql.Tx, ws string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ledger_heads (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, 0, $2, '', 0, $3)`, ws, ledger.Genesis, []byte{})
	return err
}

const eventColumns = `workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash`

func scanEvent(sc interface{ Scan(...any) error }, e *signoff.Event) error {
	var at int64
	var payload []byte
	if err := sc.Scan(&e.WorkspaceID, &e.Seq, &e.CaseID, &e.Type, &e.ActorID, &at, &payload, &e.PrevHash, &e.Hash); err != nil {
		return err
	}
	e.Time = fromMicros(at)
	e.Payload = payload
	return nil
}

// ListEvents implements signoff.LedgerService.
func (s *DB) ListEvents(ctx context.Context, ws, caseID string, afterSeq int64, limit int) ([]signoff.Event, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return nil, err
	}
	if _, err := s.GetCase(ctx, ws, caseID); err != nil {
		return nil, err
	}
	limit = clampLimit(limit)
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM ledger_events
		WHERE workspace_id = $1 AND case_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, ws, caseID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", caseID, err)
	}
	defer rows.Close()
	out := []signoff.Event{}
	for rows.Next() {
		var e signoff.Event
		if err := scanEvent(rows, &e); err != nil {
			return nil, fmt.Errorf("list events of %s: %w", caseID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// HeadSeq implements signoff.LedgerService.
func (s *DB) HeadSeq(ctx context.Context, ws string) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM ledger_heads WHERE workspace_id = $1`, ws).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, signoff.Errorf(signoff.ENOTFOUND, "workspace not found")
	}
	return seq, err
}

// VerifyLedger streams the whole chain of ws through a ledger.Verifier and
// checks the signed head and checkpoints against the trusted keys.
func (s *DB) VerifyLedger(ctx context.Context, ws string, trusted map[string]ed25519.PublicKey) (ledger.Result, error) {
	v := ledger.NewVerifier(ws, trusted)
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM ledger_events WHERE workspace_id = $1 ORDER BY seq`, ws)
	if err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: %w", ws, err)
	}
	var e signoff.Event
	for rows.Next() {
		if err := scanEvent(rows, &e); err != nil {
			rows.Close()
			return ledger.Result{}, fmt.Errorf("verify %s: %w", ws, err)
		}
		if v.Add(&e) != nil {
			break // the verifier keeps the first failure; Finish reports it
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: %w", ws, err)
	}
	head, err := s.readCheckpoint(ctx, `SELECT workspace_id, seq, hash, key_id, signed_at, signature FROM ledger_heads WHERE workspace_id = $1`, ws)
	if err != nil {
		return ledger.Result{}, err
	}
	var cps []ledger.Checkpoint
	crow, err := s.db.QueryContext(ctx, `SELECT workspace_id, seq, hash, key_id, signed_at, signature FROM ledger_checkpoints WHERE workspace_id = $1 ORDER BY seq`, ws)
	if err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: checkpoints: %w", ws, err)
	}
	defer crow.Close()
	for crow.Next() {
		var cp ledger.Checkpoint
		if err := scanCheckpoint(crow, &cp); err != nil {
			return ledger.Result{}, fmt.Errorf("verify %s: checkpoints: %w", ws, err)
		}
		cps = append(cps, cp)
	}
	if err := crow.Err(); err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: checkpoints: %w", ws, err)
	}
	return v.Finish(head, cps)
}

func (s *DB) readCheckpoint(ctx context.Context, q, ws string) (ledger.Checkpoint, error) {
	var cp ledger.Checkpoint
	err := scanCheckpoint(s.db.QueryRowContext(ctx, q, ws), &cp)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, signoff.Errorf(signoff.ENOTFOUND, "workspace %s has no ledger head", ws)
	}
	return cp, err
}

func scanCheckpoint(sc interface{ Scan(...any) error }, cp *ledger.Checkpoint) error {
	var at int64
	if err := sc.Scan(&cp.WorkspaceID, &cp.Seq, &cp.Hash, &cp.KeyID, &at, &cp.Signature); err != nil {
		return err
	}
	cp.SignedAt = fromMicros(at)
	return nil
}

func clampLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 500:
		return 500
	}
	return n
}
