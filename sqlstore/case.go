package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// DefaultMaxFixAttempts is the fixer's attempt budget for a new bug.
const DefaultMaxFixAttempts = 2

// CreateCase implements signoff.CaseService.
func (s *DB) CreateCase(ctx context.Context, by signoff.Actor, in signoff.CaseInput) (signoff.Case, error) {
	if err := signoff.CheckID("project", signoff.PrefixProject, in.ProjectID); err != nil {
		return signoff.Case{}, err
	}
	table, err := workflow.For(in.Kind)
	if err != nil {
		return signoff.Case{}, err
	}
	// People open change requests, through the change desk; an agent
	// drafts plans for them but asks for no change on its own.
	if in.Kind == signoff.KindChange && by.Role.IsAgent() {
		return signoff.Case{}, signoff.Errorf(signoff.EFORBIDDEN, "an agent does not open change requests: people do, at POST /api/v1/projects/{id}/changes")
	}
	if err := signoff.CheckText("title", in.Title, true, 300); err != nil {
		return signoff.Case{}, err
	}
	if in.ReporterID != "" {
		if err := signoff.CheckID("reporter", signoff.PrefixActor, in.ReporterID); err != nil {
			return signoff.Case{}, err
		}
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	c := signoff.Case{
		ID: signoff.NewID(signoff.PrefixCase), WorkspaceID: by.WorkspaceID, ProjectID: in.ProjectID, Kind: in.Kind,
		Title: in.Title, State: table.Initial, Version: 1, MaxFixAttempts: DefaultMaxFixAttempts,
		ReporterID: in.ReporterID, CreatedBy: by.ID, CreatedAt: now, UpdatedAt: now,
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getProject(ctx, tx, by.WorkspaceID, in.ProjectID); err != nil {
			return err
		}
		if c.ReporterID != "" {
			r, err := s.getActor(ctx, tx, by.WorkspaceID, c.ReporterID)
			if signoff.ErrorCode(err) == signoff.ENOTFOUND {
				return signoff.Errorf(signoff.EINVALID, "reporter_id does not name an actor of this workspace")
			} else if err != nil {
				return err
			}
			if r.Role != signoff.RoleReporter {
				return signoff.Errorf(signoff.EINVALID, "reporter_id names an actor with role %s, not a reporter", r.Role)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cases (id, workspace_id, project_id, kind, title, state, version, fix_attempts, max_fix_attempts, reporter_id, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
			c.ID, c.WorkspaceID, c.ProjectID, string(c.Kind), c.Title, c.State, c.Version, c.FixAttempts, c.MaxFixAttempts, c.ReporterID, c.CreatedBy, micros(now)); err != nil {
			return err
		}
		_, err := s.appendEvent(ctx, tx, c.WorkspaceID, c.ID, "case.created", by.ID, map[string]any{
			"project_id": c.ProjectID, "kind": string(c.Kind), "title": c.Title, "state": c.State, "version": c.Version, "reporter_id": c.ReporterID,
		})
		return err
	})
	if err != nil {
		return signoff.Case{}, fmt.Errorf("create case: %w", err)
	}
	return c, nil
}

const caseColumns = `id, workspace_id, project_id, kind, title, state, version, fix_attempts, max_fix_attempts, reporter_id, created_by, created_at, updated_at`

func scanCase(sc scanner, c *signoff.Case) error {
	var kind string
	var ca, ua int64
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.ProjectID, &kind, &c.Title, &c.State, &c.Version, &c.FixAttempts, &c.MaxFixAttempts, &c.ReporterID, &c.CreatedBy, &ca, &ua); err != nil {
		return err
	}
	c.Kind, c.CreatedAt, c.UpdatedAt = signoff.CaseKind(kind), fromMicros(ca), fromMicros(ua)
	return nil
}

// GetCase implements signoff.CaseService.
func (s *DB) GetCase(ctx context.Context, by signoff.Actor, id string) (signoff.Case, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, id); err != nil {
		return signoff.Case{}, err
	}
	return s.visibleCase(ctx, s.db, by, id)
}

// visibleCase reads a case as by may see it. A reporter sees only their own
// case; any other is as invisible to them as another workspace's, so the
// answer is the same ENOTFOUND.
func (s *DB) visibleCase(ctx context.Context, q queryer, by signoff.Actor, id string) (signoff.Case, error) {
	c, err := s.getCase(ctx, q, by.WorkspaceID, id)
	if err == nil && by.Role == signoff.RoleReporter && c.ReporterID != by.ID {
		return signoff.Case{}, signoff.Errorf(signoff.ENOTFOUND, "case not found")
	}
	return c, err
}

