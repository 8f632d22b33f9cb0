// Package client is a typed Go client for Signoff's HTTP API: what the
// signoff CLI uses to talk to a server, and what a script can import to do
// the same. It sends a bearer token, never follows a redirect with it and
// never puts it in an error.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

// DefaultURL is the server the CLI talks to when neither --server nor
// SIGNOFF_URL names one.
const DefaultURL = "http://127.0.0.1:8080"

// The environment variables FromEnv reads, as the CLI does.
const (
	EnvURL   = "SIGNOFF_URL"
	EnvToken = "SIGNOFF_TOKEN"
)

// MaxResponse bounds what the client reads from the server. The largest
// answer is an approval card, whose diff the server bounds well below this.
const MaxResponse = 64 << 20

// Client calls the Signoff API at one base URL with one token (or none, for
// the public endpoints). It is safe for concurrent use.
type Client struct {
	base   string // scheme://host[/prefix], no trailing slash
	token  string
	hc     *http.Client
	header http.Header
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the default HTTP client (two-minute timeout, no
// redirects followed).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithHeader adds a header to every request.
func WithHeader(key, value string) Option {
	return func(c *Client) { c.header.Set(key, value) }
}

// New returns a client for the server at baseURL (http or https, optionally
// with a path prefix; a trailing slash does not matter) sending token as a
// bearer token. An empty token sends none, for the public endpoints.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	token = strings.TrimSpace(token)
	for _, r := range token {
		if r <= ' ' || r == 0x7f {
			return nil, signoff.Errorf(signoff.EINVALID, "the API token contains whitespace or control characters")
		}
	}
	u, err := url.Parse(baseURL)
	switch {
	case err != nil:
		return nil, signoff.Errorf(signoff.EINVALID, "--server is not a URL")
	case u.User != nil:
		return nil, signoff.Errorf(signoff.EINVALID, "--server must not carry credentials; pass the API token with SIGNOFF_TOKEN")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, signoff.Errorf(signoff.EINVALID, "--server must be an http:// or https:// base URL such as %s, got %q", DefaultURL, baseURL)
	}
	c := &Client{
		base:  strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"),
		token: token,
		hc: &http.Client{
			Timeout: 2 * time.Minute,
			// A redirect would carry the request (and possibly the token)
			// somewhere the caller did not name: answer it as an error.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		header: http.Header{},
	}
	for _, o := range opts {
		o(c)
	}
	// A caller's own client (a custom CA, a proxy) keeps its settings but
	// never follows a redirect either: net/http would carry the token to
	// another port of the same host, or from https down to http.
	hc := *c.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c, nil
}

// shown is a request path as errors may print it: a reporter's tracking
// secret is a capability (the server logs route patterns, never that
// path), so the segment after /track/ is left out.
func shown(path string) string {
	const seg = "/track/"
	i := strings.Index(path, seg)
	if i < 0 {
		return path
	}
	rest := path[i+len(seg):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	return path[:i+len(seg)] + "[tracking-token]" + rest[end:]
}

// URLFromEnv is the base URL the CLI uses when --server is not given:
// SIGNOFF_URL, else DefaultURL.
func URLFromEnv(getenv func(string) string) string {
	if u := getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// FromEnv returns a client the way the CLI makes one: serverURL and token
// are the explicit settings (its --server and --token flags); an empty
// serverURL falls back to SIGNOFF_URL then DefaultURL, an empty token to
// SIGNOFF_TOKEN. A token is required. getenv is usually os.Getenv.
func FromEnv(getenv func(string) string, serverURL, token string, opts ...Option) (*Client, error) {
	if token == "" {
		token = getenv(EnvToken)
	}
	if strings.TrimSpace(token) == "" {
		return nil, signoff.Errorf(signoff.EUNAUTHORIZED, "no API token: set SIGNOFF_TOKEN (or pass --token)")
	}
	if serverURL == "" {
		serverURL = URLFromEnv(getenv)
	}
	return New(serverURL, token, opts...)
}

// BaseURL is the server's base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// Path joins literal path parts and escaped identifiers under /api/v1:
// Path("cases", id, "approval") is /api/v1/cases/{id}/approval.
func Path(parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/v1")
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// Do sends in (nil, raw JSON bytes or json.RawMessage, or a value to
// encode) to path (from Path, optionally with a query) and decodes a
// successful answer into out: nil discards it, a *[]byte or
// *json.RawMessage takes it as it came. An answer outside 2xx is a
// *Problem; the other errors are *signoff.Error (the server could not be
// reached, the answer was too large or not the JSON expected) or the
// context's error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	switch v := in.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(v)
	case json.RawMessage:
		body = bytes.NewReader(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	h := http.Header{"Accept": {"application/json, application/problem+json"}}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	b, _, err := c.send(ctx, method, path, body, h)
	if err != nil || out == nil {
		return err
	}
	switch raw := out.(type) {
	case *[]byte:
		*raw = b
		return nil
	case *json.RawMessage:
		*raw = b
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer to %s %s: %v", method, shown(path), err)
	}
	return nil
}

// Download GETs path, which answers with a file rather than JSON, and
// returns the body and headers of a successful answer. Errors are as Do's.
func (c *Client) Download(ctx context.Context, path string) ([]byte, http.Header, error) {
	return c.send(ctx, http.MethodGet, path, nil, http.Header{"Accept": {"application/gzip, application/problem+json"}})
}

// send does one request with the client's headers and token added and
// reads at most MaxResponse bytes of the answer.
func (c *Client) send(ctx context.Context, method, path string, body io.Reader, h http.Header) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, nil, signoff.Errorf(signoff.EINVALID, "build request for %s", shown(path))
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		// net/http's error quotes the whole URL; name the request by its
		// shown path instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, signoff.Errorf(signoff.EUNAVAILABLE, "cannot reach the server: %s %s: %v", method, shown(path), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, nil, signoff.Errorf(signoff.EUNAVAILABLE, "read the answer to %s %s: %v", method, shown(path), err)
	}
	if len(b) > MaxResponse {
		return nil, nil, signoff.Errorf(signoff.EUNAVAILABLE, "the answer to %s %s is larger than %d bytes", method, shown(path), MaxResponse)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, decodeProblem(resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return b, resp.Header, nil
}
