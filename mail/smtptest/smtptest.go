// Package smtptest runs a small in-process SMTP server for tests. It speaks
// enough ESMTP for net/smtp (EHLO, STARTTLS, AUTH PLAIN, MAIL, RCPT, DATA,
// RSET, NOOP, QUIT) and records every message it accepts.
package smtptest

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options shape the server's behaviour.
type Options struct {
	// RequireTLS refuses AUTH and MAIL until STARTTLS has completed.
	RequireTLS bool
	// NoSTARTTLS hides STARTTLS from EHLO and refuses the command, like a
	// server that only speaks plain SMTP.
	NoSTARTTLS bool
	// FailRcpt makes the first FailRcpt RCPT commands, counted across all
	// connections, fail with 451 so callers can test retries.
	FailRcpt int
	// Username and Password, when Username is set, are the only accepted
	// AUTH PLAIN credentials, and MAIL is refused until AUTH succeeds. With
	// no Username, AUTH is not offered.
	Username, Password string
}

// Received is one message the server accepted.
type Received struct {
	From     string   // envelope sender, from MAIL FROM
	To       []string // envelope recipients, from RCPT TO
	Data     []byte   // the message after dot-unstuffing, with CRLF line endings
	TLS      bool     // whether STARTTLS had completed
	AuthUser string   // the AUTH PLAIN username, if any
	Helo     string   // the EHLO or HELO name
}

// Server is a running test SMTP server.
type Server struct {
	opts   Options
	ln     net.Listener
	tlsCfg *tls.Config
	roots  *x509.CertPool
	logf   func(format string, args ...any)

	mu       sync.Mutex
	msgs     []Received
	failRcpt int
	conns    map[net.Conn]struct{}
	closed   bool

	wg        sync.WaitGroup
	closeOnce sync.Once
}

// maxData bounds one message so a broken client cannot exhaust memory.
const maxData = 10 << 20

// idleTimeout bounds each read so a stuck client cannot outlive a test by
// much even if Close is never reached.
const idleTimeout = 30 * time.Second

// Start starts a server on 127.0.0.1 with a fresh self-signed certificate. It
// is closed by t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	cert, roots, err := selfSigned()
	if err != nil {
		t.Fatalf("smtptest: certificate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{
		opts:     opts,
		ln:       ln,
		tlsCfg:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		roots:    roots,
		logf:     t.Logf,
		failRcpt: opts.FailRcpt,
		conns:    make(map[net.Conn]struct{}),
	}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// Addr returns the host and port to dial.
func (s *Server) Addr() (host string, port int) {
	a := s.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// ClientTLS returns a client configuration that trusts the server's
// certificate, which is valid for 127.0.0.1, ::1 and localhost.
func (s *Server) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}
}

// Messages returns a copy of the messages accepted so far.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.msgs))
	for i, m := range s.msgs {
		m.To = append([]string(nil), m.To...)
		m.Data = bytes.Clone(m.Data)
		out[i] = m
	}
	return out
}

// Close stops the server, drops open connections and waits for every
// goroutine it started. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			sess := &session{srv: s, raw: c}
			sess.setConn(c)
			if err := sess.run(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.logf("smtptest: session: %v", err)
			}
		}()
	}
}

// session is one SMTP connection.
type session struct {
	srv  *Server
	raw  net.Conn // the TCP connection, for deadlines
	conn net.Conn // raw, or the TLS connection over it
	r    *bufio.Reader
	w    *bufio.Writer

	helo     string
	tls      bool
	authUser string
	from     string
	inMail   bool
	rcpts    []string
}

func (c *session) setConn(conn net.Conn) {
	c.conn = conn
	c.r = bufio.NewReader(conn)
	c.w = bufio.NewWriter(conn)
}

func (c *session) reply(lines ...string) error {
	for _, l := range lines {
		c.w.WriteString(l)
		c.w.WriteString("\r\n")
	}
	return c.w.Flush()
}

func (c *session) readLine() (string, error) {
	c.raw.SetReadDeadline(time.Now().Add(idleTimeout))
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (c *session) resetMail() {
	c.from, c.inMail, c.rcpts = "", false, nil
}

func (c *session) run() error {
	if err := c.reply("220 127.0.0.1 ESMTP smtptest"); err != nil {
		return err
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		var quit bool
		switch verb {
		case "EHLO", "HELO":
			err = c.hello(verb, arg)
		case "STARTTLS":
			err = c.startTLS()
		case "AUTH":
			err = c.auth(arg)
		case "MAIL":
			err = c.mail(arg)
		case "RCPT":
			err = c.rcpt(arg)
		case "DATA":
			err = c.data()
		case "RSET":
			c.resetMail()
			err = c.reply("250 2.0.0 OK")
		case "NOOP":
			err = c.reply("250 2.0.0 OK")
		case "QUIT":
			err = c.reply("221 2.0.0 Bye")
			quit = true
		default:
			err = c.reply("502 5.5.2 Command not recognized")
		}
		if err != nil || quit {
			return err
		}
	}
}

func (c *session) hello(verb, name string) error {
	if name == "" {
		return c.reply("501 5.5.4 " + verb + " needs a name")
	}
	c.helo = name
	c.resetMail()
	if verb == "HELO" {
		return c.reply("250 127.0.0.1")
	}
	lines := []string{"127.0.0.1 greets " + name, "8BITMIME"}
	if !c.tls && !c.srv.opts.NoSTARTTLS {
		lines = append(lines, "STARTTLS")
	}
	if c.srv.opts.Username != "" {
		lines = append(lines, "AUTH PLAIN")
	}
	for i := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		lines[i] = "250" + sep + lines[i]
	}
	return c.reply(lines...)
}

