package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/workflow"
)

// The commands in this file are API clients: they talk to a running server
// over HTTP with an API token, and the approval key never leaves this
// machine. The server decides everything; the CLI shows what it is asked
// to sign and refuses to sign anything other than what it showed.

const defaultServerURL = "http://127.0.0.1:8080"

// maxResponse bounds what the CLI reads from the server. The largest answer
// is an approval card, whose diff the server bounds well below this.
const maxResponse = 64 << 20

// maxPatch is the largest patch the server takes in a candidate body.
const maxPatch = 2 << 20

// serverFlags are the flags of every command that talks to the API.
type serverFlags struct {
	url, token string
}

func addServerFlags(fs *flag.FlagSet, e *env, s *serverFlags) {
	def := e.getenv("SIGNOFF_URL")
	if def == "" {
		def = defaultServerURL
	}
	fs.StringVar(&s.url, "server", def, "base URL of the Signoff server (env SIGNOFF_URL)")
	// The default is filled in after parsing so that --help never prints
	// the token.
	fs.StringVar(&s.token, "token", "", "API token (default: env SIGNOFF_TOKEN, which is better: flags show up in process listings)")
}

// apiClient calls the Signoff API. It never prints, logs or follows a
// redirect with the token.
type apiClient struct {
	base  string // scheme://host[/prefix], no trailing slash
	token string
	hc    *http.Client
}

func (s *serverFlags) client(e *env) (*apiClient, error) {
	tok := s.token
	if tok == "" {
		tok = e.getenv("SIGNOFF_TOKEN")
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return nil, signoff.Errorf(signoff.EUNAUTHORIZED, "no API token: set SIGNOFF_TOKEN (or pass --token)")
	}
	for _, r := range tok {
		if r <= ' ' || r == 0x7f {
			return nil, signoff.Errorf(signoff.EINVALID, "the API token contains whitespace or control characters")
		}
	}
	u, err := url.Parse(s.url)
	switch {
	case err != nil:
		return nil, signoff.Errorf(signoff.EINVALID, "--server is not a URL")
	case u.User != nil:
		return nil, signoff.Errorf(signoff.EINVALID, "--server must not carry credentials; pass the API token with SIGNOFF_TOKEN")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, signoff.Errorf(signoff.EINVALID, "--server must be an http:// or https:// base URL such as %s, got %q", defaultServerURL, s.url)
	}
	return &apiClient{
		base:  strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"),
		token: tok,
		hc: &http.Client{
			Timeout: 2 * time.Minute,
			// A redirect would carry the request (and possibly the token)
			// somewhere the operator did not name: answer it as an error.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// caseCommand parses the flags of a command about one case: --case, the
// server flags and whatever more extra adds, each of required named by
// its flag in need (in the order extra returned them). It returns the case
// id and an API client.
func caseCommand(e *env, name, synopsis, caseHelp string, args []string, extra func(*flag.FlagSet) []*string, need ...string) (string, *apiClient, error) {
	var sf serverFlags
	var caseID string
	fs := newFlags(name, synopsis)
	fs.StringVar(&caseID, "case", "", caseHelp)
	var vals []*string
	if extra != nil {
		vals = extra(fs)
	}
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return "", nil, err
	}
	pairs := []string{"case", caseID}
	for i, n := range need {
		pairs = append(pairs, n, *vals[i])
	}
	if err := required(fs, e, pairs...); err != nil {
		return "", nil, err
	}
	c, err := sf.client(e)
	return caseID, c, err
}

// apiPath joins literal path parts and escaped identifiers: apiPath("cases",
// id, "approval") is /api/v1/cases/{id}/approval.
func apiPath(parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/v1")
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// do sends in (nil, raw JSON bytes, or a value to encode) and decodes a
// successful answer into out. Problems come back as *signoff.Error.
func (c *apiClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	switch v := in.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "build request for %s: %v", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json, application/problem+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return signoff.Errorf(signoff.EUNAVAILABLE, "cannot reach the server: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "read the answer to %s %s: %v", method, path, err)
	}
	if len(b) > maxResponse {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the answer to %s %s is larger than %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return problemError(resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = b
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer to %s %s: %v", method, path, err)
	}
	return nil
}

// problem is the part of an RFC 9457 problem the CLI shows.
type problem struct {
	Status       int    `json:"status"`
	Detail       string `json:"detail"`
	Code         string `json:"code"`
	RequestID    string `json:"request_id"`
	CurrentState string `json:"current_state"`
}

// problemError turns an error answer into a *signoff.Error whose code
// follows the HTTP status, so that the exit code does too.
func problemError(status int, contentType string, body []byte) error {
	var p problem
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/problem+json" || mt == "application/json" {
		_ = json.Unmarshal(body, &p) // a body that is not a problem still has a status
	}
	detail := strings.TrimSpace(p.Detail)
	if detail == "" {
		detail = "the server refused the request"
		if status >= 300 && status < 400 {
			detail = "the server answered with a redirect, which is not followed: check --server"
		}
	}
	msg := fmt.Sprintf("%s (HTTP %d %s", detail, status, http.StatusText(status))
	if p.RequestID != "" {
		msg += ", request " + p.RequestID
	}
	msg += ")"
	if p.CurrentState != "" {
		msg += "; the case is " + p.CurrentState
	}
	return &signoff.Error{Code: statusCode(status), Message: msg, State: p.CurrentState}
}

// statusCode maps an HTTP status back to an error code.
func statusCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return signoff.EUNAUTHORIZED
	case http.StatusForbidden:
		return signoff.EFORBIDDEN
	case http.StatusNotFound:
		return signoff.ENOTFOUND
	case http.StatusConflict:
		return signoff.ECONFLICT
	case http.StatusUnprocessableEntity, http.StatusBadRequest:
		return signoff.EINVALID
	case http.StatusRequestEntityTooLarge:
		return signoff.ETOOLARGE
	case http.StatusTooManyRequests:
		return signoff.ERATELIMIT
	}
	return signoff.EUNAVAILABLE
}

// --- keys ---------------------------------------------------------------

// runKeysCommand dispatches "keys": show is the server's key (runKeys), init
// and register are the operator's approval key, list and revoke the
// approval keys on the server (revoke.go).
func runKeysCommand(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "keys", args, "show", "init", "register", "list", "revoke")
	if err != nil {
		return err
	}
	switch verb {
	case "init":
		return runKeysInit(e, rest)
	case "register":
		return runKeysRegister(ctx, e, rest)
	case "list":
		return runKeysList(ctx, e, rest)
	case "revoke":
		return runKeysRevoke(ctx, e, rest)
	}
	return runKeys(ctx, e, args)
}

