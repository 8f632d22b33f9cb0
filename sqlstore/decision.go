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
	"github.com/signoff-dev/signoff/workflow"
)

// Bounds on how long a decision request stays open.
const (
	DefaultDecisionTTL = 23 * time.Hour
	MaxDecisionTTL     = 30 * 24 * time.Hour
)

const decisionColumns = `id, workspace_id, case_id, kind, subject_digest, subject, status, reason, requested_by, decided_by, created_at, expires_at, decided_at, amendment`

func scanDecision(sc scanner, d *signoff.Decision) error {
	var subject, amendment string
	var ca, ea int64
	var da sql.NullInt64
	if err := sc.Scan(&d.ID, &d.WorkspaceID, &d.CaseID, &d.Kind, &d.SubjectDigest, &subject, &d.Status, &d.Reason, &d.RequestedBy, &d.DecidedBy, &ca, &ea, &da, &amendment); err != nil {
		return err
	}
	if amendment != "" {
		d.Amendment = json.RawMessage(amendment)
	}
	d.Subject, d.CreatedAt, d.ExpiresAt, d.DecidedAt = json.RawMessage(subject), fromMicros(ca), fromMicros(ea), timePtr(da)
	return nil
}

// effective reports a pending decision past its expiry as expired. The row
// keeps saying pending until a new request of its kind replaces it: a read
// writes nothing.
func effective(d signoff.Decision, now time.Time) signoff.Decision {
	if d.Status == signoff.DecisionPending && !now.Before(d.ExpiresAt) {
		d.Status = signoff.DecisionExpired
	}
	return d
}

