package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/workflow"
)

// What the two loops a case can have share: the bug loop (bugloop.go,
// AdvanceLoop) and the change loop (change.go, AdvanceChange). Both keep
// a versioned state row per case, consume approvals, move the case and
// record the update in the ledger the same way, so that logic lives here
// once. What differs stays with each loop: its table's refusals worded
// its own way, the order it takes its locks in (the change loop consumes
// approvals before it compares the version, the bug loop after), how
// an approval that cannot be used is explained, and the fields its
// summary event adds.

// loopTable is a table of loop rows (case_id, workspace_id, project_id,
// state, version, created_at, updated_at), the kind of case that has
// one, and the words its refusals use.
type loopTable struct {
	name      string           // the SQL table
	noun      string           // "bug loop", "change loop"
	kind      signoff.CaseKind // the cases that have such a loop
	flow      *workflow.Table  // and their states
	wrongKind string           // the refusal of a case of another kind
}

var (
	bugLoops = loopTable{name: "bug_loops", noun: "bug loop", kind: signoff.KindBug, flow: workflow.Bug,
		wrongKind: "only bugs have a bug loop"}
	changeLoops = loopTable{name: "change_loops", noun: "change loop", kind: signoff.KindChange, flow: workflow.Change,
		wrongKind: "only change cases have a change loop"}
)

// checkUpdateHead validates what every loop update starts with: the case,
// the loop version it replaces (0 for a new loop) and the note.
func checkUpdateHead(caseID string, version int64, note string) error {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return err
	}
	if version < 0 {
		return signoff.Errorf(signoff.EINVALID, "version must not be negative")
	}
	return signoff.CheckText("note", note, false, 4000)
}

// checkConsumeIDs validates the approvals an update consumes: a few
// approval ids, none twice.
func checkConsumeIDs(ids []string) error {
	if len(ids) > maxLoopConsume {
		return signoff.Errorf(signoff.EINVALID, "an update consumes at most %d approvals", maxLoopConsume)
	}
	for i, id := range ids {
		if err := signoff.CheckID("approval", signoff.PrefixApproval, id); err != nil {
			return err
		}
		if slices.Contains(ids[:i], id) {
			return signoff.Errorf(signoff.EINVALID, "approval %s is listed twice", id)
		}
	}
	return nil
}

// checkLoopEvents validates the events an update appends and returns
// their canonical payloads. An event may not take a type the store writes
// itself: those of loopEventsReserved, and those of also (nil for none).
func checkLoopEvents(events []signoff.LoopEvent, also map[string]bool) ([]json.RawMessage, error) {
	if len(events) > maxLoopEvents {
		return nil, signoff.Errorf(signoff.EINVALID, "an update appends at most %d events", maxLoopEvents)
	}
	payloads := make([]json.RawMessage, 0, len(events))
	for _, e := range events {
		if err := checkToken("event type", e.Type); err != nil {
			return nil, err
		}
		if loopEventsReserved[e.Type] || also[e.Type] {
			return nil, signoff.Errorf(signoff.EINVALID, "event type %s is written by the store itself", e.Type)
		}
		p, err := canonical.Marshal(e.Payload)
		if err != nil {
			return nil, signoff.Errorf(signoff.EINVALID, "payload of %s: %v", e.Type, err)
		}
		if len(p) > maxLoopEventJSON {
			return nil, signoff.Errorf(signoff.EINVALID, "payload of %s is larger than %d bytes", e.Type, maxLoopEventJSON)
		}
		payloads = append(payloads, p)
	}
	return payloads, nil
}

// checkLoopJobs validates the jobs an update enqueues.
func checkLoopJobs(jobs []signoff.JobRequest) error {
	if len(jobs) > maxLoopJobs {
		return signoff.Errorf(signoff.EINVALID, "an update enqueues at most %d jobs", maxLoopJobs)
	}
	for _, j := range jobs {
		if j.Args == nil || j.Args.Kind() == "" {
			return signoff.Errorf(signoff.EINVALID, "a job needs arguments with a kind")
		}
	}
	return nil
}