const approverKeyHelp = "your approval key (private, PEM; default: signoff/approver.key in your config directory, e.g. ~/.config)"

// approverKeyPath is --key, or approver.key in the user's config directory.
func approverKeyPath(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", signoff.Errorf(signoff.EINVALID, "no config directory (%v): pass --key FILE", err)
	}
	return filepath.Join(dir, "signoff", "approver.key"), nil
}

// loadApproverKey loads an existing approval key; it never creates one.
func loadApproverKey(flagValue string) (string, ed25519.PrivateKey, error) {
	path, err := approverKeyPath(flagValue)
	if err != nil {
		return "", nil, err
	}
	k, err := keys.Load(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return path, nil, signoff.Errorf(signoff.ENOTFOUND, "no approval key at %s: create one with signoff keys init, then signoff keys register", path)
	} else if err != nil {
		return path, nil, signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	return path, k, nil
}

func runKeysInit(e *env, args []string) error {
	var keyFlag string
	fs := newFlags("keys init", "signoff keys init [--key FILE]")
	fs.StringVar(&keyFlag, "key", "", approverKeyHelp)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	path, err := approverKeyPath(keyFlag)
	if err != nil {
		return err
	}
	// keys.LoadOrCreate makes a missing directory 0700 and the file 0600,
	// and refuses an existing file that others can read.
	k, created, err := keys.LoadOrCreate(path)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	pub := k.Public().(ed25519.PublicKey)
	pemPub, err := keys.EncodePublic(pub)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(e.stdout, "created approval key %s (key id %s)\n", path, keys.ID(pub))
	} else {
		fmt.Fprintf(e.stdout, "approval key %s already exists (key id %s); left unchanged\n", path, keys.ID(pub))
	}
	fmt.Fprintf(e.stdout, "private key: %s (mode 0600; it never leaves this machine, back it up)\n", path)
	fmt.Fprintf(e.stdout, "public key (send it to the server with: signoff keys register --key %s):\n%s", path, pemPub)
	return nil
}

