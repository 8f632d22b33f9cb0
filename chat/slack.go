package chat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

// Slack request-signing headers.
const (
	HeaderSlackSignature = "X-Slack-Signature"
	HeaderSlackTimestamp = "X-Slack-Request-Timestamp"
)

// DefaultTolerance is how far a Slack request's timestamp may be from now,
// either way, when VerifySlack is given no tolerance (Slack's own advice).
const DefaultTolerance = 5 * time.Minute

// actionPrefix starts the action_id of every button this package makes,
// so that an answer to something else is never read as a Signoff answer.
const actionPrefix = "signoff_"

type slackText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Verbatim bool   `json:"verbatim,omitempty"`
}

type slackConfirm struct {
	Title   slackText `json:"title"`
	Text    slackText `json:"text"`
	Confirm slackText `json:"confirm"`
	Deny    slackText `json:"deny"`
}

type slackButton struct {
	Type     string        `json:"type"`
	Text     slackText     `json:"text"`
	ActionID string        `json:"action_id"`
	Value    string        `json:"value"`
	Style    string        `json:"style,omitempty"`
	Confirm  *slackConfirm `json:"confirm,omitempty"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	BlockID  string      `json:"block_id,omitempty"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []any       `json:"elements,omitempty"`
}

type slackMetadata struct {
	EventType    string            `json:"event_type"`
	EventPayload map[string]string `json:"event_payload"`
}

type slackMessage struct {
	Channel     string         `json:"channel,omitempty"`
	Text        string         `json:"text"`
	Blocks      []slackBlock   `json:"blocks"`
	UnfurlLinks bool           `json:"unfurl_links"`
	UnfurlMedia bool           `json:"unfurl_media"`
	Metadata    *slackMetadata `json:"metadata,omitempty"`
}

// buttonValue is what a Slack button carries back to us.
type buttonValue struct {
	Card   string `json:"card"`
	Option string `json:"option"`
	Case   string `json:"case"`
}

// SlackIncoming returns the JSON body of an incoming-webhook post for m:
// a fallback "text" for notifications and Block Kit "blocks" (a header,
// the text, the fields, for a card its details and buttons, and a context
// line). Link previews are off, so untrusted URLs are never fetched.
// Returns EINVALID for a malformed message.
func SlackIncoming(m Message) ([]byte, error) {
	msg, err := slackBuild(m)
	if err != nil {
		return nil, err
	}
	return json.Marshal(msg)
}

// SlackPostMessage returns the JSON body of a chat.postMessage call for
// m in channel: SlackIncoming's message plus "channel", and the message
// and card ids as message metadata so that a reader of the channel
// history can de-duplicate. Returns EINVALID for a malformed message or
// channel.
func SlackPostMessage(channel string, m Message) ([]byte, error) {
	if channel == "" || len(channel) > 80 || strings.ContainsAny(channel, " <>&\"") || hasControl(channel) {
		return nil, invalid("slack channel %s", quote(channel))
	}
	msg, err := slackBuild(m)
	if err != nil {
		return nil, err
	}
	msg.Channel = channel
	payload := map[string]string{"message_id": m.ID}
	if m.CaseID != "" {
		payload["case_id"] = m.CaseID
	}
	if m.Card != nil {
		payload["case_id"] = m.Card.CaseID
		payload["card_id"] = m.Card.ID
	}
	msg.Metadata = &slackMetadata{EventType: "signoff_message", EventPayload: payload}
	return json.Marshal(msg)
}

func mrkdwn(s string) *slackText { return &slackText{Type: "mrkdwn", Text: s, Verbatim: true} }

// slackEsc escapes untrusted text for Slack within limit characters.
func slackEsc(s string, limit int, oneLine bool) string {
	return fit(sanitize(s, oneLine), limit, slackEscape, true)
}

