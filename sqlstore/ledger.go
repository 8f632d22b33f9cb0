package sqlstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/ledger"
)

// EventInput is one event to append; Payload is marshalled canonically.
type EventInput struct {
	CaseID  string
	Type    string
	ActorID string
	Payload any
}

// appendEvent chains one event onto the workspace ledger inside tx.
func (s *DB) appendEvent(ctx context.Context, tx *sql.Tx, ws, caseID, typ, actorID string, payload any) (signoff.Event, error) {
	evs, err := s.appendEvents(ctx, tx, ws, []EventInput{{CaseID: caseID, Type: typ, ActorID: actorID, Payload: payload}})
	if err != nil {
		return signoff.Event{}, err
	}
	return evs[0], nil
}

// appendEvents chains events onto the workspace ledger inside tx, in the
// same transaction as the state change they record. The head row is the
// serialization point. The store remembers the last head it wrote, so the
// usual append takes the lock and moves the head in one guarded UPDATE
// ("where the head is still what I last saw") instead of a locking read
// plus a write. When another process or a rolled-back transaction moved the
// head, the guard matches nothing; the append then reads the head under a
// row lock and seals again, so the database, not the cache, decides.
// Every CheckpointInterval-th event also leaves a signed checkpoint that is
// never overwritten.
func (s *DB) appendEvents(ctx context.Context, tx *sql.Tx, ws string, in []EventInput) ([]signoff.Event, error) {
	if s.signer == nil {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "store opened read-only: no signing key")
	}
	out := make([]signoff.Event, len(in))
	for i, ei := range in {
		body, err := canonical.Marshal(ei.Payload)
		if err != nil {
			return nil, fmt.Errorf("append %s: payload: %w", ei.Type, err)
		}
		// A demo walk's simulated person is simulated in the ledger too
		// (simulated.go); nothing else is relabelled.
		if simulatedBy(ctx, ei.ActorID, func(id string) bool { return s.humanActor(ctx, tx, ws, id) }) {
			if body, err = simulatedPayload(body); err != nil {
				return nil, fmt.Errorf("append %s: simulated payload: %w", ei.Type, err)
			}
		}
		out[i] = signoff.Event{WorkspaceID: ws, CaseID: ei.CaseID, Type: ei.Type, ActorID: ei.ActorID, Payload: body}
	}
	// What does not depend on the head is read before taking it: the head
	// stays locked until commit.
	var subs []subscriber
	if s.river != nil {
		var err error
		if subs, err = s.subscribers(ctx, tx, ws); err != nil {
			return nil, fmt.Errorf("append: channels: %w", err)
		}
	}
	// One append per workspace at a time in this process takes the cached
	// fast path, holding the workspace's latch from reading the hint until
	// its guarded UPDATE has the row: the next one in line then reads a
	// fresh hint and waits on the row lock in the database instead of
	// racing with a stale one. Appends that find the latch taken (including
	// a second append in a transaction that already holds the row) take
	// the locking read and never wait on the latch, so it cannot deadlock.
	latch := s.heads.latch(ws)
	cached := latch.TryLock()
	var prev headPos
	if cached {
		defer func() {
			if cached {
				latch.Unlock()
			}
		}()
		prev, cached = s.heads.get(ws)
		if !cached {
			latch.Unlock()
		}
	}
	var head ledger.Checkpoint
	var now time.Time
	for {
		if !cached {
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT seq, hash, signed_at FROM ledger_heads WHERE workspace_id = $1`+s.d.ForUpdate, ws).Scan(&prev.Seq, &prev.Hash, &at)
			if err != nil {
				return nil, fmt.Errorf("append: read head of %s: %w", ws, err)
			}
			prev.Time = fromMicros(at)
		}
		// Event times never run backwards along the chain, even when clocks
		// of two processes disagree or the clock steps back.
		now = s.now()
		if now.Before(prev.Time) {
			now = prev.Time
		}
		for i := range out {
			out[i].Time = now
		}
		seq, hash := prev.Seq, prev.Hash
		for i := range out {
			ledger.Seal(&out[i], seq, hash)
			seq, hash = out[i].Seq, out[i].Hash
		}
		head = ledger.Checkpoint{WorkspaceID: ws, Seq: seq, Hash: hash, Head: true}
		head.Sign(s.signer, now)
		res, err := tx.ExecContext(ctx, `UPDATE ledger_heads SET seq = $1, hash = $2, key_id = $3, signed_at = $4, signature = $5
			WHERE workspace_id = $6 AND seq = $7 AND hash = $8`,
			head.Seq, head.Hash, head.KeyID, micros(head.SignedAt), head.Signature, ws, prev.Seq, prev.Hash)
		if err != nil {
			return nil, fmt.Errorf("append: move head: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("append: move head: %w", err)
		}
		if n == 1 {
			s.heads.set(ws, headPos{head.Seq, head.Hash, head.SignedAt})
			break
		}
		if !cached {
			// The head was read under lock and still did not match: only a
			// missing head row (unknown workspace) gets here.
			return nil, fmt.Errorf("append: head of %s vanished: %w", ws, sql.ErrNoRows)
		}
		cached = false
		latch.Unlock()
	}
	if cached {
		cached = false
		latch.Unlock()
	}
	for rest := out; len(rest) > 0; {
		n := min(len(rest), insertChunk)
		if err := s.insertEvents(ctx, tx, rest[:n]); err != nil {
			s.heads.forget(ws)
			return nil, err
		}
		rest = rest[n:]
	}
	for i := range out {
		e := &out[i]
		if e.Seq%ledger.CheckpointInterval == 0 {
			cp := ledger.Checkpoint{WorkspaceID: ws, Seq: e.Seq, Hash: e.Hash}
			cp.Sign(s.signer, now)
			if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_checkpoints (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, $2, $3, $4, $5, $6)`,
				cp.WorkspaceID, cp.Seq, cp.Hash, cp.KeyID, micros(cp.SignedAt), cp.Signature); err != nil {
				s.heads.forget(ws)
				return nil, fmt.Errorf("append: checkpoint %d: %w", e.Seq, err)
			}
		}
	}
	// Notifications and cards are enqueued with the events they tell of.
	if err := s.notifyAppended(ctx, tx, out, subs); err != nil {
		s.heads.forget(ws)
		return nil, err
	}
	// Live streams wake at commit (bus.go).
	if err := s.markAppended(ctx, tx, ws); err != nil {
		s.heads.forget(ws)
		return nil, fmt.Errorf("append: %w", err)
	}
	return out, nil
}