func runKeysRegister(ctx context.Context, e *env, args []string) error {
	var keyFlag string
	var sf serverFlags
	fs := newFlags("keys register", "signoff keys register [--key FILE] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&keyFlag, "key", "", approverKeyHelp)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	path, k, err := loadApproverKey(keyFlag)
	if err != nil {
		return err
	}
	pub := k.Public().(ed25519.PublicKey)
	pemPub, err := keys.EncodePublic(pub)
	if err != nil {
		return err
	}
	// Only the public key is sent.
	var got signoff.ApproverKey
	if err := c.do(ctx, http.MethodPost, apiPath("keys"), map[string]string{"public_key": string(pemPub)}, &got); err != nil {
		return err
	}
	if want := keys.ID(pub); got.ID != want {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server registered key %q, but %s holds key %s", got.ID, path, want)
	}
	fmt.Fprintf(e.stdout, "registered approval key %s (%s) for actor %s\n", got.ID, path, got.ActorID)
	return nil
}

// --- approve ------------------------------------------------------------

// cardView is bugdesk.CardView as it arrives: the card and the policy are
// kept raw so that they can be decoded strictly.
type cardView struct {
	Card          json.RawMessage    `json:"card"`
	SubjectDigest string             `json:"subject_digest"`
	Policy        json.RawMessage    `json:"policy"`
	PolicyDigest  string             `json:"policy_digest"`
	State         string             `json:"state"`
	Approvals     []signoff.Approval `json:"approvals"`
}

// strictDecode decodes exactly one JSON value into v with no unknown fields.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// stdinIsTerminal reports whether r is an interactive terminal. It is a
// variable so that tests can play a person at a terminal.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// /dev/null is a character device too, and nobody is typing there.
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

var errNoTerminal = signoff.Errorf(signoff.EINVALID, "not a terminal: pass --yes to approve without typing the case id; the approval will record that")

func runApprove(ctx context.Context, e *env, args []string) error {
	var (
		sf                    serverFlags
		caseID, reason, kflag string
		reject, yes           bool
	)
	fs := newFlags("approve", "signoff approve --case ID [--reject --reason TEXT] [--yes] [--key FILE] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&caseID, "case", "", "the case whose approval card to show and sign (required)")
	fs.BoolVar(&reject, "reject", false, "sign a rejection instead of an approval (needs --reason)")
	fs.StringVar(&reason, "reason", "", "why you reject (required with --reject; recorded with the rejection, beside the signed statement)")
	fs.BoolVar(&yes, "yes", false, "sign without typing the case id (recorded as via cli-signed-yes)")
	fs.StringVar(&kflag, "key", "", approverKeyHelp)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID); err != nil {
		return err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reject && reason == "":
		fmt.Fprintln(e.stderr, "--reject needs --reason")
		fs.Usage()
		return errUsage
	case !reject && reason != "":
		fmt.Fprintln(e.stderr, "--reason goes with --reject")
		fs.Usage()
		return errUsage
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	_, key, err := loadApproverKey(kflag)
	if err != nil {
		return err
	}
	var me signoff.Actor
	if err := c.do(ctx, http.MethodGet, apiPath("me"), nil, &me); err != nil {
		return err
	}
	if me.ID == "" {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server did not say who this token belongs to")
	}
	var rawCard []byte
	if err := c.do(ctx, http.MethodGet, apiPath("cases", caseID, "approval"), nil, &rawCard); err != nil {
		return err
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(rawCard, &kind); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected approval card: %v", err)
	}
	a := approveArgs{caseID: caseID, me: me, key: key, reject: reject, yes: yes, reason: reason}
	if kind.Kind == "change" {
		return approveChange(ctx, e, c, rawCard, a)
	}
	var view cardView
	if err := json.Unmarshal(rawCard, &view); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected approval card: %v", err)
	}
	// The card is decoded strictly: a field this CLI does not know would be
	// covered by the digest without being shown.
	var card repair.Card
	if err := strictDecode(view.Card, &card); err != nil {
		return signoff.Errorf(signoff.EINVALID, "the server sent a card this CLI cannot show in full (%v): nothing was signed; upgrade signoff", err)
	}
	var pol approval.Policy
	if err := strictDecode(view.Policy, &pol); err != nil {
		return signoff.Errorf(signoff.EINVALID, "the server sent a policy this CLI cannot show in full (%v): nothing was signed; upgrade signoff", err)
	}

	d := &display{}
	printCard(e.stdout, d, card, view, pol)

	// What is signed is what was shown: the digest of the card as decoded
	// and printed above, which must be the one the server says the
	// approval names, under the policy printed above.
	digest, err := card.Digest()
	if err != nil {
		return fmt.Errorf("digest the card: %w", err)
	}
	switch {
	case card.Case != caseID:
		return signoff.Errorf(signoff.EINVALID, "the server sent the card of case %q for case %s: nothing was signed", card.Case, caseID)
	case digest != view.SubjectDigest:
		return signoff.Errorf(signoff.EINVALID, "the server sent a card whose digest %s does not match the subject digest %s it asks you to sign: nothing was signed", digest, view.SubjectDigest)
	case pol.Digest() != view.PolicyDigest:
		return signoff.Errorf(signoff.EINVALID, "the server sent a policy whose digest %s does not match the policy digest %s it names: nothing was signed", pol.Digest(), view.PolicyDigest)
	case pol.TTLHours <= 0:
		return signoff.Errorf(signoff.EINVALID, "the policy gives approvals no lifetime (ttl_hours %d): nothing was signed", pol.TTLHours)
	}

	out, err := signAndPost(ctx, e, c, d, a, digest, view.PolicyDigest, pol.TTL())
	if err != nil {
		return err
	}
	if !reject && out.Case.State == view.State && view.State == workflow.BugAwaitingApproval {
		fmt.Fprintf(e.stdout, "more approvals are needed: the policy asks for %d distinct approvers\n", pol.Quorum)
	}
	return nil
}

// approveArgs are what runApprove read from its flags and the server.
type approveArgs struct {
	caseID, reason string
	me             signoff.Actor
	key            ed25519.PrivateKey
	reject, yes    bool
}

// approveResult is the server's answer to a posted approval.
type approveResult struct {
	Approval signoff.Approval `json:"approval"`
	Case     signoff.Case     `json:"case"`
}

// signAndPost asks for the confirmation (the case id typed at a terminal,
// or --yes), signs digest under policyDigest and posts the envelope. The
// caller has shown everything the digest covers.
func signAndPost(ctx context.Context, e *env, c *apiClient, d *display, a approveArgs, digest, policyDigest string, ttl time.Duration) (approveResult, error) {
	caseID, me, key, reject, yes, reason := a.caseID, a.me, a.key, a.reject, a.yes, a.reason
	decision, verb := approval.Approve, "approve"
	if reject {
		decision, verb = approval.Reject, "reject"
	}
	via := "cli-signed"
	if yes {
		via = "cli-signed-yes"
	} else {
		if !stdinIsTerminal(e.stdin) {
			return approveResult{}, errNoTerminal
		}
		fmt.Fprintf(e.stderr, "\nYou are about to %s subject %s of case %s as %s.\n", verb, digest, caseID, d.line(me.ID))
		fmt.Fprint(e.stderr, "Type the case id to approve (or reject) exactly this digest: ")
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return approveResult{}, fmt.Errorf("read the confirmation: %w", err)
		}
		if typed := strings.TrimRight(line, "\r\n"); typed != caseID {
			return approveResult{}, signoff.Errorf(signoff.EINVALID, "you typed %q, not the case id %s: nothing was signed", typed, caseID)
		}
	}

	st := approval.NewStatement(caseID, digest, decision, policyDigest, me.ID, time.Now(), ttl)
	envelope, err := approval.Sign(st, key)
	if err != nil {
		return approveResult{}, err
	}
	if err := approval.Verify(envelope, st, key.Public().(ed25519.PublicKey)); err != nil {
		return approveResult{}, fmt.Errorf("the approval key does not verify its own signature: %w", err)
	}
	raw, err := json.Marshal(envelope)
	if err != nil {
		return approveResult{}, fmt.Errorf("encode the envelope: %w", err)
	}
	var out approveResult
	in := struct {
		Envelope json.RawMessage `json:"envelope"`
		Via      string          `json:"via"`
		Reason   string          `json:"reason,omitempty"`
	}{raw, via, reason}
	if err := c.do(ctx, http.MethodPost, apiPath("cases", caseID, "approvals"), in, &out); err != nil {
		return approveResult{}, err
	}
	fmt.Fprintf(e.stdout, "\nsigned: %s subject %s of case %s as %s with key %s (via %s, expires %s)\n",
		decision, digest, caseID, d.line(me.ID), envelope.Signatures[0].KeyID, via, st.ExpiresAt.Format(time.RFC3339))
	if reject {
		fmt.Fprintf(e.stdout, "reason (sent beside the signed statement and recorded): %s\n", d.line(reason))
	}
	fmt.Fprintf(e.stdout, "approval %s recorded (%s)\n", d.line(out.Approval.ID), d.line(out.Approval.Status))
	fmt.Fprintf(e.stdout, "case %s is now %s\n", d.line(out.Case.ID), d.line(out.Case.State))
	return out, nil
}

