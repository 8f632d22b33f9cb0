// Package chat formats Signoff notifications for Slack and Mattermost and
// reads the answers people give there: button presses and /signoff slash
// commands. It is pure: bytes, headers and a clock in, bytes or an Answer
// out, no storage and no network.
//
// Everything a notification shows may carry text nobody at Signoff wrote
// (a report's title, a reason typed by a stranger), so every builder
// escapes it for its platform: Slack's control characters &, < and > become
// entities, every @ is followed by a zero-width joiner so that no @here,
// @channel or @user can ping anyone, and on Mattermost the Markdown
// punctuation is backslash-escaped so that the text cannot make links,
// images or formatting. Texts are cut to the platforms' limits with an
// ellipsis.
//
// An Answer is only parsed, not trusted: the caller verifies the platform's
// signature (VerifySlack) or token (VerifyMattermostToken) first, and then
// maps the platform user to a registered person and checks the card
// (package card) before acting on it.
package chat

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// Message is what Signoff says in a chat about one ledger event; Card is
// set for approval requests.
type Message struct {
	ID       string // stable message id (a UUID); receivers de-duplicate on it
	Title    string // one line, e.g. "case_01H… moved to awaiting_approval"
	Text     string // plain text body; may contain untrusted text, which is escaped
	CaseID   string
	Link     string // URL of the case page, may be empty
	Fields   []Field
	Evidence string // evidence type label when relevant ("live", "simulated"...), may be empty
	Card     *Card
}

// Field is one name/value pair shown under a message.
type Field struct{ Name, Value string }

// Card is an approval request: one pending human decision on an exact
// subject digest.
type Card struct {
	ID            string // card id (UUID)
	Kind          string // triage_gate | repro_confirmation | candidate_approval | change_approval | fix_confirmation | decision:<kind>
	CaseID        string
	SubjectDigest string   // full 64-hex sha256, with or without "sha256:"
	Options       []string // e.g. ["approve","reject"]
	Addressee     string   // human-readable: "role:operator", "actor:act_…", "reporter"
	ExpiresAt     time.Time
	ChatApproval  bool // whether policy lets a chat command approve this kind
	// ApproveHint is shown when chat approval is not allowed: a web URL,
	// or a command exactly as it is to be pasted into a shell (e.g.
	// "signoff approve --case case_x"), so it carries no commentary.
	ApproveHint string
	// Change, on a change approval, is what the plan changes: without it
	// an approver would see only a digest.
	Change *Change
}

// Change is what a change approval asks about. Every field is untrusted
// (a flag's value, a file's text and the reason are anyone's words) and is
// escaped where shown.
type Change struct {
	Kind        string `json:"kind"`        // flag | file | runbook
	Target      string `json:"target"`      // e.g. "flag:prod/checkout_v2"
	Environment string `json:"environment"` // the flag's environment, or why there is none
	Before      string `json:"before"`      // the target now, one line
	After       string `json:"after"`       // what the plan makes of it, one line
	// Summary and Excerpt say more where one line cannot: the size of a
	// file's diff and its first changed lines, or a runbook's steps.
	Summary string   `json:"summary,omitempty"`
	Excerpt []string `json:"excerpt,omitempty"`
	Reason  string   `json:"reason"`
	// PlanExpiresAt is when the plan stops being executable.
	PlanExpiresAt time.Time `json:"plan_expires_at"`
}

// Options with a meaning of their own: they get coloured buttons, and
// Approve is the one ChatApproval governs.
const (
	Approve = "approve"
	Reject  = "reject"
)

// SlashCommand is the one slash command the parsers accept.
const SlashCommand = "/signoff"

// MaxBody is the largest inbound request body the parsers and VerifySlack
// accept. Real button presses and commands are a few kilobytes.
const MaxBody = 64 << 10

// Platform limits, in characters.
const (
	SlackHeaderLimit       = 150
	SlackSectionLimit      = 3000
	SlackFieldLimit        = 2000
	SlackMaxBlocks         = 50
	SlackButtonValueLimit  = 2000
	MattermostMessageLimit = 16383
)

// Limits of our own, so that one long value cannot crowd out the rest.
const (
	maxOptions     = 5   // buttons per card
	maxFields      = 40  // fields shown; the rest are counted
	maxTitle       = 300 // runes of a Mattermost title
	maxFieldName   = 100
	maxAddressee   = 200
	maxHint        = 500
	maxEvidence    = 40
	maxUserName    = 100
	maxResponseURL = 2048
)

const ellipsis = "…"

// zwj follows every @ in untrusted text: the mention still reads as
// written, but neither Slack nor Mattermost sees a name after the @.
const zwj = "\u200d"

