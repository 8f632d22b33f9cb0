// Package openai is an agent.Provider for any OpenAI-compatible
// chat-completions endpoint with tool calling: Ollama
// (http://localhost:11434/v1), vLLM, the llama.cpp server, OpenAI,
// OpenRouter.
//
// It is a small standard-library client: one POST to
// {BaseURL}/chat/completions per attempt, bounded retries on 429, 5xx and
// transport errors, Retry-After honoured up to a limit. Errors never carry
// the API key or request headers.
package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxRetries    = 4
	DefaultMinBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff    = 20 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// MaxResponseBytes bounds how much of a response body is read.
const MaxResponseBytes = 8 << 20

const (
	maxErrorBody    = 64 << 10 // read of an error answer's body
	maxErrorMessage = 512      // bytes of an upstream error message kept in errors
)

// Config configures a Provider.
type Config struct {
	// BaseURL is the endpoint's base, e.g. http://localhost:11434/v1;
	// "/chat/completions" is appended to it.
	BaseURL string
	// Model is used when a Request does not name one.
	Model string
	// APIKeyEnv names the environment variable holding the API key. It is
	// read by New when APIKey is empty; it must then be set and non-empty.
	APIKeyEnv string
	// APIKey is the resolved secret. Empty with no APIKeyEnv means no
	// Authorization header is sent (Ollama, local servers).
	APIKey string
	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed attempt is retried: 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries when the server gives no Retry-After.
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After that is waited for; a longer
	// one ends the call with *agent.RetryAfterError.
	MaxRetryAfter time.Duration
	// Headers are extra request headers, e.g. OpenRouter's HTTP-Referer and
	// X-Title. Values of 8 bytes or more are redacted, like the key, from
	// server text quoted in errors.
	Headers map[string]string
}

// Provider calls an OpenAI-compatible chat-completions endpoint. It is safe
// for concurrent use.
type Provider struct {
	cfg      Config
	endpoint string
	client   *http.Client
	secrets  []string // redacted from anything quoted from the server
}

var _ agent.Provider = (*Provider)(nil)