func (s *DB) getCase(ctx context.Context, q queryer, ws, id string) (signoff.Case, error) {
	var c signoff.Case
	err := scanCase(q.QueryRowContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE id = $1 AND workspace_id = $2`, id, ws), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return c, signoff.Errorf(signoff.ENOTFOUND, "case not found")
	} else if err != nil {
		return c, fmt.Errorf("get case %s: %w", id, err)
	}
	return c, nil
}

// ListCases implements signoff.CaseService. Ids start with their creation
// time, so ordering by id gives newest first and the last id of a page is a
// stable cursor even while cases are added.
func (s *DB) ListCases(ctx context.Context, ws string, f signoff.CaseFilter) (signoff.CasePage, error) {
	q := strings.Builder{}
	q.WriteString(`SELECT ` + caseColumns + ` FROM cases WHERE workspace_id = $1`)
	args := []any{ws}
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&q, " AND %s $%d", cond, len(args))
	}
	if f.ProjectID != "" {
		if err := signoff.CheckID("project", signoff.PrefixProject, f.ProjectID); err != nil {
			return signoff.CasePage{}, err
		}
		add("project_id =", f.ProjectID)
	}
	if f.Kind != "" {
		if !f.Kind.Valid() {
			return signoff.CasePage{}, signoff.Errorf(signoff.EINVALID, "unknown kind %q", f.Kind)
		}
		add("kind =", string(f.Kind))
	}
	if f.State != "" {
		if !workflow.Bug.IsState(f.State) && !workflow.Change.IsState(f.State) {
			return signoff.CasePage{}, signoff.Errorf(signoff.EINVALID, "unknown state %q", f.State)
		}
		add("state =", f.State)
	}
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return signoff.CasePage{}, err
		}
		add("id <", after)
	}
	limit := clampLimit(f.Limit)
	args = append(args, limit+1)
	fmt.Fprintf(&q, " ORDER BY id DESC LIMIT $%d", len(args))
	cases, err := queryAll(ctx, s.db, scanCase, q.String(), args...)
	if err != nil {
		return signoff.CasePage{}, fmt.Errorf("list cases: %w", err)
	}
	page := signoff.CasePage{Cases: cases}
	if len(page.Cases) > limit {
		page.Cases = page.Cases[:limit]
		page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(page.Cases[limit-1].ID))
	}
	return page, nil
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !signoff.ValidID(signoff.PrefixCase, string(b)) {
		return "", signoff.Errorf(signoff.EINVALID, "invalid cursor")
	}
	return string(b), nil
}

// errLostRace marks an optimistic update that found the case moved on.
var errLostRace = errors.New("case version changed concurrently")

// TransitionCase implements signoff.CaseService. It reads the case, asks the
// transition table, and writes the new state only if the version it read is
// still current; a lost race re-reads (and so re-validates) with backoff, up
// to a bound, and then answers ECONFLICT rather than overwrite.
func (s *DB) TransitionCase(ctx context.Context, by signoff.Actor, id string, in signoff.TransitionInput) (signoff.Case, signoff.Event, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, id); err != nil {
		return signoff.Case{}, signoff.Event{}, err
	}
	if err := signoff.CheckText("note", in.Note, false, 4000); err != nil {
		return signoff.Case{}, signoff.Event{}, err
	}
	for attempt := 0; ; attempt++ {
		c, e, err := s.transitionOnce(ctx, by, id, in)
		if !errors.Is(err, errLostRace) {
			if err != nil {
				return c, e, fmt.Errorf("transition %s %s: %w", id, in.Command, err)
			}
			return c, e, nil
		}
		if attempt >= s.retries {
			cur, _ := s.getCase(ctx, s.db, by.WorkspaceID, id)
			return signoff.Case{}, signoff.Event{}, &signoff.Error{Code: signoff.ECONFLICT, State: cur.State,
				Message: fmt.Sprintf("case %s kept changing under concurrent updates; re-read and retry", id)}
		}
		if err := backoff(ctx, attempt); err != nil {
			return signoff.Case{}, signoff.Event{}, err
		}
	}
}

func (s *DB) transitionOnce(ctx context.Context, by signoff.Actor, id string, in signoff.TransitionInput) (signoff.Case, signoff.Event, error) {
	var c signoff.Case
	var e signoff.Event
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = s.visibleCase(ctx, tx, by, id); err != nil {
			return err
		}
		// Approve, merge, execute and confirm do not exist for agents, in any
		// state or version: the answer is the same refusal whatever the case
		// is doing.
		if by.Role.IsAgent() && workflow.HumanOnly(in.Command) {
			return signoff.Errorf(signoff.EFORBIDDEN, "agents may not %s", in.Command)
		}
		// Decisions are applied by the services that verify a signed
		// approval or the reporter's capability (later capabilities), never
		// through this generic path, whoever asks.
		// The bug loop's steps carry their evidence and happen only on
		// AdvanceLoop, called by the bug desk.
		if c.Kind == signoff.KindBug && workflow.LoopStep(in.Command) {
			return signoff.Errorf(signoff.EFORBIDDEN, "%s is a step of the bug loop and carries its evidence: it happens on the loop's own paths (reproduce, candidates, verification, deployments), never as a bare transition", in.Command)
		}
		// A change case moves only through AdvanceChange: every step of
		// the change loop carries its plan, review, approvals or receipt,
		// which the change desk checks (and the gate) before it asks.
		if c.Kind == signoff.KindChange {
			return signoff.Errorf(signoff.EFORBIDDEN, "a change moves only through the change desk (plan, review, approval, the gate), never as a bare transition: %s refused", in.Command)
		}
		if workflow.Decision(in.Command) {
			return signoff.Errorf(signoff.EFORBIDDEN, "%s is a decision over an exact digest: it is given as a signed approval (or, for a reporter, on their tracking page), never as a transition by id", in.Command)
		}
		// An agent moves a case only on its open task there, and never
		// out of a state a person's decision produced.
		if err := s.agentMayChange(ctx, tx, by, c, in.Command); err != nil {
			return err
		}
		if in.ExpectedVersion != nil && *in.ExpectedVersion != c.Version {
			return &signoff.Error{Code: signoff.ECONFLICT, State: c.State,
				Message: fmt.Sprintf("case is at version %d, not %d", c.Version, *in.ExpectedVersion)}
		}
		c, e, err = s.applyTransition(ctx, tx, by, c, in.Command, in.Note)
		return err
	})
	return c, e, err
}

// applyTransition moves c by command through its transition table inside
// tx, as by, and appends the ledger event. Callers have already decided
// that by may send command on this path.
func (s *DB) applyTransition(ctx context.Context, tx *sql.Tx, by signoff.Actor, c signoff.Case, command, note string) (signoff.Case, signoff.Event, error) {
	table, err := workflow.For(c.Kind)
	if err != nil {
		return c, signoff.Event{}, err
	}
	facts := workflow.Facts{FixAttempts: c.FixAttempts, MaxFixAttempts: c.MaxFixAttempts}
	tr, err := table.Next(c.State, command, by.Role, facts)
	if err != nil {
		return c, signoff.Event{}, err
	}
	if tr.Effect != nil {
		facts = tr.Effect(facts)
	}
	from := c.State
	now := s.now().UTC().Truncate(time.Microsecond)
	res, err := tx.ExecContext(ctx, `UPDATE cases SET state = $1, version = version + 1, fix_attempts = $2, updated_at = $3
		WHERE id = $4 AND workspace_id = $5 AND version = $6`, tr.To, facts.FixAttempts, micros(now), c.ID, c.WorkspaceID, c.Version)
	if err != nil {
		return c, signoff.Event{}, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return c, signoff.Event{}, err
	} else if n == 0 {
		return c, signoff.Event{}, errLostRace
	}
	c.State, c.Version, c.FixAttempts, c.UpdatedAt = tr.To, c.Version+1, facts.FixAttempts, now
	e, err := s.appendEvent(ctx, tx, c.WorkspaceID, c.ID, "case.transitioned", by.ID, map[string]any{
		"command": command, "from": from, "to": tr.To, "version": c.Version, "role": string(by.Role),
		"note": note, "fix_attempts": c.FixAttempts,
	})
	if err != nil {
		return c, e, err
	}
	// A ticketed bug goes on to reproduction, whoever ticketed it (the
	// triage crew, a person at the gate, an operator): the job is part of
	// the same transaction, so it exists exactly when the ticket does.
	// A person resuming a case from needs_human restarts the step's job
	// the same way.
	if c.Kind == signoff.KindBug {
		switch {
		case tr.To == workflow.BugTicketed || command == "resume_reproduction":
			err = s.enqueue(ctx, tx, signoff.ReproduceJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Version: c.Version})
		case command == "resume_fix":
			err = s.enqueue(ctx, tx, signoff.FixJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Attempt: c.FixAttempts + 1, Version: c.Version})
		case command == "provide_info" || command == "resume_triage":
			// Back to triage, through any door (the reporter's answer,
			// an operator, the API): triage runs again at this version.
			err = s.enqueue(ctx, tx, signoff.TriageJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Version: c.Version})
		}
	}
	return c, e, err
}
