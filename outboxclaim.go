package signoff

import (
	"errors"
	"time"
)

// The outbox's delivery protocol between a deliverer (notify) and the
// store: a claim under a lease, the attempt's result, and why a claim was
// refused.

// OutboxClaim is a message leased to one deliverer.
type OutboxClaim struct {
	Message OutboxMessage
	// Token acknowledges the delivery; only the lease holder has it.
	Token   string
	Attempt int
	// Budget is how many attempts this message has had since it was last
	// re-driven (this one included).
	Budget int
}

// ErrSettled refuses a claim: the message is delivered, dead or skipped.
var ErrSettled = errors.New("outbox: message settled")

// WaitError says a message cannot be delivered yet: another worker holds
// its lease, or an earlier message of its case is still pending.
type WaitError struct {
	Until  time.Time
	Reason string
}

func (e *WaitError) Error() string { return "outbox: " + e.Reason }

// OutboxResult is how a delivery attempt ended.
type OutboxResult struct {
	// Status is the receiver's HTTP status, 0 when none came back.
	Status int
	// Err is nil for a delivered message.
	Err error
	// Dead parks the message: no more attempts until re-driven.
	Dead bool
	// Skipped: nothing to deliver (no recipient, the channel disabled).
	Skipped bool
	// NextAt is when a failed message is tried again.
	NextAt time.Time
}
