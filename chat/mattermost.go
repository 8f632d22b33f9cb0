package chat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff"
)

type mmContext struct {
	CardID string `json:"card_id"`
	Option string `json:"option"`
	CaseID string `json:"case_id"`
	// Token authenticates the press: Mattermost does not sign action
	// requests, but it keeps integration URLs and contexts on the server,
	// never showing them to clients, so a secret here is one only
	// Mattermost can send back.
	Token string `json:"token,omitempty"`
}

type mmIntegration struct {
	URL     string    `json:"url"`
	Context mmContext `json:"context"`
}

type mmAction struct {
	ID          string        `json:"id"`
	Type        string        `json:"type"`
	Name        string        `json:"name"`
	Style       string        `json:"style,omitempty"`
	Integration mmIntegration `json:"integration"`
}

type mmField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

type mmAttachment struct {
	Fallback  string     `json:"fallback"`
	Color     string     `json:"color,omitempty"`
	Title     string     `json:"title"`
	TitleLink string     `json:"title_link,omitempty"`
	Text      string     `json:"text,omitempty"`
	Fields    []mmField  `json:"fields,omitempty"`
	Footer    string     `json:"footer"`
	Actions   []mmAction `json:"actions,omitempty"`
}

type mmMessage struct {
	Text        string            `json:"text"`
	Attachments []mmAttachment    `json:"attachments"`
	Props       map[string]string `json:"props"`
}

// maxMMToken bounds the action token MattermostIncomingToken embeds.
const maxMMToken = 256

// MattermostIncoming returns the JSON body of an incoming-webhook post for
// m: a "text" line and one attachment (fallback, title linking to the case
// page, text, fields and footer). For a card that chat may answer, the
// attachment has one interactive button per option, each posting to
// actionURL with the context {card_id, option, case_id}. Returns EINVALID
// for a malformed message, or a card with buttons and no usable actionURL.
//
// Mattermost does not sign button presses: put a secret in actionURL (a
// path segment or query parameter the server checks) or use
// MattermostIncomingToken.
func MattermostIncoming(m Message, actionURL string) ([]byte, error) {
	return MattermostIncomingToken(m, actionURL, "")
}

// MattermostIncomingToken is MattermostIncoming with token added to each
// button's context; ParseMattermostAction returns it as Answer.Token, to
// be checked with VerifyMattermostToken as for slash commands.
func MattermostIncomingToken(m Message, actionURL, token string) ([]byte, error) {
	c, err := checkMessage(m)
	if err != nil {
		return nil, err
	}
	if len(token) > maxMMToken || hasControl(token) {
		return nil, invalid("mattermost action token is malformed")
	}
	if c != nil && len(c.options) > 0 {
		if checkLink(actionURL) != nil {
			return nil, invalid("mattermost action URL must be an absolute http(s) URL")
		}
	}

	title := mmEsc(m.Title, maxTitle, true)
	att := mmAttachment{
		Fallback:  slackEsc(m.Title, maxTitle, true),
		Color:     "#1f6feb",
		Title:     "Signoff",
		TitleLink: m.Link,
		Footer:    "Signoff message " + m.ID,
	}
	caseID := m.CaseID
	if c != nil {
		caseID = c.CaseID
	}
	if caseID != "" {
		att.Title = "Case " + caseID
	}
	if m.Evidence != "" {
		att.Footer += " · evidence: " + slackEsc(m.Evidence, maxEvidence, true)
	}

	shown, hidden := m.Fields, 0
	if len(shown) > maxFields {
		shown, hidden = shown[:maxFields], len(shown)-maxFields
	}
	for _, f := range shown {
		att.Fields = append(att.Fields, mmField{
			Title: mmEsc(f.Name, maxFieldName, true),
			Value: mmEsc(f.Value, SlackFieldLimit, false),
			Short: len(f.Value) <= 40,
		})
	}
	if hidden > 0 {
		att.Footer += " · " + strconv.Itoa(hidden) + " more fields on the case page"
	}

	var howTo string
	if c != nil {
		att.Color = "#d29922" // waiting on a person
		att.Fallback = slackEsc(m.Title+" — "+c.label+" requested for "+c.CaseID, maxTitle, true)
		att.Fields = append(att.Fields, c.mmFields()...)
		howTo = "**" + c.label + " requested.** " + c.mmHowTo()
		for i, o := range c.options {
			a := mmAction{
				// Mattermost routes presses by action id and accepts
				// only letters and digits there; the index keeps ids of
				// options like "a_b" and "ab" apart.
				ID:   "signoff" + strconv.Itoa(i) + strings.ReplaceAll(o, "_", ""),
				Type: "button",
				Name: optionLabel(o),
				Integration: mmIntegration{URL: actionURL, Context: mmContext{
					CardID: c.ID, Option: o, CaseID: c.CaseID, Token: token,
				}},
			}
			switch o {
			case Approve:
				a.Style = "primary"
			case Reject:
				a.Style = "danger"
			}
			att.Actions = append(att.Actions, a)
		}
	}
	text := sanitize(m.Text, false)
	switch {
	case text != "" && howTo != "":
		att.Text = fit(text, MattermostMessageLimit-runeLen(howTo)-2, mattermostEscape, false) + "\n\n" + howTo
	case text != "":
		att.Text = fit(text, MattermostMessageLimit, mattermostEscape, false)
	default:
		att.Text = howTo
	}

	props := map[string]string{"signoff_message_id": m.ID}
	if caseID != "" {
		props["signoff_case_id"] = caseID
	}
	if c != nil {
		props["signoff_card_id"] = c.ID
	}
	return json.Marshal(mmMessage{Text: title, Attachments: []mmAttachment{att}, Props: props})
}

