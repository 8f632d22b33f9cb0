package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

const cardColumns = `id, workspace_id, case_id, kind, cause_seq, case_state, case_version, decision_id, subject_digest, options, addressee,
	status, asked, opened_at, expires_at, closed_at, answer`

func scanCard(sc scanner, c *signoff.Card) error {
	var opts, addr, answer string
	var oa, ea int64
	var ca sql.NullInt64
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.CaseID, &c.Kind, &c.CauseSeq, &c.CaseState, &c.CaseVersion, &c.DecisionID, &c.SubjectDigest,
		&opts, &addr, &c.Status, &c.Asked, &oa, &ea, &ca, &answer); err != nil {
		return err
	}
	c.OpenedAt, c.ExpiresAt = fromMicros(oa), fromMicros(ea)
	if ca.Valid {
		t := fromMicros(ca.Int64)
		c.ClosedAt = &t
	}
	if err := json.Unmarshal([]byte(opts), &c.Options); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(addr), &c.Addressee); err != nil {
		return err
	}
	if answer != "" {
		c.Answer = new(signoff.CardAnswer)
		return json.Unmarshal([]byte(answer), c.Answer)
	}
	return nil
}

// cardsOnEvent keeps cards in step with the ledger, in the append's
// transaction: a case that moves closes its open cards and may make a new
// decision pending (a card job is enqueued for it); a requested decision
// opens a card; a settled decision closes its card.
func (s *DB) cardsOnEvent(ctx context.Context, tx *sql.Tx, e signoff.Event) error {
	var p struct {
		To         string `json:"to"`
		Version    int64  `json:"version"`
		DecisionID string `json:"decision_id"`
	}
	now := micros(s.clock())
	switch e.Type {
	case "case.transitioned":
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("cards: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'closed', closed_at = $1
			WHERE workspace_id = $2 AND case_id = $3 AND status = 'open' AND decision_id = '' AND case_version < $4`,
			now, e.WorkspaceID, e.CaseID, p.Version); err != nil {
			return fmt.Errorf("cards: close: %w", err)
		}
		var kind string
		if err := tx.QueryRowContext(ctx, `SELECT kind FROM cases WHERE id = $1 AND workspace_id = $2`, e.CaseID, e.WorkspaceID).Scan(&kind); err != nil {
			return fmt.Errorf("cards: case kind: %w", err)
		}
		if !workflow.AsksPerson(signoff.CaseKind(kind), p.To) {
			return nil
		}
	case "decision.requested":
	case "decision.approved", "decision.rejected", "decision.superseded", "decision.expired":
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("cards: %w", err)
		}
		_, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'closed', closed_at = $1 WHERE workspace_id = $2 AND decision_id = $3 AND status = 'open'`,
			now, e.WorkspaceID, p.DecisionID)
		return err
	default:
		return nil
	}
	if e.CaseID == "" {
		return nil
	}
	_, err := s.insertTx(ctx, tx, signoff.CardJob{WorkspaceID: e.WorkspaceID, CaseID: e.CaseID, Seq: e.Seq},
		&river.InsertOpts{Queue: NotifyQueue, UniqueOpts: river.UniqueOpts{ByArgs: true}})
	if err != nil {
		return fmt.Errorf("enqueue card for event %d: %w", e.Seq, err)
	}
	return nil
}

// CardCause is the ledger event a card job was enqueued for, and where its
// case was then (signoff.CardCause).
type CardCause = signoff.CardCause

