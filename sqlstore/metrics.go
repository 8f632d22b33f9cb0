package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
)

// VerificationVerdicts are the verdicts verification records (verify.Verified,
// verify.Rejected, verify.Inconclusive), as text so that the store does not
// depend on the sandbox.
func VerificationVerdicts() []string { return slices.Clone(verificationVerdicts) }

var verificationVerdicts = []string{"VERIFIED", "REJECTED", "INCONCLUSIVE"}

// TallyOther is the verdict a tally counts an unknown or unreadable
// verdict under (metrics.Other, the label of everything unknown).
const TallyOther = "other"

// The queries here run at every metrics scrape, so each one is an index
// seek or a short index range: River's job table is kept small by River's
// cleaner and read through its (state, queue, ...) index; the outbox is
// read per workspace through outbox_state (workspace_id, state,
// created_at), pending and dead messages only; the ledger is read forward
// from where the last scrape stopped, through its primary key
// (workspace_id, seq).

// JobCount is how many River jobs one queue holds in one state.
type JobCount struct {
	Queue, State string
	N            int64
}

// JobCounts counts River's jobs per queue and state. Finished jobs stay in
// the table until River's cleaner removes them (completed after a day,
// discarded after a week), so the table, and this count, stay bounded.
func (s *DB) JobCounts(ctx context.Context) ([]JobCount, error) {
	out, err := queryAll(ctx, s.db, func(sc scanner, j *JobCount) error { return sc.Scan(&j.State, &j.Queue, &j.N) },
		`SELECT state, queue, COUNT(*) FROM river_job GROUP BY state, queue ORDER BY state, queue`)
	if err != nil {
		return nil, fmt.Errorf("job counts: %w", err)
	}
	return out, nil
}

// OutboxBacklog is what the outbox has not delivered: messages still
// pending (not delivered, not dead), messages whose attempts ran out, and
// when the oldest pending one was enqueued (zero when none is pending).
type OutboxBacklog struct {
	Pending, Dead int64
	OldestPending time.Time
}

