package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// Limits of the change desk's records, in bytes unless said otherwise.
const (
	maxChangeState    = 1 << 20   // a loop's state holds its current review
	maxPlanBody       = 1 << 20   // a plan's canonical JSON (a file change carries the file)
	maxReceiptJSON    = 256 << 10 // one receipt's DSSE envelope
	maxChangeReceipts = 8         // receipts per update
	maxLockTTL        = 24 * time.Hour
)

// Ways a plan is drafted (signoff.ChangePlan.Via).
var planVia = map[string]bool{"builtin": true, "model": true, "mcp": true, "human": true, "rollback": true}

// Receipt kinds.
var receiptKinds = map[string]bool{signoff.ReceiptExecute: true, signoff.ReceiptRollback: true, signoff.ReceiptBypass: true}

// changeEventsReserved are the event types the store writes itself, on
// top of the bug loop's (loopEventsReserved): a change update may not pass
// one off as its own.
var changeEventsReserved = map[string]bool{
	"change.updated": true, "change.policy_set": true,
	"flag.created": true, "flag.set": true, "flag_key.created": true, "flag_key.revoked": true,
	"evidence.stored": true, "decision.requested": true, "decision.approved": true, "decision.rejected": true,
	"decision.expired": true, "decision.superseded": true, "task.created": true, "task.recorded": true,
	"task.closed": true, "task.handed_off": true, "task.input_updated": true, "report.received": true,
	"reporter.answered": true, "message.posted": true, "agent.call": true, "actor.created": true,
	"token.created": true, "token.revoked": true, "workspace.created": true, "workspace.renamed": true,
	"project.created": true, "project.updated": true, "triage.started": true, "triage.updated": true,
}

func checkChangeReader(by signoff.Actor) error {
	if by.Role == signoff.RoleReporter {
		return signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read change records")
	}
	return nil
}

// canAdvanceChange reports whether by may write change loops: the server
// (the gate, the scheduler, the CLI), the people who run the desk, and the
// planner agent, whose plans the desk stores. Which command each may send
// is the transition table's; agents never send a human-only one.
func canAdvanceChange(by signoff.Actor) bool {
	switch by.Role {
	case signoff.RoleOwner, signoff.RoleOperator, signoff.RolePlanner:
		return true
	}
	return isServer(by)
}

// checkJSONObject returns EINVALID unless raw is a JSON object of at most
// max bytes.
func checkJSONObject(what string, raw json.RawMessage, max int) error {
	if len(raw) == 0 {
		return signoff.Errorf(signoff.EINVALID, "%s is required", what)
	}
	if len(raw) > max {
		return signoff.Errorf(signoff.EINVALID, "%s is larger than %d bytes", what, max)
	}
	if !json.Valid(raw) || !strings.HasPrefix(strings.TrimLeft(string(raw), " \t\r\n"), "{") {
		return signoff.Errorf(signoff.EINVALID, "%s must be a JSON object", what)
	}
	return nil
}

// checkProposer accepts an actor id, or the server or the CLI.
func checkProposer(p string) error {
	if p == systemActorID || p == cliActorID || signoff.ValidID(signoff.PrefixActor, p) {
		return nil
	}
	return signoff.Errorf(signoff.EINVALID, "plan proposer must be an actor id, %q or %q", systemActorID, cliActorID)
}

func checkPlan(u signoff.ChangeUpdate) error {
	p := u.Plan
	if err := signoff.CheckID("plan", signoff.PrefixPlan, p.ID); err != nil {
		return err
	}
	if p.CaseID != u.CaseID {
		return signoff.Errorf(signoff.EINVALID, "plan %s is for case %q, not %s", p.ID, p.CaseID, u.CaseID)
	}
	if err := checkJSONObject("plan body", p.Body, maxPlanBody); err != nil {
		return err
	}
	if err := checkDigest("plan digest", p.Digest); err != nil {
		return err
	}
	if err := checkProposer(p.Proposer); err != nil {
		return err
	}
	if !planVia[p.Via] {
		return signoff.Errorf(signoff.EINVALID, "plan via must be builtin, model, mcp, human or rollback, not %q", p.Via)
	}
	if u.State.PlanID != p.ID || u.State.PlanDigest != p.Digest {
		return signoff.Errorf(signoff.EINVALID, "the state must name the new plan: plan_id %s and plan_digest %s", p.ID, p.Digest)
	}
	return nil
}

