package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff"
)

const maxTriageState = 512 << 10

var triageStatuses = map[string]bool{signoff.TriageActive: true, signoff.TriageParked: true, signoff.TriageDone: true}

const triageColumns = `case_id, workspace_id, project_id, seq, item_id, status, outcome, ticket_id, resolves, state, version, created_at, updated_at`

func scanTriage(sc scanner, r *signoff.TriageRun) error {
	var state string
	var ca, ua int64
	if err := sc.Scan(&r.CaseID, &r.WorkspaceID, &r.ProjectID, &r.Seq, &r.ItemID, &r.Status, &r.Outcome, &r.TicketID, &r.Resolves, &state, &r.Version, &ca, &ua); err != nil {
		return err
	}
	r.State, r.CreatedAt, r.UpdatedAt = json.RawMessage(state), fromMicros(ca), fromMicros(ua)
	return nil
}

// canTriage reports whether by may write triage runs: the triager whose
// tools keep them, people who run the desk, and the server.
func canTriage(by signoff.Actor) bool {
	return by.Role == signoff.RoleTriager || canIssue(by)
}

// StartTriage implements signoff.TriageService.
func (s *DB) StartTriage(ctx context.Context, by signoff.Actor, caseID, itemID string, state json.RawMessage) (signoff.TriageRun, error) {
	if !canTriage(by) {
		return signoff.TriageRun{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not start triage", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.TriageRun{}, err
	}
	if err := checkProse("item_id", itemID, false, 200); err != nil {
		return signoff.TriageRun{}, err
	}
	st, digest, err := canonicalJSON("state", state, maxTriageState, true, json.RawMessage(`{}`))
	if err != nil {
		return signoff.TriageRun{}, err
	}
	var r signoff.TriageRun
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.getCase(ctx, tx, by.WorkspaceID, caseID)
		if err != nil {
			return err
		}
		if c.Kind != signoff.KindBug {
			return signoff.Errorf(signoff.EINVALID, "only bugs are triaged")
		}
		// Runs of one project start one at a time (the row lock), so
		// arrival order is a gapless count.
		var pid string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE id = $1`+s.d.ForUpdate, c.ProjectID).Scan(&pid); err != nil {
			return err
		}
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM triage_runs WHERE project_id = $1`, c.ProjectID).Scan(&seq); err != nil {
			return err
		}
		now := s.clock()
		r = signoff.TriageRun{CaseID: c.ID, WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, Seq: seq, ItemID: itemID,
			Status: signoff.TriageActive, State: st, Version: 1, CreatedAt: now, UpdatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO triage_runs (`+triageColumns+`) VALUES ($1, $2, $3, $4, $5, $6, '', '', '', $7, 1, $8, $8)`,
			r.CaseID, r.WorkspaceID, r.ProjectID, r.Seq, r.ItemID, r.Status, string(st), micros(now)); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "case %s is already being triaged", caseID)
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, r.WorkspaceID, r.CaseID, "triage.started", by.ID, map[string]any{
			"item_id": itemID, "seq": seq, "state_digest": digest,
		})
		return err
	})
	if err != nil {
		return signoff.TriageRun{}, fmt.Errorf("start triage of %s: %w", caseID, err)
	}
	return r, nil
}

// GetTriage implements signoff.TriageService.
func (s *DB) GetTriage(ctx context.Context, by signoff.Actor, caseID string) (signoff.TriageRun, error) {
	if by.Role == signoff.RoleReporter {
		return signoff.TriageRun{}, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read triage runs")
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.TriageRun{}, err
	}
	return s.getTriage(ctx, s.db, by.WorkspaceID, caseID)
}

func (s *DB) getTriage(ctx context.Context, q queryer, ws, caseID string) (signoff.TriageRun, error) {
	var r signoff.TriageRun
	err := scanTriage(q.QueryRowContext(ctx, `SELECT `+triageColumns+` FROM triage_runs WHERE case_id = $1 AND workspace_id = $2`, caseID, ws), &r)
	if errors.Is(err, sql.ErrNoRows) {
		return r, signoff.Errorf(signoff.ENOTFOUND, "case %s has no triage run", caseID)
	}
	return r, err
}

// SaveTriage implements signoff.TriageService.
func (s *DB) SaveTriage(ctx context.Context, by signoff.Actor, r signoff.TriageRun) (signoff.TriageRun, error) {
	if !canTriage(by) {
		return signoff.TriageRun{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not write triage runs", by.Role)
	}
	if !triageStatuses[r.Status] {
		return signoff.TriageRun{}, signoff.Errorf(signoff.EINVALID, "status must be active, parked or done")
	}
	for _, f := range []struct{ what, v string }{{"outcome", r.Outcome}, {"ticket_id", r.TicketID}, {"resolves", r.Resolves}} {
		if err := checkProse(f.what, f.v, false, 200); err != nil {
			return signoff.TriageRun{}, err
		}
	}
	st, digest, err := canonicalJSON("state", r.State, maxTriageState, true, json.RawMessage(`{}`))
	if err != nil {
		return signoff.TriageRun{}, err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE triage_runs SET status = $1, outcome = $2, ticket_id = $3, resolves = $4, state = $5, version = version + 1, updated_at = $6
			WHERE case_id = $7 AND workspace_id = $8 AND version = $9`,
			r.Status, r.Outcome, r.TicketID, r.Resolves, string(st), micros(now), r.CaseID, by.WorkspaceID, r.Version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			if _, err := s.getTriage(ctx, tx, by.WorkspaceID, r.CaseID); err != nil {
				return err
			}
			return signoff.Errorf(signoff.ECONFLICT, "triage run of %s changed since version %d", r.CaseID, r.Version)
		}
		saved, err := s.getTriage(ctx, tx, by.WorkspaceID, r.CaseID)
		if err != nil {
			return err
		}
		r = saved
		_, err = s.appendEvent(ctx, tx, r.WorkspaceID, r.CaseID, "triage.updated", by.ID, map[string]any{
			"status": r.Status, "outcome": r.Outcome, "ticket_id": r.TicketID, "resolves": r.Resolves,
			"version": r.Version, "state_digest": digest,
		})
		return err
	})
	if err != nil {
		return signoff.TriageRun{}, fmt.Errorf("save triage of %s: %w", r.CaseID, err)
	}
	return r, nil
}

