package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

// emptyObject is the input of a task opened without one.
var emptyObject = json.RawMessage(`{}`)

const taskColumns = `id, workspace_id, case_id, kind, role, assignee_id, input, input_digest, status, outcome, reason,
	output, output_digest, evidence, parent_id, created_by, created_at, updated_at, closed_at, receipt_seq`

func scanTask(sc scanner, t *signoff.Task) error {
	var role, input string
	var output sql.NullString
	var ca, ua int64
	var closed sql.NullInt64
	if err := sc.Scan(&t.ID, &t.WorkspaceID, &t.CaseID, &t.Kind, &role, &t.AssigneeID, &input, &t.InputDigest, &t.Status, &t.Outcome, &t.Reason,
		&output, &t.OutputDigest, &t.Evidence, &t.ParentID, &t.CreatedBy, &ca, &ua, &closed, &t.ReceiptSeq); err != nil {
		return err
	}
	t.Role, t.Input, t.CreatedAt, t.UpdatedAt, t.ClosedAt = signoff.Role(role), json.RawMessage(input), fromMicros(ca), fromMicros(ua), timePtr(closed)
	if output.Valid {
		t.Output = json.RawMessage(output.String)
	}
	return nil
}

func (s *DB) getTask(ctx context.Context, q queryer, ws, id string) (signoff.Task, error) {
	var t signoff.Task
	err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1 AND workspace_id = $2`, id, ws), &t)
	if errors.Is(err, sql.ErrNoRows) {
		return t, signoff.Errorf(signoff.ENOTFOUND, "task not found")
	} else if err != nil {
		return t, fmt.Errorf("get task %s: %w", id, err)
	}
	return t, nil
}

// visibleTask reads a task as by may see it: people of the workspace (and
// the server) see every task, an agent only its own (another's answers
// ENOTFOUND, as if it did not exist), a reporter none.
func (s *DB) visibleTask(ctx context.Context, q queryer, by signoff.Actor, id string) (signoff.Task, error) {
	if !isStaff(by) && !by.Role.IsAgent() {
		return signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read tasks", by.Role)
	}
	if err := signoff.CheckID("task", signoff.PrefixTask, id); err != nil {
		return signoff.Task{}, err
	}
	t, err := s.getTask(ctx, q, by.WorkspaceID, id)
	if err == nil && by.Role.IsAgent() && t.AssigneeID != by.ID {
		return signoff.Task{}, signoff.Errorf(signoff.ENOTFOUND, "task not found")
	}
	return t, err
}

// pickAssignee returns the agent a task for role goes to: the named one,
// which must be an enabled agent of that role in ws, or else the role's only
// enabled agent.
func (s *DB) pickAssignee(ctx context.Context, tx *sql.Tx, ws string, role signoff.Role, id string) (signoff.Actor, error) {
	if !role.IsAgent() {
		return signoff.Actor{}, signoff.Errorf(signoff.EINVALID, "role %q is not an agent role", role)
	}
	if id != "" {
		a, err := s.getActor(ctx, tx, ws, id)
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return a, signoff.Errorf(signoff.ENOTFOUND, "assignee not found")
		} else if err != nil {
			return a, err
		}
		if a.Role != role {
			return a, signoff.Errorf(signoff.EINVALID, "assignee %s has role %s, not %s", a.ID, a.Role, role)
		}
		if a.DisabledAt != nil {
			return a, signoff.Errorf(signoff.ECONFLICT, "assignee %s is disabled", a.ID)
		}
		return a, nil
	}
	list, err := queryAll(ctx, tx, scanActor, `SELECT `+actorColumns+` FROM actors
		WHERE workspace_id = $1 AND role = $2 AND disabled_at IS NULL ORDER BY id LIMIT 10`, ws, string(role))
	if err != nil {
		return signoff.Actor{}, fmt.Errorf("pick %s agent: %w", role, err)
	}
	switch len(list) {
	case 0:
		return signoff.Actor{}, signoff.Errorf(signoff.ENOTFOUND, "the workspace has no enabled %s agent", role)
	case 1:
		return list[0], nil
	}
	names := make([]string, len(list))
	for i, a := range list {
		names[i] = fmt.Sprintf("%s (%s)", a.Name, a.ID)
	}
	return signoff.Actor{}, signoff.Errorf(signoff.ECONFLICT, "several %s agents (%s): name the assignee", role, strings.Join(names, ", "))
}

func (s *DB) insertTask(ctx context.Context, tx *sql.Tx, t signoff.Task) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, workspace_id, case_id, kind, role, assignee_id, input, input_digest, status, parent_id, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
		t.ID, t.WorkspaceID, t.CaseID, t.Kind, string(t.Role), t.AssigneeID, string(t.Input), t.InputDigest, t.Status, t.ParentID, t.CreatedBy, micros(t.CreatedAt))
	return err
}

func taskCreated(t signoff.Task) EventInput {
	return EventInput{CaseID: t.CaseID, Type: "task.created", ActorID: t.CreatedBy, Payload: map[string]any{
		"task_id": t.ID, "kind": t.Kind, "role": string(t.Role), "assignee_id": t.AssigneeID,
		"input_digest": t.InputDigest, "parent_id": t.ParentID,
	}}
}

// newTask builds an open task; the input must already be canonical.
func (s *DB) newTask(ws, caseID, kind string, assignee signoff.Actor, input []byte, digest, parent, by string, now time.Time) signoff.Task {
	return signoff.Task{
		ID: signoff.NewID(signoff.PrefixTask), WorkspaceID: ws, CaseID: caseID, Kind: kind, Role: assignee.Role,
		AssigneeID: assignee.ID, Input: input, InputDigest: digest, Status: signoff.TaskOpen, ParentID: parent,
		CreatedBy: by, CreatedAt: now, UpdatedAt: now,
	}
}

func (s *DB) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// CreateTask implements signoff.TaskService.
func (s *DB) CreateTask(ctx context.Context, by signoff.Actor, in signoff.TaskInput) (signoff.Task, error) {
	if !canIssue(by) {
		return signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not create tasks", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, in.CaseID); err != nil {
		return signoff.Task{}, err
	}
	if err := checkToken("kind", in.Kind); err != nil {
		return signoff.Task{}, err
	}
	if !in.Role.IsAgent() {
		return signoff.Task{}, signoff.Errorf(signoff.EINVALID, "role %q is not an agent role", in.Role)
	}
	if in.AssigneeID != "" {
		if err := signoff.CheckID("assignee", signoff.PrefixActor, in.AssigneeID); err != nil {
			return signoff.Task{}, err
		}
	}
	input, digest, err := canonicalJSON("input", in.Input, maxTaskJSON, true, emptyObject)
	if err != nil {
		return signoff.Task{}, err
	}
	var t signoff.Task
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getCase(ctx, tx, by.WorkspaceID, in.CaseID); err != nil {
			return err
		}
		a, err := s.pickAssignee(ctx, tx, by.WorkspaceID, in.Role, in.AssigneeID)
		if err != nil {
			return err
		}
		t = s.newTask(by.WorkspaceID, in.CaseID, in.Kind, a, input, digest, "", by.ID, s.clock())
		if err := s.insertTask(ctx, tx, t); err != nil {
			return err
		}
		_, err = s.appendEvents(ctx, tx, t.WorkspaceID, []EventInput{taskCreated(t)})
		return err
	})
	if err != nil {
		return signoff.Task{}, fmt.Errorf("create task: %w", err)
	}
	return t, nil
}

// GetTask implements signoff.TaskService.
func (s *DB) GetTask(ctx context.Context, by signoff.Actor, id string) (signoff.Task, error) {
	return s.visibleTask(ctx, s.db, by, id)
}

// ListTasks implements signoff.TaskService.
func (s *DB) ListTasks(ctx context.Context, by signoff.Actor, f signoff.TaskFilter) ([]signoff.Task, error) {
	if !isStaff(by) && !by.Role.IsAgent() {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read tasks", by.Role)
	}
	q := strings.Builder{}
	q.WriteString(`SELECT ` + taskColumns + ` FROM tasks WHERE workspace_id = $1`)
	args := []any{by.WorkspaceID}
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&q, " AND %s $%d", cond, len(args))
	}
	if by.Role.IsAgent() {
		add("assignee_id =", by.ID)
	}
	if f.AssigneeID != "" {
		if err := signoff.CheckID("assignee", signoff.PrefixActor, f.AssigneeID); err != nil {
			return nil, err
		}
		add("assignee_id =", f.AssigneeID)
	}
	if f.Status != "" {
		if f.Status != signoff.TaskOpen && f.Status != signoff.TaskRecorded && f.Status != signoff.TaskClosed {
			return nil, signoff.Errorf(signoff.EINVALID, "unknown task status %q", f.Status)
		}
		add("status =", f.Status)
	}
	if f.CaseID != "" {
		if err := signoff.CheckID("case", signoff.PrefixCase, f.CaseID); err != nil {
			return nil, err
		}
		add("case_id =", f.CaseID)
	}
	if f.Role != "" {
		if !f.Role.IsAgent() {
			return nil, signoff.Errorf(signoff.EINVALID, "role %q is not an agent role", f.Role)
		}
		add("role =", string(f.Role))
	}
	args = append(args, clampLimit(f.Limit))
	fmt.Fprintf(&q, " ORDER BY id DESC LIMIT $%d", len(args))
	out, err := queryAll(ctx, s.db, scanTask, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// checkReceipt is the receipt check: the task is assigned to by, is in
// status want, and still has the input digest the caller quotes.
func checkReceipt(by signoff.Actor, t signoff.Task, digest, want string) error {
	if t.AssigneeID != by.ID {
		return signoff.Errorf(signoff.EFORBIDDEN, "task is assigned to another identity")
	}
	if t.Status != want {
		switch t.Status {
		case signoff.TaskRecorded:
			return signoff.Errorf(signoff.ECONFLICT, "task is recorded: its result was already submitted, and a receipt is good once")
		case signoff.TaskClosed:
			return signoff.Errorf(signoff.ECONFLICT, "task is closed (%s)", t.Outcome)
		default:
			return signoff.Errorf(signoff.ECONFLICT, "task is %s: submit its result before handing off", t.Status)
		}
	}
	if t.InputDigest != digest {
		return signoff.Errorf(signoff.ECONFLICT, "inputs changed since the task was read: re-read the task and work from its current input")
	}
	return nil
}

// lostRace re-reads a task whose guarded update matched nothing and says
// why; the guard failed, so something must differ.
func (s *DB) lostRace(ctx context.Context, tx *sql.Tx, by signoff.Actor, t signoff.Task, digest, want string) error {
	cur, err := s.getTask(ctx, tx, t.WorkspaceID, t.ID)
	if err != nil {
		return err
	}
	if err := checkReceipt(by, cur, digest, want); err != nil {
		return err
	}
	return signoff.Errorf(signoff.ECONFLICT, "task changed concurrently; re-read it")
}

// SubmitTask implements signoff.TaskService. The update is guarded by the
// status and digest it checked, so of two concurrent submissions of one
// receipt exactly one lands; the other sees a recorded task.
func (s *DB) SubmitTask(ctx context.Context, by signoff.Actor, sub signoff.Submission) (signoff.Task, error) {
	if err := signoff.CheckID("task", signoff.PrefixTask, sub.TaskID); err != nil {
		return signoff.Task{}, err
	}
	if err := checkDigest("input_digest", sub.InputDigest); err != nil {
		return signoff.Task{}, err
	}
	if !signoff.ValidEvidence(sub.Evidence) {
		return signoff.Task{}, signoff.Errorf(signoff.EINVALID, "evidence must be live, replayed, authored or simulated")
	}
	output, outDigest, err := canonicalJSON("output", sub.Output, maxTaskJSON, true, nil)
	if err != nil {
		return signoff.Task{}, err
	}
	var t signoff.Task
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.getTask(ctx, tx, by.WorkspaceID, sub.TaskID); err != nil {
			return err
		}
		if err := checkReceipt(by, t, sub.InputDigest, signoff.TaskOpen); err != nil {
			return err
		}
		now := s.clock()
		status, outcome, closed := signoff.TaskRecorded, "", (*time.Time)(nil)
		if sub.Final {
			status, outcome, closed = signoff.TaskClosed, signoff.OutcomeDone, &now
		}
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = $1, outcome = $2, output = $3, output_digest = $4, evidence = $5, updated_at = $6, closed_at = $7
			WHERE id = $8 AND workspace_id = $9 AND status = 'open' AND input_digest = $10 AND assignee_id = $11`,
			status, outcome, string(output), outDigest, sub.Evidence, micros(now), nullMicros(closed), t.ID, t.WorkspaceID, sub.InputDigest, by.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return s.lostRace(ctx, tx, by, t, sub.InputDigest, signoff.TaskOpen)
		}
		ev, err := s.appendEvent(ctx, tx, t.WorkspaceID, t.CaseID, "task.recorded", by.ID, map[string]any{
			"task_id": t.ID, "input_digest": t.InputDigest, "output_digest": outDigest, "evidence": sub.Evidence,
			"status": status, "outcome": outcome,
		})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET receipt_seq = $1 WHERE id = $2`, ev.Seq, t.ID); err != nil {
			return err
		}
		t.Status, t.Outcome, t.Output, t.OutputDigest, t.Evidence, t.UpdatedAt, t.ClosedAt, t.ReceiptSeq = status, outcome, output, outDigest, sub.Evidence, now, closed, ev.Seq
		return nil
	})
	if err != nil {
		return signoff.Task{}, fmt.Errorf("submit task %s: %w", sub.TaskID, err)
	}
	return t, nil
}

// HandoffTask implements signoff.TaskService.
func (s *DB) HandoffTask(ctx context.Context, by signoff.Actor, h signoff.Handoff) (signoff.Task, signoff.Task, error) {
	if err := signoff.CheckID("task", signoff.PrefixTask, h.TaskID); err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	if err := checkDigest("input_digest", h.InputDigest); err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	if !h.To.IsAgent() {
		return signoff.Task{}, signoff.Task{}, signoff.Errorf(signoff.EINVALID, "handoff target %q is not an agent role", h.To)
	}
	if err := checkProse("reason", h.Reason, false, maxReason); err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	kind := h.Kind
	if kind == "" {
		kind = "handoff"
	}
	if err := checkToken("kind", kind); err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	def, err := json.Marshal(map[string]string{"from_task": h.TaskID, "reason": h.Reason})
	if err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	input, digest, err := canonicalJSON("input", h.Input, maxTaskJSON, true, def)
	if err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	var closed, next signoff.Task
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if closed, err = s.getTask(ctx, tx, by.WorkspaceID, h.TaskID); err != nil {
			return err
		}
		if err := checkReceipt(by, closed, h.InputDigest, signoff.TaskRecorded); err != nil {
			return err
		}
		a, err := s.pickAssignee(ctx, tx, by.WorkspaceID, h.To, "")
		if err != nil {
			return err
		}
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = 'closed', outcome = $1, reason = $2, updated_at = $3, closed_at = $3
			WHERE id = $4 AND workspace_id = $5 AND status = 'recorded' AND input_digest = $6 AND assignee_id = $7`,
			signoff.OutcomeHandedOff, h.Reason, micros(now), closed.ID, closed.WorkspaceID, h.InputDigest, by.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return s.lostRace(ctx, tx, by, closed, h.InputDigest, signoff.TaskRecorded)
		}
		closed.Status, closed.Outcome, closed.Reason, closed.UpdatedAt, closed.ClosedAt = signoff.TaskClosed, signoff.OutcomeHandedOff, h.Reason, now, &now
		next = s.newTask(closed.WorkspaceID, closed.CaseID, kind, a, input, digest, closed.ID, by.ID, now)
		if err := s.insertTask(ctx, tx, next); err != nil {
			return err
		}
		_, err = s.appendEvents(ctx, tx, closed.WorkspaceID, []EventInput{
			{CaseID: closed.CaseID, Type: "task.handed_off", ActorID: by.ID, Payload: map[string]any{
				"task_id": closed.ID, "to": string(h.To), "reason": h.Reason, "next_task_id": next.ID, "input_digest": closed.InputDigest,
			}},
			taskCreated(next),
		})
		return err
	})
	if err != nil {
		return signoff.Task{}, signoff.Task{}, fmt.Errorf("hand off task %s: %w", h.TaskID, err)
	}
	return closed, next, nil
}