func checkChangeReceipt(u signoff.ChangeUpdate, r signoff.Receipt) error {
	if err := signoff.CheckID("receipt", signoff.PrefixReceipt, r.ID); err != nil {
		return err
	}
	if r.CaseID != u.CaseID {
		return signoff.Errorf(signoff.EINVALID, "receipt %s is for case %q, not %s", r.ID, r.CaseID, u.CaseID)
	}
	if !receiptKinds[r.Kind] {
		return signoff.Errorf(signoff.EINVALID, "receipt kind must be %s, %s or %s, not %q", signoff.ReceiptExecute, signoff.ReceiptRollback, signoff.ReceiptBypass, r.Kind)
	}
	if err := checkJSONObject("receipt envelope", r.Envelope, maxReceiptJSON); err != nil {
		return err
	}
	return checkDigest("receipt digest", r.Digest)
}

// checkChangeUpdate validates u before any transaction and returns the
// canonical state, its digest and the events' canonical payloads.
func checkChangeUpdate(u signoff.ChangeUpdate) (state []byte, digest string, payloads []json.RawMessage, err error) {
	fail := func(err error) ([]byte, string, []json.RawMessage, error) { return nil, "", nil, err }
	if err := checkUpdateHead(u.CaseID, u.Version, u.Note); err != nil {
		return fail(err)
	}
	if u.Command != "" && !slices.Contains(workflow.Change.Commands(), u.Command) {
		return fail(signoff.Errorf(signoff.EINVALID, "unknown change command %q", u.Command))
	}
	if err := checkConsumeIDs(u.Consume); err != nil {
		return fail(err)
	}
	if u.Plan != nil {
		if err := checkPlan(u); err != nil {
			return fail(err)
		}
	}
	if u.State.PlanID != "" {
		if err := signoff.CheckID("state plan", signoff.PrefixPlan, u.State.PlanID); err != nil {
			return fail(err)
		}
		if err := checkDigest("state plan_digest", u.State.PlanDigest); err != nil {
			return fail(err)
		}
	}
	if len(u.Receipts) > maxChangeReceipts {
		return fail(signoff.Errorf(signoff.EINVALID, "an update stores at most %d receipts", maxChangeReceipts))
	}
	for i, r := range u.Receipts {
		if err := checkChangeReceipt(u, r); err != nil {
			return fail(err)
		}
		for _, o := range u.Receipts[:i] {
			if o.ID == r.ID {
				return fail(signoff.Errorf(signoff.EINVALID, "receipt %s is listed twice", r.ID))
			}
		}
	}
	if u.Revert != "" {
		if err := signoff.CheckID("revert", signoff.PrefixCase, u.Revert); err != nil {
			return fail(err)
		}
		if u.Revert == u.CaseID {
			return fail(signoff.Errorf(signoff.EINVALID, "a change does not revert itself"))
		}
		if u.State.RevertOf != u.Revert {
			return fail(signoff.Errorf(signoff.EINVALID, "only the compensating change of %s reverts it: state revert_of is %q", u.Revert, u.State.RevertOf))
		}
	}
	if payloads, err = checkLoopEvents(u.Events, changeEventsReserved); err != nil {
		return fail(err)
	}
	if err := checkLoopJobs(u.Jobs); err != nil {
		return fail(err)
	}
	state, digest, err = encodeLoopState(u.State, maxChangeState)
	return state, digest, payloads, err
}

// ---- Policy ----

const policyColumns = `workspace_id, yaml, digest, version, updated_at, updated_by`

func scanPolicy(sc scanner, p *signoff.ChangePolicy) error {
	var ua int64
	if err := sc.Scan(&p.WorkspaceID, &p.YAML, &p.Digest, &p.Version, &ua, &p.UpdatedBy); err != nil {
		return err
	}
	p.UpdatedAt = fromMicros(ua)
	return nil
}

// GetChangePolicy implements signoff.ChangeService.
func (s *DB) GetChangePolicy(ctx context.Context, by signoff.Actor) (signoff.ChangePolicy, error) {
	if err := checkChangeReader(by); err != nil {
		return signoff.ChangePolicy{}, err
	}
	return s.getChangePolicy(ctx, s.db, by.WorkspaceID)
}

