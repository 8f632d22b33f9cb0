package signoff

import "time"

// What a card's door (notify) hands the store and reads back, in the
// domain so that the door names it without importing the store.

// CardCause is the ledger event a card job was enqueued for, and where its
// case was then.
type CardCause struct {
	Event Event
	Case  Case
}

// The vocabulary of an answer to a card. Package card holds the rule
// (card.Evaluate); the store records answers in it without importing that
// package, and is handed the rule as a CardRule so that it decides inside
// the transaction that reads the card and writes the outcome (issue 27).

// TriageDecisionKind is the decision kind of the triage gate (the crew's
// GateKind; this package does not import crew).
const TriageDecisionKind = "triage_ticket"

// CardResponder is who answered a card, as the server established it.
type CardResponder struct {
	// ActorID is the registered person (or the reporter's link id).
	ActorID string
	Role    Role
	// Reporter: the answer came with the case's reporter capability.
	Reporter bool
}

// CardAnswerInput is an answer to a card as the server established it:
// the responder is resolved (a mapped chat user, a person, the reporter's
// capability) before the card is looked at.
type CardAnswerInput struct {
	WorkspaceID  string
	CardID       string
	Channel      string
	PlatformUser string
	Responder    CardResponder
	Option       string
	DigestPrefix string
	// Allowed: the channel's policy lets this answer count (chat approval
	// of this kind, the digest quoted). An answer that would be accepted
	// but is not allowed is recorded as refused and changes nothing.
	Allowed bool
	// SentAt, when known, is when the answer was sent: a card opened
	// after it (allowing the store's SentSkew) was not the card its sender saw.
	SentAt time.Time
	// Evaluate is the rule that decides the answer (card.Evaluate). It is
	// applied in the transaction that reads the card, its case and its
	// decision and records the outcome, so nothing moves in between.
	// Without it the answer is refused and nothing is written.
	Evaluate CardRule
}

// CardCurrent is where a card's case is now.
type CardCurrent struct {
	State   string
	Version int64
	// DecisionPending: for a decision card, its decision still waits.
	DecisionPending bool
}

// CardOutcome is what becomes of an answer to a card.
type CardOutcome string

// Outcomes of an answer.
const (
	// AnswerAccepted: the answer is the card's to act on.
	AnswerAccepted CardOutcome = "accepted"
	// AnswerWrongResponder: discarded; the card is asked again.
	AnswerWrongResponder CardOutcome = "wrong_responder"
	// AnswerStale: the case moved on, or the card was settled:
	// acknowledged and dropped, and it blocks nothing.
	AnswerStale CardOutcome = "stale"
	// AnswerExpired: expiry fails closed.
	AnswerExpired CardOutcome = "expired"
	// AnswerBadOption: not one of the card's options.
	AnswerBadOption CardOutcome = "bad_option"
	// AnswerDigestMismatch: the answer quotes a digest that is not the
	// card's.
	AnswerDigestMismatch CardOutcome = "digest_mismatch"
	// AnswerRefused: the right person answered, but the channel's policy
	// does not let this answer count (chat approval not allowed for the
	// kind, or an approval that does not quote the digest).
	AnswerRefused CardOutcome = "refused"
)

// CardRule decides what becomes of an answer to c from r choosing option
// and quoting digestPrefix while the case is at cur (card.Evaluate).
type CardRule func(c Card, r CardResponder, option, digestPrefix string, cur CardCurrent, now time.Time) CardOutcome
