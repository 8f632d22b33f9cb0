package signoff

import (
	"context"
	"strings"
	"time"
)

// PrefixChannel starts notification channel ids.
const PrefixChannel = "chn"

// Channel kinds.
const (
	ChannelWebhook    = "webhook"
	ChannelSlack      = "slack"
	ChannelMattermost = "mattermost"
	ChannelEmail      = "email"
)

// Channel is where a workspace's notifications go. Its secrets are sealed
// at rest and never returned.
type Channel struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Events      []string        `json:"events"`
	Settings    ChannelSettings `json:"settings"`
	// ChatApproval lists the card kinds a chat command on this channel may
	// answer as an approval (never signed approvals).
	ChatApproval []string `json:"chat_approval"`
	Enabled      bool     `json:"enabled"`
	// Secrets names the secrets set, never their values.
	Secrets   []string  `json:"secrets"`
	KeyID     string    `json:"key_id"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ChannelSettings are a channel's settings that may be shown.
type ChannelSettings struct {
	// URLHost is the host of the (sealed) delivery URL, for display.
	URLHost string `json:"url_host,omitempty"`
	// SlackChannel, with a bot token, posts with chat.postMessage to this
	// channel instead of the incoming webhook.
	SlackChannel string `json:"slack_channel,omitempty"`
	// SlackAPI is the Slack Web API base (default https://slack.com/api).
	SlackAPI string `json:"slack_api,omitempty"`
	// ActionURL is where Mattermost posts button clicks (this server's
	// /api/v1/chat/{channel}/mattermost/actions, public URL).
	ActionURL string `json:"action_url,omitempty"`
	// SMTP settings of an e-mail channel.
	SMTPHost string `json:"smtp_host,omitempty"`
	SMTPPort int    `json:"smtp_port,omitempty"`
	From     string `json:"from,omitempty"`
	StartTLS string `json:"starttls,omitempty"`
	Username string `json:"username,omitempty"`
	// CaseURL, when set, is the case page link with "{case}" in it.
	CaseURL string `json:"case_url,omitempty"`
}

// ChannelSecrets are sealed at rest with the server's secret key.
type ChannelSecrets struct {
	// URL is the webhook's, or Slack's or Mattermost's incoming webhook
	// URL (which carries a token).
	URL string `json:"url,omitempty"`
	// WebhookSecret signs outbound webhooks (Standard Webhooks, whsec_).
	WebhookSecret string `json:"webhook_secret,omitempty"`
	// BotToken posts with Slack's chat.postMessage.
	BotToken string `json:"bot_token,omitempty"`
	// SigningSecret verifies Slack's inbound requests (v0).
	SigningSecret string `json:"signing_secret,omitempty"`
	// Token verifies Mattermost's inbound requests.
	Token string `json:"token,omitempty"`
	// SMTPPassword authenticates to the SMTP server.
	SMTPPassword string `json:"smtp_password,omitempty"`
}

// Names lists the secrets that are set.
func (s ChannelSecrets) Names() []string {
	var out []string
	for _, f := range []struct {
		name, v string
	}{{"url", s.URL}, {"webhook_secret", s.WebhookSecret}, {"bot_token", s.BotToken}, {"signing_secret", s.SigningSecret}, {"token", s.Token}, {"smtp_password", s.SMTPPassword}} {
		if f.v != "" {
			out = append(out, f.name)
		}
	}
	return out
}

// ChannelInput creates or replaces a channel by name.
type ChannelInput struct {
	Name         string          `json:"name"`
	Kind         string          `json:"kind"`
	Events       []string        `json:"events,omitempty"`
	Settings     ChannelSettings `json:"settings"`
	Secrets      ChannelSecrets  `json:"secrets"`
	ChatApproval []string        `json:"chat_approval,omitempty"`
	Enabled      *bool           `json:"enabled,omitempty"`
}

// Outbox message states.
const (
	OutboxPending   = "pending"
	OutboxDelivered = "delivered"
	OutboxDead      = "dead"
	// OutboxSkipped: nothing to deliver (an e-mail notice for a reporter
	// who left no address).
	OutboxSkipped = "skipped"
)

// OutboxMessage is one notification of one ledger event to one channel.
type OutboxMessage struct {
	MessageID   string     `json:"message_id"`
	JobID       int64      `json:"job_id"`
	WorkspaceID string     `json:"workspace_id"`
	ChannelID   string     `json:"channel_id"`
	CaseID      string     `json:"case_id,omitempty"`
	Seq         int64      `json:"seq"`
	EventType   string     `json:"event_type"`
	CardID      string     `json:"card_id,omitempty"`
	State       string     `json:"state"`
	Attempts    int        `json:"attempts"`
	LastError   string     `json:"last_error,omitempty"`
	LeaseHolder string     `json:"lease_holder,omitempty"`
	LeaseUntil  *time.Time `json:"lease_until,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// DeliveryAttempt is one attempt to deliver a message.
