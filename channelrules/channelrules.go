// Package channelrules holds the rules a notification channel's
// configuration and its outbox pass in the store: what a channel's input
// must hold, the events it subscribes to by default and by pattern, and
// the id of each message. The store is given Rules when it opens
// (signoff.OutboxRules) and applies them in its transactions.
package channelrules

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/outbox"
	"github.com/signoff-dev/signoff/webhook"
)

// Rules implements signoff.OutboxRules. Hosts is the rule for the hosts
// channels may reach; nil means public addresses only.
type Rules struct {
	Hosts *netguard.Guard
}

// WithHosts are the rules with a host rule: public addresses, plus what
// allow lists (the server's SIGNOFF_CHANNEL_HOSTS). r resolves names (nil:
// the system resolver; tests answer with their own).
func WithHosts(allow netguard.Allowlist, r netguard.Resolver) Rules {
	return Rules{Hosts: &netguard.Guard{Policy: netguard.Policy{Allow: allow, Public: true}, Resolver: r}}
}

// Guard is the rule channels are stored and delivered under: the notify
// desk dials through it, so what configuration accepted is what delivery
// checks again, address by address.
func (r Rules) Guard() *netguard.Guard {
	if r.Hosts == nil {
		return &netguard.Guard{Policy: netguard.Policy{Public: true}}
	}
	return r.Hosts
}

// CheckHosts refuses a channel whose webhook, chat or SMTP host is not a
// public address (or resolves to one that is not), unless the server
// allowlists it: the server sends to these hosts from inside the network
// it runs in, where internal services and the cloud's metadata endpoint
// answer. Plain SMTP (starttls none) is for a loopback server only. Errors
// name the host, never the URL's path, where chat servers put their
// tokens.
func (r Rules) CheckHosts(ctx context.Context, in signoff.ChannelInput) error {
	g := r.Guard()
	check := func(what, host string) error {
		if err := g.CheckConfig(ctx, host); err != nil {
			return signoff.Errorf(signoff.EINVALID, "%s: %v (the server's operator can allow it with SIGNOFF_CHANNEL_HOSTS)", what, err)
		}
		return nil
	}
	checkURL := func(what, raw string) error {
		u, err := url.Parse(raw)
		if err != nil {
			return signoff.Errorf(signoff.EINVALID, "%s is not a URL", what)
		}
		return check(what, u.Hostname())
	}
	sec, set := in.Secrets, in.Settings
	switch in.Kind {
	case signoff.ChannelWebhook, signoff.ChannelMattermost:
		return checkURL("secrets.url", sec.URL)
	case signoff.ChannelSlack:
		if sec.URL != "" {
			if err := checkURL("secrets.url", sec.URL); err != nil {
				return err
			}
		}
		if set.SlackAPI != "" {
			return checkURL("settings.slack_api", set.SlackAPI)
		}
	case signoff.ChannelEmail:
		if set.StartTLS == "none" && !loopbackName(set.SMTPHost) {
			return signoff.Errorf(signoff.EINVALID, `starttls "none" sends in the clear, so only to a loopback smtp_host (localhost, 127.0.0.0/8, ::1), not %s`, set.SMTPHost)
		}
		return check("settings.smtp_host", set.SMTPHost)
	}
	return nil
}

// loopbackName reports whether host is localhost or a loopback address
// in any form: it is what plain SMTP may be sent to.
func loopbackName(host string) bool {
	if ip, ok := netguard.ParseIP(host); ok {
		return netguard.Classify(ip) == netguard.Loopback
	}
	return netguard.NormalHost(host) == "localhost"
}

var _ signoff.OutboxRules = Rules{}

var channelNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// CheckChannel validates a channel's input: what each kind needs, URLs
// that are absolute http(s), and chat approval only for kinds chat may
// ever answer.
func (Rules) CheckChannel(in signoff.ChannelInput) error {
	if !channelNameRE.MatchString(in.Name) {
		return signoff.Errorf(signoff.EINVALID, "name must be 1 to 64 of a-z, 0-9, '_', '.', '-'")
	}
	if err := outbox.CheckPatterns(in.Events); err != nil {
		return signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	sec, set := in.Secrets, in.Settings
	needURL := func() error {
		u, err := url.Parse(sec.URL)
		if sec.URL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return signoff.Errorf(signoff.EINVALID, "a %s channel needs secrets.url, an absolute http(s) URL", in.Kind)
		}
		return nil
	}
	switch in.Kind {
	case signoff.ChannelWebhook:
		if err := needURL(); err != nil {
			return err
		}
		if _, err := webhook.ParseSecret(sec.WebhookSecret); err != nil {
			return signoff.Errorf(signoff.EINVALID, "a webhook channel needs secrets.webhook_secret: whsec_ and the base64 of 24 to 64 random bytes")
		}
	case signoff.ChannelSlack:
		if sec.BotToken == "" || set.SlackChannel == "" {
			if err := needURL(); err != nil {
				return signoff.Errorf(signoff.EINVALID, "a slack channel needs secrets.url (incoming webhook) or secrets.bot_token with settings.slack_channel")
			}
		}
	case signoff.ChannelMattermost:
		if err := needURL(); err != nil {
			return err
		}
	case signoff.ChannelEmail:
		if set.SMTPHost == "" || set.SMTPPort <= 0 || set.SMTPPort > 65535 || set.From == "" {
			return signoff.Errorf(signoff.EINVALID, "an email channel needs settings.smtp_host, smtp_port and from")
		}
		if set.StartTLS != "" && set.StartTLS != "required" && set.StartTLS != "none" {
			return signoff.Errorf(signoff.EINVALID, `starttls must be "required" or "none"`)
		}
	default:
		return signoff.Errorf(signoff.EINVALID, "kind must be webhook, slack, mattermost or email")
	}
	for _, k := range in.ChatApproval {
		if in.Kind != signoff.ChannelSlack && in.Kind != signoff.ChannelMattermost {
			return signoff.Errorf(signoff.EINVALID, "chat_approval is for slack and mattermost channels")
		}
		if !card.ChatApprovable(k) {
			return signoff.Errorf(signoff.EINVALID, "chat cannot approve %s cards: they need a signed approval or the reporter's own answer", k)
		}
	}
	switch {
	case len(in.ChatApproval) > 0 && in.Kind == signoff.ChannelSlack && sec.SigningSecret == "":
		return signoff.Errorf(signoff.EINVALID, "chat approval on slack needs secrets.signing_secret to verify answers")
	case len(in.ChatApproval) > 0 && in.Kind == signoff.ChannelMattermost && sec.Token == "":
		return signoff.Errorf(signoff.EINVALID, "chat approval on mattermost needs secrets.token to verify answers")
	case in.Kind == signoff.ChannelSlack && set.SlackAPI != "":
		if u, err := url.Parse(set.SlackAPI); err != nil || u.Scheme != "https" && !loopbackHost(u.Hostname()) || u.Host == "" {
			return signoff.Errorf(signoff.EINVALID, "settings.slack_api must be an https URL (it receives the bot token)")
		}
	}
	return nil
}

// loopbackHost reports whether h names this machine (tests and local
// Slack-compatible servers may speak plain http there).
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// DefaultEvents is outbox.DefaultEvents, a copy so no caller changes it.
func (Rules) DefaultEvents() []string { return append([]string(nil), outbox.DefaultEvents...) }

// Match is outbox.Match.
func (Rules) Match(patterns []string, eventType string) bool {
	return outbox.Match(patterns, eventType)
}

// MessageID is outbox.MessageID.
func (Rules) MessageID(jobID int64, createdAt time.Time) string {
	return outbox.MessageID(jobID, createdAt)
}
