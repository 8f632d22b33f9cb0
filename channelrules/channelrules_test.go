package channelrules

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/outbox"
	"github.com/signoff-dev/signoff/webhook"
)

// TestCheckChannel: one row per rule a channel's input passes before the
// store keeps it.
func TestCheckChannel(t *testing.T) {
	t.Parallel()
	hook := signoff.ChannelSecrets{URL: "https://hooks.example.net/x", WebhookSecret: webhook.NewSecret()}
	tests := []struct {
		name string
		in   signoff.ChannelInput
		ok   bool
	}{
		{"webhook", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: hook}, true},
		{"bad name", signoff.ChannelInput{Name: "Ops!", Kind: signoff.ChannelWebhook, Secrets: hook}, false},
		{"bad pattern", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: hook, Events: []string{""}}, false},
		{"webhook without secret", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: signoff.ChannelSecrets{URL: hook.URL}}, false},
		{"webhook without url", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: signoff.ChannelSecrets{WebhookSecret: hook.WebhookSecret}}, false},
		{"webhook not http", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: signoff.ChannelSecrets{URL: "ftp://x", WebhookSecret: hook.WebhookSecret}}, false},
		{"unknown kind", signoff.ChannelInput{Name: "ops", Kind: "pager", Secrets: hook}, false},
		{"email", signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail, Settings: signoff.ChannelSettings{SMTPHost: "smtp.example.net", SMTPPort: 587, From: "a@example.net"}}, true},
		{"email bad port", signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail, Settings: signoff.ChannelSettings{SMTPHost: "smtp.example.net", SMTPPort: 70000, From: "a@example.net"}}, false},
		{"email bad starttls", signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail, Settings: signoff.ChannelSettings{SMTPHost: "smtp.example.net", SMTPPort: 587, From: "a@example.net", StartTLS: "maybe"}}, false},
		{"chat approval on a webhook", signoff.ChannelInput{Name: "ops", Kind: signoff.ChannelWebhook, Secrets: hook, ChatApproval: []string{card.TriageGate}}, false},
		{"chat approval of a signed approval", signoff.ChannelInput{Name: "mm", Kind: signoff.ChannelMattermost, Secrets: signoff.ChannelSecrets{URL: hook.URL, Token: "t"}, ChatApproval: []string{card.CandidateApproval}}, false},
		{"chat approval on mattermost without token", signoff.ChannelInput{Name: "mm", Kind: signoff.ChannelMattermost, Secrets: signoff.ChannelSecrets{URL: hook.URL}, ChatApproval: []string{card.TriageGate}}, false},
		{"chat approval on mattermost", signoff.ChannelInput{Name: "mm", Kind: signoff.ChannelMattermost, Secrets: signoff.ChannelSecrets{URL: hook.URL, Token: "t"}, ChatApproval: []string{card.TriageGate}}, true},
		{"slack api over http", signoff.ChannelInput{Name: "sl", Kind: signoff.ChannelSlack, Secrets: signoff.ChannelSecrets{BotToken: "b"}, Settings: signoff.ChannelSettings{SlackChannel: "c", SlackAPI: "http://slack.example.net"}}, false},
		{"slack api over loopback http", signoff.ChannelInput{Name: "sl", Kind: signoff.ChannelSlack, Secrets: signoff.ChannelSecrets{BotToken: "b"}, Settings: signoff.ChannelSettings{SlackChannel: "c", SlackAPI: "http://127.0.0.1:9"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Rules{}.CheckChannel(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("CheckChannel = %v, want ok %v", err, tt.ok)
			}
			if err != nil && signoff.ErrorCode(err) != signoff.EINVALID {
				t.Fatalf("code %q, want invalid", signoff.ErrorCode(err))
			}
		})
	}
	r := Rules{}
	if d := r.DefaultEvents(); len(d) != len(outbox.DefaultEvents) || !r.Match(d, "case.created") || r.Match([]string{"case.*"}, "gate.refused") {
		t.Fatalf("DefaultEvents/Match disagree with outbox")
	}
	at := time.Unix(1700000000, 0)
	if r.MessageID(7, at) != outbox.MessageID(7, at) {
		t.Fatal("MessageID differs from outbox.MessageID")
	}
}
