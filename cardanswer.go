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
}