var (
	uuidRE       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	caseIDRE     = regexp.MustCompile(`^case_[0-9A-Za-z]{1,64}$`)
	kindRE       = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}(:[a-z][a-z0-9_.-]{0,39})?$`)
	optionRE     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	digestRE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	platformIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
)

// ValidCaseID reports whether s has the shape of a case id: "case_"
// followed by letters and digits. Ids Signoff makes (signoff.NewID) are a
// stricter subset; the shape is all a chat message needs to be quoted
// safely, and the server looks the case up anyway.
func ValidCaseID(s string) bool { return caseIDRE.MatchString(s) }

// validUUID accepts the lower-case textual form Signoff's ids use.
func validUUID(s string) bool { return uuidRE.MatchString(s) }

func invalid(format string, args ...any) error {
	return signoff.Errorf(signoff.EINVALID, "chat: "+format, args...)
}

// card is a validated Card with the values the builders show.
type card struct {
	Card
	digest  string // 64 lower-case hex, without "sha256:"
	short   string // the first 12 of digest
	label   string // human name of the kind
	options []string
}

// checkMessage validates m and returns its card (nil without one). The
// builders refuse a malformed message rather than post something that
// cannot be answered or de-duplicated.
func checkMessage(m Message) (*card, error) {
	if !validUUID(m.ID) {
		return nil, invalid("message id must be a lower-case UUID")
	}
	// Sanitized, because a title of control characters would be an
	// empty header, which Slack refuses.
	if sanitize(m.Title, true) == "" {
		return nil, invalid("message title is empty")
	}
	if m.CaseID != "" && !ValidCaseID(m.CaseID) {
		return nil, invalid("message case id %s", quote(m.CaseID))
	}
	if m.Link != "" {
		if err := checkLink(m.Link); err != nil {
			return nil, err
		}
	}
	for i, f := range m.Fields {
		if sanitize(f.Name, true) == "" {
			return nil, invalid("field %d has no name", i)
		}
	}
	if m.Card == nil {
		return nil, nil
	}
	c := m.Card
	if !validUUID(c.ID) {
		return nil, invalid("card id must be a lower-case UUID")
	}
	if !kindRE.MatchString(c.Kind) {
		return nil, invalid("card kind %s", quote(c.Kind))
	}
	if !ValidCaseID(c.CaseID) {
		return nil, invalid("card case id %s", quote(c.CaseID))
	}
	if m.CaseID != "" && m.CaseID != c.CaseID {
		return nil, invalid("card is for %s but the message is about %s", c.CaseID, m.CaseID)
	}
	digest := strings.TrimPrefix(c.SubjectDigest, "sha256:")
	if !digestRE.MatchString(digest) {
		return nil, invalid("card subject digest must be 64 lower-case hex digits")
	}
	if len(c.Options) == 0 || len(c.Options) > maxOptions {
		return nil, invalid("card has %d options, want 1 to %d", len(c.Options), maxOptions)
	}
	for i, o := range c.Options {
		if !optionRE.MatchString(o) {
			return nil, invalid("card option %s", quote(o))
		}
		if slices.Contains(c.Options[:i], o) {
			return nil, invalid("card option %q repeated", o)
		}
	}
	if strings.TrimSpace(c.Addressee) == "" {
		return nil, invalid("card has no addressee")
	}
	if c.ExpiresAt.IsZero() {
		return nil, invalid("card has no expiry")
	}
	out := &card{Card: *c, digest: digest, short: digest[:12], label: kindLabel(c.Kind)}
	if c.ChatApproval {
		// Without chat approval no button is offered at all: policy would
		// refuse it, and a button that cannot work only misleads. The
		// card says where to answer instead.
		out.options = c.Options
	}
	if out.ApproveHint == "" {
		out.ApproveHint = "signoff approve --case " + c.CaseID
	}
	return out, nil
}

// checkLink accepts an absolute http(s) URL without the characters that
// end a Slack link (<url|text>) or need quoting anywhere.
func checkLink(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return invalid("link must be an absolute http(s) URL")
	}
	if strings.ContainsAny(s, "<>|\"` ") || hasControl(s) {
		return invalid("link contains characters that would break the message")
	}
	return nil
}

var kindLabels = map[string]string{
	"triage_gate":        "Triage gate",
	"repro_confirmation": "Reproduction confirmation",
	"candidate_approval": "Candidate approval",
	"change_approval":    "Change approval",
	"fix_confirmation":   "Fix confirmation",
}

func kindLabel(kind string) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	if d, ok := strings.CutPrefix(kind, "decision:"); ok {
		return "Decision: " + strings.ReplaceAll(d, "_", " ")
	}
	return strings.ReplaceAll(kind, "_", " ")
}

// optionLabel is the button text: "approve" -> "Approve".
func optionLabel(o string) string {
	o = strings.ReplaceAll(o, "_", " ")
	return strings.ToUpper(o[:1]) + o[1:]
}

// expiry is the card's expiry as shown: UTC, RFC 3339.
func (c *card) expiry() string { return c.ExpiresAt.UTC().Format(time.RFC3339) }

// command is the exact slash command that answers c with option.
func (c *card) command(option string) string {
	return SlashCommand + " " + option + " " + c.CaseID + " " + c.short
}

