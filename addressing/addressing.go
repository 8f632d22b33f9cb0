// Package addressing decides who may wake an agent by mentioning it in a
// case room. It is pure: the store hands it the authenticated sender, the
// agent and the agent's policy, and it answers yes or no with a reason.
//
// Authority comes only from the sender the server authenticated, never from
// the text of a message: a body that claims "I am the owner" is just text.
package addressing

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// MaxMentions is the most handles one message can address; later ones are
// ignored.
const MaxMentions = 16

// MaxHandle is the longest handle, in bytes.
const MaxHandle = 64

// Limits on a policy's size.
const (
	MaxRules   = 32
	MaxRuleIDs = 100
)

// Wildcard in Users or Agents admits every human (non-reporter) or every
// agent of the workspace.
const Wildcard = "*"

// Mentions returns the @handles in body, lower-cased and de-duplicated in
// order of first appearance, at most MaxMentions. An '@' counts only at the
// start or after a character that cannot be part of a handle or of an
// address, so "rita@example.org" mentions nobody. A handle starts with an
// ASCII letter or digit, continues with letters, digits, '_', '.' or '-',
// and loses trailing '.' and '-' (sentence punctuation). A run longer than
// MaxHandle is not a handle at all rather than a truncated one, so it cannot
// address some other agent by its prefix.
func Mentions(body string) []string {
	out := []string{}
	prev := rune(-1) // start of text
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRuneInString(body[i:])
		if r != '@' || !boundary(prev) {
			prev = r
			i += size
			continue
		}
		j := i + 1
		for j < len(body) && handleByte(body[j]) {
			j++
		}
		if h := strings.TrimRight(body[i+1:j], ".-"); h != "" && isAlnum(h[0]) && len(h) <= MaxHandle && !continuesWord(body[j:]) {
			h = strings.ToLower(h)
			if !slices.Contains(out, h) {
				out = append(out, h)
				if len(out) == MaxMentions {
					return out
				}
			}
		}
		prev = '@'
		if j > i+1 {
			prev = rune(body[j-1])
		}
		i = j
	}
	return out
}

// boundary reports whether an '@' after prev may start a mention: at the
// start, or after anything that cannot be part of a handle or an address.
func boundary(prev rune) bool {
	if prev < 0 {
		return true
	}
	return !unicode.IsLetter(prev) && !unicode.IsDigit(prev) && prev != '.' && prev != '_' && prev != '-'
}

// continuesWord reports whether s (what follows a handle's characters)
// starts with a non-ASCII letter or digit: "@fixerü" is not "@fixer".
func continuesWord(s string) bool {
	if s == "" || s[0] < utf8.RuneSelf {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func handleByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// AgentInfo is the agent a mention resolved to.
type AgentInfo = signoff.AddressedAgent

// SenderInfo is the authenticated author of the message: who the server
// says they are, never who the text says they are.
type SenderInfo = signoff.AddressSender

// Refusal reasons that callers may want to recognise.
const (
	ReasonReporter = signoff.AddressReasonReporter
	ReasonSelf     = "an agent does not address itself"
)

// Rules implements signoff.AddressingRules, the rules the store applies
// to a message's mentions and to a policy it stores.
type Rules struct{}

var _ signoff.AddressingRules = Rules{}

// Mentions is Mentions.
func (Rules) Mentions(body string) []string { return Mentions(body) }

// Admits is Admits.
func (Rules) Admits(p signoff.AddressingPolicy, agent AgentInfo, sender SenderInfo, caseID, projectID string) (bool, string) {
	return Admits(p, agent, sender, caseID, projectID)
}

// Check is Check.
func (Rules) Check(p signoff.AddressingPolicy) error { return Check(p) }

// DefaultPolicy is what an agent without rules admits: its owner and the
// owner's other agents.
var DefaultPolicy = signoff.AddressingPolicy{Rules: []signoff.AddressRule{{Owner: true}}}

// Admits reports whether sender may address agent on the case caseID of
// project projectID under policy p, and if not, why. Reporters are never
// admitted, nor is an agent by itself; everything no rule admits is denied.
func Admits(p signoff.AddressingPolicy, agent AgentInfo, sender SenderInfo, caseID, projectID string) (bool, string) {
	name := agent.Name
	if name == "" {
		name = agent.ID
	}
	switch {
	case sender.Role == signoff.RoleReporter:
		return false, ReasonReporter
	case sender.ID == "" || agent.ID == "":
		return false, fmt.Sprintf("sender is not admitted by %s's addressing policy", name)
	case sender.ID == agent.ID:
		return false, ReasonSelf
	}
	rules := p.Rules
	if len(rules) == 0 {
		rules = DefaultPolicy.Rules
	}
	human, isAgent := sender.Role.IsHuman(), sender.Role.IsAgent()
	for _, r := range rules {
		if !inScope(r, caseID, projectID) {
			continue
		}
		switch {
		case human && (slices.Contains(r.Users, sender.ID) || slices.Contains(r.Users, Wildcard)):
			return true, ""
		case isAgent && (slices.Contains(r.Agents, sender.ID) || slices.Contains(r.Agents, Wildcard)):
			return true, ""
		case r.Owner && agent.OwnerID != "" && (sender.ID == agent.OwnerID || isAgent && sender.OwnerID == agent.OwnerID):
			return true, ""
		}
	}
	return false, fmt.Sprintf("sender is not admitted by %s's addressing policy", name)
}

func inScope(r signoff.AddressRule, caseID, projectID string) bool {
	if len(r.Cases) == 0 && len(r.Projects) == 0 {
		return true
	}
	return caseID != "" && slices.Contains(r.Cases, caseID) || projectID != "" && slices.Contains(r.Projects, projectID)
}

// Check returns EINVALID unless every id in p is a well-formed id of its
// kind (users and agents may also be "*") and p is within the size limits.
// It does not look ids up: an id of nothing simply never matches.
func Check(p signoff.AddressingPolicy) error {
	if len(p.Rules) > MaxRules {
		return signoff.Errorf(signoff.EINVALID, "a policy has at most %d rules", MaxRules)
	}
	for i, r := range p.Rules {
		lists := []struct {
			what, prefix string
			ids          []string
			wildcard     bool
		}{
			{"cases", signoff.PrefixCase, r.Cases, false},
			{"projects", signoff.PrefixProject, r.Projects, false},
			{"users", signoff.PrefixActor, r.Users, true},
			{"agents", signoff.PrefixActor, r.Agents, true},
		}
		for _, l := range lists {
			if len(l.ids) > MaxRuleIDs {
				return signoff.Errorf(signoff.EINVALID, "rule %d: %s lists more than %d ids", i+1, l.what, MaxRuleIDs)
			}
			for _, id := range l.ids {
				if l.wildcard && id == Wildcard {
					continue
				}
				if !signoff.ValidID(l.prefix, id) {
					return signoff.Errorf(signoff.EINVALID, "rule %d: %s: %q is not a valid id", i+1, l.what, id)
				}
			}
		}
		if len(r.Users) == 0 && len(r.Agents) == 0 && !r.Owner {
			return signoff.Errorf(signoff.EINVALID, "rule %d admits nobody: name users, agents or set owner", i+1)
		}
	}
	return nil
}
