package chat_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
)

const (
	msgID     = "0b8f1c2e-1d2a-5b3c-8d4e-5f6a7b8c9d0e"
	cardID    = "7c9e6679-7425-50de-944b-e07fc1f90ae7"
	caseID    = "case_01jb2k3m4n5p6q7r8s9t0v1w2x"
	digest    = "3f1c9a0b7d2e4f6a8b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a"
	actionURL = "https://signoff.example/chat/mattermost/action"
)

// message is a well-formed approval request; tests change what they test.
func message() chat.Message {
	return chat.Message{
		ID:       msgID,
		Title:    caseID + " moved to awaiting_approval",
		Text:     "The triage crew proposes a ticket.",
		CaseID:   caseID,
		Link:     "https://signoff.example/cases/" + caseID,
		Fields:   []chat.Field{{Name: "Project", Value: "shoplite"}},
		Evidence: "live",
		Card: &chat.Card{
			ID:            cardID,
			Kind:          "triage_gate",
			CaseID:        caseID,
			SubjectDigest: digest,
			Options:       []string{"approve", "reject"},
			Addressee:     "role:operator",
			// Not UTC on purpose: cards show expiry in UTC.
			ExpiresAt:    time.Date(2026, 12, 2, 13, 0, 0, 0, time.FixedZone("CET", 3600)),
			ChatApproval: true,
		},
	}
}

func with(f func(*chat.Message)) chat.Message {
	m := message()
	c := *m.Card
	m.Card = &c
	f(&m)
	return m
}

// builders runs every message builder, so that each rule is checked on
// every platform.
var builders = []struct {
	name  string
	build func(chat.Message) ([]byte, error)
}{
	{"slack incoming", chat.SlackIncoming},
	{"slack postMessage", func(m chat.Message) ([]byte, error) { return chat.SlackPostMessage("C0123456789", m) }},
	{"mattermost", func(m chat.Message) ([]byte, error) { return chat.MattermostIncoming(m, actionURL) }},
}

// strs returns every string in a JSON document, keys excluded.
func strs(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func joined(t *testing.T, b []byte) string { return strings.Join(strs(t, b), "\n") }

func TestBuildersMakeValidJSON(t *testing.T) {
	t.Parallel()
	msgs := map[string]chat.Message{
		"card":             message(),
		"no card":          with(func(m *chat.Message) { m.Card = nil }),
		"bare":             {ID: msgID, Title: "hello"},
		"no chat approval": with(func(m *chat.Message) { m.Card.ChatApproval = false }),
		"hostile":          with(func(m *chat.Message) { m.Title = "\"}]<>&\\\x00\xff"; m.Text = "\",\n{\u2028\u2029" }),
		"many fields": with(func(m *chat.Message) {
			for range 500 {
				m.Fields = append(m.Fields, chat.Field{Name: "n", Value: "v"})
			}
		}),
	}
	for name, m := range msgs {
		for _, b := range builders {
			t.Run(name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				out, err := b.build(m)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(out) {
					t.Fatalf("invalid JSON: %s", out)
				}
				strs(t, out)
			})
		}
	}
	for _, out := range [][]byte{chat.SlackReply("x <!here> \xff", true), chat.SlackReply("", false), chat.MattermostReply("@all \"}"), chat.MattermostReply("")} {
		if !json.Valid(out) {
			t.Errorf("invalid reply JSON: %s", out)
		}
	}
}

