package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
)

// The web UI's charts: how many cases were in each state over time. The
// ledger holds every creation (case.created, with the first state) and
// every transition (case.transitioned, from and to); the cases table holds
// the states now. Counting back from now through the changes of a window
// gives the counts at any time in it, however old the cases are, reading
// only the window's events.

// MaxStateChanges bounds one CaseStateChanges answer.
const MaxStateChanges = 20000

// StateChange is one change of a case's state (signoff.StateChange).
type StateChange = signoff.StateChange

// CaseStates are the states of a workspace's cases now and the changes
// that led there (signoff.CaseStates).
type CaseStates = signoff.CaseStates

// CaseStateChanges returns the states of by's workspace's cases now and
// the changes of state since since, at most limit of them (the newest;
// MaxStateChanges when limit is not positive or larger). For the people
// who run and watch the desk: EFORBIDDEN for agents and reporters.
//
// The counts and the changes come from one statement, so they agree. Event
// times never run backwards along a workspace's chain, so the window is a
// range of the chain's sequence, found by bisecting the primary key; the
// read walks only the window's events.
func (s *DB) CaseStateChanges(ctx context.Context, by signoff.Actor, since time.Time, limit int) (CaseStates, error) {
	if !isStaff(by) {
		return CaseStates{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not read the charts", by.Role)
	}
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, by.WorkspaceID); err != nil {
		return CaseStates{}, err
	}
	if limit <= 0 || limit > MaxStateChanges {
		limit = MaxStateChanges
	}
	since = since.UTC().Truncate(time.Microsecond)
	from, err := s.firstSeqSince(ctx, by.WorkspaceID, since)
	if err != nil {
		return CaseStates{}, fmt.Errorf("case state changes: %w", err)
	}
	out := CaseStates{Now: map[string]int{}, Changes: []StateChange{}, Since: since}
	// A row is a state's count now (part 0, text the state) or a change
	// (part 1, text the event type).
	type row struct {
		part          int
		caseID        string
		seq, at       int64
		text, payload string
		count         int64
	}
	rows, err := queryAll(ctx, s.db, func(sc scanner, r *row) error {
		return sc.Scan(&r.part, &r.caseID, &r.seq, &r.at, &r.text, &r.payload, &r.count)
	}, `SELECT 0, '', 0, 0, state, '', count(*) FROM cases WHERE workspace_id = $1 GROUP BY state
		UNION ALL
		SELECT 1, e.case_id, e.seq, e.occurred_at, e.type, e.payload, 0 FROM (
			SELECT case_id, seq, occurred_at, type, payload FROM ledger_events
			WHERE workspace_id = $1 AND seq >= $2 AND occurred_at >= $3 AND type IN ('case.created', 'case.transitioned')
			ORDER BY seq DESC LIMIT $4) e`, by.WorkspaceID, from, micros(since), limit+1)
	if err != nil {
		return CaseStates{}, fmt.Errorf("case state changes: %w", err)
	}
	for _, r := range rows {
		if r.part == 0 {
			out.Now[r.text] = int(r.count)
			continue
		}
		var p struct{ State, From, To string }
		if json.Unmarshal([]byte(r.payload), &p) != nil {
			continue
		}
		c := StateChange{Seq: r.seq, CaseID: r.caseID, Time: fromMicros(r.at)}
		switch r.text {
		case "case.created":
			c.To = p.State
		case "case.transitioned":
			c.From, c.To = p.From, p.To
		}
		if c.To == "" {
			continue
		}
		out.Changes = append(out.Changes, c)
	}
	slices.SortFunc(out.Changes, func(a, b StateChange) int { return cmp.Compare(a.Seq, b.Seq) })
	// The statement read one event more than limit: when it found that
	// many, the oldest goes, and the changes are complete from the time of
	// the oldest kept on (the events cut off are no later).
	var seqs []StateChange
	for _, r := range rows {
		if r.part == 1 {
			seqs = append(seqs, StateChange{Seq: r.seq, Time: fromMicros(r.at)})
		}
	}
	if len(seqs) > limit {
		slices.SortFunc(seqs, func(a, b StateChange) int { return cmp.Compare(a.Seq, b.Seq) })
		cut := seqs[0].Seq
		out.Changes = slices.DeleteFunc(out.Changes, func(c StateChange) bool { return c.Seq <= cut })
		out.Since, out.Truncated = seqs[1].Time, true
	}
	return out, nil
}