func (s *DB) getChangePolicy(ctx context.Context, q queryer, ws string) (signoff.ChangePolicy, error) {
	var p signoff.ChangePolicy
	err := scanPolicy(q.QueryRowContext(ctx, `SELECT `+policyColumns+` FROM change_policies WHERE workspace_id = $1`, ws), &p)
	if errors.Is(err, sql.ErrNoRows) {
		return p, signoff.Errorf(signoff.ENOTFOUND, "this workspace has no change policy")
	} else if err != nil {
		return p, fmt.Errorf("get change policy: %w", err)
	}
	return p, nil
}

// SetChangePolicy implements signoff.ChangeService. The write is guarded
// by the version replaced, and recorded in the ledger with the YAML and
// the digest digestOf (change.PolicyDigest) finds for it.
func (s *DB) SetChangePolicy(ctx context.Context, by signoff.Actor, yaml string, expectedVersion int64, digestOf signoff.PolicyDigester) (signoff.ChangePolicy, error) {
	if by.Role != signoff.RoleOwner && !isServer(by) {
		return signoff.ChangePolicy{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners set the change policy, not role %s", by.Role)
	}
	if expectedVersion < 0 {
		return signoff.ChangePolicy{}, signoff.Errorf(signoff.EINVALID, "expected_version must be the version replaced (0 when there is none)")
	}
	if err := checkProse("policy", yaml, false, 64<<10); err != nil {
		return signoff.ChangePolicy{}, err
	}
	if digestOf == nil {
		// Fail closed: a policy nobody parsed is never stored.
		return signoff.ChangePolicy{}, errors.New("set change policy: no parser for the policy")
	}
	digest, err := digestOf([]byte(yaml))
	if err != nil {
		return signoff.ChangePolicy{}, err
	}
	// The digest is what approvers sign and the gate compares: whatever
	// parser the caller handed in, only a lowercase hex SHA-256 is stored.
	if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return signoff.ChangePolicy{}, fmt.Errorf("set change policy: the parser gave %q, not a SHA-256 digest", digest)
	}
	now := s.clock()
	out := signoff.ChangePolicy{WorkspaceID: by.WorkspaceID, YAML: yaml, Digest: digest, Version: expectedVersion + 1, UpdatedAt: now, UpdatedBy: by.ID}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		prev := ""
		if expectedVersion == 0 {
			res, err := tx.ExecContext(ctx, `INSERT INTO change_policies (`+policyColumns+`) VALUES ($1, $2, $3, 1, $4, $5)
				ON CONFLICT (workspace_id) DO NOTHING`, out.WorkspaceID, out.YAML, out.Digest, micros(now), out.UpdatedBy)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				cur, err := s.getChangePolicy(ctx, tx, by.WorkspaceID)
				if err != nil {
					return err
				}
				return signoff.Errorf(signoff.ECONFLICT, "the change policy is already set (version %d); re-read it and replace that version", cur.Version)
			}
		} else {
			err := tx.QueryRowContext(ctx, `SELECT digest FROM change_policies WHERE workspace_id = $1 AND version = $2`+s.d.ForUpdate,
				by.WorkspaceID, expectedVersion).Scan(&prev)
			if errors.Is(err, sql.ErrNoRows) {
				cur, err := s.getChangePolicy(ctx, tx, by.WorkspaceID)
				if err != nil {
					return signoff.Errorf(signoff.ECONFLICT, "there is no change policy to replace at version %d (none is set: use version 0)", expectedVersion)
				}
				return signoff.Errorf(signoff.ECONFLICT, "the change policy is at version %d, not %d; re-read it and retry", cur.Version, expectedVersion)
			} else if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `UPDATE change_policies SET yaml = $1, digest = $2, version = version + 1, updated_at = $3, updated_by = $4
				WHERE workspace_id = $5 AND version = $6`, out.YAML, out.Digest, micros(now), out.UpdatedBy, by.WorkspaceID, expectedVersion)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return signoff.Errorf(signoff.ECONFLICT, "the change policy changed concurrently; re-read it and retry")
			}
		}
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "change.policy_set", by.ID, map[string]any{
			"version": out.Version, "digest": out.Digest, "previous_digest": prev, "yaml": out.YAML,
		}); err != nil {
			return err
		}
		return s.voidApprovalsOfOtherPolicies(ctx, tx, by, out.Digest)
	})
	if err != nil {
		return signoff.ChangePolicy{}, fmt.Errorf("set change policy: %w", err)
	}
	return out, nil
}

