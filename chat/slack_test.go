package chat_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
)

// The worked example of Slack's "Verifying requests from Slack"
// (docs.slack.dev/authentication/verifying-requests-from-slack): a slash
// command body, its timestamp, the signing secret and the signature Slack
// documents for them.
const (
	docSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	docTS     = 1531420618
	docBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	docSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

func TestSignSlackPublishedVector(t *testing.T) {
	t.Parallel()
	if got := chat.SignSlack(docSecret, time.Unix(docTS, 0), []byte(docBody)); got != docSig {
		t.Fatalf("SignSlack = %s, want %s", got, docSig)
	}
}

func slackHeaders(sig, ts string) http.Header {
	h := http.Header{}
	if sig != "" {
		h.Set(chat.HeaderSlackSignature, sig)
	}
	if ts != "" {
		h.Set(chat.HeaderSlackTimestamp, ts)
	}
	return h
}

func TestVerifySlack(t *testing.T) {
	t.Parallel()
	sent := time.Unix(docTS, 0)
	tsText := strconv.Itoa(docTS)
	body := []byte(docBody)
	future := sent.Add(6 * time.Minute)
	tests := []struct {
		name      string
		secret    string
		h         http.Header
		body      []byte
		now       time.Time
		tolerance time.Duration
		want      string // error code, "" for success
	}{
		{"published vector", docSecret, slackHeaders(docSig, tsText), body, sent.Add(time.Minute), 0, ""},
		{"exactly at the tolerance", docSecret, slackHeaders(docSig, tsText), body, sent.Add(5 * time.Minute), 0, ""},
		{"stale by a second", docSecret, slackHeaders(docSig, tsText), body, sent.Add(5*time.Minute + time.Second), 0, signoff.EUNAUTHORIZED},
		{"replayed ten minutes later", docSecret, slackHeaders(docSig, tsText), body, sent.Add(10 * time.Minute), 0, signoff.EUNAUTHORIZED},
		{"replayed with a fresh timestamp", docSecret, slackHeaders(docSig, strconv.FormatInt(sent.Add(10*time.Minute).Unix(), 10)), body, sent.Add(10 * time.Minute), 0, signoff.EUNAUTHORIZED},
		{"from the future", docSecret, slackHeaders(chat.SignSlack(docSecret, future, body), strconv.FormatInt(future.Unix(), 10)), body, sent, 0, signoff.EUNAUTHORIZED},
		{"a wider tolerance", docSecret, slackHeaders(docSig, tsText), body, sent.Add(7 * time.Minute), 10 * time.Minute, ""},
		{"wrong secret", "8f742231b10e8888abcd99yyyzzz85a6", slackHeaders(docSig, tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"tampered body", docSecret, slackHeaders(docSig, tsText), []byte(strings.Replace(docBody, "roadrunner", "coyote", 1)), sent, 0, signoff.EUNAUTHORIZED},
		{"empty body", docSecret, slackHeaders(docSig, tsText), nil, sent, 0, signoff.EUNAUTHORIZED},
		{"no signature", docSecret, slackHeaders("", tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"no timestamp", docSecret, slackHeaders(docSig, ""), body, sent, 0, signoff.EUNAUTHORIZED},
		{"no headers", docSecret, http.Header{}, body, sent, 0, signoff.EUNAUTHORIZED},
		{"two signatures", docSecret, http.Header{chat.HeaderSlackSignature: {docSig, docSig}, chat.HeaderSlackTimestamp: {tsText}}, body, sent, 0, signoff.EUNAUTHORIZED},
		{"two timestamps", docSecret, http.Header{chat.HeaderSlackSignature: {docSig}, chat.HeaderSlackTimestamp: {tsText, tsText}}, body, sent, 0, signoff.EUNAUTHORIZED},
		{"signature without v0=", docSecret, slackHeaders(strings.TrimPrefix(docSig, "v0="), tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"v1 signature", docSecret, slackHeaders("v1="+strings.TrimPrefix(docSig, "v0="), tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"upper-case hex signature", docSecret, slackHeaders("v0="+strings.ToUpper(strings.TrimPrefix(docSig, "v0=")), tsText), body, sent, 0, ""},
		{"truncated signature", docSecret, slackHeaders(docSig[:40], tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"non-hex signature", docSecret, slackHeaders("v0="+strings.Repeat("z", 64), tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"timestamp with a sign", docSecret, slackHeaders(docSig, "+"+tsText), body, sent, 0, signoff.EUNAUTHORIZED},
		{"timestamp in milliseconds", docSecret, slackHeaders(docSig, tsText+"000"), body, sent, 0, signoff.EUNAUTHORIZED},
		{"timestamp not a number", docSecret, slackHeaders(docSig, "yesterday"), body, sent, 0, signoff.EUNAUTHORIZED},
		{"huge timestamp", docSecret, slackHeaders(docSig, strings.Repeat("9", 30)), body, sent, 0, signoff.EUNAUTHORIZED},
		{"no secret configured", "", slackHeaders(docSig, tsText), body, sent, 0, signoff.EINTERNAL},
		{"body over the limit", docSecret, slackHeaders(docSig, tsText), make([]byte, chat.MaxBody+1), sent, 0, signoff.ETOOLARGE},
	}
	expected := strings.TrimPrefix(docSig, "v0=")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := chat.VerifySlack(tt.secret, tt.h, tt.body, tt.now, tt.tolerance)
			if got := signoff.ErrorCode(err); got != tt.want {
				t.Fatalf("VerifySlack = %v, want code %q", err, tt.want)
			}
			if err != nil {
				msg := err.Error() + signoff.ErrorMessage(err)
				if strings.Contains(msg, docSecret) || strings.Contains(msg, expected) {
					t.Errorf("error leaks the secret or the expected signature: %s", msg)
				}
			}
		})
	}
}

// A signature made by SignSlack verifies, for any body.
func TestSignThenVerify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, body := range []string{"", "payload=%7B%7D", strings.Repeat("x", chat.MaxBody)} {
		h := slackHeaders(chat.SignSlack("s3cret", now, []byte(body)), strconv.FormatInt(now.Unix(), 10))
		if err := chat.VerifySlack("s3cret", h, []byte(body), now, 0); err != nil {
			t.Errorf("body of %d bytes: %v", len(body), err)
		}
	}
}

type slackButton struct {
	ActionID string `json:"action_id"`
	Value    string
	Style    string
	Confirm  *json.RawMessage
}

// slackButtons returns the buttons of a built Slack message.
func slackButtons(t *testing.T, out []byte) []slackButton {
	t.Helper()
	var v struct {
		Blocks []struct {
			Type     string
			Elements json.RawMessage
		}
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	var bs []slackButton
	for _, b := range v.Blocks {
		if b.Type == "actions" {
			if err := json.Unmarshal(b.Elements, &bs); err != nil {
				t.Fatal(err)
			}
		}
	}
	return bs
}

// slackPress is the body Slack posts when a button is pressed.
func slackPress(t *testing.T, actions any, mod func(map[string]any)) []byte {
	t.Helper()
	p := map[string]any{
		"type":         "block_actions",
		"team":         map[string]any{"id": "T1DC2JH3J", "domain": "testteamnow"},
		"user":         map[string]any{"id": "U2CERLKJA", "username": "roadrunner", "name": "roadrunner", "team_id": "T1DC2JH3J"},
		"api_app_id":   "A0123",
		"token":        "verification-token",
		"trigger_id":   "398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
		"response_url": "https://hooks.slack.com/actions/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN",
		"actions":      actions,
	}
	if mod != nil {
		mod(p)
	}
	j, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(url.Values{"payload": {string(j)}}.Encode())
}

func action(actionID, value string) []any {
	return []any{map[string]any{"action_id": actionID, "block_id": "signoff_card_" + cardID, "type": "button", "value": value, "action_ts": "1548426417.840180"}}
}

// A card built by SlackIncoming yields buttons that ParseSlackInteraction
// reads back.
func TestSlackRoundTrip(t *testing.T) {
	t.Parallel()
	out, err := chat.SlackIncoming(message())
	if err != nil {
		t.Fatal(err)
	}
	bs := slackButtons(t, out)
	if len(bs) != 2 {
		t.Fatalf("%d buttons", len(bs))
	}
	for _, b := range bs {
		a, err := chat.ParseSlackInteraction(slackPress(t, action(b.ActionID, b.Value), nil))
		if err != nil {
			t.Fatalf("%s: %v", b.ActionID, err)
		}
		want := chat.Answer{
			Platform: "slack", TeamID: "T1DC2JH3J", UserID: "U2CERLKJA", UserName: "roadrunner",
			CardID: cardID, CaseID: caseID, Option: strings.TrimPrefix(b.ActionID, "signoff_"),
			ResponseURL: "https://hooks.slack.com/actions/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN",
		}
		if a != want {
			t.Errorf("answer = %+v\nwant %+v", a, want)
		}
	}
}

func TestParseSlackInteraction(t *testing.T) {
	t.Parallel()
	value := func(card, option, cse string) string {
		b, _ := json.Marshal(map[string]string{"card": card, "option": option, "case": cse})
		return string(b)
	}
	good := action("signoff_approve", value(cardID, "approve", caseID))
	tests := []struct {
		name string
		body []byte
		want string // error code, "" for success
	}{
		{"a press", slackPress(t, good, nil), ""},
		{"no team, the user's team stands in", slackPress(t, good, func(p map[string]any) { p["team"] = nil }), ""},
		{"no response_url", slackPress(t, good, func(p map[string]any) { delete(p, "response_url") }), ""},
		{"not a form", []byte("payload=%zz"), signoff.EINVALID},
		{"no payload", []byte("foo=bar"), signoff.EINVALID},
		{"empty body", nil, signoff.EINVALID},
		{"payload twice", append(slackPress(t, good, nil), '&', 'p', 'a', 'y', 'l', 'o', 'a', 'd', '=', 'x'), signoff.EINVALID},
		{"payload not JSON", []byte("payload=%7Bnope"), signoff.EINVALID},
		{"payload a JSON string", []byte("payload=%22block_actions%22"), signoff.EINVALID},
		{"another interaction type", slackPress(t, good, func(p map[string]any) { p["type"] = "view_submission" }), signoff.EINVALID},
		{"no actions", slackPress(t, []any{}, nil), signoff.EINVALID},
		{"two actions", slackPress(t, append(good, good[0]), nil), signoff.EINVALID},
		{"actions not a list", slackPress(t, "approve", nil), signoff.EINVALID},
		{"another app's button", slackPress(t, action("deploy_approve", value(cardID, "approve", caseID)), nil), signoff.EINVALID},
		{"value not JSON", slackPress(t, action("signoff_approve", "approve"), nil), signoff.EINVALID},
		{"value with an extra field", slackPress(t, action("signoff_approve", `{"card":"`+cardID+`","option":"approve","case":"`+caseID+`","digest":"x"}`), nil), signoff.EINVALID},
		{"value with trailing data", slackPress(t, action("signoff_approve", value(cardID, "approve", caseID)+"{}"), nil), signoff.EINVALID},
		{"value with a trailing brace", slackPress(t, action("signoff_approve", value(cardID, "approve", caseID)+"}"), nil), signoff.EINVALID},
		{"value option differs from action", slackPress(t, action("signoff_reject", value(cardID, "approve", caseID)), nil), signoff.EINVALID},
		{"value card not a UUID", slackPress(t, action("signoff_approve", value("card_1", "approve", caseID)), nil), signoff.EINVALID},
		{"value case not a case", slackPress(t, action("signoff_approve", value(cardID, "approve", "case_../x")), nil), signoff.EINVALID},
		{"value option hostile", slackPress(t, action("signoff_<!here>", value(cardID, "<!here>", caseID)), nil), signoff.EINVALID},
		{"value too long", slackPress(t, action("signoff_approve", strings.Repeat(" ", 2001)+value(cardID, "approve", caseID)), nil), signoff.EINVALID},
		{"no user", slackPress(t, good, func(p map[string]any) { delete(p, "user") }), signoff.EINVALID},
		{"user id with spaces", slackPress(t, good, func(p map[string]any) { p["user"] = map[string]any{"id": "U1 U2", "team_id": "T1"} }), signoff.EINVALID},
		{"user id not a string", slackPress(t, good, func(p map[string]any) { p["user"] = map[string]any{"id": 7} }), signoff.EINVALID},
		{"no team at all", slackPress(t, good, func(p map[string]any) {
			p["team"] = nil
			p["user"] = map[string]any{"id": "U1"}
		}), signoff.EINVALID},
		{"http response_url", slackPress(t, good, func(p map[string]any) { p["response_url"] = "http://hooks.slack.com/x" }), signoff.EINVALID},
		{"response_url with credentials", slackPress(t, good, func(p map[string]any) { p["response_url"] = "https://u:p@evil.example/x" }), signoff.EINVALID},
		{"response_url not absolute", slackPress(t, good, func(p map[string]any) { p["response_url"] = "/x" }), signoff.EINVALID},
		{"body over the limit", append(slackPress(t, good, nil), []byte("&pad="+strings.Repeat("x", chat.MaxBody))...), signoff.ETOOLARGE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := chat.ParseSlackInteraction(tt.body)
			if got := signoff.ErrorCode(err); got != tt.want {
				t.Fatalf("ParseSlackInteraction = %+v, %v; want code %q", a, err, tt.want)
			}
			if err != nil && a != (chat.Answer{}) {
				t.Errorf("an answer with an error: %+v", a)
			}
			if err == nil && (a.CardID != cardID || a.Option != "approve" || a.CaseID != caseID || a.TeamID != "T1DC2JH3J" || a.Command) {
				t.Errorf("answer = %+v", a)
			}
		})
	}
}

func slackCommand(mod func(url.Values)) []byte {
	v := url.Values{
		"token":        {"xyzz0WbapA4vBCDEFasx0q6G"},
		"team_id":      {"T1DC2JH3J"},
		"team_domain":  {"testteamnow"},
		"channel_id":   {"G8PSS9T3V"},
		"user_id":      {"U2CERLKJA"},
		"user_name":    {"roadrunner"},
		"command":      {"/signoff"},
		"text":         {"reject " + caseID + " " + strings.ToUpper(digest[:16]) + "  flaky   repro"},
		"response_url": {"https://hooks.slack.com/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN"},
		"trigger_id":   {"398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"},
	}
	if mod != nil {
		mod(v)
	}
	return []byte(v.Encode())
}

func TestParseSlackCommand(t *testing.T) {
	t.Parallel()
	a, err := chat.ParseSlackCommand(slackCommand(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := chat.Answer{
		Platform: "slack", TeamID: "T1DC2JH3J", UserID: "U2CERLKJA", UserName: "roadrunner",
		CaseID: caseID, Option: "reject", DigestPrefix: digest[:16], Reason: "flaky repro",
		ResponseURL: "https://hooks.slack.com/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN",
		Command:     true,
	}
	if a != want {
		t.Errorf("answer = %+v\nwant %+v", a, want)
	}

	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"the documented example is not ours", []byte(docBody), signoff.EINVALID},
		{"another command", slackCommand(func(v url.Values) { v.Set("command", "/deploy") }), signoff.EINVALID},
		{"no command", slackCommand(func(v url.Values) { v.Del("command") }), signoff.EINVALID},
		{"empty text", slackCommand(func(v url.Values) { v.Set("text", "") }), signoff.EINVALID},
		{"bad text", slackCommand(func(v url.Values) { v.Set("text", "approve everything") }), signoff.EINVALID},
		{"text twice", slackCommand(func(v url.Values) { v.Add("text", "approve "+caseID+" "+digest) }), signoff.EINVALID},
		{"user twice", slackCommand(func(v url.Values) { v.Add("user_id", "U999") }), signoff.EINVALID},
		{"no user", slackCommand(func(v url.Values) { v.Del("user_id") }), signoff.EINVALID},
		{"no team", slackCommand(func(v url.Values) { v.Del("team_id") }), signoff.EINVALID},
		{"response_url not https", slackCommand(func(v url.Values) { v.Set("response_url", "javascript:alert(1)") }), signoff.EINVALID},
		{"not a form", []byte("text=%"), signoff.EINVALID},
		{"body over the limit", slackCommand(func(v url.Values) { v.Set("pad", strings.Repeat("x", chat.MaxBody)) }), signoff.ETOOLARGE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := chat.ParseSlackCommand(tt.body)
			if got := signoff.ErrorCode(err); got != tt.want || a != (chat.Answer{}) {
				t.Fatalf("ParseSlackCommand = %+v, %v; want code %q", a, err, tt.want)
			}
		})
	}
}

func TestSlackReply(t *testing.T) {
	t.Parallel()
	for _, replace := range []bool{true, false} {
		var v struct {
			ResponseType    string `json:"response_type"`
			Text            string
			ReplaceOriginal bool `json:"replace_original"`
		}
		if err := json.Unmarshal(chat.SlackReply("Approved <!here> & done", replace), &v); err != nil {
			t.Fatal(err)
		}
		if v.ResponseType != "ephemeral" || v.Text != "Approved &lt;!here&gt; &amp; done" || v.ReplaceOriginal != replace {
			t.Errorf("reply = %+v", v)
		}
	}
}
