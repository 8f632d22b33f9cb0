package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// The needs-information loop: triage asks the reporter (RequestInfo), the
// question is the case's public question, the reporter answers on their
// tracking page (Answer) and the case goes back to triage with the answer,
// in one transaction.

// eventAsked records the clarification a case asks its reporter. Only
// RequestInfo writes it (it is reserved on every other path).
const eventAsked = "reporter.asked"

// RequestInfo implements signoff.IntakeService.
func (s *DB) RequestInfo(ctx context.Context, by signoff.Actor, caseID string, in signoff.InfoRequest) (signoff.Case, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.Case{}, err
	}
	if err := signoff.CheckText("note", in.Note, false, 4000); err != nil {
		return signoff.Case{}, err
	}
	d, err := s.intake.Question(in.Question, in.Language)
	if err != nil {
		return signoff.Case{}, err
	}
	var c signoff.Case
	err = s.retryRace(ctx, func() error {
		return s.InTx(ctx, func(tx *sql.Tx) error {
			var err error
			if c, err = s.visibleCase(ctx, tx, by, caseID); err != nil {
				return err
			}
			if c.Kind != signoff.KindBug {
				return signoff.Errorf(signoff.EINVALID, "only a bug asks its reporter for information")
			}
			if err := s.agentMayChange(ctx, tx, by, c, "request_info"); err != nil {
				return err
			}
			// Each question sends the reporter's answer through a whole
			// triage run again: past the bound, a person reads the case
			// instead of asking once more.
			var asked int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ledger_events WHERE workspace_id = $1 AND case_id = $2 AND type = '`+eventAsked+`'`,
				c.WorkspaceID, c.ID).Scan(&asked); err != nil {
				return fmt.Errorf("count questions: %w", err)
			}
			if asked >= signoff.MaxQuestions {
				return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("the reporter has been asked %d times already: give up so a person reads the case", asked)}
			}
			if c, _, err = s.applyTransition(ctx, tx, by, c, "request_info", in.Note); err != nil {
				return err
			}
			_, err = s.appendEvent(ctx, tx, c.WorkspaceID, c.ID, eventAsked, by.ID, map[string]any{
				"question": d.Text, "language": in.Language, "redactions": d.Redactions})
			return err
		})
	})
	if err != nil {
		return signoff.Case{}, fmt.Errorf("request info on %s: %w", caseID, err)
	}
	return c, nil
}

// retryRace runs once until it does not lose a race on a case's version,
// as TransitionCase does; past the bound it answers ECONFLICT.
func (s *DB) retryRace(ctx context.Context, once func() error) error {
	for attempt := 0; ; attempt++ {
		err := once()
		if !errors.Is(err, errLostRace) {
			return err
		}
		if attempt >= s.retries {
			return signoff.Errorf(signoff.ECONFLICT, "the case kept changing under concurrent updates; try again")
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// errNotWaiting refuses an answer to a case that asks its reporter
// nothing.
func errNotWaiting(state string) error {
	return &signoff.Error{Code: signoff.ECONFLICT, State: state,
		Message: "your case is not waiting for an answer from you right now, so nothing was stored"}
}

// Answer implements signoff.IntakeService. The answer is recorded as the
// reporter's event. On a case that needs information it is what triage
// was waiting for: the case moves to triaging as the reporter
// (provide_info) and applyTransition queues the triage job, all in the
// transaction that stores the answer. On a case that asks a yes-or-no
// question the answer is only recorded: acting on it belongs to the loop
// that asked. Any other case refuses it and stores nothing.
func (s *DB) Answer(ctx context.Context, secret, text string) (signoff.Report, error) {
	d, err := s.intake.Answer(text)
	if err != nil {
		return signoff.Report{}, err
	}
	r := signoff.Report{ID: signoff.NewID(signoff.PrefixReport), Kind: "answer", Dossier: d, Metadata: map[string]string{}, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	err = s.retryRace(ctx, func() error {
		return s.InTx(ctx, func(tx *sql.Tx) error {
			ws, caseID, linkID, err := s.resolveLink(ctx, tx, secret)
			if err != nil {
				return err
			}
			c, err := s.getCase(ctx, tx, ws, caseID)
			if err != nil {
				return err
			}
			needsInfo := c.Kind == signoff.KindBug && c.State == workflow.BugNeedsInfo
			if !needsInfo && workflow.ReporterQuestion(c.State) == "" {
				return errNotWaiting(c.State)
			}
			r.CaseID = caseID
			if err := s.insertReporterText(ctx, tx, ws, r, text, ""); err != nil {
				return err
			}
			if _, err := s.appendEvent(ctx, tx, ws, caseID, "reporter.answered", linkID, reportPayload(r)); err != nil {
				return err
			}
			if !needsInfo {
				return nil
			}
			// The reporter acts as themselves: the link is the case's
			// reporter, and provide_info is theirs to send.
			rep := signoff.Actor{ID: linkID, WorkspaceID: ws, Name: "reporter", Role: signoff.RoleReporter}
			_, _, err = s.applyTransition(ctx, tx, rep, c, "provide_info", "the reporter answered on their tracking page")
			return err
		})
	})
	if err != nil {
		return signoff.Report{}, fmt.Errorf("answer: %w", err)
	}
	return r, nil
}

// trackEvents are the ledger events a reporter's history is made of.
const trackEvents = `'case.created', 'case.transitioned', 'reporter.answered', '` + eventAsked + `'`

// trackHistory fills what the tracking page shows of a case beyond its
// state: the question it asks while it needs information, when it was
// asked and answered, and the plain steps of its history. Staff messages,
// notes, actors and agent output are never read here.
func (s *DB) trackHistory(ctx context.Context, q rowsQueryer, ws string, t *signoff.Tracking) error {
	rows, err := q.QueryContext(ctx, `SELECT type, occurred_at, payload FROM ledger_events
		WHERE workspace_id = $1 AND case_id = $2 AND type IN (`+trackEvents+`) ORDER BY seq`, ws, t.CaseID)
	if err != nil {
		return fmt.Errorf("history of %s: %w", t.CaseID, err)
	}
	defer rows.Close()
	var question, lang string
	var askedAt, answeredAt *time.Time
	step := func(at time.Time, what string) {
		if n := len(t.History); n > 0 && t.History[n-1].Step == what {
			return
		}
		t.History = append(t.History, signoff.TrackStep{At: at, Step: what})
	}
	for rows.Next() {
		var typ string
		var us int64
		var payload []byte
		if err := rows.Scan(&typ, &us, &payload); err != nil {
			return err
		}
		at := fromMicros(us)
		var p struct {
			To       string `json:"to"`
			Question string `json:"question"`
			Language string `json:"language"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			return fmt.Errorf("history of %s: %w", t.CaseID, err)
		}
		switch typ {
		case "case.created":
			step(at, workflow.BugReceived)
		case "case.transitioned":
			if p.To == workflow.BugNeedsInfo {
				// A new ask: until its question is recorded (a person may
				// ask without one), the page shows no stale question.
				question, lang, askedAt, answeredAt = "", "", &at, nil
			}
			step(at, p.To)
		case eventAsked:
			question, lang = p.Question, p.Language
		case "reporter.answered":
			answeredAt = &at
			step(at, "answered")
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.AskedAt, t.AnsweredAt = askedAt, answeredAt
	if t.State == workflow.BugNeedsInfo {
		t.Question, t.QuestionLanguage = question, lang
	}
	return nil
}

// QuestionAsked returns the clarification recorded with the move into
// needs_info at ledger seq (what a notice of that move tells the
// reporter), and "" when none was.
func (s *DB) QuestionAsked(ctx context.Context, ws, caseID string, seq int64) (question, lang string, err error) {
	var payload []byte
	err = s.db.QueryRowContext(ctx, `SELECT payload FROM ledger_events WHERE workspace_id = $1 AND case_id = $2 AND type = '`+eventAsked+`' AND seq > $3
		AND NOT EXISTS (SELECT 1 FROM ledger_events m WHERE m.workspace_id = $1 AND m.case_id = $2 AND m.type = 'case.transitioned' AND m.seq > $3 AND m.seq < ledger_events.seq)
		ORDER BY seq LIMIT 1`, ws, caseID, seq).Scan(&payload)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	} else if err != nil {
		return "", "", fmt.Errorf("question asked on %s: %w", caseID, err)
	}
	var p struct {
		Question string `json:"question"`
		Language string `json:"language"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return "", "", err
	}
	return p.Question, p.Language, nil
}