// voidApprovalsOfOtherPolicies supersedes, with the policy write, every
// valid approval of a change case made under another policy: a new policy
// voids them, and putting the old policy back must not revive them. Each
// case gets an approvals.superseded event saying why.
func (s *DB) voidApprovalsOfOtherPolicies(ctx context.Context, tx *sql.Tx, by signoff.Actor, digest string) error {
	type voided struct{ caseID, id string }
	rows, err := queryAll(ctx, tx, func(sc scanner, v *voided) error { return sc.Scan(&v.caseID, &v.id) },
		`UPDATE approvals SET status = 'superseded'
		WHERE workspace_id = $1 AND status = 'valid' AND policy_digest <> $2
		  AND case_id IN (SELECT id FROM cases WHERE workspace_id = $1 AND kind = $3)
		RETURNING case_id, id`, by.WorkspaceID, digest, string(signoff.KindChange))
	if err != nil {
		return fmt.Errorf("void approvals of other policies: %w", err)
	}
	byCase := map[string][]string{}
	for _, v := range rows {
		byCase[v.caseID] = append(byCase[v.caseID], v.id)
	}
	cases := slices.Sorted(maps.Keys(byCase))
	for _, c := range cases {
		ids := byCase[c]
		slices.Sort(ids)
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, c, "approvals.superseded", by.ID, map[string]any{
			"count": len(ids), "keep": "", "approval_ids": ids, "reason": "policy_changed", "policy_digest": digest,
			"message": "the change policy changed: approvals made under the old policy no longer count, and setting it again does not bring them back",
		}); err != nil {
			return err
		}
	}
	return nil
}

// ---- Loops ----

const changeLoopColumns = `l.case_id, l.workspace_id, l.project_id, l.state, l.version, l.created_at, l.updated_at`

func scanChangeLoop(sc scanner, l *signoff.ChangeLoop) error {
	var state string
	var ca, ua int64
	if err := sc.Scan(&l.CaseID, &l.WorkspaceID, &l.ProjectID, &state, &l.Version, &ca, &ua); err != nil {
		return err
	}
	l.CreatedAt, l.UpdatedAt = fromMicros(ca), fromMicros(ua)
	return decodeChangeState([]byte(state), &l.State)
}

func decodeChangeState(b []byte, st *signoff.ChangeLoopState) error {
	if err := json.Unmarshal(b, st); err != nil {
		return fmt.Errorf("change loop state: %w", err)
	}
	return nil
}

// GetChangeLoop implements signoff.ChangeService.
func (s *DB) GetChangeLoop(ctx context.Context, by signoff.Actor, caseID string) (signoff.ChangeLoop, error) {
	if err := checkChangeReader(by); err != nil {
		return signoff.ChangeLoop{}, err
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.ChangeLoop{}, err
	}
	var l signoff.ChangeLoop
	err := scanChangeLoop(s.db.QueryRowContext(ctx, `SELECT `+changeLoopColumns+` FROM change_loops l WHERE l.case_id = $1 AND l.workspace_id = $2`,
		caseID, by.WorkspaceID), &l)
	if errors.Is(err, sql.ErrNoRows) {
		return l, signoff.Errorf(signoff.ENOTFOUND, "case %s has no change loop", caseID)
	} else if err != nil {
		return l, fmt.Errorf("get change loop of %s: %w", caseID, err)
	}
	return l, nil
}

// ListChangeLoops implements signoff.ChangeService.
func (s *DB) ListChangeLoops(ctx context.Context, by signoff.Actor, projectID string, states ...string) ([]signoff.ChangeLoop, error) {
	if err := checkChangeReader(by); err != nil {
		return nil, err
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	q, args, err := s.loopListQuery(ctx, changeLoops, changeLoopColumns, by.WorkspaceID, projectID, states)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanChangeLoop, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list change loops of %s: %w", projectID, err)
	}
	return out, nil
}

