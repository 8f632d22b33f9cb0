package mail_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/mail"
	"github.com/signoff-dev/signoff/mail/smtptest"
)

const (
	testUser     = "signoff"
	testPassword = "s3cret-Pa55word"
)

// config returns a Config for srv that trusts its certificate.
func config(srv *smtptest.Server) mail.Config {
	host, port := srv.Addr()
	return mail.Config{
		Host:      host,
		Port:      port,
		From:      "Signoff <noreply@signoff.example>",
		TLSConfig: srv.ClientTLS(),
		Timeout:   10 * time.Second,
	}
}

func message(id string) mail.Message {
	return mail.Message{
		ID:      id,
		To:      "Alice <alice@example.com>",
		Subject: "Änderung genehmigt",
		Text:    "Your change was approved.\n.\n.hidden line\nGrüße\n",
	}
}

func TestSend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     smtptest.Options
		edit     func(*mail.Config)
		wantErr  string // substring; "" means the message must arrive
		wantTLS  bool
		wantUser string
	}{
		{name: "starttls", wantTLS: true},
		{name: "server requiring tls", opts: smtptest.Options{RequireTLS: true}, wantTLS: true},
		{
			name:     "auth plain after starttls",
			opts:     smtptest.Options{RequireTLS: true, Username: testUser, Password: testPassword},
			edit:     func(c *mail.Config) { c.Username, c.Password = testUser, testPassword },
			wantTLS:  true,
			wantUser: testUser,
		},
		{
			name:    "wrong password",
			opts:    smtptest.Options{Username: testUser, Password: testPassword},
			edit:    func(c *mail.Config) { c.Username, c.Password = testUser, "not-"+testPassword },
			wantErr: "auth: 535",
		},
		{
			name:    "auth required but not configured",
			opts:    smtptest.Options{Username: testUser, Password: testPassword},
			wantErr: "mail: 530",
		},
		{
			name:    "auth configured but not offered",
			edit:    func(c *mail.Config) { c.Username, c.Password = testUser, testPassword },
			wantErr: "server does not offer AUTH",
		},
		{
			name:    "no starttls when required is refused",
			opts:    smtptest.Options{NoSTARTTLS: true},
			wantErr: "starttls: server does not offer STARTTLS",
		},
		{
			name:    "untrusted certificate",
			edit:    func(c *mail.Config) { c.TLSConfig = nil },
			wantErr: "starttls: tls: failed to verify certificate",
		},
		{
			name:    "wrong server name",
			edit:    func(c *mail.Config) { c.TLSConfig.ServerName = "smtp.example.com" },
			wantErr: "starttls: tls: failed to verify certificate",
		},
		{
			name: "plain smtp to loopback when starttls is none",
			opts: smtptest.Options{NoSTARTTLS: true},
			edit: func(c *mail.Config) { c.StartTLS = mail.StartTLSNone },
		},
		{
			name:    "server requiring tls refuses plain",
			opts:    smtptest.Options{RequireTLS: true},
			edit:    func(c *mail.Config) { c.StartTLS = mail.StartTLSNone },
			wantErr: "mail: 530",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, tt.opts)
			cfg := config(srv)
			if tt.edit != nil {
				tt.edit(&cfg)
			}
			err := mail.Send(context.Background(), cfg, message(testID))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Send err=%v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "smtp send "+testID+": ") {
					t.Errorf("err=%q does not name the message", err)
				}
				if strings.Contains(err.Error(), testPassword) {
					t.Errorf("err=%q contains the password", err)
				}
				if n := len(srv.Messages()); n != 0 {
					t.Fatalf("server received %d messages, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			msgs := srv.Messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages, want 1", len(msgs))
			}
			got := msgs[0]
			if got.TLS != tt.wantTLS {
				t.Errorf("TLS=%v, want %v", got.TLS, tt.wantTLS)
			}
			if got.AuthUser != tt.wantUser {
				t.Errorf("AuthUser=%q, want %q", got.AuthUser, tt.wantUser)
			}
			if got.From != "noreply@signoff.example" {
				t.Errorf("envelope from=%q", got.From)
			}
			if len(got.To) != 1 || got.To[0] != "alice@example.com" {
				t.Errorf("envelope to=%q", got.To)
			}
			if got.Helo != "localhost" {
				t.Errorf("helo=%q, want localhost", got.Helo)
			}
			p := parse(t, got.Data)
			if v := p.header.Get("Message-Id"); v != "<"+testID+"@signoff>" {
				t.Errorf("Message-Id=%q", v)
			}
			if v := p.header.Get("X-Signoff-Message-Id"); v != testID {
				t.Errorf("X-Signoff-Message-Id=%q", v)
			}
			if v := p.header.Get("To"); v != `"Alice" <alice@example.com>` {
				t.Errorf("To=%q", v)
			}
			if p.subject != "Änderung genehmigt" {
				t.Errorf("subject=%q", p.subject)
			}
			if want := "Your change was approved.\r\n.\r\n.hidden line\r\nGrüße\r\n"; p.body != want {
				t.Errorf("body=%q, want %q", p.body, want)
			}
		})
	}
}

