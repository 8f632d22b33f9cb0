package mail

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/netguard"
)

// StartTLS modes.
const (
	StartTLSRequired = "required" // the default: never send in the clear
	StartTLSNone     = "none"     // plain SMTP; only to a loopback host
)

const (
	defaultTimeout  = 30 * time.Second
	defaultHeloName = "localhost"
)

// Config is how to reach the SMTP server.
type Config struct {
	Host string
	Port int // usually 587
	From string

	// Username and Password, when Username is set, are sent with AUTH PLAIN,
	// and only ever over TLS.
	Username, Password string

	// StartTLS is "required" (the default when empty) or "none". "none" is
	// accepted only when Host is a loopback address, for tests and local
	// development.
	StartTLS string

	// TLSConfig is used for STARTTLS; nil means the system roots. An empty
	// ServerName defaults to Host.
	TLSConfig *tls.Config

	Timeout  time.Duration // for the whole send; default 30s
	HeloName string        // default "localhost"

	// Dial connects to the server (nil: a plain net.Dialer). The notify
	// desk dials through its address guard, so a host that resolves to an
	// internal address is never connected to.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// check validates c before anything touches the network. It returns the bare
// envelope sender.
func (c Config) check() (string, error) {
	if c.Host == "" {
		return "", errors.New("config: host is empty")
	}
	if c.Port < 1 || c.Port > 65535 {
		return "", fmt.Errorf("config: port %d out of range", c.Port)
	}
	from, err := parseAddress(c.From)
	if err != nil {
		return "", fmt.Errorf("config: from: %w", err)
	}
	switch c.StartTLS {
	case "", StartTLSRequired:
	case StartTLSNone:
		if !isLoopback(c.Host) {
			return "", fmt.Errorf("config: starttls %q is allowed only for a loopback host, not %s", StartTLSNone, c.Host)
		}
		// net/smtp would allow PLAIN in the clear to localhost; we do not,
		// so a dev configuration cannot quietly carry a real password.
		if c.Username != "" {
			return "", fmt.Errorf("config: auth requires starttls %q", StartTLSRequired)
		}
	default:
		return "", fmt.Errorf("config: starttls %q: want %q or %q", c.StartTLS, StartTLSRequired, StartTLSNone)
	}
	if c.Username == "" && c.Password != "" {
		return "", errors.New("config: password set without username")
	}
	if c.Timeout < 0 {
		return "", fmt.Errorf("config: negative timeout %s", c.Timeout)
	}
	return from.Address, nil
}

// isLoopback reports whether host is localhost or a loopback address in
// any form a resolver takes (127.1, [::ffff:127.0.0.1], a trailing dot).
func isLoopback(host string) bool {
	if ip, ok := netguard.ParseIP(host); ok {
		return netguard.Classify(ip) == netguard.Loopback
	}
	return netguard.NormalHost(host) == "localhost"
}

// Send delivers m through the server in c. It dials, upgrades with STARTTLS
// (refusing a server that does not offer it unless StartTLS is "none"),
// authenticates when a username is set, and sends one message to one
// recipient. The whole exchange is bounded by ctx and c.Timeout.
//
// Errors name the message id and the SMTP step that failed, wrap the server's
// *textproto.Error (see Temporary) or the context error, and never contain
// the password.
func Send(ctx context.Context, c Config, m Message) error {
	fail := func(step string, err error) error {
		return redact(fmt.Errorf("smtp send %s: %s: %w", m.ID, step, err), c)
	}
	from, err := c.check()
	if err != nil {
		return fail("config", err)
	}
	to, err := parseAddress(m.To)
	if err != nil {
		return fail("to", err)
	}
	raw, err := Compose(c.From, m, time.Now())
	if err != nil {
		return fail("compose", err)
	}

	timeout := c.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// After the dial, net/smtp knows nothing of ctx; an expired deadline on
	// the connection is what unblocks it. The context error is reported in
	// place of the resulting "i/o timeout".
	step := func(name string, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return fail(name, fmt.Errorf("%w (%v)", cerr, err))
		}
		return fail(name, err)
	}

	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return step("dial", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	client, err := smtp.NewClient(conn, c.Host)
	if err != nil {
		conn.Close()
		return step("greeting", err)
	}
	// Close is a no-op error after a successful Quit, so it is always safe.
	defer client.Close()

	helo := c.HeloName
	if helo == "" {
		helo = defaultHeloName
	}
	if err := client.Hello(helo); err != nil {
		return step("hello", err)
	}

	if c.StartTLS != StartTLSNone {
		if ok, _ := client.Extension("STARTTLS"); !ok {
			return step("starttls", errors.New("server does not offer STARTTLS; refusing to send in the clear"))
		}
		tc := &tls.Config{}
		if c.TLSConfig != nil {
			tc = c.TLSConfig.Clone()
		}
		if tc.ServerName == "" {
			tc.ServerName = c.Host
		}
		if tc.MinVersion == 0 {
			tc.MinVersion = tls.VersionTLS12
		}
		if err := client.StartTLS(tc); err != nil {
			return step("starttls", err)
		}
	}

	if c.Username != "" {
		if ok, _ := client.Extension("AUTH"); !ok {
			return step("auth", errors.New("server does not offer AUTH"))
		}
		if err := client.Auth(smtp.PlainAuth("", c.Username, c.Password, c.Host)); err != nil {
			return step("auth", err)
		}
	}

	if err := client.Mail(from); err != nil {
		return step("mail", err)
	}
	if err := client.Rcpt(to.Address); err != nil {
		return step("rcpt", err)
	}
	w, err := client.Data()
	if err != nil {
		return step("data", err)
	}
	if _, err := w.Write(raw); err != nil {
		return step("data", err)
	}
	// Close sends the final dot and reads the server's verdict on the message.
	if err := w.Close(); err != nil {
		return step("data", err)
	}
	// The server has accepted the message. A failed QUIT must not be reported
	// as a failed send, or the caller would retry and deliver it twice.
	_ = client.Quit()
	return nil
}

// Temporary reports whether err from Send is worth retrying: a 4xx reply from
// the server, or a network failure or timeout. 5xx replies and invalid
// configuration or messages are permanent.
func Temporary(err error) bool {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code >= 400 && te.Code < 500
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// redact removes the password, and the AUTH PLAIN blob that carries it, from
// err's text. Servers sometimes echo what they received. The error chain is
// dropped when something had to be removed, since the wrapped errors still
// hold the secret.
func redact(err error, c Config) error {
	if c.Password == "" {
		return err
	}
	msg := err.Error()
	plain := base64.StdEncoding.EncodeToString([]byte("\x00" + c.Username + "\x00" + c.Password))
	if !strings.Contains(msg, c.Password) && !strings.Contains(msg, plain) {
		return err
	}
	msg = strings.ReplaceAll(msg, plain, "[redacted]")
	msg = strings.ReplaceAll(msg, c.Password, "[redacted]")
	return errors.New(msg)
}