// CardCauseOf reads the event of card job j and its case as it is now.
func (s *DB) CardCauseOf(ctx context.Context, j signoff.CardJob) (CardCause, error) {
	var c CardCause
	err := scanEvent(s.db.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM ledger_events WHERE workspace_id = $1 AND seq = $2`, j.WorkspaceID, j.Seq), &c.Event)
	if errors.Is(err, sql.ErrNoRows) {
		return c, signoff.Errorf(signoff.ENOTFOUND, "event %d not found", j.Seq)
	} else if err != nil {
		return c, err
	}
	c.Case, err = s.getCase(ctx, s.db, j.WorkspaceID, j.CaseID)
	return c, err
}

// EventAt reads one ledger event of ws.
func (s *DB) EventAt(ctx context.Context, ws string, seq int64) (signoff.Event, error) {
	var e signoff.Event
	err := scanEvent(s.db.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM ledger_events WHERE workspace_id = $1 AND seq = $2`, ws, seq), &e)
	if errors.Is(err, sql.ErrNoRows) {
		return e, signoff.Errorf(signoff.ENOTFOUND, "event %d not found", seq)
	}
	return e, err
}

// OpenCard opens card c (its id the UUIDv5 of the job that asks) unless
// it is open already: a retried job finds the same card and opens no
// second one. The card.opened event (which notifies the channels) and the
// expiry job are written with it. It reports whether this call opened it.
func (s *DB) OpenCard(ctx context.Context, c signoff.Card) (signoff.Card, bool, error) {
	opened := false
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		opts, _ := json.Marshal(c.Options)
		addr, _ := json.Marshal(c.Addressee)
		res, err := tx.ExecContext(ctx, `INSERT INTO cards (`+cardColumns+`, reasked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', 1, $12, $13, NULL, '', 0)
			ON CONFLICT DO NOTHING`,
			c.ID, c.WorkspaceID, c.CaseID, c.Kind, c.CauseSeq, c.CaseState, c.CaseVersion, c.DecisionID, c.SubjectDigest, string(opts), string(addr),
			micros(c.OpenedAt), micros(c.ExpiresAt))
		if err != nil {
			return fmt.Errorf("open card: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return nil
		}
		opened = true
		if _, err := s.appendEvent(ctx, tx, c.WorkspaceID, c.CaseID, "card.opened", systemActorID, map[string]any{
			"card_id": c.ID, "kind": c.Kind, "subject_digest": c.SubjectDigest, "options": c.Options, "addressee": c.Addressee.String(),
			"decision_id": c.DecisionID, "case_state": c.CaseState, "case_version": c.CaseVersion, "expires_at": c.ExpiresAt.Format(time.RFC3339Nano),
		}); err != nil {
			return err
		}
		if s.river != nil {
			if _, err := s.insertTx(ctx, tx, signoff.CardExpiryJob{WorkspaceID: c.WorkspaceID, CardID: c.ID},
				&river.InsertOpts{Queue: NotifyQueue, ScheduledAt: c.ExpiresAt, UniqueOpts: river.UniqueOpts{ByArgs: true}}); err != nil {
				return fmt.Errorf("enqueue card expiry: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return signoff.Card{}, false, err
	}
	got, err := s.CardByID(ctx, c.WorkspaceID, c.ID)
	if err == nil && !opened {
		// A card of the same cause under another id means the job ran twice
		// under two ids: there is still only the one card.
		if got.ID != c.ID {
			return got, false, nil
		}
	}
	return got, opened, err
}

// CardByID reads a card of ws, as of now.
func (s *DB) CardByID(ctx context.Context, ws, id string) (signoff.Card, error) {
	var c signoff.Card
	err := scanCard(s.db.QueryRowContext(ctx, `SELECT `+cardColumns+` FROM cards WHERE id = $1 AND workspace_id = $2`, id, ws), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return c, signoff.Errorf(signoff.ENOTFOUND, "card not found")
	} else if err != nil {
		return c, err
	}
	return c.Effective(s.now()), nil
}

// CardsOfCase lists the cards of a case, oldest first (for tests and
// tools; the API's is ListCards).
func (s *DB) CardsOfCase(ctx context.Context, ws, caseID string) ([]signoff.Card, error) {
	out, err := queryAll(ctx, s.db, scanCard, `SELECT `+cardColumns+` FROM cards WHERE workspace_id = $1 AND case_id = $2 ORDER BY opened_at, id`, ws, caseID)
	now := s.now()
	for i := range out {
		out[i] = out[i].Effective(now)
	}
	return out, err
}

// ExpireCard marks an open card past its expiry as expired, with a
// card.expired event. It does nothing to a card that is settled or not
// yet due.
func (s *DB) ExpireCard(ctx context.Context, ws, id string) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'expired', closed_at = $1 WHERE id = $2 AND workspace_id = $3 AND status = 'open' AND expires_at <= $1`,
			micros(now), id, ws)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var caseID string
		if err := tx.QueryRowContext(ctx, `SELECT case_id FROM cards WHERE id = $1`, id).Scan(&caseID); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, ws, caseID, "card.expired", systemActorID, map[string]any{"card_id": id})
		return err
	})
}

// ReaskEvery is the shortest time between two re-asks of one card.
const ReaskEvery = 5 * time.Minute

// CardAnswerInput is an answer to a card as the server established it
// (signoff.CardAnswerInput).
type CardAnswerInput = signoff.CardAnswerInput

// SentSkew is how far the sender's clock may be behind the server's.
const SentSkew = 5 * time.Second

// AnswerCard records an answer to a card and decides what becomes of it
// (in.Evaluate, that is card.Evaluate) against where the case is now. The
// answer is kept whatever its outcome. A wrong responder's answer is discarded and the
// card asked again (card.reasked, which notifies the channels again); an
// answer to a card whose case moved on is acknowledged and dropped; an
// expired card is marked expired. An accepted answer is only recorded:
// acting on it is the caller's (SettleCard once it has).
func (s *DB) AnswerCard(ctx context.Context, in CardAnswerInput) (signoff.Card, signoff.CardOutcome, error) {
	var c signoff.Card
	var outcome signoff.CardOutcome
	if in.Evaluate == nil {
		// Fail closed: an answer nobody judged is never recorded as taken.
		return c, outcome, errors.New("answer card: no rule to evaluate the answer")
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanCard(tx.QueryRowContext(ctx, `SELECT `+cardColumns+` FROM cards WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, in.CardID, in.WorkspaceID), &c)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "card not found")
		} else if err != nil {
			return err
		}
		now := s.clock()
		cs, err := s.getCase(ctx, tx, in.WorkspaceID, c.CaseID)
		if err != nil {
			return err
		}
		cur := signoff.CardCurrent{State: cs.State, Version: cs.Version}
		if c.DecisionID != "" {
			d, err := s.getDecision(ctx, tx, in.WorkspaceID, c.DecisionID)
			if err != nil {
				return err
			}
			cur.DecisionPending = effective(d, now).Status == signoff.DecisionPending
		}
		outcome = in.Evaluate(c, in.Responder, in.Option, in.DigestPrefix, cur, now)
		// An answer sent before the card opened is dropped as stale, but
		// the card stays open: it is the answer that is old, not the card.
		sentEarlier := !in.SentAt.IsZero() && c.OpenedAt.After(in.SentAt.Add(SentSkew)) && outcome != signoff.AnswerExpired && outcome != signoff.AnswerStale
		if sentEarlier {
			outcome = signoff.AnswerStale
		}
		if outcome == signoff.AnswerAccepted && !in.Allowed {
			outcome = signoff.AnswerRefused
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO card_answers (id, card_id, workspace_id, channel, platform_user, actor_id, option, outcome, detail, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', $9)`,
			signoff.NewID("ans"), c.ID, in.WorkspaceID, in.Channel, in.PlatformUser, in.Responder.ActorID,
			truncate(in.Option, 64), string(outcome), micros(now)); err != nil {
			return fmt.Errorf("record answer: %w", err)
		}
		switch outcome {
		case signoff.AnswerWrongResponder:
			// Asked again, but at most once per ReaskEvery: anyone in a chat
			// workspace can answer, and each re-ask goes to every channel.
			res, err := tx.ExecContext(ctx, `UPDATE cards SET asked = asked + 1, reasked_at = $1 WHERE id = $2 AND reasked_at <= $3`,
				micros(now), c.ID, micros(now.Add(-ReaskEvery)))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err
			}
			c.Asked++
			_, err = s.appendEvent(ctx, tx, in.WorkspaceID, c.CaseID, "card.reasked", systemActorID, map[string]any{
				"card_id": c.ID, "kind": c.Kind, "asked": c.Asked, "reason": "an answer came from someone the card does not ask", "channel": in.Channel,
			})
			return err
		case signoff.AnswerStale:
			if sentEarlier {
				return nil
			}
			_, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'closed', closed_at = $1 WHERE id = $2 AND status = 'open'`, micros(now), c.ID)
			return err
		case signoff.AnswerExpired:
			res, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'expired', closed_at = $1 WHERE id = $2 AND status = 'open'`, micros(now), c.ID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				_, err = s.appendEvent(ctx, tx, in.WorkspaceID, c.CaseID, "card.expired", systemActorID, map[string]any{"card_id": c.ID})
			}
			return err
		}
		return nil
	})
	return c, outcome, err
}