// mmEsc escapes untrusted text for Mattermost Markdown within limit runes.
func mmEsc(s string, limit int, oneLine bool) string {
	return fit(sanitize(s, oneLine), limit, mattermostEscape, false)
}

// mmCode quotes text as a Markdown code span. Backslash escapes do not
// work inside one, so what could end the span or be read as Slack syntax
// by Mattermost's Slack compatibility is replaced by look-alikes.
func mmCode(s string, limit int) string {
	r := strings.NewReplacer("`", "′", "<", "‹", ">", "›", "@", "@"+zwj)
	return "`" + r.Replace(fit(sanitize(s, true), limit, func(r rune) string { return string(r) }, false)) + "`"
}

func (c *card) mmFields() []mmField {
	fs := []mmField{
		{Title: "Kind", Value: "`" + c.Kind + "`", Short: true},
		{Title: "Case", Value: "`" + c.CaseID + "`", Short: true},
		{Title: "Subject digest", Value: "`" + c.short + "`", Short: true},
		{Title: "Expires", Value: c.expiry(), Short: true},
		{Title: "Options", Value: strings.Join(c.Options, ", "), Short: true},
		{Title: "Addressee", Value: mmEsc(c.Addressee, maxAddressee, true), Short: true},
		{Title: "Full digest", Value: "`sha256:" + c.digest + "`"},
	}
	for _, r := range c.changeLines(
		func(s string, limit int) string { return mmEsc(s, limit, true) },
		func(s string, limit int) string { return mmCode(s, limit) }) {
		fs = append(fs, mmField{Title: r[0], Value: r[1]})
	}
	if lines := c.excerpt(); len(lines) > 0 {
		// Markdown is not read in a fenced block, but Mattermost's Slack
		// compatibility might read <!channel>, and a backtick fence could
		// end the block: mmCode's look-alikes for each line.
		r := strings.NewReplacer("`", "′", "<", "‹", ">", "›", "@", "@"+zwj)
		var b strings.Builder
		b.WriteString("```\n")
		for _, l := range lines {
			b.WriteString(r.Replace(l) + "\n")
		}
		b.WriteString("```")
		fs = append(fs, mmField{Title: "Excerpt", Value: b.String()})
	}
	return fs
}

