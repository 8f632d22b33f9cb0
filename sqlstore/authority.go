package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// agentSeesCase is the one rule of which cases' ledger events an agent
// reads, on the live stream (StreamEvents) and in a case's event list
// (ListEvents) alike: the cases it holds a task on, whatever the task's
// status. ws, agent and caseID are the SQL expressions (parameters or
// columns) holding the workspace, the agent's id and the case's id.
func agentSeesCase(ws, agent, caseID string) string {
	return `EXISTS (SELECT 1 FROM tasks t WHERE t.workspace_id = ` + ws + ` AND t.assignee_id = ` + agent + ` AND t.case_id = ` + caseID + `)`
}

// agentMayChange refuses an agent's change to case c (a transition, a
// loop update, a plan, a decision request) unless the agent holds an open
// task on c, its receipt, and c's state was not produced by a person's
// decision (workflow.HumanDecided). The server's own jobs act as the
// system actor and people as themselves: neither is an agent, so neither
// is asked. what names the act for the refusal.
func (s *DB) agentMayChange(ctx context.Context, q queryer, by signoff.Actor, c signoff.Case, what string) error {
	if !by.Role.IsAgent() {
		return nil
	}
	var open bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE workspace_id = $1 AND assignee_id = $2 AND case_id = $3 AND status = $4)`,
		c.WorkspaceID, by.ID, c.ID, signoff.TaskOpen).Scan(&open)
	if err != nil {
		return fmt.Errorf("open tasks of %s on %s: %w", by.ID, c.ID, err)
	}
	if !open {
		return signoff.Errorf(signoff.EFORBIDDEN, "an agent changes a case only on an open task the server assigned it: %s holds none on case %s, so it may not %s it", by.Role, c.ID, what)
	}
	if workflow.HumanDecided(c.Kind, c.State) {
		return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf(
			"case %s is %s, a state a person's decision produced: no agent may %s it; post a message or ask for attention instead (POST /api/v1/cases/%s/attention, MCP case.request_attention)",
			c.ID, c.State, what, c.ID)}
	}
	// A signature that still counts is a person's decision too, though
	// the quorum is not met and the state is still the one the system
	// produced: an agent's re-plan would void it, its escalation move the
	// case from under it. Only people undo what a person signed.
	if signing(c) {
		var signed int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE workspace_id = $1 AND case_id = $2 AND status = $3 AND decision = $4 AND expires_at > $5`,
			c.WorkspaceID, c.ID, signoff.ApprovalValid, signoff.ApprovalApprove, micros(s.clock())).Scan(&signed); err != nil {
			return fmt.Errorf("approvals of %s: %w", c.ID, err)
		}
		if signed > 0 {
			return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf(
				"case %s carries %d signed approval(s) that still count, a person's decision: no agent may %s it; post a message or ask for attention instead (POST /api/v1/cases/%s/attention, MCP case.request_attention)",
				c.ID, signed, what, c.ID)}
		}
	}
	return nil
}

// signing reports whether c is in the state where people's signatures
// gather towards a quorum: awaiting approval, of a bug or a change.
func signing(c signoff.Case) bool {
	return c.Kind == signoff.KindBug && c.State == workflow.BugAwaitingApproval ||
		c.Kind == signoff.KindChange && c.State == workflow.ChangeAwaitingApproval
}

// maxAttentionNote bounds an attention note.
const maxAttentionNote = 4000

// RequestAttention implements signoff.CaseService: a ledger event
// (case.attention) on the case that moves nothing, the voice an agent
// keeps in a state a person's decision produced. An agent asks only on a
// case it holds (or held) a task on, the same rule as what it reads of
// the ledger; people who run the desk may ask on any.
func (s *DB) RequestAttention(ctx context.Context, by signoff.Actor, caseID, note string) (signoff.Event, error) {
	if !by.Role.IsAgent() && !canIssue(by) && !isServer(by) {
		return signoff.Event{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not ask for attention on a case", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.Event{}, err
	}
	note = strings.TrimSpace(note)
	if err := signoff.CheckText("note", note, true, maxAttentionNote); err != nil {
		return signoff.Event{}, err
	}
	var e signoff.Event
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.visibleCase(ctx, tx, by, caseID)
		if err != nil {
			return err
		}
		if by.Role.IsAgent() {
			var involved bool
			if err := tx.QueryRowContext(ctx, `SELECT `+agentSeesCase("$1", "$2", "$3"),
				c.WorkspaceID, by.ID, c.ID).Scan(&involved); err != nil {
				return err
			}
			if !involved {
				return signoff.Errorf(signoff.EFORBIDDEN, "an agent asks for attention only on a case it has worked on (a task of its own)")
			}
		}
		e, err = s.appendEvent(ctx, tx, c.WorkspaceID, c.ID, "case.attention", by.ID, map[string]any{
			"note": note, "state": c.State, "version": c.Version, "role": string(by.Role),
		})
		return err
	})
	if err != nil {
		return signoff.Event{}, fmt.Errorf("attention on %s: %w", caseID, err)
	}
	return e, nil
}
