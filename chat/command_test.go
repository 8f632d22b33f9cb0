package chat_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
)

func TestParseCommandText(t *testing.T) {
	t.Parallel()
	d12 := digest[:12]
	type parsed struct{ option, caseID, prefix, reason string }
	tests := []struct {
		name    string
		text    string
		want    parsed
		wantErr string // a substring of the message; "" for success
	}{
		{"approve", "approve " + caseID + " " + d12, parsed{"approve", caseID, d12, ""}, ""},
		{"reject with a reason", "reject " + caseID + " " + d12 + " not reproducible here", parsed{"reject", caseID, d12, "not reproducible here"}, ""},
		{"approve with a reason", "approve " + caseID + " " + d12 + " lgtm", parsed{"approve", caseID, d12, "lgtm"}, ""},
		{"a short case id", "approve case_X " + d12, parsed{"approve", "case_X", d12, ""}, ""},
		{"the whole digest", "approve " + caseID + " " + digest, parsed{"approve", caseID, digest, ""}, ""},
		{"upper-case hex is made lower", "approve " + caseID + " " + strings.ToUpper(d12), parsed{"approve", caseID, d12, ""}, ""},
		{"sha256: in front is dropped", "approve " + caseID + " SHA256:" + d12, parsed{"approve", caseID, d12, ""}, ""},
		{"verb in capitals", "APPROVE " + caseID + " " + d12, parsed{"approve", caseID, d12, ""}, ""},
		{"white space is squeezed", "\t reject\u3000" + caseID + "\n" + d12 + "  too \t many\n spaces  ", parsed{"reject", caseID, d12, "too many spaces"}, ""},
		{"a reason of the longest length", "reject " + caseID + " " + d12 + " " + strings.Repeat("é", chat.MaxReason), parsed{"reject", caseID, d12, strings.Repeat("é", chat.MaxReason)}, ""},
		{"a reason with mentions is kept as typed", "reject " + caseID + " " + d12 + " <!channel> @here", parsed{"reject", caseID, d12, "<!channel> @here"}, ""},

		{"empty", "", parsed{}, "usage:"},
		{"only spaces", "   \n", parsed{}, "usage:"},
		{"help", "help", parsed{}, "usage:"},
		{"unknown verb", "merge " + caseID + " " + d12, parsed{}, `unknown verb "merge"`},
		{"verb lookalike", "аpprove " + caseID + " " + d12, parsed{}, "unknown verb"}, // Cyrillic а
		{"no case", "approve", parsed{}, "missing case id"},
		{"not a case id", "approve prj_01abc " + d12, parsed{}, "is not a case id"},
		{"case id in capitals", "approve CASE_01abc " + d12, parsed{}, "is not a case id"},
		{"case id with a path", "approve case_01/../x " + d12, parsed{}, "is not a case id"},
		{"case id with a mention", "approve <!channel> " + d12, parsed{}, "is not a case id"},
		{"case id with a hyphen", "approve case_01-ab " + d12, parsed{}, "is not a case id"},
		{"empty case body", "approve case_ " + d12, parsed{}, "is not a case id"},
		{"no digest", "approve " + caseID, parsed{}, "missing digest prefix"},
		{"digest too short", "approve " + caseID + " " + digest[:11], parsed{}, "has 11 hex digits"},
		{"digest too long", "approve " + caseID + " " + digest + "0", parsed{}, "has 65 hex digits"},
		{"digest not hex", "approve " + caseID + " 3f1c9a0b7d2g", parsed{}, "is not hex"},
		{"digest full-width digits", "approve " + caseID + " １２３４５６７８９０１２", parsed{}, "is not hex"},
		{"digest with 0x", "approve " + caseID + " 0x" + d12, parsed{}, "is not hex"},
		{"only sha256:", "approve " + caseID + " sha256:", parsed{}, "is not hex"},
		{"reason with a NUL", "reject " + caseID + " " + d12 + " a\x00b", parsed{}, "control"},
		{"reason with an escape", "reject " + caseID + " " + d12 + " \x1b[2J", parsed{}, "control"},
		{"reason with a direction override", "reject " + caseID + " " + d12 + " \u202etxt.exe", parsed{}, "text-direction"},
		{"reason too long", "reject " + caseID + " " + d12 + " " + strings.Repeat("x", chat.MaxReason+1), parsed{}, "at most 1000"},
		{"not UTF-8", "reject " + caseID + " " + d12 + " \xff", parsed{}, "UTF-8"},
		{"too long", "reject " + caseID + " " + d12 + " " + strings.Repeat("x ", 3000), parsed{}, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			option, c, prefix, reason, err := chat.ParseCommandText(tt.text)
			if tt.wantErr != "" {
				if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), tt.wantErr) {
					t.Fatalf("err = %v, want EINVALID with %q", err, tt.wantErr)
				}
				if option != "" || c != "" || prefix != "" || reason != "" {
					t.Errorf("values with an error: %q %q %q %q", option, c, prefix, reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := (parsed{option, c, prefix, reason}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The error messages are for the person who typed the command: they are
// short, and quote hostile input only cut and escaped.
func TestParseCommandTextErrorsAreShort(t *testing.T) {
	t.Parallel()
	for _, text := range []string{strings.Repeat("x", 4000), "approve " + strings.Repeat("y", 3000), "approve case_1 " + strings.Repeat("z", 3000)} {
		_, _, _, _, err := chat.ParseCommandText(text)
		if msg := signoff.ErrorMessage(err); err == nil || utf8.RuneCountInString(msg) > 300 {
			t.Errorf("error of %d runes: %.80s…", utf8.RuneCountInString(msg), msg)
		}
	}
}

var hexRE = regexp.MustCompile(`^[0-9a-f]{12,64}$`)

func FuzzParseCommandText(f *testing.F) {
	for _, s := range []string{
		"approve " + caseID + " " + digest[:12],
		"reject case_X " + digest + " reason words",
		"APPROVE case_1 SHA256:" + strings.ToUpper(digest[:20]),
		"", "help", "approve", "reject case_ 0", "approve case_a \xff\xfe", "reject case_a 0123456789ab \u202e\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		option, c, prefix, reason, err := chat.ParseCommandText(text)
		if err != nil {
			if signoff.ErrorCode(err) != signoff.EINVALID {
				t.Fatalf("error code %q", signoff.ErrorCode(err))
			}
			return
		}
		if option != "approve" && option != "reject" {
			t.Fatalf("option %q", option)
		}
		if !chat.ValidCaseID(c) || !hexRE.MatchString(prefix) {
			t.Fatalf("case %q prefix %q", c, prefix)
		}
		if reason != strings.Join(strings.Fields(reason), " ") || utf8.RuneCountInString(reason) > chat.MaxReason {
			t.Fatalf("reason %q", reason)
		}
		// What was read, written back, reads the same.
		again := fmt.Sprintf("%s %s %s %s", option, c, prefix, reason)
		o2, c2, p2, r2, err := chat.ParseCommandText(again)
		if err != nil || o2 != option || c2 != c || p2 != prefix || r2 != reason {
			t.Fatalf("%q re-read as %q %q %q %q, %v", again, o2, c2, p2, r2, err)
		}
	})
}

func FuzzParseSlackInteraction(f *testing.F) {
	value := `{"card":"` + cardID + `","option":"approve","case":"` + caseID + `"}`
	payload := `{"type":"block_actions","team":{"id":"T1"},"user":{"id":"U1","username":"ann"},"actions":[{"action_id":"signoff_approve","value":` +
		fmt.Sprintf("%q", value) + `}],"response_url":"https://hooks.slack.com/actions/T1/1/x"}`
	for _, s := range []string{
		url.Values{"payload": {payload}}.Encode(),
		"payload=" + payload,
		"payload=%7B%7D", "payload=null", "payload=[]", "payload=%zz", "", "a=b&a=c",
		url.Values{"payload": {`{"type":"block_actions","actions":[{"action_id":"signoff_","value":"{}"}]}`}}.Encode(),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := chat.ParseSlackInteraction(body)
		if err != nil {
			if a != (chat.Answer{}) {
				t.Fatalf("an answer with an error: %+v", a)
			}
			return
		}
		if a.Platform != "slack" || a.UserID == "" || a.TeamID == "" || !chat.ValidCaseID(a.CaseID) || a.Option == "" || a.Command || a.DigestPrefix != "" {
			t.Fatalf("answer %+v", a)
		}
	})
}

func FuzzParseMattermostAction(f *testing.F) {
	f.Add([]byte(`{"user_id":"u1","team_id":"t1","context":{"card_id":"` + cardID + `","option":"approve","case_id":"` + caseID + `"}}`))
	f.Add([]byte(`{"context":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := chat.ParseMattermostAction(body)
		if err == nil && (a.Platform != "mattermost" || a.UserID == "" || !chat.ValidCaseID(a.CaseID)) {
			t.Fatalf("answer %+v", a)
		}
	})
}