// consumeApproval marks one approval of c used at now. When it cannot be
// used the refusal says why: an approval already used is the gate's
// "consumed" refusal (this is what a racing second execution meets), an
// expired one its "expired"; anything else is a plain conflict.
func (s *DB) consumeApproval(ctx context.Context, tx *sql.Tx, c signoff.Case, id string, now time.Time) error {
	if ok, err := s.markApprovalConsumed(ctx, tx, c, id, now); err != nil || ok {
		return err
	}
	var caseID, status string
	var ea int64
	err := tx.QueryRowContext(ctx, `SELECT case_id, status, expires_at FROM approvals WHERE id = $1 AND workspace_id = $2`, id, c.WorkspaceID).Scan(&caseID, &status, &ea)
	switch {
	case errors.Is(err, sql.ErrNoRows) || (err == nil && caseID != c.ID):
		return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("approval %s is not an approval of case %s", id, c.ID)}
	case err != nil:
		return err
	case status == signoff.ApprovalConsumed:
		return &signoff.GateError{Check: signoff.GateCheckConsumed, Detail: fmt.Sprintf("approval %s has already been consumed", id)}
	case status == signoff.ApprovalValid && !fromMicros(ea).After(now):
		return &signoff.GateError{Check: signoff.GateCheckExpired, Detail: fmt.Sprintf("approval %s expired at %s", id, fromMicros(ea).Format(time.RFC3339))}
	}
	return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("approval %s is %s, not valid", id, status)}
}

// AdvanceChange implements signoff.ChangeService. In one transaction it
// consumes the approvals, writes the loop (guarded by its version), stores
// the plan and the receipts, moves the case (and the case it reverts),
// appends the events and enqueues the jobs; any refusal leaves all of it
// undone. Locks are taken approvals, loop, the reverted case's loop and
// row, then the cases and the ledger head as each transition runs:
// approvals first, so racing executions of one approval queue on it and
// every loser is told it was consumed.
func (s *DB) AdvanceChange(ctx context.Context, by signoff.Actor, u signoff.ChangeUpdate) (signoff.ChangeLoop, signoff.Case, error) {
	if !canAdvanceChange(by) {
		return signoff.ChangeLoop{}, signoff.Case{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not advance change loops", by.Role)
	}
	st, digest, payloads, err := checkChangeUpdate(u)
	if err != nil {
		return signoff.ChangeLoop{}, signoff.Case{}, err
	}
	var loop signoff.ChangeLoop
	var c signoff.Case
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = s.loopCase(ctx, tx, by, changeLoops, u.CaseID, u.Command); err != nil {
			return err
		}
		now := s.clock()
		// Approvals first, in a fixed order, so two updates consuming the
		// same ones never hold one each.
		for _, id := range slices.Sorted(slices.Values(u.Consume)) {
			if err := s.consumeApproval(ctx, tx, c, id, now); err != nil {
				return err
			}
		}
		loop = signoff.ChangeLoop{CaseID: c.ID, WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, UpdatedAt: now}
		loop.Version, loop.CreatedAt, err = s.writeLoopRow(ctx, tx, changeLoops, c, st, u.Version, now, func(v int64) error {
			return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("change loop of %s is at version %d, not %d; re-read and retry", c.ID, v, u.Version)}
		})
		if err != nil {
			return err
		}
		if err := decodeChangeState(st, &loop.State); err != nil {
			return err
		}
		// The reverted case: its loop, then its row, locked before any
		// ledger append (which holds the head to the end).
		var rev *revertTarget
		if u.Revert != "" {
			if rev, err = s.lockRevert(ctx, tx, c, u.Revert); err != nil {
				return err
			}
		}
		var planSummary map[string]any
		if p := u.Plan; p != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO change_plans (id, workspace_id, case_id, body, digest, proposer, via, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.ID, c.WorkspaceID, c.ID, string(p.Body), p.Digest, p.Proposer, p.Via, micros(now)); err != nil {
				if s.d.IsUnique(err) {
					return signoff.Errorf(signoff.ECONFLICT, "plan %s already exists: every plan has a new id", p.ID)
				}
				return err
			}
			planSummary = map[string]any{"id": p.ID, "digest": p.Digest, "proposer": p.Proposer, "via": p.Via, "body_sha256": sha256Hex(p.Body)}
		}
		if id := loop.State.PlanID; id != "" {
			var d string
			err := tx.QueryRowContext(ctx, `SELECT digest FROM change_plans WHERE id = $1 AND case_id = $2 AND workspace_id = $3`, id, c.ID, c.WorkspaceID).Scan(&d)
			if errors.Is(err, sql.ErrNoRows) {
				return signoff.Errorf(signoff.EINVALID, "state names plan %s, which is not a plan of case %s", id, c.ID)
			} else if err != nil {
				return err
			}
			if d != loop.State.PlanDigest {
				return signoff.Errorf(signoff.EINVALID, "state names plan %s with digest %s, but its stored digest is %s", id, loop.State.PlanDigest, d)
			}
		}
		receipts := make([]map[string]any, 0, len(u.Receipts))
		for _, r := range u.Receipts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO change_receipts (id, workspace_id, case_id, kind, envelope, digest, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ID, c.WorkspaceID, c.ID, r.Kind, string(r.Envelope), r.Digest, micros(now)); err != nil {
				if s.d.IsUnique(err) {
					return signoff.Errorf(signoff.ECONFLICT, "receipt %s already exists", r.ID)
				}
				return err
			}
			receipts = append(receipts, map[string]any{"id": r.ID, "kind": r.Kind, "digest": r.Digest, "envelope_sha256": sha256Hex(r.Envelope)})
		}
		if c, err = s.applyLoopCommand(ctx, tx, by, c, u.Command, u.Note); err != nil {
			return err
		}
		evs := make([]EventInput, 0, len(u.Events)+2)
		if rev != nil {
			ev, err := s.applyRevert(ctx, tx, c, rev)
			if err != nil {
				return err
			}
			if ev != nil {
				evs = append(evs, *ev)
			}
		}
		evs = appendLoopEvents(evs, c.ID, by.ID, u.Events, payloads)
		summary := loopSummary(loop.Version, digest, by, u.Command, c.State, u.Consume, u.Jobs)
		summary["receipts"] = receipts
		if planSummary != nil {
			summary["plan"] = planSummary
		}
		if u.Revert != "" {
			summary["reverts"] = u.Revert
		}
		evs = append(evs, EventInput{CaseID: c.ID, Type: "change.updated", ActorID: by.ID, Payload: summary})
		return s.recordLoopUpdate(ctx, tx, c.WorkspaceID, evs, u.Jobs)
	})
	if err != nil {
		return signoff.ChangeLoop{}, signoff.Case{}, fmt.Errorf("advance change of %s: %w", u.CaseID, err)
	}
	return loop, c, nil
}