// ListTriage implements signoff.TriageService.
func (s *DB) ListTriage(ctx context.Context, by signoff.Actor, projectID, status string) ([]signoff.TriageRun, error) {
	if by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read triage runs")
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	if status != "" && !triageStatuses[status] {
		return nil, signoff.Errorf(signoff.EINVALID, "status must be active, parked or done")
	}
	if _, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID); err != nil {
		return nil, err
	}
	q := `SELECT ` + triageColumns + ` FROM triage_runs WHERE workspace_id = $1 AND project_id = $2 AND ($3 = '' OR status = $3) ORDER BY seq`
	list, err := queryAll(ctx, s.db, scanTriage, q, by.WorkspaceID, projectID, status)
	if err != nil {
		return nil, fmt.Errorf("list triage runs: %w", err)
	}
	return list, nil
}

// TriageAhead implements signoff.TriageService. Case ids grow with time, so
// "arrived before" is "has a smaller id".
func (s *DB) TriageAhead(ctx context.Context, by signoff.Actor, caseID string) (int, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return 0, err
	}
	c, err := s.getCase(ctx, s.db, by.WorkspaceID, caseID)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM cases c LEFT JOIN triage_runs t ON t.case_id = c.id
		WHERE c.workspace_id = $1 AND c.project_id = $2 AND c.kind = 'bug' AND c.created_by = $3 AND c.id < $4
		AND ((t.case_id IS NULL AND c.state = 'received') OR t.status = 'active')`,
		c.WorkspaceID, c.ProjectID, IntakeActor, c.ID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("triage ahead of %s: %w", caseID, err)
	}
	return n, nil
}