// Untrusted text must not ping anyone, link anywhere or format itself.
func TestEscaping(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"<!channel>", "<!here>", "<!everyone>", "<@U024BE7LH>", "<#C024BE7LH>",
		"<https://evil.example|click me>", "@here", "@channel", "@all", "@alice",
		"[click](https://evil.example)", "![pixel](https://evil.example/p.png)",
	}
	// Each is put in every untrusted place at once.
	m := with(func(m *chat.Message) {
		all := strings.Join(hostile, " ")
		m.Title, m.Text, m.Evidence, m.Card.Addressee = all, all, all, all
		m.Fields = []chat.Field{{Name: all, Value: all}}
	})
	// Forbidden in any string of the output.
	forbidden := []*regexp.Regexp{
		regexp.MustCompile(`<[!@#]`),        // Slack mentions and channel links
		regexp.MustCompile(`<https://evil`), // Slack links
		regexp.MustCompile(`@[A-Za-z]`),     // plain mentions (a joiner must follow @)
	}
	// Forbidden where Mattermost renders Markdown.
	markdown := []*regexp.Regexp{
		regexp.MustCompile(`(^|[^\\])\[(click|pixel)\]`), // links and images
	}
	for _, b := range builders {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			out, err := b.build(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range strs(t, out) {
				for _, re := range forbidden {
					if re.MatchString(s) {
						t.Errorf("%s matches %s", s, re)
					}
				}
			}
			if !strings.Contains(joined(t, out), "&lt;!channel&gt;") {
				t.Errorf("the title is not shown escaped")
			}
			if b.name != "mattermost" {
				return
			}
			for _, s := range mattermostMarkdown(t, out) {
				for _, re := range markdown {
					if re.MatchString(s) {
						t.Errorf("%s matches %s", s, re)
					}
				}
			}
		})
	}
	all := strings.Join(hostile, " ")
	replies := []struct {
		name string
		out  []byte
		res  []*regexp.Regexp
	}{
		{"slack reply", chat.SlackReply(all, false), forbidden},
		{"mattermost reply", chat.MattermostReply(all), append(forbidden, markdown...)},
	}
	for _, r := range replies {
		for _, s := range strs(t, r.out) {
			for _, re := range r.res {
				if re.MatchString(s) {
					t.Errorf("%s: %s matches %s", r.name, s, re)
				}
			}
		}
	}
}