// Backlog reads the outbox's backlog over every workspace. Delivered and
// skipped messages are history, kept for good and not counted here: their
// count grows without bound, and counting them would read every row.
func (s *DB) Backlog(ctx context.Context) (OutboxBacklog, error) {
	ws, err := queryAll(ctx, s.db, scanString, `SELECT id FROM workspaces ORDER BY id`)
	if err != nil {
		return OutboxBacklog{}, fmt.Errorf("outbox backlog: %w", err)
	}
	var b OutboxBacklog
	var oldest int64
	for _, id := range ws {
		rows, err := s.db.QueryContext(ctx, `SELECT state, COUNT(*), MIN(created_at) FROM outbox
			WHERE workspace_id = $1 AND state IN ('pending', 'dead') GROUP BY state`, id)
		if err != nil {
			return OutboxBacklog{}, fmt.Errorf("outbox backlog: %w", err)
		}
		for rows.Next() {
			var state string
			var n, first int64
			if err := rows.Scan(&state, &n, &first); err != nil {
				rows.Close()
				return OutboxBacklog{}, fmt.Errorf("outbox backlog: %w", err)
			}
			switch state {
			case signoff.OutboxPending:
				b.Pending += n
				if oldest == 0 || first < oldest {
					oldest = first
				}
			case signoff.OutboxDead:
				b.Dead += n
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return OutboxBacklog{}, fmt.Errorf("outbox backlog: %w", err)
		}
	}
	if oldest != 0 {
		b.OldestPending = fromMicros(oldest)
	}
	return b, nil
}

// LedgerTally counts, over every workspace's ledger, the change gate's
// refusals (gate.refused) and the sandbox's verification verdicts
// (verification.completed, by verdict). The ledger has no index by event
// type, so the tally does not count at every scrape: it remembers how far
// it has read each chain and reads only the events appended since, by
// primary key. Its first reads catch up with the whole ledger, at most
// MaxRows events per call; until then it reports CaughtUp false. The
// counts are the database's, not this process's: every process reports
// the same totals.
type LedgerTally struct {
	// MaxRows is the most ledger positions one Tally call reads (0:
	// TallyRows), so that catching up with a long ledger is spread over
	// several scrapes. Set it before the first call.
	MaxRows int64

	s        *DB
	mu       sync.Mutex
	cursor   map[string]int64 // workspace → the last seq read
	refusals int64
	verdicts map[string]int64
}

// LedgerCounts are a tally's totals.
type LedgerCounts struct {
	// CaughtUp is false while the tally is still reading the ledger's
	// history: the totals are then partial.
	CaughtUp     bool
	GateRefusals int64
	// Verdicts counts verifications by verdict (VERIFIED, REJECTED,
	// INCONCLUSIVE; "other" for anything else).
	Verdicts map[string]int64
}

// TallyRows is a LedgerTally's default MaxRows.
const TallyRows = 200_000

const tallyBatch = 5_000

// NewLedgerTally returns a tally that has read nothing yet.
func (s *DB) NewLedgerTally() *LedgerTally {
	return &LedgerTally{s: s, cursor: map[string]int64{}, verdicts: map[string]int64{}}
}

// Tally reads the events appended since the last call (up to MaxRows
// positions) and returns the totals. What a failed call read before it
// failed stays counted, never twice.
func (t *LedgerTally) Tally(ctx context.Context) (LedgerCounts, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	type head struct {
		ws  string
		seq int64
	}
	heads, err := queryAll(ctx, t.s.db, func(sc scanner, h *head) error { return sc.Scan(&h.ws, &h.seq) },
		`SELECT workspace_id, seq FROM ledger_heads ORDER BY workspace_id`)
	if err != nil {
		return LedgerCounts{}, fmt.Errorf("ledger tally: %w", err)
	}
	budget := t.MaxRows
	if budget <= 0 {
		budget = TallyRows
	}
	caughtUp := true
	for _, h := range heads {
		for t.cursor[h.ws] < h.seq {
			if budget <= 0 {
				caughtUp = false
				break
			}
			from := t.cursor[h.ws]
			to := min(h.seq, from+tallyBatch, from+budget)
			if err := t.read(ctx, h.ws, from, to); err != nil {
				return LedgerCounts{}, fmt.Errorf("ledger tally: %w", err)
			}
			budget -= to - from
		}
	}
	out := LedgerCounts{CaughtUp: caughtUp, GateRefusals: t.refusals, Verdicts: make(map[string]int64, len(t.verdicts))}
	for k, v := range t.verdicts {
		out.Verdicts[k] = v
	}
	return out, nil
}

// read counts ws's events in (from, to] and moves the cursor to to, all or
// nothing.
func (t *LedgerTally) read(ctx context.Context, ws string, from, to int64) error {
	rows, err := t.s.db.QueryContext(ctx, `SELECT type, payload FROM ledger_events
		WHERE workspace_id = $1 AND seq > $2 AND seq <= $3 AND type IN ('gate.refused', 'verification.completed')`, ws, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	var refusals int64
	verdicts := map[string]int64{}
	for rows.Next() {
		var typ, payload string
		if err := rows.Scan(&typ, &payload); err != nil {
			return err
		}
		if typ == "gate.refused" {
			refusals++
			continue
		}
		var p struct {
			Verdict string `json:"verdict"`
		}
		_ = json.Unmarshal([]byte(payload), &p) // an unreadable verdict counts as "other"
		if !slices.Contains(verificationVerdicts, p.Verdict) {
			p.Verdict = TallyOther
		}
		verdicts[p.Verdict]++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.refusals += refusals
	for k, v := range verdicts {
		t.verdicts[k] += v
	}
	t.cursor[ws] = to
	return nil
}

// Now is the store's clock (Options.Now), for what reports ages of what it
// holds.
func (s *DB) Now() time.Time { return s.now() }
