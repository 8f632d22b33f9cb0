package signoff

import (
	"context"
	"time"
)

// OutboxRules are the rules of notification channels and their outbox
// that the store applies in its transactions (the channelrules package
// implements them). The store is given them at New and refuses to open
// without them.
type OutboxRules interface {
	// CheckChannel refuses (EINVALID) a channel input that may not be
	// stored: its name, event patterns, what its kind needs, chat
	// approval only of what chat may approve.
	CheckChannel(in ChannelInput) error
	// DefaultEvents are the patterns of a channel given none.
	DefaultEvents() []string
	// Match reports whether eventType matches one of patterns.
	Match(patterns []string, eventType string) bool
	// MessageID is the id of the outbox message of a notification job.
	MessageID(jobID int64, createdAt time.Time) string
	// CheckHosts refuses (EINVALID) a channel whose hosts the server may
	// not send to.
	CheckHosts(ctx context.Context, in ChannelInput) error
}