// mattermostMarkdown returns the strings of a Mattermost message that are
// rendered as Markdown: the text, and each attachment's text, title and
// field titles and values. (The fallback is shown as plain text.)
func mattermostMarkdown(t *testing.T, out []byte) []string {
	t.Helper()
	var v struct {
		Text        string
		Attachments []struct {
			Title, Text string
			Fields      []struct{ Title, Value string }
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	s := []string{v.Text}
	for _, a := range v.Attachments {
		s = append(s, a.Title, a.Text)
		for _, f := range a.Fields {
			s = append(s, f.Title, f.Value)
		}
	}
	return s
}

func TestSanitizing(t *testing.T) {
	t.Parallel()
	m := with(func(m *chat.Message) {
		m.Title = "one\ntwo\r\nthree\tfour\x00\x1b[31m \u202egnp.exe\xff"
	})
	out, err := chat.SlackIncoming(m)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Blocks []struct {
			Type string
			Text struct{ Text string }
		}
	}
	json.Unmarshal(out, &v)
	if got, want := v.Blocks[0].Text.Text, "one two three four[31m gnp.exe\uFFFD"; got != want {
		t.Errorf("header = %q, want %q", got, want)
	}
}

func TestTruncation(t *testing.T) {
	t.Parallel()
	utf16Len := func(s string) int { return len(utf16.Encode([]rune(s))) }
	tests := []struct {
		name  string
		title string
		text  string
	}{
		{"long ascii", strings.Repeat("a", 1000), strings.Repeat("b", 20000)},
		{"escapes expand", strings.Repeat("&", 1000), strings.Repeat("<", 20000)},
		{"astral runes", strings.Repeat("😀", 1000), strings.Repeat("😀", 20000)},
		{"mentions", strings.Repeat("@", 1000), strings.Repeat("@", 20000)},
		{"markdown", strings.Repeat("_", 1000), strings.Repeat("[", 20000)},
	}
	entity := regexp.MustCompile(`&(amp|lt|gt);`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := with(func(m *chat.Message) { m.Title, m.Text = tt.title, tt.text })

			out, err := chat.SlackIncoming(m)
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Text   string
				Blocks []struct {
					Type string
					Text *struct{ Text string }
				}
			}
			json.Unmarshal(out, &s)
			header, section := s.Blocks[0].Text.Text, s.Blocks[1].Text.Text
			if n := utf16Len(header); n > chat.SlackHeaderLimit || !strings.HasSuffix(header, "…") {
				t.Errorf("header: %d UTF-16 units, ends %q", n, header[max(0, len(header)-12):])
			}
			if n := utf16Len(section); n > chat.SlackSectionLimit || !strings.HasSuffix(section, "…") {
				t.Errorf("section: %d UTF-16 units", n)
			}
			if n := utf16Len(s.Text); n > chat.SlackSectionLimit {
				t.Errorf("fallback text: %d UTF-16 units", n)
			}
			// No entity is cut in half: removing whole entities leaves no '&'.
			for _, x := range []string{header, section} {
				if strings.Contains(entity.ReplaceAllString(x, ""), "&") {
					t.Errorf("a cut entity in %q", x[max(0, len(x)-12):])
				}
			}

			out, err = chat.MattermostIncoming(m, actionURL)
			if err != nil {
				t.Fatal(err)
			}
			var mm struct {
				Text        string
				Attachments []struct{ Text string }
			}
			json.Unmarshal(out, &mm)
			if n := utf8.RuneCountInString(mm.Text); n > chat.MattermostMessageLimit {
				t.Errorf("mattermost text: %d runes", n)
			}
			att := mm.Attachments[0].Text
			if n := utf8.RuneCountInString(att); n > chat.MattermostMessageLimit {
				t.Errorf("mattermost attachment text: %d runes", n)
			}
			// The answer instructions survive any amount of text.
			if !strings.Contains(att, "/signoff approve "+caseID+" "+digest[:12]) {
				t.Errorf("mattermost attachment lost the command")
			}
			if strings.Contains(entity.ReplaceAllString(att, ""), "&") {
				t.Errorf("a cut entity in the mattermost text")
			}
		})
	}
}

func TestSlackBlockLimits(t *testing.T) {
	t.Parallel()
	m := with(func(m *chat.Message) {
		m.Fields = nil
		for range 1000 {
			m.Fields = append(m.Fields, chat.Field{Name: "name", Value: strings.Repeat("v", 5000)})
		}
	})
	out, err := chat.SlackIncoming(m)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Blocks []struct {
			Type     string
			Fields   []struct{ Text string }
			Elements []struct{ Text string }
		}
	}
	json.Unmarshal(out, &s)
	if len(s.Blocks) > chat.SlackMaxBlocks {
		t.Fatalf("%d blocks", len(s.Blocks))
	}
	shown := 0
	for _, b := range s.Blocks {
		if len(b.Fields) > 10 {
			t.Errorf("a section with %d fields", len(b.Fields))
		}
		for _, f := range b.Fields {
			shown++
			if n := utf8.RuneCountInString(f.Text); n > chat.SlackFieldLimit {
				t.Errorf("a field of %d characters", n)
			}
		}
	}
	if !strings.Contains(joined(t, out), strconv.Itoa(1000-shown)+" more fields") {
		t.Errorf("the hidden fields (%d) are not counted", 1000-shown)
	}
}

