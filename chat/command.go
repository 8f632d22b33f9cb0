package chat

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// Platforms an Answer comes from.
const (
	Slack      = "slack"
	Mattermost = "mattermost"
)

// Answer is one inbound interactive answer, as parsed: NOT yet trusted
// beyond the platform signature or token. The server maps UserID to a
// registered person and checks the card before acting on it.
type Answer struct {
	Platform     string // "slack" | "mattermost"
	TeamID       string
	UserID       string // platform user id: the server maps it to a registered operator
	UserName     string
	CardID       string // set by buttons
	CaseID       string
	Option       string // "approve", "reject", ...
	DigestPrefix string // lower-case hex quoted in a command; empty for buttons
	Reason       string // free text after the digest in a command, may be empty
	ResponseURL  string
	Command      bool   // true when it came from a slash command
	Token        string // Mattermost: the token of the request (for VerifyMattermostToken)
}

// Command limits.
const (
	MinDigestPrefix = 12   // hex digits a command must quote, as package card asks
	MaxReason       = 1000 // runes of a reason
	maxCommandText  = 4096 // bytes of a command's text
)

// Usage is the one-line help shown when a command cannot be read.
const Usage = "usage: /signoff approve <case> <digest prefix> [reason] | /signoff reject <case> <digest prefix> <reason>"

// ParseCommandText reads the text of a /signoff command:
//
//	approve case_X 1a2b3c4d5e6f [reason words]
//	reject case_X 1a2b3c4d5e6f [reason words]
//
// The verb is approve or reject, in any letter case. The digest prefix is
// 12 to 64 hex digits (so a person quotes what the card shows, not
// whatever matches), returned in lower case; a "sha256:" in front of it
// is dropped, as package card does. The reason is the rest of the text
// with runs of white space made single spaces; it may be empty. Anything
// else is EINVALID with a message meant for the person who typed it.
func ParseCommandText(text string) (option, caseID, digestPrefix, reason string, err error) {
	fail := func(format string, args ...any) (string, string, string, string, error) {
		return "", "", "", "", signoff.Errorf(signoff.EINVALID, format, args...)
	}
	if len(text) > maxCommandText {
		return fail("command is longer than %d bytes", maxCommandText)
	}
	if !utf8.ValidString(text) {
		return fail("command is not valid UTF-8")
	}
	verb, rest := nextWord(text)
	switch v := strings.ToLower(verb); {
	case verb == "":
		return fail("%s", Usage)
	case v == "help":
		return fail("%s", Usage)
	case v == Approve || v == Reject:
		option = v
	default:
		return fail("unknown verb %s: use approve or reject (%s)", quote(verb), Usage)
	}
	caseID, rest = nextWord(rest)
	switch {
	case caseID == "":
		return fail("missing case id after %q (%s)", option, Usage)
	case !ValidCaseID(caseID):
		return fail("%s is not a case id: it starts with case_ followed by letters and digits", quote(caseID))
	}
	digestPrefix, rest = nextWord(rest)
	if digestPrefix == "" {
		return fail("missing digest prefix: quote at least the first %d hex digits of the subject digest shown on the card", MinDigestPrefix)
	}
	if len(digestPrefix) > 7 && strings.EqualFold(digestPrefix[:7], "sha256:") {
		digestPrefix = digestPrefix[7:]
	}
	for _, r := range digestPrefix {
		if !isHex(r) {
			return fail("digest prefix %s is not hex", quote(digestPrefix))
		}
	}
	switch n := len(digestPrefix); {
	case n < MinDigestPrefix:
		return fail("digest prefix has %d hex digits: quote at least %d", n, MinDigestPrefix)
	case n > 64:
		return fail("digest prefix has %d hex digits: a sha256 digest has 64", n)
	}
	digestPrefix = strings.ToLower(digestPrefix)
	reason = strings.Join(strings.Fields(rest), " ")
	for _, r := range reason {
		if unicode.IsControl(r) || isBidi(r) {
			return fail("reason contains control or text-direction characters")
		}
	}
	if n := utf8.RuneCountInString(reason); n > MaxReason {
		return fail("reason has %d characters: at most %d", n, MaxReason)
	}
	return option, caseID, digestPrefix, reason, nil
}

// nextWord splits off the first white-space-separated word of s.
func nextWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func isHex(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}

// parseForm parses an application/x-www-form-urlencoded body of at most
// MaxBody bytes.
func parseForm(body []byte) (url.Values, error) {
	if len(body) > MaxBody {
		return nil, signoff.Errorf(signoff.ETOOLARGE, "chat: request body over %d bytes", MaxBody)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, invalid("request body is not a URL-encoded form")
	}
	return form, nil
}

// formValue returns the value of key; repeated keys are refused, since
// the platform and a forger could then be read differently.
func formValue(form url.Values, key string, required bool) (string, error) {
	vs := form[key]
	switch {
	case len(vs) > 1:
		return "", invalid("form field %s repeated", key)
	case len(vs) == 0 || vs[0] == "":
		if required {
			return "", invalid("form field %s missing", key)
		}
		return "", nil
	}
	return vs[0], nil
}

// parseCommandForm reads the slash-command form both platforms send.
func parseCommandForm(body []byte, platform string) (Answer, error) {
	form, err := parseForm(body)
	if err != nil {
		return Answer{}, err
	}
	get := func(key string, required bool) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = formValue(form, key, required)
		return v
	}
	a := Answer{Platform: platform, Command: true}
	command := get("command", true)
	text := get("text", false)
	a.UserID = get("user_id", true)
	a.UserName = userName(get("user_name", false))
	a.TeamID = get("team_id", false)
	a.ResponseURL = get("response_url", false)
	if platform == Mattermost {
		a.Token = get("token", false)
	}
	if err != nil {
		return Answer{}, err
	}
	if command != SlashCommand {
		return Answer{}, invalid("command %s is not %s", quote(command), SlashCommand)
	}
	a.Option, a.CaseID, a.DigestPrefix, a.Reason, err = ParseCommandText(text)
	if err != nil {
		return Answer{}, err
	}
	return a, nil
}

// userName is the first non-empty name, cleaned and cut short: it is only
// shown, never trusted.
func userName(names ...string) string {
	for _, n := range names {
		if n = sanitize(n, true); n != "" {
			if utf8.RuneCountInString(n) > maxUserName {
				n = string([]rune(n)[:maxUserName])
			}
			return n
		}
	}
	return ""
}

// checkAnswer checks the identifiers of a parsed answer. Slack requires a
// team and an https response URL; Mattermost (self-hosted, maybe plain
// http inside a network) requires neither.
func checkAnswer(a Answer, needTeam bool) error {
	if !platformIDRE.MatchString(a.UserID) {
		return invalid("%s user id %s", a.Platform, quote(a.UserID))
	}
	if (needTeam || a.TeamID != "") && !platformIDRE.MatchString(a.TeamID) {
		return invalid("%s team id %s", a.Platform, quote(a.TeamID))
	}
	if a.ResponseURL != "" {
		u, err := url.Parse(a.ResponseURL)
		ok := err == nil && u.Host != "" && u.User == nil && len(a.ResponseURL) <= maxResponseURL &&
			(u.Scheme == "https" || (a.Platform == Mattermost && u.Scheme == "http"))
		if !ok {
			return invalid("%s response_url is not an absolute https URL", a.Platform)
		}
	}
	return nil
}