// printCard prints everything on the card, untruncated, in the order an
// approver reads it.
func printCard(w io.Writer, d *display, c repair.Card, v cardView, pol approval.Policy) {
	p := func(label, value string) { fmt.Fprintf(w, "%-18s %s\n", label+":", d.line(value)) }
	p("Case", c.Case)
	p("Title", c.Title)
	p("Project", c.Project)
	p("State", v.State)
	fmt.Fprintf(w, "%-18s %s (attempt %d, submitted by %s, evidence %s)\n", "Candidate:",
		d.line(c.CandidateID), c.Attempt, d.line(c.SubmittedBy), d.line(c.Evidence))
	p("Base", c.Base)
	p("Candidate commit", c.Candidate)
	p("Branch", c.Branch)
	fmt.Fprintf(w, "%-18s %s (digest %s)\n", "Harness:", d.line(c.HarnessID), d.line(c.HarnessDigest))
	fmt.Fprintf(w, "%-18s %s: %s\n", "Verdict:", d.line(c.Verdict), d.line(c.Reason))
	fmt.Fprintf(w, "Verdict table (%d rows):\n", len(c.Table))
	for _, r := range c.Table {
		fmt.Fprintf(w, "  stage %s | run %d | %s | %s", d.line(r.Stage), r.Run, d.line(r.Outcome), d.line(r.Detail))
		if len(r.Tests) > 0 {
			tests := make([]string, 0, len(r.Tests))
			for _, t := range r.Tests {
				tests = append(tests, fmt.Sprintf("%s (%s) %s", d.line(t.Name), d.line(t.Kind), d.line(t.Outcome)))
			}
			fmt.Fprintf(w, " | tests: %s", strings.Join(tests, "; "))
		}
		fmt.Fprintln(w)
	}
	p("Fingerprint", c.Fingerprint)
	review := c.Review
	if review == "" {
		review = "(none)"
	}
	fmt.Fprintf(w, "Review note (advisory only, not an approval): %s\n", d.line(review))
	fmt.Fprintf(w, "Diff (%d bytes, in full):\n", len(c.Diff))
	diff := d.text(c.Diff)
	fmt.Fprint(w, diff)
	if !strings.HasSuffix(diff, "\n") {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "End of diff.")
	fmt.Fprintf(w, "Harness test source (%d file(s), in full; the subject digest covers it):\n", len(c.HarnessSource))
	printSources(w, d, "Harness file", c.HarnessSource)
	hr := c.HarnessReview
	fmt.Fprintf(w, "%-18s %s by %s at %s, over review digest %s (reproduction %s)\n", "Harness review:",
		d.line(hr.Decision), d.line(hr.By), hr.At.Format(time.RFC3339), d.line(hr.ReviewDigest), d.line(hr.HarnessID))
	if hr.Note != "" {
		fmt.Fprintf(w, "%-18s %s\n", "Review note:", d.line(hr.Note))
	}
	df := c.Defences
	fmt.Fprintf(w, "Against a counterfeit verdict: %d protected glob(s) restored from the harness before every run; build changes %s; cache %s\n",
		len(df.Protected), d.line(df.BuildChanges), d.line(df.Cache))
	for _, p := range df.TestOnly {
		fmt.Fprintf(w, "  frozen with the tests (a package only tests use): %s\n", d.line(p))
	}
	for _, e := range df.Unprotected {
		fmt.Fprintf(w, "  exempted from the frozen tree: %s (%s)\n", d.line(e.Glob), d.line(e.Reason))
	}
	fmt.Fprintf(w, "  test edits discarded: %d\n", len(df.TestEdits))
	for _, e := range df.TestEdits {
		fmt.Fprintf(w, "    %s (%s)\n", d.line(e.Path), d.line(e.Change))
	}
	fmt.Fprintf(w, "  static findings: %d\n", len(df.Findings))
	for _, f := range df.Findings {
		fmt.Fprintf(w, "    [%s] %s: %s\n", d.line(f.Severity), d.line(f.Rule), d.line(f.Detail))
	}
	for _, l := range df.Witness {
		fmt.Fprintf(w, "  witness %s\n", d.line(l))
	}
	if len(v.Approvals) > 0 {
		fmt.Fprintf(w, "Approvals so far (%d):\n", len(v.Approvals))
		for _, a := range v.Approvals {
			fmt.Fprintf(w, "  %s: %s by %s, %s, subject %s, via %s, expires %s\n", d.line(a.ID), d.line(a.Decision),
				d.line(a.ApproverID), d.line(a.Status), d.line(a.SubjectDigest), d.line(a.Via), a.ExpiresAt.Format(time.RFC3339))
		}
	}
	p("Subject digest", v.SubjectDigest)
	fmt.Fprintf(w, "%-18s quorum %d, approvals live %d hours, no self-approval %t, proposer cannot approve %t\n",
		"Policy:", pol.Quorum, pol.TTLHours, pol.NoSelfApproval, pol.ProposerCannotApprove)
	p("Policy digest", v.PolicyDigest)
	if d.escaped > 0 {
		fmt.Fprintf(w, "Note: %d characters that a terminal would not show as themselves (control, formatting or invalid UTF-8) are shown escaped as \\xNN or \\uNNNN.\n", d.escaped)
	}
}