func TestCardContent(t *testing.T) {
	t.Parallel()
	cmd := "/signoff approve " + caseID + " " + digest[:12]
	tests := []struct {
		name       string
		m          chat.Message
		want       []string
		notWant    []string
		wantOption []string // buttons, in order
	}{
		{
			name: "chat approval shows the command and both buttons",
			m:    message(),
			want: []string{"triage_gate", caseID, digest[:12], "sha256:" + digest, "approve, reject",
				"role:operator", "2026-12-02T12:00:00Z", cmd, "/signoff reject " + caseID + " " + digest[:12]},
			notWant:    []string{"needs a signature"},
			wantOption: []string{"approve", "reject"},
		},
		{
			name: "no chat approval shows the hint and no buttons",
			m:    with(func(m *chat.Message) { m.Card.Kind = "change_approval"; m.Card.ChatApproval = false }),
			want: []string{"change_approval", "Change approval", digest[:12], "sha256:" + digest,
				"A signed approval, not answered in chat: run `signoff approve --case " + caseID + "`"},
			notWant: []string{"/signoff approve", "/signoff reject"},
		},
		{
			name: "an approval URL as hint is a link",
			m: with(func(m *chat.Message) {
				m.Card.ChatApproval = false
				m.Card.ApproveHint = "https://signoff.example/cases/" + caseID + "/approve"
			}),
			want:    []string{"https://signoff.example/cases/" + caseID + "/approve"},
			notWant: []string{cmd},
		},
		{
			name:       "sha256: prefix on the digest is accepted",
			m:          with(func(m *chat.Message) { m.Card.SubjectDigest = "sha256:" + digest }),
			want:       []string{cmd, "sha256:" + digest},
			notWant:    []string{"sha256:sha256:"},
			wantOption: []string{"approve", "reject"},
		},
		{
			name: "a decision card",
			m: with(func(m *chat.Message) {
				m.Card.Kind = "decision:release_window"
				m.Card.Options = []string{"approve", "reject", "request_changes"}
			}),
			want:       []string{"Decision: release window", "approve, reject, request_changes"},
			wantOption: []string{"approve", "reject", "request_changes"},
		},
	}
	for _, tt := range tests {
		for _, b := range builders {
			t.Run(tt.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				out, err := b.build(tt.m)
				if err != nil {
					t.Fatal(err)
				}
				all := joined(t, out)
				for _, w := range tt.want {
					if !strings.Contains(all, w) {
						t.Errorf("missing %q in\n%s", w, all)
					}
				}
				for _, w := range tt.notWant {
					if strings.Contains(all, w) {
						t.Errorf("unexpected %q in\n%s", w, all)
					}
				}
				if got := buttonOptions(t, b.name, out); strings.Join(got, ",") != strings.Join(tt.wantOption, ",") {
					t.Errorf("buttons = %v, want %v", got, tt.wantOption)
				}
			})
		}
	}
}

// buttonOptions returns the option of each button of a built message.
func buttonOptions(t *testing.T, builder string, out []byte) []string {
	t.Helper()
	var opts []string
	if strings.HasPrefix(builder, "slack") {
		for _, b := range slackButtons(t, out) {
			opts = append(opts, strings.TrimPrefix(b.ActionID, "signoff_"))
		}
		return opts
	}
	for _, a := range mattermostActions(t, out) {
		opts = append(opts, a.Integration.Context["option"])
	}
	return opts
}

func TestSlackButtons(t *testing.T) {
	t.Parallel()
	out, err := chat.SlackIncoming(message())
	if err != nil {
		t.Fatal(err)
	}
	bs := slackButtons(t, out)
	if len(bs) != 2 {
		t.Fatalf("%d buttons", len(bs))
	}
	for i, want := range []struct{ actionID, style string }{{"signoff_approve", "primary"}, {"signoff_reject", "danger"}} {
		if bs[i].ActionID != want.actionID || bs[i].Style != want.style {
			t.Errorf("button %d: action_id %q style %q, want %q %q", i, bs[i].ActionID, bs[i].Style, want.actionID, want.style)
		}
		if len(bs[i].Value) > chat.SlackButtonValueLimit {
			t.Errorf("button value of %d bytes", len(bs[i].Value))
		}
		if bs[i].Confirm == nil {
			t.Errorf("button %d has no confirmation", i)
		}
	}
}