// mmHowTo is slackHowTo in Mattermost Markdown.
func (c *card) mmHowTo() string {
	if !c.ChatApproval {
		if checkLink(c.ApproveHint) == nil {
			return c.needs() + "open " + c.ApproveHint
		}
		return c.needs() + "run " + mmCode(c.ApproveHint, maxHint)
	}
	var parts []string
	if c.hasOption(Approve) {
		parts = append(parts, "To approve from chat: `"+c.command(Approve)+"`")
	}
	if c.hasOption(Reject) {
		parts = append(parts, "To reject: `"+c.command(Reject)+" <reason>`")
	}
	if len(parts) == 0 {
		return "Answer with the buttons below."
	}
	return strings.Join(parts, "\n")
}

func runeLen(s string) int { return len([]rune(s)) }

// VerifyMattermostToken checks the token a Mattermost request carried
// (got) against the configured one (want). Both are hashed before a
// constant-time compare, so neither their contents nor their lengths
// leak through timing. An empty want (nothing configured) or got is
// refused. Returns EUNAUTHORIZED; the error never contains either token.
func VerifyMattermostToken(want, got string) error {
	if want == "" {
		return unauthorized("no Mattermost token configured")
	}
	if got == "" {
		return unauthorized("the Mattermost request has no token")
	}
	w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(got))
	if !hmac.Equal(w[:], g[:]) {
		return unauthorized("the Mattermost token does not match")
	}
	return nil
}

// mmActionRequest is the part of an interactive action request we read.
type mmActionRequest struct {
	UserID   string    `json:"user_id"`
	UserName string    `json:"user_name"`
	TeamID   string    `json:"team_id"`
	Context  mmContext `json:"context"`
}

// ParseMattermostAction reads a button press: the JSON body Mattermost
// posts to a button's integration URL, with the context
// MattermostIncoming put there. Answer.Token is the context's token, if
// any. Returns ETOOLARGE for a body over MaxBody and EINVALID otherwise.
func ParseMattermostAction(body []byte) (Answer, error) {
	if len(body) > MaxBody {
		return Answer{}, signoff.Errorf(signoff.ETOOLARGE, "chat: request body over %d bytes", MaxBody)
	}
	var r mmActionRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return Answer{}, invalid("mattermost action is not JSON of an action request")
	}
	switch c := r.Context; {
	case !validUUID(c.CardID):
		return Answer{}, invalid("mattermost action card id %s", quote(c.CardID))
	case !optionRE.MatchString(c.Option):
		return Answer{}, invalid("mattermost action option %s", quote(c.Option))
	case !ValidCaseID(c.CaseID):
		return Answer{}, invalid("mattermost action case id %s", quote(c.CaseID))
	}
	a := Answer{
		Platform: Mattermost,
		TeamID:   r.TeamID,
		UserID:   r.UserID,
		UserName: userName(r.UserName),
		CardID:   r.Context.CardID,
		CaseID:   r.Context.CaseID,
		Option:   r.Context.Option,
		Token:    r.Context.Token,
	}
	if err := checkAnswer(a, false); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// ParseMattermostCommand reads a /signoff slash command: a form with
// token, team_id, user_id, user_name, command, text and response_url.
// The text is parsed by ParseCommandText. Returns ETOOLARGE for a body
// over MaxBody and EINVALID otherwise.
func ParseMattermostCommand(body []byte) (Answer, error) {
	a, err := parseCommandForm(body, Mattermost)
	if err == nil {
		err = checkAnswer(a, false)
	}
	if err != nil {
		return Answer{}, err
	}
	return a, nil
}

// MattermostReply returns the JSON of an ephemeral reply, seen only by the
// person who answered. One body serves both places Mattermost reads a
// reply: an action's response ("ephemeral_text") and a slash command's
// ("response_type" and "text"); each ignores the other's fields. The text
// is escaped like any untrusted text, and Slack-style parsing is off.
func MattermostReply(text string) []byte {
	t := mmEsc(text, MattermostMessageLimit, false)
	b, _ := json.Marshal(struct {
		ResponseType     string `json:"response_type"`
		Text             string `json:"text"`
		EphemeralText    string `json:"ephemeral_text"`
		SkipSlackParsing bool   `json:"skip_slack_parsing"`
	}{"ephemeral", t, t, true})
	return b
}