// insertEvents writes sealed events in one statement: the ledger head is
// locked from the seal until commit, so each round trip here is time
// every other append to the workspace waits.
func (s *DB) insertEvents(ctx context.Context, tx *sql.Tx, evs []signoff.Event) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO ledger_events (workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash) VALUES `)
	args := make([]any, 0, 9*len(evs))
	for i := range evs {
		e := &evs[i]
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9)
		args = append(args, e.WorkspaceID, e.Seq, e.CaseID, e.Type, e.ActorID, micros(e.Time), string(e.Payload), e.PrevHash, e.Hash)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("append %s: insert events %d-%d: %w", evs[0].Type, evs[0].Seq, evs[len(evs)-1].Seq, err)
	}
	return nil
}

// headCache remembers the last head each workspace's chain was moved to by
// this process. It is only a hint: a stale entry costs one extra read.
type headCache struct {
	mu      sync.Mutex
	m       map[string]headPos
	latches map[string]*sync.Mutex
}

func (c *headCache) latch(ws string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.latches == nil {
		c.latches = map[string]*sync.Mutex{}
	}
	l, ok := c.latches[ws]
	if !ok {
		l = &sync.Mutex{}
		c.latches[ws] = l
	}
	return l
}

type headPos struct {
	Seq  int64
	Hash string
	Time time.Time
}

func (c *headCache) get(ws string) (headPos, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[ws]
	return p, ok
}

func (c *headCache) set(ws string, p headPos) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]headPos{}
	}
	// Heads only move forward; an append that finished later but read
	// earlier must not wind the hint back. At an equal sequence the newer
	// write wins, replacing a hint a rolled-back append may have left.
	if cur, ok := c.m[ws]; !ok || p.Seq >= cur.Seq {
		c.m[ws] = p
	}
}

func (c *headCache) forget(ws string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, ws)
}

// Append records events that are not case transitions (evidence, imports)
// in one transaction. Returns ENOTFOUND for an unknown workspace.
func (s *DB) Append(ctx context.Context, ws string, in ...EventInput) ([]signoff.Event, error) {
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, ws); err != nil {
		return nil, err
	}
	for _, e := range in {
		if err := signoff.CheckText("event type", e.Type, true, 100); err != nil {
			return nil, err
		}
	}
	var out []signoff.Event
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.appendEvents(ctx, tx, ws, in)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "workspace not found")
		}
		return err
	})
	return out, err
}

// createHead starts an empty chain for a new workspace.
func (s *DB) createHead(ctx context.Context, tx *sql.Tx, ws string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ledger_heads (workspace_id, seq, hash, key_id, signed_at, signature) VALUES ($1, 0, $2, '', 0, $3)`, ws, ledger.Genesis, []byte{})
	return err
}