// SettleCard records the accepted answer a acted on for card id, and
// marks the card answered (whether it was still open or already closed
// by the decision it carried).
func (s *DB) SettleCard(ctx context.Context, ws, id string, a signoff.CardAnswer) error {
	body, _ := json.Marshal(a)
	return s.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE cards SET status = 'answered', closed_at = $1, answer = $2 WHERE id = $3 AND workspace_id = $4 AND status IN ('open', 'closed')`,
			micros(s.clock()), string(body), id, ws)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &signoff.Error{Code: signoff.ECONFLICT, Message: fmt.Sprintf("card %s is settled", id)}
		}
		var caseID string
		if err := tx.QueryRowContext(ctx, `SELECT case_id FROM cards WHERE id = $1`, id).Scan(&caseID); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, ws, caseID, "card.answered", a.ActorID, map[string]any{
			"card_id": id, "option": a.Option, "channel": a.Channel, "platform_user": a.PlatformUser,
		})
		return err
	})
}

// ListCards implements signoff.OutboxService.
func (s *DB) ListCards(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Card, []signoff.CardAnswer, error) {
	if !isStaff(by) {
		return nil, nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read cards", by.Role)
	}
	if _, err := s.GetCase(ctx, by, caseID); err != nil {
		return nil, nil, err
	}
	cards, err := queryAll(ctx, s.db, scanCard, `SELECT `+cardColumns+` FROM cards WHERE workspace_id = $1 AND case_id = $2 ORDER BY opened_at DESC, id`, by.WorkspaceID, caseID)
	if err != nil {
		return nil, nil, fmt.Errorf("list cards: %w", err)
	}
	now := s.now()
	for i := range cards {
		cards[i] = cards[i].Effective(now)
	}
	answers, err := queryAll(ctx, s.db, func(sc scanner, a *signoff.CardAnswer) error {
		var at int64
		if err := sc.Scan(&a.ID, &a.CardID, &a.Channel, &a.PlatformUser, &a.ActorID, &a.Option, &a.Outcome, &a.Detail, &at); err != nil {
			return err
		}
		a.At = fromMicros(at)
		return nil
	}, `SELECT a.id, a.card_id, a.channel, a.platform_user, a.actor_id, a.option, a.outcome, a.detail, a.created_at
		FROM card_answers a JOIN cards c ON c.id = a.card_id WHERE c.workspace_id = $1 AND c.case_id = $2 ORDER BY a.created_at, a.id`, by.WorkspaceID, caseID)
	return cards, answers, err
}

// MapChatUser implements signoff.OutboxService.
func (s *DB) MapChatUser(ctx context.Context, by signoff.Actor, u signoff.ChatUser) (signoff.ChatUser, error) {
	if by.Role != signoff.RoleOwner && !isServer(by) {
		return u, signoff.Errorf(signoff.EFORBIDDEN, "only owners map chat users")
	}
	if u.Platform != signoff.ChannelSlack && u.Platform != signoff.ChannelMattermost {
		return u, signoff.Errorf(signoff.EINVALID, "platform must be slack or mattermost")
	}
	if u.UserID == "" || len(u.UserID) > 64 || len(u.TeamID) > 64 {
		return u, signoff.Errorf(signoff.EINVALID, "user_id is required (at most 64 characters), team_id at most 64")
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		a, err := s.getActor(ctx, tx, by.WorkspaceID, u.ActorID)
		if err != nil {
			return err
		}
		if !a.Role.IsHuman() || a.Role == signoff.RoleReporter {
			return signoff.Errorf(signoff.EINVALID, "chat users map to people of the workspace, not %s", a.Role)
		}
		u.CreatedAt = s.clock()
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_users WHERE workspace_id = $1 AND platform = $2 AND team_id = $3 AND user_id = $4`,
			by.WorkspaceID, u.Platform, u.TeamID, u.UserID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chat_users (workspace_id, platform, team_id, user_id, actor_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			by.WorkspaceID, u.Platform, u.TeamID, u.UserID, u.ActorID, micros(u.CreatedAt)); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "chat_user.mapped", by.ID, map[string]any{
			"platform": u.Platform, "team_id": u.TeamID, "user_id": u.UserID, "actor_id": u.ActorID,
		})
		return err
	})
	return u, err
}

