package sqlstore

import (
	"context"
	"net/url"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/netguard"
)

// SetChannelHosts sets the rule for the hosts notification channels may
// reach: public addresses, plus what allow lists (the server's
// SIGNOFF_CHANNEL_HOSTS). r resolves names (nil: the system resolver;
// tests answer with their own). Call it before serving.
func (s *DB) SetChannelHosts(allow netguard.Allowlist, r netguard.Resolver) {
	s.channelGuard = &netguard.Guard{Policy: netguard.Policy{Allow: allow, Public: true}, Resolver: r}
}

// ChannelGuard is the rule channels are stored and delivered under: the
// notify desk dials through it, so what configuration accepted is what
// delivery checks again, address by address. Without SetChannelHosts,
// public addresses only.
func (s *DB) ChannelGuard() *netguard.Guard {
	if s.channelGuard == nil {
		return &netguard.Guard{Policy: netguard.Policy{Public: true}}
	}
	return s.channelGuard
}

// checkChannelHosts refuses a channel whose webhook, chat or SMTP host is
// not a public address (or resolves to one that is not), unless the
// server allowlists it: the server sends to these hosts from inside the
// network it runs in, where internal services and the cloud's metadata
// endpoint answer. Plain SMTP (starttls none) is for a loopback server
// only. Errors name the host, never the URL's path, where chat servers put
// their tokens.
func (s *DB) checkChannelHosts(ctx context.Context, in signoff.ChannelInput) error {
	g := s.ChannelGuard()
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