func TestSlackPostMessage(t *testing.T) {
	t.Parallel()
	out, err := chat.SlackPostMessage("C0123456789", message())
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Channel  string
		Blocks   []any
		Metadata struct {
			EventType    string            `json:"event_type"`
			EventPayload map[string]string `json:"event_payload"`
		}
	}
	json.Unmarshal(out, &v)
	if v.Channel != "C0123456789" || len(v.Blocks) == 0 || v.Metadata.EventPayload["message_id"] != msgID ||
		v.Metadata.EventPayload["card_id"] != cardID {
		t.Errorf("postMessage body %s", out)
	}
	for _, ch := range []string{"", "a b", "<!here>", strings.Repeat("c", 81), "c\n"} {
		if _, err := chat.SlackPostMessage(ch, message()); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Errorf("channel %q: err %v, want EINVALID", ch, err)
		}
	}
}

func TestMessageValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    chat.Message
	}{
		{"message id not a UUID", with(func(m *chat.Message) { m.ID = "msg_1" })},
		{"message id upper case", with(func(m *chat.Message) { m.ID = strings.ToUpper(msgID) })},
		{"empty title", with(func(m *chat.Message) { m.Title = " \n" })},
		{"title of control characters", with(func(m *chat.Message) { m.Title = "\x00\x1b\u202e" })},
		{"bad case id", with(func(m *chat.Message) { m.CaseID = "case_../x" })},
		{"javascript link", with(func(m *chat.Message) { m.Link = "javascript:alert(1)" })},
		{"link breaking a Slack link", with(func(m *chat.Message) { m.Link = "https://x.example/a|b" })},
		{"relative link", with(func(m *chat.Message) { m.Link = "/cases/x" })},
		{"link with credentials", with(func(m *chat.Message) { m.Link = "https://u:p@x.example/" })},
		{"field without a name", with(func(m *chat.Message) { m.Fields = []chat.Field{{Value: "v"}} })},
		{"card id not a UUID", with(func(m *chat.Message) { m.Card.ID = "card_1" })},
		{"card kind", with(func(m *chat.Message) { m.Card.Kind = "Triage Gate" })},
		{"card case id", with(func(m *chat.Message) { m.Card.CaseID = "prj_1" })},
		{"card for another case", with(func(m *chat.Message) { m.Card.CaseID = "case_other" })},
		{"short digest", with(func(m *chat.Message) { m.Card.SubjectDigest = digest[:63] })},
		{"upper-case digest", with(func(m *chat.Message) { m.Card.SubjectDigest = strings.ToUpper(digest) })},
		{"no options", with(func(m *chat.Message) { m.Card.Options = nil })},
		{"too many options", with(func(m *chat.Message) { m.Card.Options = []string{"a", "b", "c", "d", "e", "f"} })},
		{"bad option", with(func(m *chat.Message) { m.Card.Options = []string{"approve now"} })},
		{"repeated option", with(func(m *chat.Message) { m.Card.Options = []string{"approve", "approve"} })},
		{"no addressee", with(func(m *chat.Message) { m.Card.Addressee = "" })},
		{"no expiry", with(func(m *chat.Message) { m.Card.ExpiresAt = time.Time{} })},
	}
	for _, tt := range tests {
		for _, b := range builders {
			t.Run(tt.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				out, err := b.build(tt.m)
				if signoff.ErrorCode(err) != signoff.EINVALID || out != nil {
					t.Errorf("got %s, %v; want EINVALID", out, err)
				}
			})
		}
	}
}

func TestCaseIDShape(t *testing.T) {
	t.Parallel()
	if id := signoff.NewID(signoff.PrefixCase); !chat.ValidCaseID(id) {
		t.Errorf("a real case id %q is refused", id)
	}
	for _, id := range []string{"case_", "case", "Case_1", "case_1 ", "case_a-b", "case_a/b", "prj_1", "case_" + strings.Repeat("a", 65)} {
		if chat.ValidCaseID(id) {
			t.Errorf("%q accepted", id)
		}
	}
}