func slackBuild(m Message) (slackMessage, error) {
	c, err := checkMessage(m)
	if err != nil {
		return slackMessage{}, err
	}
	title := slackEsc(m.Title, SlackHeaderLimit, true)
	blocks := []slackBlock{{Type: "header", Text: &slackText{Type: "plain_text", Text: title}}}
	if text := slackEsc(m.Text, SlackSectionLimit, false); text != "" {
		blocks = append(blocks, slackBlock{Type: "section", Text: mrkdwn(text)})
	}

	// Fixed blocks that may follow the fields: the card's sections (two,
	// and two more for a change) and its buttons, and the context line.
	const tail = 6
	shown, hidden := m.Fields, 0
	if room := (SlackMaxBlocks - len(blocks) - tail) * 10; len(shown) > min(room, maxFields) {
		shown, hidden = shown[:min(room, maxFields)], len(shown)-min(room, maxFields)
	}
	for i := 0; i < len(shown); i += 10 {
		var fs []slackText
		for _, f := range shown[i:min(i+10, len(shown))] {
			name := slackEsc(f.Name, maxFieldName, true)
			// "*name*\n" takes len(name)+3 of the field's limit.
			value := slackEsc(f.Value, SlackFieldLimit-utf16Len(name)-3, false)
			fs = append(fs, slackText{Type: "mrkdwn", Text: "*" + name + "*\n" + value, Verbatim: true})
		}
		blocks = append(blocks, slackBlock{Type: "section", Fields: fs})
	}

	fallback := title
	if c != nil {
		cb, err := slackCard(c)
		if err != nil {
			return slackMessage{}, err
		}
		blocks = append(blocks, cb...)
		fallback = slackEsc(m.Title+" — "+c.label+" requested for "+c.CaseID, SlackSectionLimit, true)
	}

	var ctx []any
	if m.Evidence != "" {
		ctx = append(ctx, mrkdwn("Evidence: *"+slackEsc(m.Evidence, maxEvidence, true)+"*"))
	}
	if m.Link != "" {
		ctx = append(ctx, mrkdwn("<"+m.Link+"|Open the case page>"))
	}
	if hidden > 0 {
		ctx = append(ctx, mrkdwn(strconv.Itoa(hidden)+" more fields on the case page"))
	}
	ctx = append(ctx, mrkdwn("Signoff message "+m.ID))
	blocks = append(blocks, slackBlock{Type: "context", Elements: ctx})
	return slackMessage{Text: fallback, Blocks: blocks}, nil
}

// slackCard returns the blocks of a card: its details, how to answer, and
// one button per option chat may answer with.
func slackCard(c *card) ([]slackBlock, error) {
	var d strings.Builder
	d.WriteString("*" + c.label + " requested* (`" + c.Kind + "`)\n")
	d.WriteString("*Case:* `" + c.CaseID + "`\n")
	d.WriteString("*Subject digest:* `" + c.short + "`\n")
	d.WriteString("*Full digest:* `sha256:" + c.digest + "`\n")
	d.WriteString("*Options:* " + strings.Join(c.Options, ", ") + "\n")
	d.WriteString("*Addressee:* " + codeSpan(slackEsc(c.Addressee, maxAddressee, true)) + "\n")
	d.WriteString("*Expires:* " + c.expiry())
	blocks := []slackBlock{{Type: "section", Text: mrkdwn(d.String())}}
	for _, ch := range c.slackChange() {
		blocks = append(blocks, slackBlock{Type: "section", Text: mrkdwn(ch)})
	}
	blocks = append(blocks, slackBlock{Type: "section", Text: mrkdwn(c.slackHowTo())})

	var buttons []any
	for _, o := range c.options {
		v, err := json.Marshal(buttonValue{Card: c.ID, Option: o, Case: c.CaseID})
		if err != nil || len(v) > SlackButtonValueLimit {
			return nil, invalid("button value for %q does not fit", o)
		}
		b := slackButton{
			Type:     "button",
			Text:     slackText{Type: "plain_text", Text: optionLabel(o)},
			ActionID: actionPrefix + o,
			Value:    string(v),
			// A confirmation names what is being answered, so that a
			// stray click cannot decide anything.
			Confirm: &slackConfirm{
				Title:   slackText{Type: "plain_text", Text: optionLabel(o) + "?"},
				Text:    slackText{Type: "plain_text", Text: optionLabel(o) + " " + strings.ToLower(c.label) + " for " + c.CaseID + " at digest " + c.short + "?"},
				Confirm: slackText{Type: "plain_text", Text: optionLabel(o)},
				Deny:    slackText{Type: "plain_text", Text: "Cancel"},
			},
		}
		switch o {
		case Approve:
			b.Style = "primary"
		case Reject:
			b.Style = "danger"
		}
		buttons = append(buttons, b)
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slackBlock{Type: "actions", BlockID: "signoff_card_" + c.ID, Elements: buttons})
	}
	return blocks, nil
}

// slackChange is the sections of a change approval: what changes, where,
// from what to what, and why; then the excerpt as a code block. Two
// sections, so that their bounds keep each within a section's limit.
func (c *card) slackChange() []string {
	rows := c.changeLines(
		func(s string, limit int) string { return slackEsc(s, limit, true) },
		func(s string, limit int) string { return codeSpan(slackEsc(s, limit, true)) })
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("*" + r[0] + ":* " + r[1])
	}
	out := []string{b.String()}
	if lines := c.excerpt(); len(lines) > 0 {
		// In a code block Slack still reads entities, so the lines are
		// escaped as any text; a backtick could close the block.
		var x strings.Builder
		x.WriteString("```\n")
		for _, l := range lines {
			x.WriteString(strings.ReplaceAll(fit(l, 2*maxChangeLine, slackEscape, true), "`", "′") + "\n")
		}
		x.WriteString("```")
		out = append(out, x.String())
	}
	return out
}