// TestSendRefusesBeforeDialing checks that bad configuration and bad messages
// are caught before anything is sent.
func TestSendRefusesBeforeDialing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(*mail.Config, *mail.Message)
		wantErr string
	}{
		{"empty host", func(c *mail.Config, _ *mail.Message) { c.Host = "" }, "config: host is empty"},
		{"port zero", func(c *mail.Config, _ *mail.Message) { c.Port = 0 }, "config: port 0"},
		{"bad from", func(c *mail.Config, _ *mail.Message) { c.From = "nobody" }, "config: from"},
		{"unknown starttls mode", func(c *mail.Config, _ *mail.Message) { c.StartTLS = "optional" }, `config: starttls "optional"`},
		{"starttls none to a remote host", func(c *mail.Config, _ *mail.Message) {
			c.Host, c.StartTLS = "smtp.example.com", mail.StartTLSNone
		}, "allowed only for a loopback host"},
		{"auth without tls", func(c *mail.Config, _ *mail.Message) {
			c.StartTLS, c.Username, c.Password = mail.StartTLSNone, testUser, testPassword
		}, "auth requires starttls"},
		{"password without username", func(c *mail.Config, _ *mail.Message) { c.Password = testPassword }, "password set without username"},
		{"header injection in subject", func(_ *mail.Config, m *mail.Message) {
			m.Subject = "hi\r\nBcc: eve@example.com"
		}, "compose: subject contains a line break"},
		{"header injection in to", func(_ *mail.Config, m *mail.Message) {
			m.To = "alice@example.com\r\nBcc: eve@example.com"
		}, "to: address contains a line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, smtptest.Options{})
			cfg, m := config(srv), message(testID)
			tt.edit(&cfg, &m)
			err := mail.Send(context.Background(), cfg, m)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Send err=%v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("err=%q contains the password", err)
			}
			if mail.Temporary(err) {
				t.Errorf("Temporary(%v)=true, want false", err)
			}
			if n := len(srv.Messages()); n != 0 {
				t.Fatalf("server received %d messages, want none", n)
			}
		})
	}
}

func TestSendTemporaryRcptFailure(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{FailRcpt: 1})
	cfg := config(srv)

	err := mail.Send(context.Background(), cfg, message(testID))
	if err == nil || !strings.Contains(err.Error(), "smtp send "+testID+": rcpt: 451") {
		t.Fatalf("Send err=%v, want a 451 at rcpt", err)
	}
	var te *textproto.Error
	if !errors.As(err, &te) || te.Code != 451 {
		t.Fatalf("err=%v does not wrap a 451 *textproto.Error", err)
	}
	if !mail.Temporary(err) {
		t.Fatalf("Temporary(%v)=false, want true", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("server received %d messages after a failed rcpt", n)
	}

	// The retry, with the same id, goes through.
	if err := mail.Send(context.Background(), cfg, message(testID)); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("server received %d messages after the retry, want 1", n)
	}
}

// silentServer accepts connections and never answers, to hold Send in the
// greeting until its context ends.
func silentServer(t *testing.T) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

func TestSendContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ctx     func(t *testing.T) context.Context
		timeout time.Duration
		want    error
	}{
		{"already cancelled", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, 0, context.Canceled},
		{"cancelled while waiting for the greeting", func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			t.Cleanup(cancel)
			return ctx
		}, 0, context.Canceled},
		{"caller deadline", func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, 0, context.DeadlineExceeded},
		{"config timeout", func(t *testing.T) context.Context { return context.Background() }, 100 * time.Millisecond, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host, port := silentServer(t)
			cfg := mail.Config{Host: host, Port: port, From: "noreply@signoff.example", Timeout: tt.timeout}
			start := time.Now()
			err := mail.Send(tt.ctx(t), cfg, message(testID))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Send err=%v, want %v", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Send returned after %s, want promptly", d)
			}
		})
	}
}

func TestSendConcurrent(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{RequireTLS: true, Username: testUser, Password: testPassword})
	cfg := config(srv)
	cfg.Username, cfg.Password = testUser, testPassword

	const n = 20
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs <- mail.Send(context.Background(), cfg, message(fmt.Sprintf("id-%02d", i))) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	seen := map[string]bool{}
	for _, m := range srv.Messages() {
		seen[parse(t, m.Data).header.Get("X-Signoff-Message-Id")] = true
	}
	if len(seen) != n {
		t.Fatalf("server received %d distinct messages, want %d", len(seen), n)
	}
}

func ExampleSend() {
	cfg := mail.Config{
		Host:     "smtp.example.com",
		Port:     587,
		From:     "Signoff <noreply@signoff.example>",
		Username: "signoff",
		Password: "from a secret store",
	}
	err := mail.Send(context.Background(), cfg, mail.Message{
		ID:      "0b6f4f1e-6a43-4c56-9c39-5d3b2f7c1a10",
		To:      "reporter@example.com",
		Subject: "Your report was fixed",
		Text:    "The fix was approved and deployed.",
	})
	if err != nil && mail.Temporary(err) {
		// Retry later with the same ID, so the receiver can de-duplicate.
		fmt.Println("retry:", err)
	}
}
