package notify

import (
	"context"
	"encoding/json"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
)

// Store is the storage the outbox's deliverer and the cards need: exactly
// the calls this package makes, so that it reaches the store through an
// interface and never imports it. *sqlstore.DB implements it (checked in
// the tests).
type Store interface {
	// The outbox: a job's message, its claim under a lease, and how the
	// attempt ended (ErrSettled or a *WaitError refuse a claim).
	MessageFor(ctx context.Context, j signoff.NotifyJob) (signoff.OutboxMessage, error)
	ClaimMessage(ctx context.Context, id, holder string, lease time.Duration) (signoff.OutboxClaim, error)
	FinishMessage(ctx context.Context, c signoff.OutboxClaim, r signoff.OutboxResult) error

	// Channels: one with its opened secrets, and the rule every
	// connection to a receiver is dialled through.
	ChannelWithSecrets(ctx context.Context, ws, id string) (signoff.Channel, signoff.ChannelSecrets, error)
	ChannelByID(ctx context.Context, id string) (signoff.Channel, signoff.ChannelSecrets, error)
	ChannelRules() signoff.OutboxRules

	// What a message shows: its event, the case's reporter and the
	// question asked of them, the actor named.
	EventAt(ctx context.Context, ws string, seq int64) (signoff.Event, error)
	ReporterContact(ctx context.Context, ws, caseID string) (string, error)
	QuestionAsked(ctx context.Context, ws, caseID string, seq int64) (question, lang string, err error)
	ActorOf(ctx context.Context, ws, id string) (signoff.Actor, error)

	// Cards: opening, reading, answering, settling and expiring them.
	CardCauseOf(ctx context.Context, j signoff.CardJob) (signoff.CardCause, error)
	OpenCard(ctx context.Context, c signoff.Card) (signoff.Card, bool, error)
	CardByID(ctx context.Context, ws, id string) (signoff.Card, error)
	CardsOfCase(ctx context.Context, ws, caseID string) ([]signoff.Card, error)
	OpenCardsOfCase(ctx context.Context, ws, caseID string) ([]signoff.Card, error)
	AnswerCard(ctx context.Context, in signoff.CardAnswerInput) (signoff.Card, card.Outcome, error)
	SettleCard(ctx context.Context, ws, id string, a signoff.CardAnswer) error
	ExpireCard(ctx context.Context, ws, id string) error

	// Chat answers: who answered, and whether a verified request is new
	// (the same request again is a replay).
	ChatResponder(ctx context.Context, ws, platform, team, user string) (card.Responder, error)
	FirstChatRequest(ctx context.Context, key string) (bool, error)

	// Decisions a card answers.
	GetDecision(ctx context.Context, by signoff.Actor, id string) (signoff.Decision, error)
	DecideAmended(ctx context.Context, by signoff.Actor, id, subjectDigest string, approve bool, reason string, amendment json.RawMessage) (signoff.Decision, error)
}