// encodeLoopState returns the canonical JSON of an update's state, an
// object of at most max bytes, and its digest.
func encodeLoopState(state any, max int) ([]byte, string, error) {
	raw, err := json.Marshal(state)
	if err != nil {
		return nil, "", signoff.Errorf(signoff.EINVALID, "state: %v", err)
	}
	return canonicalJSON("state", raw, max, true, nil)
}

// loopCase reads in tx the case an update of a t loop names, as by sees
// it, and refuses a case of another kind. Agents never send a human-only
// command (approve, merge, confirm, execute, revert...), whoever relays
// them. The decisions themselves are allowed here: the desk verified the
// signed approval or the reporter's capability before asking (for a
// change, the gate checked everything too).
func (s *DB) loopCase(ctx context.Context, tx *sql.Tx, by signoff.Actor, t loopTable, caseID, command string) (signoff.Case, error) {
	c, err := s.visibleCase(ctx, tx, by, caseID)
	if err != nil {
		return c, err
	}
	if c.Kind != t.kind {
		return c, signoff.Errorf(signoff.EINVALID, "%s", t.wrongKind)
	}
	if command != "" && by.Role.IsAgent() && workflow.HumanOnly(command) {
		return c, signoff.Errorf(signoff.EFORBIDDEN, "agents may not %s", command)
	}
	// Every agent write of a loop (a proposal, a candidate, a plan) needs
	// the agent's open task on the case and a state no person decided.
	what := command
	if what == "" {
		what = "update the loop of"
	}
	return c, s.agentMayChange(ctx, tx, by, c, what)
}

// writeLoopRow writes c's row of t inside tx: a new row at version 1 when
// version is 0, else the row at version moved to version+1 (compare and
// set, so it also locks the row). It returns the row's version and
// creation time. When the row exists already (version 0) the refusal is
// a conflict; when there is none, ENOTFOUND; when it is at another
// version, stale(the stored version), worded by each loop.
func (s *DB) writeLoopRow(ctx context.Context, tx *sql.Tx, t loopTable, c signoff.Case, state []byte, version int64, now time.Time,
	stale func(stored int64) error) (int64, time.Time, error) {
	if version == 0 {
		res, err := tx.ExecContext(ctx, `INSERT INTO `+t.name+` (case_id, workspace_id, project_id, state, version, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 1, $5, $5) ON CONFLICT (case_id) DO NOTHING`, c.ID, c.WorkspaceID, c.ProjectID, string(state), micros(now))
		if err != nil {
			return 0, time.Time{}, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, time.Time{}, err
		} else if n == 0 {
			return 0, time.Time{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s already has a %s", c.ID, t.noun)}
		}
		return 1, now, nil
	}
	var ca int64
	err := tx.QueryRowContext(ctx, `UPDATE `+t.name+` SET state = $1, version = version + 1, updated_at = $2
		WHERE case_id = $3 AND workspace_id = $4 AND version = $5 RETURNING created_at`,
		string(state), micros(now), c.ID, c.WorkspaceID, version).Scan(&ca)
	if errors.Is(err, sql.ErrNoRows) {
		v, err := s.loopVersion(ctx, tx, t, c)
		if err != nil {
			return 0, time.Time{}, err
		}
		return 0, time.Time{}, stale(v)
	} else if err != nil {
		return 0, time.Time{}, err
	}
	return version + 1, fromMicros(ca), nil
}

// loopVersion returns the stored version of c's row of t, ENOTFOUND when
// it has none.
func (s *DB) loopVersion(ctx context.Context, q queryer, t loopTable, c signoff.Case) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, `SELECT version FROM `+t.name+` WHERE case_id = $1 AND workspace_id = $2`, c.ID, c.WorkspaceID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, signoff.Errorf(signoff.ENOTFOUND, "case %s has no %s", c.ID, t.noun)
	}
	return v, err
}