// display makes server text safe to put on a terminal: control characters,
// invisible formatting characters (such as bidirectional overrides) and
// invalid UTF-8 are shown as escapes, so that what the card holds cannot
// rewrite or hide what the approver reads. It counts what it escaped.
type display struct{ escaped int }

// line shows s on one line: newlines are escaped too.
func (d *display) line(s string) string { return d.show(s, false) }

// text shows s keeping its newlines and tabs.
func (d *display) text(s string) string { return d.show(s, true) }

func (d *display) show(s string, multiline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
			d.escaped++
		case r == '\t' || (multiline && r == '\n'):
			b.WriteRune(r)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
			d.escaped++
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
			d.escaped++
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// --- merge, fix, repo ----------------------------------------------------

func runMerge(ctx context.Context, e *env, args []string) error {
	caseID, c, err := caseCommand(e, "merge", "signoff merge --case ID [--server URL]   (token from SIGNOFF_TOKEN)",
		"the approved case to merge (required)", args, nil)
	if err != nil {
		return err
	}
	var m signoff.MergeRecord
	if err := c.do(ctx, http.MethodPost, apiPath("cases", caseID, "merge"), nil, &m); err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "merged case %s\n", caseID)
	fmt.Fprintf(e.stdout, "commit:      %s\n", d.line(m.Commit))
	fmt.Fprintf(e.stdout, "main before: %s\n", d.line(m.MainBefore))
	fmt.Fprintf(e.stdout, "tree:        %s\n", d.line(m.Tree))
	fmt.Fprintf(e.stdout, "candidate:   %s\n", d.line(m.CandidateID))
	fmt.Fprintf(e.stdout, "approvals:   %s\n", d.line(strings.Join(m.Approvals, ", ")))
	fmt.Fprintf(e.stdout, "by:          %s at %s\n", d.line(m.By), m.At.Format(time.RFC3339))
	return nil
}