// New validates cfg, applies defaults and resolves the API key.
func New(cfg Config) (*Provider, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, signoff.Errorf(signoff.EINVALID, "openai: base URL must be an http(s) URL with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, signoff.Errorf(signoff.EINVALID, "openai: base URL must not carry credentials, a query or a fragment")
	}
	if cfg.Model == "" {
		return nil, signoff.Errorf(signoff.EINVALID, "openai: model is required")
	}
	if cfg.APIKey == "" && cfg.APIKeyEnv != "" {
		cfg.APIKey = os.Getenv(cfg.APIKeyEnv)
		if cfg.APIKey == "" {
			return nil, signoff.Errorf(signoff.EINVALID, "openai: environment variable %s (the API key) is not set", cfg.APIKeyEnv)
		}
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return nil, signoff.Errorf(signoff.EINVALID, "openai: API key contains a line break")
	}
	if cfg.MinBackoff < 0 || cfg.MaxBackoff < 0 || cfg.MaxRetryAfter < 0 {
		return nil, signoff.Errorf(signoff.EINVALID, "openai: backoff and retry-after limits must not be negative")
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	p := &Provider{cfg: cfg, client: cfg.HTTPClient}
	if p.client == nil {
		p.client = http.DefaultClient
	}
	p.endpoint = strings.TrimRight(u.String(), "/") + "/chat/completions"
	if cfg.APIKey != "" {
		p.secrets = append(p.secrets, cfg.APIKey)
	}
	for _, v := range cfg.Headers {
		if len(v) >= 8 {
			p.secrets = append(p.secrets, v)
		}
	}
	return p, nil
}

// Name is "openai".
func (p *Provider) Name() string { return "openai" }

// Evidence is "live": a model really answered.
func (p *Provider) Evidence() string { return "live" }

// Endpoint is the URL requests are posted to.
func (p *Provider) Endpoint() string { return p.endpoint }

// StatusError is an HTTP error answer that was not retried (a 4xx other
// than 429) or whose retries ran out. Message is the server's error message,
// at most 512 bytes, with the API key redacted.
type StatusError struct {
	Status   int
	Message  string
	Attempts int
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("openai: HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Complete sends one chat-completions call, retrying as configured.
//
// Errors: *StatusError for an HTTP error answer; *agent.RetryAfterError when
// the server asked for a wait longer than MaxRetryAfter, or past ctx's
// deadline, or retries ran out on an answer carrying Retry-After; an error
// wrapping ctx.Err() (so context.DeadlineExceeded on a timeout) when ctx
// ended first.
func (p *Provider) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	body, err := p.encode(req)
	if err != nil {
		return agent.Response{}, err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return agent.Response{}, ctxError(ctx, attempt)
		}
		res, err := p.attempt(ctx, body)
		if err == nil {
			return res, nil
		}
		var ae *attemptError
		if !errors.As(err, &ae) {
			return agent.Response{}, err
		}
		if ctx.Err() != nil {
			return agent.Response{}, ctxError(ctx, attempt+1)
		}
		if !ae.retry {
			return agent.Response{}, ae.final(attempt + 1)
		}
		wait := p.backoff(attempt)
		if ae.hasRetryAfter {
			wait = ae.retryAfter
			if wait > p.cfg.MaxRetryAfter {
				return agent.Response{}, ae.retryAfterError(fmt.Sprintf("over the %s limit", p.cfg.MaxRetryAfter))
			}
			if dl, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(dl) {
				return agent.Response{}, ae.retryAfterError("past the call's deadline")
			}
		}
		if attempt >= p.cfg.MaxRetries {
			if ae.hasRetryAfter {
				return agent.Response{}, ae.retryAfterError(fmt.Sprintf("after %d attempts", attempt+1))
			}
			return agent.Response{}, ae.final(attempt + 1)
		}
		if !sleep(ctx, wait) {
			return agent.Response{}, ctxError(ctx, attempt+1)
		}
	}
}

// attemptError is why one attempt failed and whether to try again.
type attemptError struct {
	status        int // 0 for a transport error
	msg           string
	err           error // transport error
	retry         bool
	hasRetryAfter bool
	retryAfter    time.Duration
}

func (e *attemptError) Error() string {
	if e.status == 0 {
		return "openai: " + e.msg
	}
	return (&StatusError{Status: e.status, Message: e.msg}).Error()
}

func (e *attemptError) final(attempts int) error {
	if e.status == 0 {
		if attempts > 1 {
			return fmt.Errorf("openai: %s (after %d attempts): %w", e.msg, attempts, e.err)
		}
		return fmt.Errorf("openai: %s: %w", e.msg, e.err)
	}
	return &StatusError{Status: e.status, Message: e.msg, Attempts: attempts}
}

func (e *attemptError) retryAfterError(why string) *agent.RetryAfterError {
	msg := fmt.Sprintf("openai: HTTP %d %s: server asked to retry after %s (%s)",
		e.status, http.StatusText(e.status), e.retryAfter, why)
	if e.msg != "" {
		msg += ": " + e.msg
	}
	return &agent.RetryAfterError{Status: e.status, After: e.retryAfter, Msg: msg}
}

// ctxError reports that ctx ended, wrapping ctx.Err().
func ctxError(ctx context.Context, attempts int) error {
	return fmt.Errorf("openai: chat completion gave up after %d attempt(s): %w", attempts, ctx.Err())
}

// attempt makes one HTTP call. A failure is an *attemptError unless it is
// not worth classifying (a malformed success answer, a body over the limit).
func (p *Provider) attempt(ctx context.Context, body []byte) (agent.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return agent.Response{}, fmt.Errorf("openai: building request: %w", err)
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		// A certificate the client rejects will not change on retry.
		var cve *tls.CertificateVerificationError
		return agent.Response{}, &attemptError{msg: "request failed", err: p.scrub(err), retry: !errors.As(err, &cve)}
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		ae := &attemptError{
			status: resp.StatusCode,
			msg:    p.errorMessage(raw),
			retry:  resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		}
		ae.retryAfter, ae.hasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return agent.Response{}, ae
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return agent.Response{}, &attemptError{msg: "reading response", err: p.scrub(err), retry: true}
	}
	if len(raw) > MaxResponseBytes {
		return agent.Response{}, fmt.Errorf("openai: response body over %d bytes", MaxResponseBytes)
	}
	return p.decode(raw)
}