// ChatResponder resolves a chat user of ws to the person they are mapped
// to; an unmapped user (or one whose person is gone) is an empty
// responder, whom no card addresses.
func (s *DB) ChatResponder(ctx context.Context, ws, platform, team, user string) (signoff.CardResponder, error) {
	var actorID string
	err := s.db.QueryRowContext(ctx, `SELECT actor_id FROM chat_users WHERE workspace_id = $1 AND platform = $2 AND team_id = $3 AND user_id = $4`,
		ws, platform, team, user).Scan(&actorID)
	if errors.Is(err, sql.ErrNoRows) {
		return signoff.CardResponder{}, nil
	} else if err != nil {
		return signoff.CardResponder{}, err
	}
	a, err := s.getActor(ctx, s.db, ws, actorID)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return signoff.CardResponder{}, nil
	} else if err != nil {
		return signoff.CardResponder{}, err
	}
	if a.DisabledAt != nil {
		return signoff.CardResponder{}, nil
	}
	return signoff.CardResponder{ActorID: a.ID, Role: a.Role}, nil
}

// ActorOf returns a person of ws (for acting on an accepted chat answer).
func (s *DB) ActorOf(ctx context.Context, ws, id string) (signoff.Actor, error) {
	return s.getActor(ctx, s.db, ws, id)
}

// ReporterContact returns the contact the reporter of a case left with
// their first report ("" when none). It is for the e-mail notice only.
func (s *DB) ReporterContact(ctx context.Context, ws, caseID string) (string, error) {
	var contact string
	err := s.db.QueryRowContext(ctx, `SELECT contact FROM reporter_texts WHERE workspace_id = $1 AND case_id = $2 AND contact <> '' ORDER BY created_at, id LIMIT 1`,
		ws, caseID).Scan(&contact)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return contact, err
}

// OpenCardsOfCase lists the open cards of a case, newest first.
func (s *DB) OpenCardsOfCase(ctx context.Context, ws, caseID string) ([]signoff.Card, error) {
	out, err := queryAll(ctx, s.db, scanCard, `SELECT `+cardColumns+` FROM cards WHERE workspace_id = $1 AND case_id = $2 AND status = 'open' ORDER BY opened_at DESC, id`, ws, caseID)
	now := s.now()
	for i := range out {
		out[i] = out[i].Effective(now)
	}
	return out, err
}
