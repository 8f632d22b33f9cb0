package mail_test

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/mail"
)

var testDate = time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("", 3600))

const testID = "0b6f4f1e-6a43-4c56-9c39-5d3b2f7c1a10"

// parsed is a composed message read back the way a receiver would.
type parsed struct {
	header  netmail.Header
	subject string
	body    string
}

func parse(t *testing.T, raw []byte) parsed {
	t.Helper()
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.IndexByte(line, '\n') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
			t.Fatalf("line %d has a bare CR or LF: %q", i, line)
		}
		if len(line) > 78 {
			t.Fatalf("line %d is %d bytes, want <= 78: %q", i, len(line), line)
		}
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("ReadMessage: %v\n%s", err, raw)
	}
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("decode subject: %v", err)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("decode body: %v", err)
	}
	return parsed{header: msg.Header, subject: subject, body: string(body)}
}

func TestComposeHeaders(t *testing.T) {
	t.Parallel()
	raw, err := mail.Compose("Signoff <noreply@signoff.example>", mail.Message{
		ID: testID, To: "Alice <alice@example.com>", Subject: "Your report", Text: "Hello",
	}, testDate)
	if err != nil {
		t.Fatal(err)
	}
	p := parse(t, raw)
	want := map[string]string{
		"From":                      `"Signoff" <noreply@signoff.example>`,
		"To":                        `"Alice" <alice@example.com>`,
		"Subject":                   "Your report",
		"Date":                      "Wed, 04 Mar 2026 05:06:07 +0100",
		"Message-Id":                "<" + testID + "@signoff>",
		"X-Signoff-Message-Id":      testID,
		"Mime-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
	}
	for k, v := range want {
		if got := p.header.Get(k); got != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if d, err := p.header.Date(); err != nil || !d.Equal(testDate) {
		t.Errorf("Date parses as %v, %v; want %v", d, err, testDate)
	}
}

func TestComposeContent(t *testing.T) {
	t.Parallel()
	long := strings.TrimSpace(strings.Repeat("word ", 40))
	tests := []struct {
		name        string
		subject     string
		text        string
		wantSubject string
		wantBody    string
		rawContains string // a fragment the raw message must contain
	}{
		{"ascii subject left as is", "Case 42 approved", "ok", "Case 42 approved", "ok\r\n", "Subject: Case 42 approved\r\n"},
		{"non-ASCII subject is an encoded-word", "Genehmigt: Änderung für Müller", "x", "Genehmigt: Änderung für Müller", "x\r\n", "=?utf-8?q?"},
		{"long non-ASCII subject folds between words", strings.Repeat("é", 120), "x", strings.Repeat("é", 120), "x\r\n", "?=\r\n =?utf-8?q?"},
		{"long ascii subject folds at spaces", long, "x", long, "x\r\n", "word\r\n word"},
		{"LF body becomes CRLF", "s", "one\ntwo\n", "s", "one\r\ntwo\r\n", "one\r\ntwo\r\n"},
		{"non-ASCII body", "s", "Grüße", "s", "Grüße\r\n", "Gr=C3=BC=C3=9Fe"},
		{"leading dots kept for the transport to stuff", "s", ".\n..x\n", "s", ".\r\n..x\r\n", "\r\n.\r\n..x\r\n"},
		{"long body line soft-wrapped", "s", strings.Repeat("a", 200), "s", strings.Repeat("a", 200) + "\r\n", "=\r\n"},
		{"empty body", "s", "", "s", "", "quoted-printable\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := mail.Compose("noreply@signoff.example", mail.Message{
				ID: testID, To: "alice@example.com", Subject: tt.subject, Text: tt.text,
			}, testDate)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte(tt.rawContains)) {
				t.Errorf("raw message lacks %q:\n%s", tt.rawContains, raw)
			}
			p := parse(t, raw)
			if p.subject != tt.wantSubject {
				t.Errorf("subject=%q, want %q", p.subject, tt.wantSubject)
			}
			if p.body != tt.wantBody {
				t.Errorf("body=%q, want %q", p.body, tt.wantBody)
			}
		})
	}
}

// TestComposeRefuses covers header injection and malformed fields: each must
// be refused, never repaired.
func TestComposeRefuses(t *testing.T) {
	t.Parallel()
	ok := mail.Message{ID: testID, To: "alice@example.com", Subject: "s", Text: "t"}
	tests := []struct {
		name string
		from string
		edit func(*mail.Message)
	}{
		{"CRLF in subject", "", func(m *mail.Message) { m.Subject = "hi\r\nBcc: eve@example.com" }},
		{"LF in subject", "", func(m *mail.Message) { m.Subject = "hi\nBcc: eve@example.com" }},
		{"CR in subject", "", func(m *mail.Message) { m.Subject = "hi\rBcc: eve@example.com" }},
		{"CRLF in to", "", func(m *mail.Message) { m.To = "alice@example.com\r\nBcc: eve@example.com" }},
		{"two recipients", "", func(m *mail.Message) { m.To = "alice@example.com, eve@example.com" }},
		{"CRLF in from", "noreply@signoff.example\r\nBcc: eve@example.com", nil},
		{"CRLF in id", "", func(m *mail.Message) { m.ID = "x\r\nBcc: eve@example.com" }},
		{"space in id", "", func(m *mail.Message) { m.ID = "a b" }},
		{"angle bracket in id", "", func(m *mail.Message) { m.ID = "a>b" }},
		{"empty id", "", func(m *mail.Message) { m.ID = "" }},
		{"empty to", "", func(m *mail.Message) { m.To = "" }},
		{"to without @", "", func(m *mail.Message) { m.To = "alice" }},
		{"empty from", "-", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := ok
			if tt.edit != nil {
				tt.edit(&m)
			}
			from := tt.from
			switch from {
			case "":
				from = "noreply@signoff.example"
			case "-":
				from = ""
			}
			if raw, err := mail.Compose(from, m, testDate); err == nil {
				t.Fatalf("Compose succeeded, want error:\n%s", raw)
			}
		})
	}
}

func TestValidAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" means refused
	}{
		{"alice@example.com", "alice@example.com"},
		{"Alice <alice@example.com>", "alice@example.com"},
		{"  alice@example.com  ", "alice@example.com"},
		{"\"Müller, A.\" <a.mueller@example.de>", "a.mueller@example.de"},
		{"=?utf-8?q?M=C3=BCller?= <m@example.de>", "m@example.de"},
		{"first.last+tag@sub.example.com", "first.last+tag@sub.example.com"},
		{"", ""},
		{"alice", ""},
		{"alice@", ""},
		{"@example.com", ""},
		{"alice@example.com\r\n", ""},
		{"alice@example.com\nBcc: eve@example.com", ""},
		{"Alice <alice@example.com>\r\nBcc: eve@example.com", ""},
		{"alice@example.com, bob@example.com", ""},
		{"\"a b\"@example.com", ""},
		{"jörg@example.de", ""},
		{"<>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := mail.ValidAddress(tt.in)
			if ok != (tt.want != "") || got != tt.want {
				t.Fatalf("ValidAddress(%q)=%q,%v; want %q,%v", tt.in, got, ok, tt.want, tt.want != "")
			}
		})
	}
}