// firstSeqSince returns a sequence number from which the events of the
// workspace's chain are exactly those at or after t: event times never run
// backwards along the chain (appendEvents), so it bisects the primary key,
// one index probe a step.
func (s *DB) firstSeqSince(ctx context.Context, ws string, t time.Time) (int64, error) {
	var hi int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM ledger_events WHERE workspace_id = $1 ORDER BY seq DESC LIMIT 1`, ws).Scan(&hi)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	lo, at := int64(0), micros(t)
	hi++ // the answer is in [lo, hi]; hi is past every event
	for lo < hi {
		mid := lo + (hi-lo)/2
		var seq, when int64
		err := s.db.QueryRowContext(ctx, `SELECT seq, occurred_at FROM ledger_events WHERE workspace_id = $1 AND seq >= $2 ORDER BY seq LIMIT 1`, ws, mid).Scan(&seq, &when)
		if err != nil {
			return 0, err // there is always one: mid < hi, past the last event
		}
		if when >= at {
			hi = mid
		} else {
			lo = seq + 1
		}
	}
	return lo, nil
}

// MaxCrashWindow bounds the crash events CrashWindow returns.
const MaxCrashWindow = 100000

// CrashWindow is the part of a project's crash log the charts draw
// (signoff.CrashWindow).
type CrashWindow = signoff.CrashWindow

// CrashWindow reads the crash events of the days before the project's
// newest one, by time through an index: a long log costs its window, not
// its length. Events carry their time and signature only.
func (s *DB) CrashWindow(ctx context.Context, by signoff.Actor, projectID string, days, limit int) (CrashWindow, error) {
	if err := s.readProject(ctx, by, projectID); err != nil {
		return CrashWindow{}, err
	}
	if days < 1 || limit < 1 || limit > MaxCrashWindow {
		return CrashWindow{}, signoff.Errorf(signoff.EINVALID, "a crash window is at least a day and 1 to %d events", MaxCrashWindow)
	}
	var w CrashWindow
	var newest sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT max(occurred_at) FROM crash_events WHERE project_id = $1`, projectID).Scan(&newest); err != nil {
		return w, fmt.Errorf("crash window: %w", err)
	}
	if !newest.Valid {
		w.Events = []signoff.CrashEvent{}
		return w, nil
	}
	from := micros(fromMicros(newest.Int64).Add(-time.Duration(days) * 24 * time.Hour))
	evs, err := queryAll(ctx, s.db, func(sc scanner, e *signoff.CrashEvent) error {
		var at int64
		if err := sc.Scan(&at, &e.Signature); err != nil {
			return err
		}
		e.Time = fromMicros(at)
		return nil
	}, `SELECT occurred_at, signature FROM crash_events WHERE project_id = $1 AND occurred_at >= $2 ORDER BY occurred_at DESC LIMIT $3`, projectID, from, limit+1)
	if err != nil {
		return w, fmt.Errorf("crash window: %w", err)
	}
	if len(evs) > limit {
		evs = evs[:limit]
		var inWindow int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM crash_events WHERE project_id = $1 AND occurred_at >= $2`, projectID, from).Scan(&inWindow); err != nil {
			return w, fmt.Errorf("crash window: %w", err)
		}
		w.Cut = inWindow - limit
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM crash_events WHERE project_id = $1 AND occurred_at < $2`, projectID, from).Scan(&w.Older); err != nil {
		return w, fmt.Errorf("crash window: %w", err)
	}
	w.Events = evs
	return w, nil
}
