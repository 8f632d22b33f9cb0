package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
)

// maxStreamBatch bounds one StreamEvents answer: one poll of a live stream.
const maxStreamBatch = 1000

// The event types a reporter's stream shows, besides reporter.*: what
// happened to their case, never what the desk and the agents wrote about it
// (reports, triage, tasks, messages, loop records).
const reporterEventFilter = `(e.type IN ('case.created', 'case.transitioned') OR substr(e.type, 1, 9) = 'reporter.')`

// streamColumns are eventColumns of the ledger_events row named e.
var streamColumns = "e." + strings.ReplaceAll(eventColumns, ", ", ", e.")

// StreamEvents implements signoff.LedgerService. The filter is part of the
// query and every plan walks an index:
//
//   - staff (owner, operator, viewer, the server): every event of the
//     workspace, a range of the primary key (workspace_id, seq);
//   - a reporter: case.created, case.transitioned and reporter.* events of
//     the cases whose reporter_id is theirs. A reporter has few cases, so
//     they drive the join (cases_reporter, then ledger_events_case per
//     case; CROSS JOIN fixes that order in SQLite, PostgreSQL's planner
//     orders a plain join) and a replay from far back costs no more than
//     the events of those cases;
//   - an agent: every event of the cases it has a task on, whatever the
//     task's status (its own tasks, as ListTasks shows them). An agent may
//     have a task on most cases, so the range of the primary key drives and
//     each event is one probe of tasks_assignee_case. A live stream asks
//     only past the last head it read (the HTTP handler moves its cursor
//     there), so a poll walks the events appended since the last one.
//
// Events without a case (workspace, actors, projects) are for staff only.
func (s *DB) StreamEvents(ctx context.Context, by signoff.Actor, afterSeq int64, limit int) ([]signoff.Event, error) {
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, by.WorkspaceID); err != nil {
		return nil, err
	}
	if afterSeq < 0 {
		return nil, signoff.Errorf(signoff.EINVALID, "after must not be negative")
	}
	// PostgreSQL wants every parameter used: staff pass no actor id.
	var q string
	args := []any{by.WorkspaceID, afterSeq, by.ID, clampStreamLimit(limit)}
	switch {
	case isStaff(by):
		q = `SELECT ` + eventColumns + ` FROM ledger_events WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`
		args = []any{by.WorkspaceID, afterSeq, clampStreamLimit(limit)}
	case by.Role == signoff.RoleReporter:
		q = `SELECT ` + streamColumns + ` FROM cases c CROSS JOIN ledger_events e
			WHERE c.workspace_id = $1 AND c.reporter_id = $3
			AND e.workspace_id = $1 AND e.case_id = c.id AND e.seq > $2 AND ` + reporterEventFilter + `
			ORDER BY e.seq LIMIT $4`
	case by.Role.IsAgent():
		q = `SELECT ` + streamColumns + ` FROM ledger_events e WHERE e.workspace_id = $1 AND e.seq > $2
			AND ` + agentSeesCase("$1", "$3", "e.case_id") + `
			ORDER BY e.seq LIMIT $4`
	default:
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read the ledger", by.Role)
	}
	out, err := queryAll(ctx, s.db, scanEvent, q, args...)
	if err != nil {
		return nil, fmt.Errorf("stream events of %s: %w", by.WorkspaceID, err)
	}
	if by.Role == signoff.RoleReporter {
		for i := range out {
			out[i].Payload = reporterPayload(out[i].Payload)
		}
	}
	return out, nil
}

// reporterFields are the payload fields a reporter's stream keeps: where
// their case went, never the notes people or agents wrote on the way.
var reporterFields = []string{"command", "from", "to", "version", "kind", "state", "question", "question_digest", "answer"}

// reporterPayload keeps only reporterFields of p and says so; the event's
// hash still names the full payload, which the reporter cannot check.
func reporterPayload(p json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(p, &m) != nil {
		return json.RawMessage(`{"redacted":true}`)
	}
	keep := map[string]json.RawMessage{"redacted": json.RawMessage("true")}
	for _, k := range reporterFields {
		if v, ok := m[k]; ok {
			keep[k] = v
		}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		return json.RawMessage(`{"redacted":true}`)
	}
	return b
}

// clampStreamLimit is clampLimit with the stream's larger batch.
func clampStreamLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > maxStreamBatch:
		return maxStreamBatch
	}
	return n
}