const eventColumns = `workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash`

func scanEvent(sc scanner, e *signoff.Event) error {
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
func (s *DB) ListEvents(ctx context.Context, by signoff.Actor, caseID string, afterSeq int64, limit int) ([]signoff.Event, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return nil, err
	}
	if afterSeq < 0 {
		return nil, signoff.Errorf(signoff.EINVALID, "after must not be negative")
	}
	ws := by.WorkspaceID
	if _, err := s.GetCase(ctx, by, caseID); err != nil {
		return nil, err
	}
	// An agent reads a case's events only as its stream shows them
	// (agentSeesCase): none of a case it has no task on.
	// (PostgreSQL wants every parameter used: others pass no actor id.)
	visible, args := "", []any{ws, caseID, afterSeq, clampLimit(limit)}
	// A reporter reads their own case's events as their stream shows
	// them too: its moves and reporter.* events, payloads trimmed to
	// reporterFields (the staff's notes and the agents' calls stay in).
	switch {
	case by.Role.IsAgent():
		visible, args = " AND "+agentSeesCase("$1", "$5", "e.case_id"), append(args, by.ID)
	case by.Role == signoff.RoleReporter:
		visible = " AND " + reporterEventFilter
	}
	out, err := queryAll(ctx, s.db, scanEvent, `SELECT `+streamColumns+` FROM ledger_events e
		WHERE e.workspace_id = $1 AND e.case_id = $2 AND e.seq > $3`+visible+` ORDER BY e.seq LIMIT $4`, args...)
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", caseID, err)
	}
	if by.Role == signoff.RoleReporter {
		for i := range out {
			out[i].Payload = reporterPayload(out[i].Payload)
		}
	}
	return out, nil
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