// CloseTask implements signoff.TaskService.
func (s *DB) CloseTask(ctx context.Context, by signoff.Actor, id, outcome, reason string) (signoff.Task, error) {
	agent := by.Role.IsAgent()
	if !agent && !canIssue(by) {
		return signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not close tasks", by.Role)
	}
	if err := signoff.CheckID("task", signoff.PrefixTask, id); err != nil {
		return signoff.Task{}, err
	}
	if outcome != signoff.OutcomeNeedsHuman && outcome != signoff.OutcomeCancelled {
		return signoff.Task{}, signoff.Errorf(signoff.EINVALID, "outcome must be needs_human or cancelled")
	}
	if agent && outcome != signoff.OutcomeNeedsHuman {
		return signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN, "an agent may only give its own task up (needs_human), not cancel it")
	}
	if err := checkProse("reason", reason, true, maxReason); err != nil {
		return signoff.Task{}, err
	}
	var t signoff.Task
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.getTask(ctx, tx, by.WorkspaceID, id); err != nil {
			return err
		}
		if agent && t.AssigneeID != by.ID {
			return signoff.Errorf(signoff.ENOTFOUND, "task not found")
		}
		if t.Status == signoff.TaskClosed {
			return signoff.Errorf(signoff.ECONFLICT, "task is already closed (%s)", t.Outcome)
		}
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET status = 'closed', outcome = $1, reason = $2, updated_at = $3, closed_at = $3
			WHERE id = $4 AND workspace_id = $5 AND status IN ('open', 'recorded')`, outcome, reason, micros(now), t.ID, t.WorkspaceID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return signoff.Errorf(signoff.ECONFLICT, "task is already closed")
		}
		from := t.Status
		t.Status, t.Outcome, t.Reason, t.UpdatedAt, t.ClosedAt = signoff.TaskClosed, outcome, reason, now, &now
		_, err = s.appendEvent(ctx, tx, t.WorkspaceID, t.CaseID, "task.closed", by.ID, map[string]any{
			"task_id": t.ID, "from": from, "outcome": outcome, "reason": reason,
		})
		return err
	})
	if err != nil {
		return signoff.Task{}, fmt.Errorf("close task %s: %w", id, err)
	}
	return t, nil
}

// UpdateTaskInput implements signoff.TaskService.
func (s *DB) UpdateTaskInput(ctx context.Context, by signoff.Actor, id string, input json.RawMessage) (signoff.Task, error) {
	if !canIssue(by) {
		return signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not change a task's input", by.Role)
	}
	if err := signoff.CheckID("task", signoff.PrefixTask, id); err != nil {
		return signoff.Task{}, err
	}
	in, digest, err := canonicalJSON("input", input, maxTaskJSON, true, nil)
	if err != nil {
		return signoff.Task{}, err
	}
	var t signoff.Task
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if t, err = s.getTask(ctx, tx, by.WorkspaceID, id); err != nil {
			return err
		}
		if t.Status != signoff.TaskOpen {
			return signoff.Errorf(signoff.ECONFLICT, "task is %s: only an open task's input can change", t.Status)
		}
		if t.InputDigest == digest {
			return nil // nothing changes, nothing to record
		}
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET input = $1, input_digest = $2, updated_at = $3 WHERE id = $4 AND workspace_id = $5 AND status = 'open'`,
			string(in), digest, micros(now), t.ID, t.WorkspaceID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return signoff.Errorf(signoff.ECONFLICT, "task is no longer open")
		}
		prev := t.InputDigest
		t.Input, t.InputDigest, t.UpdatedAt = in, digest, now
		_, err = s.appendEvent(ctx, tx, t.WorkspaceID, t.CaseID, "task.input_updated", by.ID, map[string]any{
			"task_id": t.ID, "previous_digest": prev, "input_digest": digest,
		})
		return err
	})
	if err != nil {
		return signoff.Task{}, fmt.Errorf("update task %s input: %w", id, err)
	}
	return t, nil
}