// slackHowTo tells the addressee how to answer in words: the exact
// commands when chat may answer, otherwise where to answer.
func (c *card) slackHowTo() string {
	if !c.ChatApproval {
		return c.needs() + c.slackHint()
	}
	var lines []string
	if c.hasOption(Approve) {
		lines = append(lines, "To approve from chat: `"+c.command(Approve)+"`")
	}
	if c.hasOption(Reject) {
		lines = append(lines, "To reject: `"+c.command(Reject)+" <reason>`")
	}
	if len(lines) == 0 {
		return "Answer with the buttons below."
	}
	return strings.Join(lines, "\n")
}

// slackHint shows ApproveHint: a link when it is one, else a command.
func (c *card) slackHint() string {
	if checkLink(c.ApproveHint) == nil {
		return "<" + c.ApproveHint + "|open the approval page>"
	}
	return "run " + codeSpan(slackEsc(c.ApproveHint, maxHint, true))
}

// codeSpan quotes already-escaped text as inline code; a backtick inside
// would end the span early, so it becomes a prime.
func codeSpan(s string) string { return "`" + strings.ReplaceAll(s, "`", "′") + "`" }

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// SignSlack returns the X-Slack-Signature value of body sent at ts: "v0="
// and the hex HMAC-SHA256, keyed with the signing secret, of
// "v0:<unix seconds>:<body>".
func SignSlack(signingSecret string, ts time.Time, body []byte) string {
	return "v0=" + hex.EncodeToString(slackMAC(signingSecret, strconv.FormatInt(ts.Unix(), 10), body))
}

func slackMAC(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + ts + ":"))
	m.Write(body)
	return m.Sum(nil)
}