type DeliveryAttempt struct {
	Attempt    int        `json:"attempt"`
	Holder     string     `json:"holder"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Status is the receiver's HTTP status (0 when none came back).
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// OutboxFilter selects messages; empty fields select all.
type OutboxFilter struct {
	State     string
	ChannelID string
	CaseID    string
	Limit     int
}

// Card statuses.
const (
	CardOpen     = "open"
	CardAnswered = "answered"
	CardExpired  = "expired"
	// CardClosed: the case moved on, or the decision was settled another
	// way (CLI, web, tracking page).
	CardClosed = "closed"
)

// Card addressee kinds.
const (
	AddressRole     = "role"
	AddressActor    = "actor"
	AddressReporter = "reporter"
)

// Addressee is who a card asks: people holding one of some roles, one
// named person, or the holder of the case's reporter capability.
type Addressee struct {
	Kind  string   `json:"kind"`
	Roles []string `json:"roles,omitempty"`
	Actor string   `json:"actor,omitempty"`
}

// String is the addressee as a card shows it.
func (a Addressee) String() string {
	switch a.Kind {
	case AddressRole:
		return "role:" + strings.Join(a.Roles, ",")
	case AddressActor:
		return "actor:" + a.Actor
	default:
		return "reporter"
	}
}

// Card is an approval card: a pending human decision, with its exact
// subject digest, addressee and expiry (package card has its rules).
type Card struct {
	ID            string    `json:"id"`
	WorkspaceID   string    `json:"workspace_id"`
	CaseID        string    `json:"case_id"`
	Kind          string    `json:"kind"`
	CauseSeq      int64     `json:"cause_seq"`
	CaseState     string    `json:"case_state"`
	CaseVersion   int64     `json:"case_version"`
	DecisionID    string    `json:"decision_id,omitempty"`
	SubjectDigest string    `json:"subject_digest"`
	Options       []string  `json:"options"`
	Addressee     Addressee `json:"addressee"`
	Status        string    `json:"status"`
	// Asked counts how often the card was asked (1 when opened).
	Asked     int         `json:"asked"`
	OpenedAt  time.Time   `json:"opened_at"`
	ExpiresAt time.Time   `json:"expires_at"`
	ClosedAt  *time.Time  `json:"closed_at,omitempty"`
	Answer    *CardAnswer `json:"answer,omitempty"`
}

// Effective is c as of now: an open card past its expiry is expired.
func (c Card) Effective(now time.Time) Card {
	if c.Status == CardOpen && !now.Before(c.ExpiresAt) {
		c.Status = CardExpired
	}
	return c
}

// CardAnswer is an answer a card received and what became of it.
type CardAnswer struct {
	ID           string    `json:"id"`
	CardID       string    `json:"card_id"`
	Channel      string    `json:"channel"`
	PlatformUser string    `json:"platform_user,omitempty"`
	ActorID      string    `json:"actor_id,omitempty"`
	Option       string    `json:"option"`
	Outcome      string    `json:"outcome"`
	Detail       string    `json:"detail,omitempty"`
	At           time.Time `json:"at"`
}

// ChatUser maps a chat platform user to a registered person.
type ChatUser struct {
	Platform  string    `json:"platform"`
	TeamID    string    `json:"team_id"`
	UserID    string    `json:"user_id"`
	ActorID   string    `json:"actor_id"`
	CreatedAt time.Time `json:"created_at"`
}

// NotifyJob delivers one outbox message.
type NotifyJob struct {
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	// Seq is the ledger event the message tells of.
	Seq int64 `json:"seq"`
}

// Kind implements river.JobArgs.
func (NotifyJob) Kind() string { return "notify" }

// CardJob opens the card a pending decision asks for; the card's id is
// the UUIDv5 of the job, so a retry reopens the same card.
type CardJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	// Seq is the ledger event that made the decision pending.
	Seq int64 `json:"seq"`
}

// Kind implements river.JobArgs.
func (CardJob) Kind() string { return "card_open" }

// CardExpiryJob marks a card expired when its time runs out.
type CardExpiryJob struct {
	WorkspaceID string `json:"workspace_id"`
	CardID      string `json:"card_id"`
}

// Kind implements river.JobArgs.
func (CardExpiryJob) Kind() string { return "card_expiry" }

// OutboxService is the outbox and approval cards as people manage them.
type OutboxService interface {
	// PutChannel creates or replaces (by name) a channel; owners only.
	PutChannel(ctx context.Context, by Actor, in ChannelInput) (Channel, error)
	ListChannels(ctx context.Context, by Actor) ([]Channel, error)
	// ListOutbox lists messages, newest first.
	ListOutbox(ctx context.Context, by Actor, f OutboxFilter) ([]OutboxMessage, error)
	// GetOutbox returns a message with its attempts.
	GetOutbox(ctx context.Context, by Actor, messageID string) (OutboxMessage, []DeliveryAttempt, error)
	// RetryOutbox re-drives a dead message: it is delivered again, under
	// the same id.
	RetryOutbox(ctx context.Context, by Actor, messageID string) (OutboxMessage, error)
	// ListCards lists a case's cards, newest first, with their answers.
	ListCards(ctx context.Context, by Actor, caseID string) ([]Card, []CardAnswer, error)
	// MapChatUser maps a chat user to a person of the workspace; owners
	// only.
	MapChatUser(ctx context.Context, by Actor, u ChatUser) (ChatUser, error)
}
