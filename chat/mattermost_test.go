package chat_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
)

func TestVerifyMattermostToken(t *testing.T) {
	t.Parallel()
	const token = "xr3j5x3p4pfk7kk4bunghbqwmh"
	tests := []struct {
		name      string
		want, got string
		ok        bool
	}{
		{"same token", token, token, true},
		{"another token", token, "9jrxak1ykxrmnaw7w8fom2jqce", false},
		{"a prefix", token, token[:10], false},
		{"longer", token, token + "x", false},
		{"case differs", token, strings.ToUpper(token), false},
		{"no token sent", token, "", false},
		{"none configured", "", token, false},
		{"both empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := chat.VerifyMattermostToken(tt.want, tt.got)
			if tt.ok != (err == nil) {
				t.Fatalf("VerifyMattermostToken = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
					t.Errorf("code %q, want unauthorized", signoff.ErrorCode(err))
				}
				if tt.want != "" && strings.Contains(err.Error(), tt.want) || tt.got != "" && strings.Contains(err.Error(), tt.got) {
					t.Errorf("error leaks a token: %v", err)
				}
			}
		})
	}
}

type mattermostAction struct {
	ID          string
	Name        string
	Style       string
	Integration struct {
		URL     string
		Context map[string]string
	}
}

// mattermostActions returns the buttons of a built Mattermost message.
func mattermostActions(t *testing.T, out []byte) []mattermostAction {
	t.Helper()
	var v struct {
		Attachments []struct{ Actions []mattermostAction }
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	var as []mattermostAction
	for _, a := range v.Attachments {
		as = append(as, a.Actions...)
	}
	return as
}

// mattermostPress is the body Mattermost posts when a button is pressed.
func mattermostPress(t *testing.T, ctx any, mod func(map[string]any)) []byte {
	t.Helper()
	r := map[string]any{
		"user_id":    "rd49ehbqyjytddasoownkuqrxe",
		"user_name":  "ann",
		"channel_id": "j6j53p28k6urx4w7fpsx1vd4y0",
		"team_id":    "ike7ptmbhfyy7qx3ojtrcz1xhe",
		"post_id":    "gqrnh3675jfxzftnjyjfe4udeh",
		"trigger_id": "n3chhcw7a3r4ttnk3w8zkkr5uh",
		"type":       "",
		"context":    ctx,
	}
	if mod != nil {
		mod(r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A card built by MattermostIncoming yields buttons whose context
// ParseMattermostAction reads back, token included.
func TestMattermostRoundTrip(t *testing.T) {
	t.Parallel()
	const token = "s3cret-action-token"
	out, err := chat.MattermostIncomingToken(message(), actionURL, token)
	if err != nil {
		t.Fatal(err)
	}
	as := mattermostActions(t, out)
	if len(as) != 2 {
		t.Fatalf("%d buttons", len(as))
	}
	for i, want := range []struct{ option, style string }{{"approve", "primary"}, {"reject", "danger"}} {
		b := as[i]
		for _, r := range b.ID {
			// Mattermost routes presses by id and accepts only these.
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				t.Errorf("action id %q", b.ID)
			}
		}
		if b.Integration.URL != actionURL || b.Style != want.style {
			t.Errorf("button %d: %+v", i, b)
		}
		a, err := chat.ParseMattermostAction(mattermostPress(t, b.Integration.Context, nil))
		if err != nil {
			t.Fatal(err)
		}
		wantA := chat.Answer{
			Platform: "mattermost", TeamID: "ike7ptmbhfyy7qx3ojtrcz1xhe", UserID: "rd49ehbqyjytddasoownkuqrxe", UserName: "ann",
			CardID: cardID, CaseID: caseID, Option: want.option, Token: token,
		}
		if a != wantA {
			t.Errorf("answer = %+v\nwant %+v", a, wantA)
		}
		if err := chat.VerifyMattermostToken(token, a.Token); err != nil {
			t.Error(err)
		}
	}

	// Without a token the context has none, and the answer's is empty.
	out, err = chat.MattermostIncoming(message(), actionURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mattermostActions(t, out)[0].Integration.Context["token"]; ok {
		t.Errorf("a token in the context of MattermostIncoming")
	}
}

func TestMattermostIncomingActionURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "/relative", "ftp://x.example/a", "https://x.example/a b", "https://u:p@x.example/"} {
		if _, err := chat.MattermostIncoming(message(), u); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Errorf("action URL %q: %v, want EINVALID", u, err)
		}
	}
	// No buttons, no URL needed.
	noButtons := with(func(m *chat.Message) { m.Card.ChatApproval = false })
	for _, m := range []chat.Message{noButtons, with(func(m *chat.Message) { m.Card = nil })} {
		if _, err := chat.MattermostIncoming(m, ""); err != nil {
			t.Errorf("no buttons: %v", err)
		}
	}
	if _, err := chat.MattermostIncomingToken(message(), actionURL, "tok\nen"); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Errorf("a token with a newline: %v", err)
	}
}