func runFix(ctx context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "fix", args, "submit")
	if err != nil {
		return err
	}
	var sf serverFlags
	var caseID, patchFile string
	fs := newFlags("fix submit", "signoff fix submit --case ID --patch FILE [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&caseID, "case", "", "the case the fix is for (required)")
	fs.StringVar(&patchFile, "patch", "", "a unified diff (git diff) to propose as a candidate (required)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID, "patch", patchFile); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	patch, err := readFileLimited(patchFile, maxPatch)
	if err != nil {
		return err
	}
	// JSON strings are UTF-8: invalid bytes would arrive as U+FFFD, a
	// different patch from the one on disk.
	if !utf8.Valid(patch) {
		return signoff.Errorf(signoff.EINVALID, "%s is not valid UTF-8; the API takes patches as text", patchFile)
	}
	var cand signoff.Candidate
	if err := c.do(ctx, http.MethodPost, apiPath("cases", caseID, "candidates"), map[string]string{"patch": string(patch)}, &cand); err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "candidate %s (attempt %d) for case %s\n", d.line(cand.ID), cand.Attempt, caseID)
	fmt.Fprintf(e.stdout, "commit:  %s\n", d.line(cand.Commit))
	fmt.Fprintf(e.stdout, "branch:  %s\n", d.line(cand.Branch))
	fmt.Fprintf(e.stdout, "status:  %s\n", d.line(cand.Status))
	fmt.Fprintf(e.stdout, "changed (%d):\n", len(cand.Changed))
	for _, p := range cand.Changed {
		fmt.Fprintf(e.stdout, "  %s\n", d.line(p))
	}
	return nil
}