// revertTarget is an executed change case locked for its revert.
type revertTarget struct {
	c signoff.Case
	// loop state and version; hasLoop is false for a case that never had
	// a loop.
	hasLoop bool
	state   signoff.ChangeLoopState
	version int64
}

// lockRevert locks the loop and the row of the change case c reverts and
// checks it can be reverted: a change case of the workspace, executed.
func (s *DB) lockRevert(ctx context.Context, tx *sql.Tx, c signoff.Case, id string) (*revertTarget, error) {
	rt := &revertTarget{}
	var state string
	err := tx.QueryRowContext(ctx, `SELECT state, version FROM change_loops WHERE case_id = $1 AND workspace_id = $2`+s.d.ForUpdate,
		id, c.WorkspaceID).Scan(&state, &rt.version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		rt.hasLoop = true
		if err := decodeChangeState([]byte(state), &rt.state); err != nil {
			return nil, err
		}
	}
	err = scanCase(tx.QueryRowContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, id, c.WorkspaceID), &rt.c)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, signoff.Errorf(signoff.EINVALID, "revert names case %s, which is not a case of this workspace", id)
	} else if err != nil {
		return nil, err
	}
	if rt.c.Kind != signoff.KindChange {
		return nil, signoff.Errorf(signoff.EINVALID, "revert names case %s, which is not a change", id)
	}
	if rt.c.State != workflow.ChangeExecuted {
		return nil, &signoff.Error{Code: signoff.ECONFLICT, State: rt.c.State,
			Message: fmt.Sprintf("case %s is %s, not executed: only an executed change is reverted", id, rt.c.State)}
	}
	return rt, nil
}