func (c *session) startTLS() error {
	if c.tls {
		return c.reply("503 5.5.1 TLS already active")
	}
	if c.srv.opts.NoSTARTTLS {
		return c.reply("502 5.5.1 STARTTLS not supported")
	}
	if c.r.Buffered() > 0 {
		// Anything pipelined before the handshake could have been injected
		// by a man in the middle (CVE-2011-0411); real servers drop it.
		return c.reply("554 5.5.1 Pipelining before STARTTLS")
	}
	if err := c.reply("220 2.0.0 Ready to start TLS"); err != nil {
		return err
	}
	tc := tls.Server(c.raw, c.srv.tlsCfg)
	c.raw.SetDeadline(time.Now().Add(idleTimeout))
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	c.raw.SetDeadline(time.Time{})
	c.setConn(tc)
	// RFC 3207: forget everything learned before the upgrade.
	c.tls, c.helo, c.authUser = true, "", ""
	c.resetMail()
	return nil
}

func (c *session) auth(arg string) error {
	opts := c.srv.opts
	mech, initial, _ := strings.Cut(arg, " ")
	switch {
	case opts.Username == "":
		return c.reply("502 5.5.1 AUTH not supported")
	case c.helo == "":
		return c.reply("503 5.5.1 Send EHLO first")
	case c.authUser != "":
		return c.reply("503 5.5.1 Already authenticated")
	case c.inMail:
		return c.reply("503 5.5.1 AUTH not allowed during a mail transaction")
	case opts.RequireTLS && !c.tls:
		return c.reply("538 5.7.11 Encryption required for requested authentication mechanism")
	case !strings.EqualFold(mech, "PLAIN"):
		return c.reply("504 5.5.4 Unrecognized authentication type")
	}
	if initial == "" {
		if err := c.reply("334 "); err != nil {
			return err
		}
		var err error
		if initial, err = c.readLine(); err != nil {
			return err
		}
	}
	if initial == "*" {
		return c.reply("501 5.0.0 Authentication cancelled")
	}
	blob, err := base64.StdEncoding.DecodeString(initial)
	if err != nil {
		return c.reply("501 5.5.2 Cannot decode response")
	}
	parts := strings.Split(string(blob), "\x00")
	if len(parts) != 3 || parts[1] != opts.Username || parts[2] != opts.Password {
		return c.reply("535 5.7.8 Authentication credentials invalid")
	}
	c.authUser = parts[1]
	return c.reply("235 2.7.0 Authentication successful")
}

// pathArg extracts the address from "FROM:<a@b> PARAMS" or "TO:<a@b>".
func pathArg(arg, key string) (string, bool) {
	if len(arg) < len(key) || !strings.EqualFold(arg[:len(key)], key) {
		return "", false
	}
	rest := strings.TrimLeft(arg[len(key):], " ")
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

func (c *session) mail(arg string) error {
	opts := c.srv.opts
	switch {
	case c.helo == "":
		return c.reply("503 5.5.1 Send EHLO first")
	case opts.RequireTLS && !c.tls:
		return c.reply("530 5.7.0 Must issue a STARTTLS command first")
	case opts.Username != "" && c.authUser == "":
		return c.reply("530 5.7.0 Authentication required")
	case c.inMail:
		return c.reply("503 5.5.1 Sender already specified")
	}
	from, ok := pathArg(arg, "FROM:")
	if !ok {
		return c.reply("501 5.5.4 Syntax: MAIL FROM:<address>")
	}
	c.from, c.inMail = from, true
	return c.reply("250 2.1.0 OK")
}

func (c *session) rcpt(arg string) error {
	if !c.inMail {
		return c.reply("503 5.5.1 Need MAIL first")
	}
	to, ok := pathArg(arg, "TO:")
	if !ok || to == "" {
		return c.reply("501 5.5.4 Syntax: RCPT TO:<address>")
	}
	c.srv.mu.Lock()
	fail := c.srv.failRcpt > 0
	if fail {
		c.srv.failRcpt--
	}
	c.srv.mu.Unlock()
	if fail {
		return c.reply("451 4.3.0 Temporary failure, try again later")
	}
	c.rcpts = append(c.rcpts, to)
	return c.reply("250 2.1.5 OK")
}

func (c *session) data() error {
	if !c.inMail || len(c.rcpts) == 0 {
		return c.reply("503 5.5.1 Need RCPT first")
	}
	if err := c.reply("354 End data with <CR><LF>.<CR><LF>"); err != nil {
		return err
	}
	var buf bytes.Buffer
	tooBig := false
	for {
		c.raw.SetReadDeadline(time.Now().Add(idleTimeout))
		line, err := c.r.ReadString('\n')
		if err != nil {
			return err
		}
		if line == ".\r\n" || line == ".\n" {
			break
		}
		// RFC 5321 section 4.5.2: drop the dot the client added.
		line = strings.TrimPrefix(line, ".")
		if buf.Len()+len(line) > maxData {
			tooBig = true
			continue
		}
		buf.WriteString(line)
	}
	defer c.resetMail()
	if tooBig {
		return c.reply("552 5.3.4 Message too big")
	}
	c.srv.mu.Lock()
	c.srv.msgs = append(c.srv.msgs, Received{
		From:     c.from,
		To:       c.rcpts,
		Data:     buf.Bytes(),
		TLS:      c.tls,
		AuthUser: c.authUser,
		Helo:     c.helo,
	})
	c.srv.mu.Unlock()
	return c.reply("250 2.0.0 OK queued")
}

// selfSigned makes a short-lived ECDSA certificate for the loopback names and
// a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "smtptest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots, nil
}

// String describes the server for test logs.
func (s *Server) String() string {
	host, port := s.Addr()
	return "smtptest " + net.JoinHostPort(host, strconv.Itoa(port))
}