func runRepo(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "repo", args, "show", "set", "bind")
	if err != nil {
		return err
	}
	if verb == "bind" {
		return runRepoBind(ctx, e, rest)
	}
	var sf serverFlags
	var project, file string
	synopsis := "signoff repo show --project ID [--server URL]   (token from SIGNOFF_TOKEN)"
	if verb == "set" {
		synopsis = "signoff repo set --project ID --file settings.json [--server URL]   (token from SIGNOFF_TOKEN)"
	}
	fs := newFlags("repo "+verb, synopsis)
	fs.StringVar(&project, "project", "", "the project (required)")
	if verb == "set" {
		fs.StringVar(&file, "file", "", "the repository settings as a JSON object (required)")
	}
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	pairs := []string{"project", project}
	if verb == "set" {
		pairs = append(pairs, "file", file)
	}
	if err := required(fs, e, pairs...); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var out json.RawMessage
	if verb == "set" {
		b, err := readFileLimited(file, 1<<20)
		if err != nil {
			return err
		}
		// The server checks every field strictly; this only catches a
		// file that is not JSON at all before it is sent.
		if !json.Valid(b) {
			return signoff.Errorf(signoff.EINVALID, "%s is not valid JSON", file)
		}
		err = c.do(ctx, http.MethodPut, apiPath("projects", project, "repo"), b, &out)
		if err != nil {
			return err
		}
	} else if err := c.do(ctx, http.MethodGet, apiPath("projects", project, "repo"), nil, &out); err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
	}
	pretty.WriteByte('\n')
	_, err = e.stdout.Write(pretty.Bytes())
	return err
}

// readFileLimited reads a file of at most limit bytes.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, signoff.Errorf(signoff.ENOTFOUND, "%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "read %s: %v", path, err)
	}
	if int64(len(b)) > limit {
		return nil, signoff.Errorf(signoff.ETOOLARGE, "%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