// VerifySlack checks that body and its headers h come from Slack, signed
// with signingSecret, and were sent no further than tolerance from now in
// either direction (zero or less means DefaultTolerance; a difference of
// exactly tolerance passes). A request outside the window is refused even
// when its signature is good: that is a replay, or a clock far off.
// Replays within the window are the caller's to catch, by de-duplicating
// on the answer (cards are answered once).
//
// Returns EINTERNAL when no secret is configured, ETOOLARGE for a body
// over MaxBody, and EUNAUTHORIZED for missing, repeated or malformed
// headers, a signature that does not match (compared in constant time) and
// a stale or future timestamp. The error never contains the secret or the
// expected signature.
func VerifySlack(signingSecret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if signingSecret == "" {
		// Anyone could sign with an empty key.
		return signoff.Errorf(signoff.EINTERNAL, "chat: no Slack signing secret configured")
	}
	if len(body) > MaxBody {
		return signoff.Errorf(signoff.ETOOLARGE, "chat: Slack request body over %d bytes", MaxBody)
	}
	sig, err := singleHeader(h, HeaderSlackSignature)
	if err != nil {
		return err
	}
	tsText, err := singleHeader(h, HeaderSlackTimestamp)
	if err != nil {
		return err
	}
	secs, ok := parseUnix(tsText)
	if !ok {
		return unauthorized("%s is not unix seconds", HeaderSlackTimestamp)
	}
	hexSig, ok := strings.CutPrefix(sig, "v0=")
	if !ok {
		return unauthorized("%s is not a v0 signature", HeaderSlackSignature)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return unauthorized("%s is not a v0 signature", HeaderSlackSignature)
	}
	if !hmac.Equal(got, slackMAC(signingSecret, tsText, body)) {
		return unauthorized("the Slack signature does not match")
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	ts := time.Unix(secs, 0)
	switch {
	case now.Sub(ts) > tolerance:
		return unauthorized("stale Slack request: sent at %s, %s before now (tolerance %s)",
			ts.UTC().Format(time.RFC3339), now.Sub(ts).Truncate(time.Second), tolerance)
	case ts.Sub(now) > tolerance:
		return unauthorized("Slack request from the future: sent at %s, %s after now (tolerance %s)",
			ts.UTC().Format(time.RFC3339), ts.Sub(now).Truncate(time.Second), tolerance)
	}
	return nil
}

func unauthorized(format string, args ...any) error {
	return signoff.Errorf(signoff.EUNAUTHORIZED, "chat: "+format, args...)
}

// singleHeader returns the one value of header name; missing, empty or
// repeated is refused, since two timestamps or signatures are ambiguous.
func singleHeader(h http.Header, name string) (string, error) {
	vs := h.Values(name)
	switch {
	case len(vs) == 0 || (len(vs) == 1 && strings.TrimSpace(vs[0]) == ""):
		return "", unauthorized("no %s header", name)
	case len(vs) > 1:
		return "", unauthorized("%d %s headers", len(vs), name)
	}
	return vs[0], nil
}

// parseUnix accepts 1 to 18 decimal digits and nothing else, so the time
// arithmetic never overflows.
func parseUnix(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// slackInteraction is the part of a block_actions payload we read.
type slackInteraction struct {
	Type string `json:"type"`
	Team *struct {
		ID string `json:"id"`
	} `json:"team"`
	User struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Name     string `json:"name"`
		TeamID   string `json:"team_id"`
	} `json:"user"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
	ResponseURL string `json:"response_url"`
}

// ParseSlackInteraction reads a button press: an
// application/x-www-form-urlencoded body whose one "payload" field is the
// JSON of a block_actions interaction with exactly one action, a button
// made by SlackIncoming or SlackPostMessage. Returns ETOOLARGE for a body
// over MaxBody and EINVALID for anything else that is not such a press.
func ParseSlackInteraction(body []byte) (Answer, error) {
	form, err := parseForm(body)
	if err != nil {
		return Answer{}, err
	}
	raw, err := formValue(form, "payload", true)
	if err != nil {
		return Answer{}, err
	}
	var p slackInteraction
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Answer{}, invalid("slack payload is not JSON of an interaction")
	}
	if p.Type != "block_actions" {
		return Answer{}, invalid("slack interaction type %s, want block_actions", quote(p.Type))
	}
	if len(p.Actions) != 1 {
		return Answer{}, invalid("slack interaction has %d actions, want 1", len(p.Actions))
	}
	act := p.Actions[0]
	option, ok := strings.CutPrefix(act.ActionID, actionPrefix)
	if !ok {
		return Answer{}, invalid("slack action %s is not a Signoff button", quote(act.ActionID))
	}
	v, err := parseButtonValue(act.Value)
	if err != nil {
		return Answer{}, err
	}
	if v.Option != option {
		return Answer{}, invalid("slack button value is for %s but the action is %s", quote(v.Option), quote(option))
	}
	a := Answer{
		Platform:    Slack,
		UserID:      p.User.ID,
		UserName:    userName(p.User.Username, p.User.Name),
		CardID:      v.Card,
		CaseID:      v.Case,
		Option:      v.Option,
		ResponseURL: p.ResponseURL,
	}
	// Org-wide apps may get no team; the user's team then stands in.
	if p.Team != nil && p.Team.ID != "" {
		a.TeamID = p.Team.ID
	} else {
		a.TeamID = p.User.TeamID
	}
	if err := checkAnswer(a, true); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// parseButtonValue reads a button value strictly: exactly the three
// fields SlackIncoming writes, well-formed, and nothing after them.
func parseButtonValue(s string) (buttonValue, error) {
	var v buttonValue
	if len(s) > SlackButtonValueLimit {
		return v, invalid("slack button value too long")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return buttonValue{}, invalid("slack button value is not a Signoff card answer")
	}
	if _, err := dec.Token(); err != io.EOF {
		return buttonValue{}, invalid("slack button value has trailing data")
	}
	switch {
	case !validUUID(v.Card):
		return buttonValue{}, invalid("slack button card id %s", quote(v.Card))
	case !optionRE.MatchString(v.Option):
		return buttonValue{}, invalid("slack button option %s", quote(v.Option))
	case !ValidCaseID(v.Case):
		return buttonValue{}, invalid("slack button case id %s", quote(v.Case))
	}
	return v, nil
}

// ParseSlackCommand reads a /signoff slash command: a form with command,
// text, user_id, user_name, team_id and response_url. The text is parsed
// by ParseCommandText. Returns ETOOLARGE for a body over MaxBody and
// EINVALID otherwise; the message of an EINVALID error about the text is
// written to be shown back to the person who typed it.
func ParseSlackCommand(body []byte) (Answer, error) {
	a, err := parseCommandForm(body, Slack)
	if err == nil {
		err = checkAnswer(a, true)
	}
	if err != nil {
		return Answer{}, err
	}
	return a, nil
}

// SlackReply returns the JSON of a reply to an interaction or command
// (the immediate response or a POST to its response_url): ephemeral, so
// only the person who answered sees it, replacing the original message
// when replace is true. The text is escaped like any untrusted text.
func SlackReply(text string, replace bool) []byte {
	b, _ := json.Marshal(struct {
		ResponseType    string `json:"response_type"`
		Text            string `json:"text"`
		ReplaceOriginal bool   `json:"replace_original"`
	}{"ephemeral", slackEsc(text, SlackSectionLimit, false), replace})
	return b
}
