package smtptest_test

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/mail/smtptest"
)

// dialRaw opens a plain connection and consumes the greeting.
func dialRaw(t *testing.T, srv *smtptest.Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	host, port := srv.Addr()
	c, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if got := readReply(t, r); !strings.HasPrefix(got, "220 ") {
		t.Fatalf("greeting=%q", got)
	}
	return c, r
}

// readReply reads one possibly multi-line reply and returns its last line.
func readReply(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read reply: %v", err)
		}
		if len(line) < 4 || line[3] != '-' {
			return strings.TrimRight(line, "\r\n")
		}
	}
}

// TestDialogue drives the server with raw commands, one row per exchange.
func TestDialogue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   smtptest.Options
		script []string // alternating: command sent, reply code expected
	}{
		{"noop and rset", smtptest.Options{}, []string{"NOOP", "250", "EHLO t", "250", "MAIL FROM:<a@x>", "250", "RSET", "250", "RCPT TO:<b@x>", "503"}},
		{"unknown command", smtptest.Options{}, []string{"VRFY a", "502"}},
		{"mail before ehlo", smtptest.Options{}, []string{"MAIL FROM:<a@x>", "503"}},
		{"data before rcpt", smtptest.Options{}, []string{"EHLO t", "250", "MAIL FROM:<a@x>", "250", "DATA", "503"}},
		{"mail params accepted", smtptest.Options{}, []string{"EHLO t", "250", "MAIL FROM:<a@x> BODY=8BITMIME", "250"}},
		{"bad mail syntax", smtptest.Options{}, []string{"EHLO t", "250", "MAIL FROM:a@x", "501"}},
		{"require tls refuses mail", smtptest.Options{RequireTLS: true}, []string{"EHLO t", "250", "MAIL FROM:<a@x>", "530"}},
		{"require tls refuses auth", smtptest.Options{RequireTLS: true, Username: "u", Password: "p"}, []string{"EHLO t", "250", "AUTH PLAIN " + plain("u", "p"), "538"}},
		{"auth wrong password", smtptest.Options{Username: "u", Password: "p"}, []string{"EHLO t", "250", "AUTH PLAIN " + plain("u", "q"), "535"}},
		{"auth with continuation", smtptest.Options{Username: "u", Password: "p"}, []string{"EHLO t", "250", "AUTH PLAIN", "334", plain("u", "p"), "235", "MAIL FROM:<a@x>", "250"}},
		{"auth required before mail", smtptest.Options{Username: "u", Password: "p"}, []string{"EHLO t", "250", "MAIL FROM:<a@x>", "530"}},
		{"auth not offered without accounts", smtptest.Options{}, []string{"EHLO t", "250", "AUTH PLAIN " + plain("u", "p"), "502"}},
		{"no starttls", smtptest.Options{NoSTARTTLS: true}, []string{"EHLO t", "250", "STARTTLS", "502"}},
		{"fail rcpt once", smtptest.Options{FailRcpt: 1}, []string{"EHLO t", "250", "MAIL FROM:<a@x>", "250", "RCPT TO:<b@x>", "451", "RCPT TO:<b@x>", "250"}},
		{"quit", smtptest.Options{}, []string{"QUIT", "221"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, tt.opts)
			c, r := dialRaw(t, srv)
			for i := 0; i < len(tt.script); i += 2 {
				if _, err := io.WriteString(c, tt.script[i]+"\r\n"); err != nil {
					t.Fatal(err)
				}
				if got := readReply(t, r); !strings.HasPrefix(got, tt.script[i+1]+" ") {
					t.Fatalf("%q: reply %q, want %s", tt.script[i], got, tt.script[i+1])
				}
			}
		})
	}
}

func plain(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + pass))
}

func TestDotUnstuffingAndRecording(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	c, r := dialRaw(t, srv)
	script := []string{
		"EHLO client.test", "250",
		"MAIL FROM:<a@x>", "250",
		"RCPT TO:<b@x>", "250",
		"RCPT TO:<c@x>", "250",
		"DATA", "354",
		"Subject: s\r\n\r\n..\r\n..hidden\r\nplain\r\n.", "250",
		"QUIT", "221",
	}
	for i := 0; i < len(script); i += 2 {
		io.WriteString(c, script[i]+"\r\n")
		if got := readReply(t, r); !strings.HasPrefix(got, script[i+1]+" ") {
			t.Fatalf("%q: reply %q, want %s", script[i], got, script[i+1])
		}
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if want := "Subject: s\r\n\r\n.\r\n.hidden\r\nplain\r\n"; string(m.Data) != want {
		t.Errorf("Data=%q, want %q", m.Data, want)
	}
	if m.From != "a@x" || strings.Join(m.To, ",") != "b@x,c@x" || m.TLS || m.Helo != "client.test" {
		t.Errorf("recorded %+v", m)
	}
	// Messages returns a copy the caller may change.
	msgs[0].To[0] = "changed"
	if srv.Messages()[0].To[0] != "b@x" {
		t.Error("Messages shares its slices with the server")
	}
}

// TestSTARTTLS uses net/smtp directly, so the server is checked against the
// same client as package mail without depending on it.
func TestSTARTTLS(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{RequireTLS: true, Username: "u", Password: "p"})
	host, port := srv.Addr()
	c, err := smtp.Dial(net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not advertised")
	}
	cfg := srv.ClientTLS()
	cfg.ServerName = host
	if err := c.StartTLS(cfg); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS advertised again after the upgrade")
	}
	if err := c.Auth(smtp.PlainAuth("", "u", "p", host)); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("a@x"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("b@x"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "hi\n.\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].AuthUser != "u" || string(msgs[0].Data) != "hi\r\n.\r\n" {
		t.Fatalf("recorded %+v", msgs)
	}
}

func TestClientTLSRejectsOtherServers(t *testing.T) {
	t.Parallel()
	a := smtptest.Start(t, smtptest.Options{})
	b := smtptest.Start(t, smtptest.Options{})
	host, port := b.Addr()
	c, err := smtp.Dial(net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := a.ClientTLS()
	cfg.ServerName = host
	if err := c.StartTLS(cfg); err == nil {
		t.Fatal("StartTLS trusted another server's certificate")
	}
}

// TestCloseDropsIdleConnections checks that Close does not wait for clients
// and leaves no goroutine behind: it returns only after every session ended.
func TestCloseDropsIdleConnections(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	var conns []net.Conn
	for range 3 {
		c, _ := dialRaw(t, srv)
		conns = append(conns, c)
	}
	// One more waits in the TLS handshake, which the client never starts.
	tc, r := dialRaw(t, srv)
	io.WriteString(tc, "STARTTLS\r\n")
	if got := readReply(t, r); !strings.HasPrefix(got, "220 ") {
		t.Fatalf("STARTTLS reply %q", got)
	}
	conns = append(conns, tc)

	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	for i, c := range conns {
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("conn %d still open after Close", i)
		}
	}
	srv.Close() // idempotent
	host, port := srv.Addr()
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second); err == nil {
		c.Close()
		t.Error("listener still accepting after Close")
	}
}