func (s *DB) getDecision(ctx context.Context, q queryer, ws, id string) (signoff.Decision, error) {
	var d signoff.Decision
	err := scanDecision(q.QueryRowContext(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE id = $1 AND workspace_id = $2`, id, ws), &d)
	if errors.Is(err, sql.ErrNoRows) {
		return d, signoff.Errorf(signoff.ENOTFOUND, "decision not found")
	} else if err != nil {
		return d, fmt.Errorf("get decision %s: %w", id, err)
	}
	return d, nil
}

// RequestDecision implements signoff.DecisionService. People who run the
// desk, the server and agents may ask (asking is not deciding). A pending
// request of the same kind on the case is superseded, or marked expired if
// its time had run out. At most one request per case and kind is pending:
// a unique index enforces it, and a request that loses that race to a
// concurrent one retries and supersedes it.
func (s *DB) RequestDecision(ctx context.Context, by signoff.Actor, caseID, kind string, subject json.RawMessage, ttl time.Duration) (signoff.Decision, error) {
	return s.RequestDecisionMoving(ctx, by, caseID, kind, subject, ttl, "", signoff.TransitionInput{})
}

// RequestDecisionMoving implements signoff.DecisionService: the request
// of RequestDecision, and the move by move.Command of a case in state
// from, in one transaction.
//
// Only the move into a decision's own waiting state is taken here (the
// triage gate: triaging → awaiting_triage_approval by the crew, with its
// triage_ticket request); every other command goes through TransitionCase
// and its step, signature and desk checks.
func (s *DB) RequestDecisionMoving(ctx context.Context, by signoff.Actor, caseID, kind string, subject json.RawMessage, ttl time.Duration, from string, move signoff.TransitionInput) (signoff.Decision, error) {
	if move.Command != "" {
		if _, ok := decisionMoves[decisionMove{kind, from, move.Command}]; !ok {
			return signoff.Decision{}, signoff.Errorf(signoff.EINVALID, "a %s request does not move a case from %s by %s: use the case's transition", kind, from, move.Command)
		}
		if err := signoff.CheckText("note", move.Note, false, 4000); err != nil {
			return signoff.Decision{}, err
		}
	}
	if !canIssue(by) && !by.Role.IsAgent() {
		return signoff.Decision{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not request decisions", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.Decision{}, err
	}
	if err := checkToken("kind", kind); err != nil {
		return signoff.Decision{}, err
	}
	// Approving a triage gate moves the case to ticketed and files what the
	// crew recorded: only the triage crew asks for one. Another agent's (or
	// a person's) request would supersede the crew's pending gate with a
	// subject nobody files.
	if kind == signoff.TriageDecisionKind && by.Role != signoff.RoleTriager && by.Role != signoff.RoleSystem {
		return signoff.Decision{}, signoff.Errorf(signoff.EFORBIDDEN, "only the triage crew asks for a %s decision, not role %s", kind, by.Role)
	}
	if ttl == 0 {
		ttl = DefaultDecisionTTL
	}
	if ttl < 0 || ttl > MaxDecisionTTL {
		return signoff.Decision{}, signoff.Errorf(signoff.EINVALID, "ttl must be positive and at most %s", MaxDecisionTTL)
	}
	subj, digest, err := canonicalJSON("subject", subject, maxSubjectJSON, true, nil)
	if err != nil {
		return signoff.Decision{}, err
	}
	for attempt := 0; ; attempt++ {
		d, err := s.requestOnce(ctx, by, caseID, kind, subj, digest, ttl, from, move)
		if err == nil || !s.d.IsUnique(err) || attempt >= s.retries {
			if err != nil {
				return signoff.Decision{}, fmt.Errorf("request %s decision on %s: %w", kind, caseID, err)
			}
			return d, nil
		}
		if err := backoff(ctx, attempt); err != nil {
			return signoff.Decision{}, err
		}
	}
}

func (s *DB) requestOnce(ctx context.Context, by signoff.Actor, caseID, kind string, subj []byte, digest string, ttl time.Duration, from string, move signoff.TransitionInput) (signoff.Decision, error) {
	var d signoff.Decision
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.getCase(ctx, tx, by.WorkspaceID, caseID)
		if err != nil {
			return err
		}
		// A new request supersedes the pending one: an agent asks only on
		// its open task, never on a case a person has decided.
		if err := s.agentMayChange(ctx, tx, by, c, "ask for a decision on"); err != nil {
			return err
		}
		// A case elsewhere (at the gate already: asked again) is asked
		// about without moving, as RequestDecision asks.
		if move.Command != "" && c.State == from {
			if c, _, err = s.applyTransition(ctx, tx, by, c, move.Command, move.Note); err != nil {
				return err
			}
		}
		now := s.clock()
		d = signoff.Decision{
			ID: signoff.NewID(signoff.PrefixDecision), WorkspaceID: c.WorkspaceID, CaseID: c.ID, Kind: kind, SubjectDigest: digest,
			Subject: subj, Status: signoff.DecisionPending, RequestedBy: by.ID, CreatedAt: now, ExpiresAt: now.Add(ttl),
		}
		pending, err := queryAll(ctx, tx, scanDecision, `SELECT `+decisionColumns+` FROM decisions
			WHERE workspace_id = $1 AND case_id = $2 AND kind = $3 AND status = 'pending' ORDER BY id`, c.WorkspaceID, c.ID, kind)
		if err != nil {
			return err
		}
		var events []EventInput
		for _, old := range pending {
			status, typ := signoff.DecisionSuperseded, "decision.superseded"
			payload := map[string]any{"decision_id": old.ID, "kind": kind, "subject_digest": old.SubjectDigest, "superseded_by": d.ID}
			if effective(old, now).Status == signoff.DecisionExpired {
				status, typ = signoff.DecisionExpired, "decision.expired"
				payload = map[string]any{"decision_id": old.ID, "kind": kind, "subject_digest": old.SubjectDigest}
			}
			res, err := tx.ExecContext(ctx, `UPDATE decisions SET status = $1 WHERE id = $2 AND status = 'pending'`, status, old.ID)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				continue // decided or replaced meanwhile
			}
			events = append(events, EventInput{CaseID: c.ID, Type: typ, ActorID: by.ID, Payload: payload})
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO decisions (id, workspace_id, case_id, kind, subject_digest, subject, status, requested_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			d.ID, d.WorkspaceID, d.CaseID, d.Kind, d.SubjectDigest, string(d.Subject), d.Status, d.RequestedBy, micros(d.CreatedAt), micros(d.ExpiresAt)); err != nil {
			return err
		}
		events = append(events, EventInput{CaseID: c.ID, Type: "decision.requested", ActorID: by.ID, Payload: map[string]any{
			"decision_id": d.ID, "kind": kind, "subject_digest": digest, "expires_at": d.ExpiresAt.Format(time.RFC3339Nano),
		}})
		_, err = s.appendEvents(ctx, tx, c.WorkspaceID, events)
		return err
	})
	return d, err
}

// decisionMove is a move a decision request may make as it asks: the
// kind asked, the state the case is in and the command.
type decisionMove struct{ kind, from, command string }

// decisionMoves are the only such moves.
var decisionMoves = map[decisionMove]bool{
	{signoff.TriageDecisionKind, workflow.BugTriaging, "request_triage_approval"}: true,
}

// GetDecision implements signoff.DecisionService: people of the workspace,
// the server and agents read any decision of the workspace; reporters none.
func (s *DB) GetDecision(ctx context.Context, by signoff.Actor, id string) (signoff.Decision, error) {
	if !isStaff(by) && !by.Role.IsAgent() {
		return signoff.Decision{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read decisions", by.Role)
	}
	if err := signoff.CheckID("decision", signoff.PrefixDecision, id); err != nil {
		return signoff.Decision{}, err
	}
	d, err := s.getDecision(ctx, s.db, by.WorkspaceID, id)
	if err != nil {
		return d, err
	}
	return effective(d, s.now()), nil
}

// Decide implements signoff.DecisionService. Only owners and operators
// (and the CLI, which acts as an owner) decide: never an agent, a viewer, a
// reporter, nor the server on anyone's behalf.
func (s *DB) Decide(ctx context.Context, by signoff.Actor, id, subjectDigest string, approve bool, reason string) (signoff.Decision, error) {
	return s.DecideAmended(ctx, by, id, subjectDigest, approve, reason, nil)
}

// DecideAmended implements signoff.TriageService. A decision whose kind is
// bound to case commands (workflow.DecisionCommand) moves the case in the
// same transaction, as the person who decided: that is the only path by
// which such a command reaches a case.
func (s *DB) DecideAmended(ctx context.Context, by signoff.Actor, id, subjectDigest string, approve bool, reason string, amendment json.RawMessage) (signoff.Decision, error) {
	amend := ""
	if len(amendment) > 0 {
		b, _, err := canonicalJSON("amendment", amendment, 4<<10, true, nil)
		if err != nil {
			return signoff.Decision{}, err
		}
		amend = string(b)
	}
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return signoff.Decision{}, signoff.Errorf(signoff.EFORBIDDEN, "only people decide: role %s may not", by.Role)
	}
	if err := signoff.CheckID("decision", signoff.PrefixDecision, id); err != nil {
		return signoff.Decision{}, err
	}
	if err := checkDigest("subject_digest", subjectDigest); err != nil {
		return signoff.Decision{}, err
	}
	if !approve && strings.TrimSpace(reason) == "" {
		return signoff.Decision{}, signoff.Errorf(signoff.EINVALID, "a rejection needs a reason")
	}
	if err := checkProse("reason", reason, false, maxReason); err != nil {
		return signoff.Decision{}, err
	}
	var d signoff.Decision
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if d, err = s.getDecision(ctx, tx, by.WorkspaceID, id); err != nil {
			return err
		}
		now := s.clock()
		if cur := effective(d, now); cur.Status != signoff.DecisionPending {
			return signoff.Errorf(signoff.ECONFLICT, "decision is %s", cur.Status)
		}
		if d.SubjectDigest != subjectDigest {
			return signoff.Errorf(signoff.ECONFLICT, "decision is over a different digest: re-read what it asks and decide on that")
		}
		status, typ := signoff.DecisionApproved, "decision.approved"
		if !approve {
			status, typ = signoff.DecisionRejected, "decision.rejected"
		}
		res, err := tx.ExecContext(ctx, `UPDATE decisions SET status = $1, reason = $2, decided_by = $3, decided_at = $4, amendment = $8
			WHERE id = $5 AND workspace_id = $6 AND status = 'pending' AND subject_digest = $7 AND expires_at > $4`,
			status, reason, by.ID, micros(now), d.ID, d.WorkspaceID, subjectDigest, amend)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			cur, err := s.getDecision(ctx, tx, by.WorkspaceID, id)
			if err != nil {
				return err
			}
			return signoff.Errorf(signoff.ECONFLICT, "decision is %s", effective(cur, now).Status)
		}
		var am map[string]any
		if amend != "" {
			if err := json.Unmarshal([]byte(amend), &am); err != nil {
				return err
			}
		}
		if err := workflow.CheckAmendment(d.Kind, approve, am); err != nil {
			return err
		}
		d.Status, d.Reason, d.DecidedBy, d.DecidedAt = status, reason, by.ID, &now
		if amend != "" {
			d.Amendment = json.RawMessage(amend)
		}
		if _, err = s.appendEvent(ctx, tx, d.WorkspaceID, d.CaseID, typ, by.ID, map[string]any{
			"decision_id": d.ID, "kind": d.Kind, "subject_digest": d.SubjectDigest, "reason": reason, "role": string(by.Role),
			"amendment": d.Amendment,
		}); err != nil {
			return err
		}
		if err := s.enqueue(ctx, tx, signoff.DecisionJob{WorkspaceID: d.WorkspaceID, CaseID: d.CaseID, DecisionID: d.ID, DecisionKind: d.Kind}); err != nil {
			return err
		}
		if cmd := workflow.DecisionCommand(d.Kind, approve); cmd != "" {
			c, err := s.getCase(ctx, tx, d.WorkspaceID, d.CaseID)
			if err != nil {
				return err
			}
			if _, _, err := s.applyTransition(ctx, tx, by, c, cmd, "decision "+d.ID); errors.Is(err, errLostRace) {
				return signoff.Errorf(signoff.ECONFLICT, "the case changed while you decided; read it again and decide")
			} else if err != nil {
				return fmt.Errorf("apply %s: %w", cmd, err)
			}
		}
		return nil
	})
	if err != nil {
		return signoff.Decision{}, fmt.Errorf("decide %s: %w", id, err)
	}
	return d, nil
}

// ListDecisions implements signoff.TriageService.
func (s *DB) ListDecisions(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Decision, error) {
	if by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read decisions")
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return nil, err
	}
	if _, err := s.getCase(ctx, s.db, by.WorkspaceID, caseID); err != nil {
		return nil, err
	}
	list, err := queryAll(ctx, s.db, scanDecision, `SELECT `+decisionColumns+` FROM decisions WHERE workspace_id = $1 AND case_id = $2 ORDER BY created_at DESC, id DESC`, by.WorkspaceID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list decisions of %s: %w", caseID, err)
	}
	now := s.clock()
	for i := range list {
		list[i] = effective(list[i], now)
	}
	return list, nil
}