// scrub keeps err's chain (for errors.Is) but makes sure no configured
// secret reaches its text.
func (p *Provider) scrub(err error) error {
	s := err.Error()
	if r := p.redact(s); r != s {
		return &scrubbedError{msg: r, err: err}
	}
	return err
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func (p *Provider) redact(s string) string {
	for _, sec := range p.secrets {
		s = strings.ReplaceAll(s, sec, "[redacted]")
	}
	return s
}

// errorMessage extracts the server's error message from an error answer:
// {"error":{"message":...}}, {"error":"..."}, {"message":"..."} or the text
// itself; one line, secrets redacted, at most maxErrorMessage bytes.
func (p *Provider) errorMessage(raw []byte) string {
	msg := string(raw)
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &v) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var str string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			msg = str
		case v.Message != "":
			msg = v.Message
		}
	}
	msg = strings.Join(strings.Fields(strings.ToValidUTF8(msg, "?")), " ")
	msg = p.redact(msg)
	if len(msg) > maxErrorMessage {
		cut := maxErrorMessage - len("…")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// parseRetryAfter reads a Retry-After value: delta-seconds or an HTTP-date
// (a date in the past means no wait).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64((1<<63-1)/time.Second) {
			n = int64((1<<63 - 1) / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// backoff is the wait before retry number attempt+1: MinBackoff doubled per
// attempt, capped at MaxBackoff, with the upper half jittered.
func (p *Provider) backoff(attempt int) time.Duration {
	d := p.cfg.MinBackoff
	for i := 0; i < attempt && d < p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.cfg.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// sleep waits d or until ctx ends; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Wire shapes.

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Tools       []chatTool    `json:"tools,omitempty"`
	ToolChoice  string        `json:"tool_choice,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	Stream      bool          `json:"stream"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *Provider) encode(req agent.Request) ([]byte, error) {
	cr := chatRequest{
		Model:       req.Model,
		Messages:    make([]chatMessage, 0, len(req.Messages)),
		MaxTokens:   max(req.MaxTokens, 0),
		Temperature: req.Temperature,
	}
	if cr.Model == "" {
		cr.Model = p.cfg.Model
	}
	for _, m := range req.Messages {
		cm := chatMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			cm.ToolCalls = append(cm.ToolCalls, chatToolCall{
				ID: tc.ID, Type: "function",
				Function: chatFunction{Name: tc.Name, Arguments: args},
			})
		}
		cr.Messages = append(cr.Messages, cm)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = emptyParameters
		}
		cr.Tools = append(cr.Tools, chatTool{
			Type:     "function",
			Function: chatToolSpec{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	if len(cr.Tools) > 0 {
		cr.ToolChoice = "auto"
	}
	b, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("openai: encoding request: %w", err)
	}
	return b, nil
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (p *Provider) decode(raw []byte) (agent.Response, error) {
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return agent.Response{}, fmt.Errorf("openai: malformed response: %w", err)
	}
	if len(cr.Choices) == 0 {
		if len(cr.Error) > 0 && string(cr.Error) != "null" {
			return agent.Response{}, fmt.Errorf("openai: error in response: %s", p.errorMessage(raw))
		}
		return agent.Response{}, errors.New("openai: response has no choices")
	}
	c := cr.Choices[0]
	content, err := decodeContent(c.Message.Content)
	if err != nil {
		return agent.Response{}, err
	}
	res := agent.Response{
		Message: agent.Message{Role: "assistant", Content: content},
		Usage: agent.Usage{
			PromptTokens:     cr.Usage.PromptTokens,
			CompletionTokens: cr.Usage.CompletionTokens,
		},
		FinishReason: c.FinishReason,
		Raw:          json.RawMessage(raw),
	}
	for i, tc := range c.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		res.Message.ToolCalls = append(res.Message.ToolCalls, agent.ToolCall{
			ID: id, Name: tc.Function.Name, Arguments: argumentsText(tc.Function.Arguments),
		})
	}
	return res, nil
}

// decodeContent accepts a string, null, or an array of content parts (whose
// text parts are concatenated).
func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("openai: malformed response: message content is neither text nor parts")
	}
	var b strings.Builder
	for _, part := range parts {
		if part.Type == "text" || part.Type == "" {
			b.WriteString(part.Text)
		}
	}
	return b.String(), nil
}

// argumentsText is a tool call's arguments as text: the string when the
// server sent one, the JSON text when it sent an object, "" for none.
func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}
