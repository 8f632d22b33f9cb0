// Package mail sends reporter notices by SMTP. It refuses to send in the clear
// unless the server is on the loopback interface, and composes messages itself
// so header injection is impossible by construction rather than by escaping.
package mail

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
)

// Message is one notice to one recipient.
type Message struct {
	// ID is a stable id (a UUID) for the notice. It becomes the Message-ID
	// and the X-Signoff-Message-Id header, so a retried send can be
	// recognised as a duplicate by the receiver.
	ID      string
	To      string // one address, with or without a display name
	Subject string
	Text    string // plain text body
}

// maxLine is the folding target for header lines (RFC 5322 section 2.1.1).
const maxLine = 78

// ValidAddress parses s as one RFC 5322 address and returns the bare
// addr-spec, e.g. "a@example.com" for "Alice <a@example.com>".
func ValidAddress(s string) (string, bool) {
	a, err := parseAddress(s)
	if err != nil {
		return "", false
	}
	return a.Address, true
}

// parseAddress is ValidAddress with a reason, for error messages.
func parseAddress(s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("address contains a line break")
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("address: %w", err)
	}
	// net/mail accepts quoted local parts such as "a b"@x and returns them
	// unquoted, which would not survive being put back into MAIL FROM:<...>.
	// Non-ASCII addresses would need SMTPUTF8. Notices need neither.
	for _, r := range a.Address {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`<>()[]\",;:`, r) {
			return nil, fmt.Errorf("address %q: unsupported character %q", a.Address, r)
		}
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return nil, fmt.Errorf("address %q: missing local part or domain", a.Address)
	}
	return a, nil
}

// validID reports whether id can go inside Message-ID: <id@signoff>. The set
// is narrower than RFC 5322 allows but covers UUIDs and ULIDs.
func validID(id string) bool {
	if id == "" || len(id) > 200 || id[0] == '.' || id[len(id)-1] == '.' || strings.Contains(id, "..") {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Compose renders m as an RFC 5322 message with CRLF line endings. The body is
// quoted-printable so long lines and non-ASCII text survive any relay. Dots at
// the start of a line are left alone: SMTP dot-stuffing is the transport's job.
func Compose(from string, m Message, date time.Time) ([]byte, error) {
	fromAddr, err := parseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("compose: from: %w", err)
	}
	toAddr, err := parseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("compose: to: %w", err)
	}
	if !validID(m.ID) {
		return nil, fmt.Errorf("compose: message id %q must be letters, digits, '-', '_' or '.'", m.ID)
	}
	// Refusing rather than stripping line breaks: a subject with a CR or LF
	// is a bug or an attack upstream, and either way should not be sent.
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, errors.New("compose: subject contains a line break")
	}

	var b bytes.Buffer
	header := func(name, value string) {
		b.WriteString(fold(name + ": " + value))
		b.WriteString("\r\n")
	}
	header("From", fromAddr.String())
	header("To", toAddr.String())
	// QEncoding leaves printable ASCII untouched and only switches to
	// encoded-words when the subject needs them.
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", date.Format(time.RFC1123Z))
	header("Message-ID", "<"+m.ID+"@signoff>")
	header("X-Signoff-Message-Id", m.ID)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")

	// In text mode the quoted-printable writer turns LF and CRLF into CRLF.
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(m.Text)); err != nil {
		return nil, fmt.Errorf("compose: body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return nil, fmt.Errorf("compose: body: %w", err)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
	return b.Bytes(), nil
}

// fold breaks a header line at spaces so that lines stay near maxLine. It only
// inserts CRLF before an existing space, so unfolding restores the value
// exactly; encoded-words never contain spaces, so they are never split.
func fold(line string) string {
	if len(line) <= maxLine {
		return line
	}
	words := strings.Split(line, " ")
	var b strings.Builder
	b.WriteString(words[0])
	n := len(words[0])
	for _, w := range words[1:] {
		// This may fold straight after the header name, which RFC 5322
		// allows and RFC 2047 needs for a 75-character encoded-word.
		if w != "" && n+1+len(w) > maxLine {
			b.WriteString("\r\n")
			n = 0
		}
		b.WriteString(" ")
		b.WriteString(w)
		n += 1 + len(w)
	}
	return b.String()
}
