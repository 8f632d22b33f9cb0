package sqlstore

import "github.com/signoff-dev/signoff"

// SetChannelRules replaces the channel rules the store was opened with,
// typically by the same rules with the server's host allowlist
// (channelrules.WithHosts). Call it before serving. A nil r (or a nil
// pointer) changes nothing: the store never runs without channel rules.
func (s *DB) SetChannelRules(r signoff.OutboxRules) {
	if noRule(r) {
		return
	}
	s.outbox = r
	if s.ro != nil {
		s.ro.outbox = r
	}
}

// ChannelRules are the channel rules the store applies; the notify desk
// delivers under the same host rule.
func (s *DB) ChannelRules() signoff.OutboxRules { return s.outbox }