// VerifyLedger checks the chain of ws up to its signed head and the
// checkpoints. Long chains are split into sequence ranges verified in
// parallel on separate connections; ledger.Join checks the links between
// them. The first range is open below, so stray events there are seen.
// Events above the head are either appends committed while verifying (the
// head has moved on by the end) or forgeries (it has not).
func (s *DB) VerifyLedger(ctx context.Context, ws string, trusted map[string]ed25519.PublicKey) (ledger.Result, error) {
	const headQuery = `SELECT workspace_id, seq, hash, key_id, signed_at, signature FROM ledger_heads WHERE workspace_id = $1`
	head, err := s.readCheckpoint(ctx, headQuery, ws)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		// Events without a head: the head row was removed.
		head, err = ledger.Checkpoint{WorkspaceID: ws}, nil
	} else if err != nil {
		return ledger.Result{}, err
	}
	parts := int64(1)
	if head.Seq > 0 {
		parts = min(int64(s.parallel), head.Seq/s.segment+1)
	}
	step := max(head.Seq, 0) / parts
	segs := make([]*ledger.Verifier, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := step*i+1, step*(i+1)
		segs[i] = ledger.NewSegment(ws, lo)
		if i == 0 {
			lo = math.MinInt64
		}
		if i == parts-1 {
			hi = max(head.Seq, 0)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.verifyRange(ctx, segs[i], ws, lo, hi)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: %w", ws, err)
	}
	cps, err := queryAll(ctx, s.db, scanCheckpoint, `SELECT workspace_id, seq, hash, key_id, signed_at, signature FROM ledger_checkpoints
		WHERE workspace_id = $1 AND seq <= $2 ORDER BY seq`, ws, max(head.Seq, 0))
	if err != nil {
		return ledger.Result{}, fmt.Errorf("verify %s: checkpoints: %w", ws, err)
	}
	v := ledger.Join(ws, trusted, segs)
	res, verr := v.Finish(head, cps)
	if verr != nil {
		return res, verr
	}
	var above, top int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(seq), 0) FROM ledger_events WHERE workspace_id = $1 AND seq > $2`, ws, head.Seq).Scan(&above, &top); err != nil {
		return res, fmt.Errorf("verify %s: %w", ws, err)
	}
	if above > 0 {
		now, err := s.readCheckpoint(ctx, headQuery, ws)
		if err != nil {
			return res, err
		}
		if now.Seq < top {
			return res, &ledger.Failure{WorkspaceID: ws, Seq: head.Seq + 1, Reason: fmt.Sprintf("%d event(s) stored beyond the signed head (up to seq %d)", above, top)}
		}
	}
	return res, nil
}

// verifyRange streams events with lo <= seq <= hi through v. It reads only
// what the hash covers and reuses its buffers: this loop is what makes
// verifying millions of events take seconds.
func (s *DB) verifyRange(ctx context.Context, v *ledger.Verifier, ws string, lo, hi int64) error {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash
		FROM ledger_events WHERE workspace_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq`, ws, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	e := signoff.Event{WorkspaceID: ws}
	var at int64
	var payload sql.RawBytes // valid until the next row; the verifier keeps no payload
	for rows.Next() {
		if err := rows.Scan(&e.Seq, &e.CaseID, &e.Type, &e.ActorID, &at, &payload, &e.PrevHash, &e.Hash); err != nil {
			return err
		}
		e.Time, e.Payload = fromMicros(at), json.RawMessage(payload)
		if v.Add(&e) != nil {
			return nil // the verifier keeps the first failure; Finish reports it
		}
	}
	return rows.Err()
}

func (s *DB) readCheckpoint(ctx context.Context, q, ws string) (ledger.Checkpoint, error) {
	var cp ledger.Checkpoint
	err := scanCheckpoint(s.db.QueryRowContext(ctx, q, ws), &cp)
	if errors.Is(err, sql.ErrNoRows) {
		return cp, signoff.Errorf(signoff.ENOTFOUND, "workspace %s has no ledger head", ws)
	}
	return cp, err
}

func scanCheckpoint(sc scanner, cp *ledger.Checkpoint) error {
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

// SigningKeyIDs lists the keys the chain heads are signed with, so a
// process can refuse to sign with a key nobody trusts.
func (s *DB) SigningKeyIDs(ctx context.Context) ([]string, error) {
	ids, err := queryAll(ctx, s.db, scanString, `SELECT DISTINCT key_id FROM ledger_heads WHERE key_id <> '' ORDER BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	return ids, nil
}

// LedgerWorkspaceIDs lists every workspace that has any trace in the
// database: a workspace row, a chain head or an event.
func (s *DB) LedgerWorkspaceIDs(ctx context.Context) ([]string, error) {
	ids, err := queryAll(ctx, s.db, scanString, `SELECT id FROM workspaces UNION SELECT workspace_id FROM ledger_heads
		UNION SELECT workspace_id FROM ledger_events ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("ledger workspaces: %w", err)
	}
	return ids, nil
}

func scanString(sc scanner, v *string) error { return sc.Scan(v) }

// AppendTx chains events onto ws's ledger inside the caller's
// transaction, with the notifications and cards they cause: all of it
// commits or rolls back with tx. For tools and tests composing their own
// transaction; the store's own operations append as they change state.
func (s *DB) AppendTx(ctx context.Context, tx *sql.Tx, ws string, in ...EventInput) ([]signoff.Event, error) {
	return s.appendEvents(ctx, tx, ws, in)
}