func TestParseMattermostAction(t *testing.T) {
	t.Parallel()
	ctx := func(card, option, cse string) map[string]any {
		return map[string]any{"card_id": card, "option": option, "case_id": cse}
	}
	good := ctx(cardID, "reject", caseID)
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"a press", mattermostPress(t, good, nil), ""},
		{"no team (a direct message)", mattermostPress(t, good, func(r map[string]any) { delete(r, "team_id") }), ""},
		{"not JSON", []byte("user_id=x"), signoff.EINVALID},
		{"empty body", nil, signoff.EINVALID},
		{"a JSON list", []byte("[]"), signoff.EINVALID},
		{"no context", mattermostPress(t, nil, nil), signoff.EINVALID},
		{"context not an object", mattermostPress(t, "approve", nil), signoff.EINVALID},
		{"context value not a string", mattermostPress(t, map[string]any{"card_id": 5, "option": "approve", "case_id": caseID}, nil), signoff.EINVALID},
		{"card not a UUID", mattermostPress(t, ctx("card_1", "approve", caseID), nil), signoff.EINVALID},
		{"option hostile", mattermostPress(t, ctx(cardID, "@channel", caseID), nil), signoff.EINVALID},
		{"case not a case", mattermostPress(t, ctx(cardID, "approve", "case_1/../2"), nil), signoff.EINVALID},
		{"no user", mattermostPress(t, good, func(r map[string]any) { delete(r, "user_id") }), signoff.EINVALID},
		{"user id hostile", mattermostPress(t, good, func(r map[string]any) { r["user_id"] = "<!here>" }), signoff.EINVALID},
		{"team id hostile", mattermostPress(t, good, func(r map[string]any) { r["team_id"] = "a b" }), signoff.EINVALID},
		{"body over the limit", mattermostPress(t, good, func(r map[string]any) { r["pad"] = strings.Repeat("x", chat.MaxBody) }), signoff.ETOOLARGE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := chat.ParseMattermostAction(tt.body)
			if got := signoff.ErrorCode(err); got != tt.want {
				t.Fatalf("ParseMattermostAction = %+v, %v; want code %q", a, err, tt.want)
			}
			if err != nil && a != (chat.Answer{}) {
				t.Errorf("an answer with an error: %+v", a)
			}
			if err == nil && (a.Platform != "mattermost" || a.CardID != cardID || a.Option != "reject" || a.Command) {
				t.Errorf("answer = %+v", a)
			}
		})
	}
}

func mattermostCommand(mod func(url.Values)) []byte {
	v := url.Values{
		"channel_id":   {"j6j53p28k6urx4w7fpsx1vd4y0"},
		"channel_name": {"town-square"},
		"command":      {"/signoff"},
		"response_url": {"http://mattermost.internal:8065/hooks/commands/4n3z5p7r9t"},
		"team_domain":  {"signoff"},
		"team_id":      {"ike7ptmbhfyy7qx3ojtrcz1xhe"},
		"text":         {"approve " + caseID + " sha256:" + digest},
		"token":        {"xr3j5x3p4pfk7kk4bunghbqwmh"},
		"trigger_id":   {"n3chhcw7a3r4ttnk3w8zkkr5uh"},
		"user_id":      {"rd49ehbqyjytddasoownkuqrxe"},
		"user_name":    {"ann"},
	}
	if mod != nil {
		mod(v)
	}
	return []byte(v.Encode())
}

func TestParseMattermostCommand(t *testing.T) {
	t.Parallel()
	a, err := chat.ParseMattermostCommand(mattermostCommand(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := chat.Answer{
		Platform: "mattermost", TeamID: "ike7ptmbhfyy7qx3ojtrcz1xhe", UserID: "rd49ehbqyjytddasoownkuqrxe", UserName: "ann",
		CaseID: caseID, Option: "approve", DigestPrefix: digest,
		ResponseURL: "http://mattermost.internal:8065/hooks/commands/4n3z5p7r9t", Command: true,
		Token: "xr3j5x3p4pfk7kk4bunghbqwmh",
	}
	if a != want {
		t.Errorf("answer = %+v\nwant %+v", a, want)
	}
	if err := chat.VerifyMattermostToken("xr3j5x3p4pfk7kk4bunghbqwmh", a.Token); err != nil {
		t.Error(err)
	}

	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"another command", mattermostCommand(func(v url.Values) { v.Set("command", "/signof") }), signoff.EINVALID},
		{"bad text", mattermostCommand(func(v url.Values) { v.Set("text", "approve "+caseID) }), signoff.EINVALID},
		{"token twice", mattermostCommand(func(v url.Values) { v.Add("token", "other") }), signoff.EINVALID},
		{"no user", mattermostCommand(func(v url.Values) { v.Del("user_id") }), signoff.EINVALID},
		{"response_url not http", mattermostCommand(func(v url.Values) { v.Set("response_url", "file:///etc/passwd") }), signoff.EINVALID},
		{"a JSON body", []byte(`{"command":"/signoff"}`), signoff.EINVALID},
		{"body over the limit", mattermostCommand(func(v url.Values) { v.Set("pad", strings.Repeat("x", chat.MaxBody)) }), signoff.ETOOLARGE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := chat.ParseMattermostCommand(tt.body)
			if got := signoff.ErrorCode(err); got != tt.want || a != (chat.Answer{}) {
				t.Fatalf("ParseMattermostCommand = %+v, %v; want code %q", a, err, tt.want)
			}
		})
	}
}

func TestMattermostReply(t *testing.T) {
	t.Parallel()
	var v struct {
		ResponseType     string `json:"response_type"`
		Text             string
		EphemeralText    string `json:"ephemeral_text"`
		SkipSlackParsing bool   `json:"skip_slack_parsing"`
	}
	if err := json.Unmarshal(chat.MattermostReply("Rejected by @ann <!channel> [x](y)"), &v); err != nil {
		t.Fatal(err)
	}
	want := "Rejected by @\u200dann &lt;!channel&gt; \\[x\\](y)"
	if v.ResponseType != "ephemeral" || v.Text != want || v.EphemeralText != want || !v.SkipSlackParsing {
		t.Errorf("reply = %+v", v)
	}
}