// markApprovalConsumed marks approval id of c consumed at now when it is
// valid and unexpired, and reports whether it was (it locks the row
// either way). Why one was not is for each loop to say: the change loop
// tells the gate's refusals apart, the bug loop does not.
func (s *DB) markApprovalConsumed(ctx context.Context, tx *sql.Tx, c signoff.Case, id string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'consumed', consumed_at = $1
		WHERE id = $2 AND workspace_id = $3 AND case_id = $4 AND status = 'valid' AND expires_at > $1`,
		micros(now), id, c.WorkspaceID, c.ID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n != 0, nil // id is the key: 0 or 1
}

// applyLoopCommand moves c by command as by (nothing when command is
// empty) and returns the case moved; a case changed since it was read is
// a conflict that says where it is now.
func (s *DB) applyLoopCommand(ctx context.Context, tx *sql.Tx, by signoff.Actor, c signoff.Case, command, note string) (signoff.Case, error) {
	if command == "" {
		return c, nil
	}
	moved, _, err := s.applyTransition(ctx, tx, by, c, command, note)
	if errors.Is(err, errLostRace) {
		return moved, s.caseMoved(ctx, tx, moved)
	}
	return moved, err
}

// appendLoopEvents appends to evs an update's own events on case caseID,
// by actorID, with their canonical payloads (checkLoopEvents).
func appendLoopEvents(evs []EventInput, caseID, actorID string, events []signoff.LoopEvent, payloads []json.RawMessage) []EventInput {
	for i, e := range events {
		evs = append(evs, EventInput{CaseID: caseID, Type: e.Type, ActorID: actorID, Payload: payloads[i]})
	}
	return evs
}

// loopSummary is the payload of an update's summary event (loop.updated,
// change.updated) as both loops write it; each adds its own fields.
func loopSummary(version int64, digest string, by signoff.Actor, command, caseState string, consumed []string, jobs []signoff.JobRequest) map[string]any {
	kinds := make([]string, 0, len(jobs))
	for _, j := range jobs {
		kinds = append(kinds, j.Args.Kind())
	}
	return map[string]any{
		"version": version, "state_digest": digest, "role": string(by.Role), "command": command, "case_state": caseState,
		"consumed": append([]string{}, consumed...), "jobs": kinds,
	}
}

// recordLoopUpdate appends evs to workspace ws's ledger and then enqueues
// jobs, in the update's transaction: the jobs exist exactly when the
// update does.
func (s *DB) recordLoopUpdate(ctx context.Context, tx *sql.Tx, ws string, evs []EventInput, jobs []signoff.JobRequest) error {
	if _, err := s.appendEvents(ctx, tx, ws, evs); err != nil {
		return err
	}
	for _, j := range jobs {
		if err := s.enqueueAt(ctx, tx, j.Args, j.At); err != nil {
			return err
		}
	}
	return nil
}

// loopListQuery checks states are states of t's cases and that project
// projectID of workspace ws exists, then returns the query that selects
// columns of its loops from t (aliased l) whose case is in one of states
// (in any state when there are none), in case order.
func (s *DB) loopListQuery(ctx context.Context, t loopTable, columns, ws, projectID string, states []string) (string, []any, error) {
	for _, st := range states {
		if !t.flow.IsState(st) {
			return "", nil, signoff.Errorf(signoff.EINVALID, "unknown %s state %q", t.kind, st)
		}
	}
	if _, err := s.getProject(ctx, s.db, ws, projectID); err != nil {
		return "", nil, err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + columns + ` FROM ` + t.name + ` l JOIN cases c ON c.id = l.case_id WHERE l.workspace_id = $1 AND l.project_id = $2`)
	args := []any{ws, projectID}
	if len(states) > 0 {
		q.WriteString(` AND c.state IN (`)
		for i, st := range states {
			args = append(args, st)
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "$%d", len(args))
		}
		q.WriteString(`)`)
	}
	q.WriteString(` ORDER BY l.case_id`)
	return q.String(), args, nil
}

// caseMoved is the conflict of an update that found the case changed
// since it read it.
func (s *DB) caseMoved(ctx context.Context, q queryer, c signoff.Case) error {
	cur, err := s.getCase(ctx, q, c.WorkspaceID, c.ID)
	if err != nil {
		return err
	}
	return &signoff.Error{Code: signoff.ECONFLICT, State: cur.State,
		Message: fmt.Sprintf("case %s changed concurrently (now %s at version %d); re-read and retry", c.ID, cur.State, cur.Version)}
}