// hasOption reports whether o is one of the card's original options.
func (c *card) hasOption(o string) bool { return slices.Contains(c.Options, o) }

// sanitize makes untrusted text safe to escape: invalid UTF-8 becomes
// U+FFFD; control characters, and the bidirectional overrides that can
// make a digest or a command read backwards, are dropped; tabs become
// spaces; line breaks stay unless oneLine, when they become spaces too.
func sanitize(s string, oneLine bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r':
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || isBidi(r):
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if oneLine {
		out = strings.Join(strings.Fields(out), " ")
	}
	return strings.TrimSpace(out)
}

// isBidi reports the explicit directional embeddings, overrides and
// isolates (the "Trojan Source" characters).
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || isBidi(r) {
			return true
		}
	}
	return false
}

// escaper turns one rune of untrusted text into what the platform shows.
type escaper func(r rune) string

// slackEscape is Slack's escaping: &, < and > as entities (so no <!here>,
// <@U…> or <url|text> can be written), and a joiner after every @.
func slackEscape(r rune) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '@':
		return "@" + zwj
	}
	return string(r)
}

// mattermostEscape adds to slackEscape (Mattermost translates Slack's
// <!channel> into @channel, so the same entities are needed) the
// backslash escapes of the Markdown punctuation that makes links and
// images (no [ ], no link), code, emphasis, tables and headings.
func mattermostEscape(r rune) string {
	switch r {
	case '\\', '`', '*', '_', '~', '[', ']', '|', '#':
		return `\` + string(r)
	}
	return slackEscape(r)
}

// fit escapes s with esc and cuts the result to at most limit characters,
// ending it with an ellipsis when cut. Escapes are added whole or not at
// all, so a cut never leaves half an entity. Slack counts in UTF-16 code
// units (utf16Count), Mattermost in runes.
func fit(s string, limit int, esc escaper, utf16Count bool) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		piece := esc(r)
		w := 0
		for _, p := range piece {
			if utf16Count {
				w += utf16.RuneLen(p)
			} else {
				w++
			}
		}
		// Reaching the limit exactly is fine only for the last rune;
		// otherwise the ellipsis needs the room. So n < limit here.
		if n+w > limit || (n+w == limit && i < len(s)) {
			return b.String() + ellipsis
		}
		b.WriteString(piece)
		n += w
	}
	return b.String()
}

// quote shows untrusted input in an error message: quoted, and short.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + ellipsis
	}
	return fmt.Sprintf("%q", s)
}

// needs introduces the hint of a card chat may not answer. The hint itself
// stays a bare command, so that it works as pasted.
func (c *card) needs() string {
	if c.Kind == "candidate_approval" || c.Kind == "change_approval" {
		return "A signed approval, not answered in chat: "
	}
	return "Answer outside this chat: "
}

// Bounds of what a change card shows; the case page and signoff approve
// show the plan in full.
const (
	maxChangeTarget = 256 // change.Target's own bound
	maxChangeEnv    = 100
	maxChangeValue  = 300
	maxChangeReason = 600
	maxChangeLine   = 120
	maxChangeLines  = 8
)

// changeLines are the name/value rows of a change card, already escaped
// by esc for one line within their bounds; code quotes a value as code.
func (c *card) changeLines(esc func(s string, limit int) string, code func(s string, limit int) string) [][2]string {
	ch := c.Change
	if ch == nil {
		return nil
	}
	rows := [][2]string{
		{"Target", code(ch.Target, maxChangeTarget) + " (" + esc(ch.Kind, 20) + ")"},
		{"Environment", esc(ch.Environment, maxChangeEnv)},
		{"Before → after", code(orNone(ch.Before), maxChangeValue) + " → " + code(orNone(ch.After), maxChangeValue)},
	}
	if ch.Summary != "" {
		label := map[string]string{"flag": "Flag", "file": "Diff", "runbook": "Run"}[ch.Kind]
		rows = append(rows, [2]string{cmpOr(label, "Summary"), esc(ch.Summary, maxChangeValue)})
	}
	rows = append(rows, [2]string{"Reason", esc(orNone(ch.Reason), maxChangeReason)})
	if !ch.PlanExpiresAt.IsZero() {
		rows = append(rows, [2]string{"Plan expires", ch.PlanExpiresAt.UTC().Format(time.RFC3339)})
	}
	return rows
}

// excerpt is at most maxChangeLines lines of the change's excerpt, each
// sanitized to one line and cut, for a code block; more is counted.
func (c *card) excerpt() []string {
	if c.Change == nil {
		return nil
	}
	var out []string
	for i, l := range c.Change.Excerpt {
		if i == maxChangeLines {
			out = append(out, fmt.Sprintf("… %d more line(s)", len(c.Change.Excerpt)-i))
			break
		}
		out = append(out, fit(sanitize(l, true), maxChangeLine, func(r rune) string { return string(r) }, false))
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}