// applyRevert moves the locked case to reverted as the server and records
// on its loop which case reverted it. It returns the loop's summary event
// (nil when the case has no loop), appended with the caller's events.
func (s *DB) applyRevert(ctx context.Context, tx *sql.Tx, by signoff.Case, rt *revertTarget) (*EventInput, error) {
	sys := signoff.SystemActor(rt.c.WorkspaceID)
	moved, _, err := s.applyTransition(ctx, tx, sys, rt.c, "revert", "reverted by "+by.ID)
	if errors.Is(err, errLostRace) {
		return nil, s.caseMoved(ctx, tx, rt.c)
	} else if err != nil {
		return nil, err
	}
	if !rt.hasLoop {
		return nil, nil
	}
	rt.state.RevertedBy = by.ID
	raw, err := json.Marshal(rt.state)
	if err != nil {
		return nil, err
	}
	st, digest, err := canonicalJSON("state", raw, maxChangeState, true, nil)
	if err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE change_loops SET state = $1, version = version + 1, updated_at = $2 WHERE case_id = $3 AND workspace_id = $4 AND version = $5`,
		string(st), micros(s.clock()), rt.c.ID, rt.c.WorkspaceID, rt.version)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		return nil, &signoff.Error{Code: signoff.ECONFLICT, State: moved.State, Message: fmt.Sprintf("change loop of %s changed concurrently; re-read and retry", rt.c.ID)}
	}
	return &EventInput{CaseID: rt.c.ID, Type: "change.updated", ActorID: sys.ID, Payload: map[string]any{
		"version": rt.version + 1, "state_digest": digest, "role": string(sys.Role), "command": "revert", "case_state": moved.State,
		"consumed": []string{}, "receipts": []any{}, "jobs": []string{}, "reverted_by": by.ID,
	}}, nil
}

// AppendChangeEvents implements signoff.ChangeService.
func (s *DB) AppendChangeEvents(ctx context.Context, by signoff.Actor, caseID string, events []signoff.LoopEvent) error {
	if !isServer(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "only the server records change events, not role %s", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return err
	}
	payloads, err := checkLoopEvents(events, changeEventsReserved)
	if err != nil {
		return err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.getCase(ctx, tx, by.WorkspaceID, caseID)
		if err != nil {
			return err
		}
		if c.Kind != signoff.KindChange {
			return signoff.Errorf(signoff.EINVALID, "case %s is not a change", caseID)
		}
		if len(events) == 0 {
			return nil
		}
		evs := appendLoopEvents(make([]EventInput, 0, len(events)), c.ID, by.ID, events, payloads)
		_, err = s.appendEvents(ctx, tx, c.WorkspaceID, evs)
		return err
	})
	if err != nil {
		return fmt.Errorf("append change events of %s: %w", caseID, err)
	}
	return nil
}

// ---- Plans and receipts ----

const planColumns = `id, workspace_id, case_id, body, digest, proposer, via, created_at`

func scanPlan(sc scanner, p *signoff.ChangePlan) error {
	var body string
	var ca int64
	if err := sc.Scan(&p.ID, &p.WorkspaceID, &p.CaseID, &body, &p.Digest, &p.Proposer, &p.Via, &ca); err != nil {
		return err
	}
	p.Body, p.CreatedAt = json.RawMessage(body), fromMicros(ca)
	return nil
}

// GetPlan implements signoff.ChangeService.
func (s *DB) GetPlan(ctx context.Context, by signoff.Actor, planID string) (signoff.ChangePlan, error) {
	if err := checkChangeReader(by); err != nil {
		return signoff.ChangePlan{}, err
	}
	if err := signoff.CheckID("plan", signoff.PrefixPlan, planID); err != nil {
		return signoff.ChangePlan{}, err
	}
	var p signoff.ChangePlan
	err := scanPlan(s.db.QueryRowContext(ctx, `SELECT `+planColumns+` FROM change_plans WHERE id = $1 AND workspace_id = $2`, planID, by.WorkspaceID), &p)
	if errors.Is(err, sql.ErrNoRows) {
		return p, signoff.Errorf(signoff.ENOTFOUND, "plan not found")
	} else if err != nil {
		return p, fmt.Errorf("get plan %s: %w", planID, err)
	}
	return p, nil
}

// ListPlans implements signoff.ChangeService.
func (s *DB) ListPlans(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.ChangePlan, error) {
	if err := s.checkCaseRead(ctx, by, caseID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanPlan, `SELECT `+planColumns+` FROM change_plans WHERE workspace_id = $1 AND case_id = $2 ORDER BY created_at, id`,
		by.WorkspaceID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list plans of %s: %w", caseID, err)
	}
	return out, nil
}

// checkCaseRead returns nil when by reads the change records of caseID.
func (s *DB) checkCaseRead(ctx context.Context, by signoff.Actor, caseID string) error {
	if err := checkChangeReader(by); err != nil {
		return err
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return err
	}
	_, err := s.visibleCase(ctx, s.db, by, caseID)
	return err
}

const receiptColumns = `id, workspace_id, case_id, kind, envelope, digest, created_at`

func scanReceipt(sc scanner, r *signoff.Receipt) error {
	var envelope string
	var ca int64
	if err := sc.Scan(&r.ID, &r.WorkspaceID, &r.CaseID, &r.Kind, &envelope, &r.Digest, &ca); err != nil {
		return err
	}
	r.Envelope, r.CreatedAt = json.RawMessage(envelope), fromMicros(ca)
	return nil
}

// ListReceipts implements signoff.ChangeService.
func (s *DB) ListReceipts(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Receipt, error) {
	if err := s.checkCaseRead(ctx, by, caseID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanReceipt, `SELECT `+receiptColumns+` FROM change_receipts WHERE workspace_id = $1 AND case_id = $2 ORDER BY created_at, id`,
		by.WorkspaceID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list receipts of %s: %w", caseID, err)
	}
	return out, nil
}

// GetReceipt implements signoff.ChangeService.
func (s *DB) GetReceipt(ctx context.Context, by signoff.Actor, id string) (signoff.Receipt, error) {
	if err := checkChangeReader(by); err != nil {
		return signoff.Receipt{}, err
	}
	if err := signoff.CheckID("receipt", signoff.PrefixReceipt, id); err != nil {
		return signoff.Receipt{}, err
	}
	var r signoff.Receipt
	err := scanReceipt(s.db.QueryRowContext(ctx, `SELECT `+receiptColumns+` FROM change_receipts WHERE id = $1 AND workspace_id = $2`, id, by.WorkspaceID), &r)
	if errors.Is(err, sql.ErrNoRows) {
		return r, signoff.Errorf(signoff.ENOTFOUND, "receipt not found")
	} else if err != nil {
		return r, fmt.Errorf("get receipt %s: %w", id, err)
	}
	return r, nil
}

// ---- Target locks ----

func checkLock(by signoff.Actor, target, holder string) error {
	if !isServer(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "only the server takes target locks, not role %s", by.Role)
	}
	if err := signoff.CheckText("target", target, true, 512); err != nil {
		return err
	}
	return signoff.CheckText("holder", holder, true, 200)
}

// LockTarget implements signoff.ChangeService. One statement decides, so
// racing holders (in any process) never both get the lock: the insert
// wins on a free target, the guarded update on an expired lease or the
// holder's own, and nothing happens otherwise.
func (s *DB) LockTarget(ctx context.Context, by signoff.Actor, target, holder string, ttl time.Duration) (bool, error) {
	if err := checkLock(by, target, holder); err != nil {
		return false, err
	}
	if ttl < time.Millisecond || ttl > maxLockTTL {
		return false, signoff.Errorf(signoff.EINVALID, "a lock lasts 1ms to %s, not %s", maxLockTTL, ttl)
	}
	var held bool
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		var got string
		err := tx.QueryRowContext(ctx, `INSERT INTO target_locks (workspace_id, target, holder, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (workspace_id, target) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE target_locks.expires_at <= $5 OR target_locks.holder = excluded.holder
			RETURNING holder`, by.WorkspaceID, target, holder, micros(now.Add(ttl)), micros(now)).Scan(&got)
		if errors.Is(err, sql.ErrNoRows) {
			held = false
			return nil
		} else if err != nil {
			return err
		}
		held = got == holder
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("lock target %s: %w", target, err)
	}
	return held, nil
}

// UnlockTarget implements signoff.ChangeService.
func (s *DB) UnlockTarget(ctx context.Context, by signoff.Actor, target, holder string) error {
	if err := checkLock(by, target, holder); err != nil {
		return err
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM target_locks WHERE workspace_id = $1 AND target = $2 AND holder = $3`, by.WorkspaceID, target, holder)
		return err
	})
	if err != nil {
		return fmt.Errorf("unlock target %s: %w", target, err)
	}
	return nil
}
