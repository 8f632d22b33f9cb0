package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/openai/openaitest"
)

// fast keeps retry waits short in tests.
func fast(cfg Config) Config {
	cfg.MinBackoff = time.Millisecond
	cfg.MaxBackoff = 5 * time.Millisecond
	return cfg
}

func mustNew(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func userRequest() agent.Request {
	return agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ok", Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, ""},
		{"ok https", Config{BaseURL: "https://openrouter.ai/api/v1", Model: "m", APIKey: "k"}, ""},
		{"no base", Config{Model: "m"}, "base URL"},
		{"bad scheme", Config{BaseURL: "ftp://host/v1", Model: "m"}, "base URL"},
		{"no host", Config{BaseURL: "http:///v1", Model: "m"}, "base URL"},
		{"relative", Config{BaseURL: "localhost:11434", Model: "m"}, "base URL"},
		{"userinfo", Config{BaseURL: "http://u:p@host/v1", Model: "m"}, "credentials"},
		{"query", Config{BaseURL: "http://host/v1?key=x", Model: "m"}, "query"},
		{"no model", Config{BaseURL: "http://host/v1", Model: "  "}, "model"},
		{"negative backoff", Config{BaseURL: "http://host/v1", Model: "m", MinBackoff: -1}, "negative"},
		{"key with newline", Config{BaseURL: "http://host/v1", Model: "m", APIKey: "a\nb"}, "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if p.Name() != "openai" || p.Evidence() != "live" {
					t.Errorf("Name, Evidence = %q, %q", p.Name(), p.Evidence())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if signoff.ErrorCode(err) != signoff.EINVALID {
				t.Errorf("code = %q", signoff.ErrorCode(err))
			}
		})
	}
}

// Not parallel: uses t.Setenv.
func TestAPIKeyEnv(t *testing.T) {
	const name = "SIGNOFF_OPENAI_TEST_KEY"
	t.Setenv(name, "")
	_, err := New(Config{BaseURL: "http://host/v1", Model: "m", APIKeyEnv: name})
	if err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("unset: err = %v, want one naming %s", err, name)
	}

	t.Setenv(name, "sk-from-env-123456")
	p := mustNew(t, Config{BaseURL: "http://host/v1", Model: "m", APIKeyEnv: name})
	if p.cfg.APIKey != "sk-from-env-123456" {
		t.Errorf("key not read from %s", name)
	}
	p = mustNew(t, Config{BaseURL: "http://host/v1", Model: "m", APIKeyEnv: name, APIKey: "explicit"})
	if p.cfg.APIKey != "explicit" {
		t.Errorf("explicit APIKey should win over APIKeyEnv")
	}
}

func TestEndpointJoin(t *testing.T) {
	t.Parallel()
	tests := []struct{ base, want string }{
		{"http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions"},
		{"http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions"},
		{"http://localhost:11434/v1//", "http://localhost:11434/v1/chat/completions"},
		{"http://localhost:8080", "http://localhost:8080/chat/completions"},
		{"http://localhost:8080/", "http://localhost:8080/chat/completions"},
		{" https://openrouter.ai/api/v1 ", "https://openrouter.ai/api/v1/chat/completions"},
	}
	for _, tt := range tests {
		p := mustNew(t, Config{BaseURL: tt.base, Model: "m"})
		if got := p.Endpoint(); got != tt.want {
			t.Errorf("%q: endpoint = %q, want %q", tt.base, got, tt.want)
		}
	}

	// And the path a server actually sees.
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL + "/v1", srv.URL + "/v1/", srv.URL} {
		p := mustNew(t, Config{BaseURL: base, Model: "m"})
		if _, err := p.Complete(t.Context(), userRequest()); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(paths, " "); got != "/v1/chat/completions /v1/chat/completions /chat/completions" {
		t.Errorf("paths = %s", got)
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	temp := 0.2
	full := agent.Request{
		Model: "override",
		Messages: []agent.Message{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: "read c1"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "call_a", Name: "read_case", Arguments: `{"id":"c1"}`}}},
			{Role: "tool", ToolCallID: "call_a", Content: `{"title":"x"}`},
		},
		Tools: []agent.ToolSpec{
			{Name: "read_case", Description: "Read a case.", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
			{Name: "noop"},
		},
		MaxTokens:   256,
		Temperature: &temp,
	}
	tests := []struct {
		name    string
		cfg     Config
		req     agent.Request
		check   func(t *testing.T, r openaitest.ChatRequest, body map[string]any)
		wantKey string
	}{
		{
			name:    "tools, key, override model",
			cfg:     Config{Model: "default", APIKey: "sk-test-1234567890", Headers: map[string]string{"X-Title": "signoff"}},
			req:     full,
			wantKey: "Bearer sk-test-1234567890",
			check: func(t *testing.T, r openaitest.ChatRequest, body map[string]any) {
				if r.Model != "override" || r.ToolChoice != "auto" || r.MaxTokens != 256 ||
					r.Temperature == nil || *r.Temperature != 0.2 || r.Stream {
					t.Errorf("request = %+v", r)
				}
				if r.Header.Get("X-Title") != "signoff" || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("headers = %v", r.Header)
				}
				if len(r.Tools) != 2 || r.Tools[0].Type != "function" || r.Tools[0].Function.Name != "read_case" ||
					r.Tools[0].Function.Description != "Read a case." ||
					string(r.Tools[0].Function.Parameters) != `{"type":"object","properties":{"id":{"type":"string"}}}` ||
					string(r.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
					t.Errorf("tools = %+v", r.Tools)
				}
				if len(r.Messages) != 4 {
					t.Fatalf("messages = %+v", r.Messages)
				}
				a := r.Messages[2]
				if a.Role != "assistant" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_a" ||
					a.ToolCalls[0].Type != "function" || a.ToolCalls[0].Function.Name != "read_case" ||
					a.ToolCalls[0].Function.Arguments != `{"id":"c1"}` {
					t.Errorf("assistant message = %+v", a)
				}
				if tm := r.Messages[3]; tm.Role != "tool" || tm.ToolCallID != "call_a" || tm.Content != `{"title":"x"}` {
					t.Errorf("tool message = %+v", tm)
				}
				// The arguments travel as a JSON string, as OpenAI sends them.
				msgs := body["messages"].([]any)
				fn := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
				if _, ok := fn["arguments"].(string); !ok {
					t.Errorf("arguments not a string: %T", fn["arguments"])
				}
			},
		},
		{
			name: "no tools, no key, config model",
			cfg:  Config{Model: "default"},
			req:  userRequest(),
			check: func(t *testing.T, r openaitest.ChatRequest, body map[string]any) {
				if r.Model != "default" {
					t.Errorf("model = %q", r.Model)
				}
				for _, k := range []string{"tools", "tool_choice", "max_tokens", "temperature"} {
					if _, ok := body[k]; ok {
						t.Errorf("%s sent without being set", k)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Reply(openaitest.Text("ok"))
			cfg := tt.cfg
			cfg.BaseURL = s.URL()
			if _, err := mustNew(t, cfg).Complete(t.Context(), tt.req); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if got := reqs[0].Header.Get("Authorization"); got != tt.wantKey {
				t.Errorf("Authorization = %q, want %q", got, tt.wantKey)
			}
			var body map[string]any
			if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			tt.check(t, reqs[0], body)
		})
	}
}

func TestResponseParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want agent.Response
	}{
		{
			name: "string arguments",
			body: `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"read_case","arguments":"{\"id\":\"c1\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":5}}`,
			want: agent.Response{
				Message:      agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "call_x", Name: "read_case", Arguments: `{"id":"c1"}`}}},
				Usage:        agent.Usage{PromptTokens: 12, CompletionTokens: 5},
				FinishReason: "tool_calls",
			},
		},
		{
			name: "object arguments, missing ids",
			body: `{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"a","arguments":{"x": 1}}},{"function":{"name":"b","arguments":{}}},{"function":{"name":"c"}}]},"finish_reason":"tool_calls"}]}`,
			want: agent.Response{
				Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{
					{ID: "call_0", Name: "a", Arguments: `{"x":1}`},
					{ID: "call_1", Name: "b", Arguments: `{}`},
					{ID: "call_2", Name: "c", Arguments: ``},
				}},
				FinishReason: "tool_calls",
			},
		},
		{
			name: "malformed string arguments kept as text",
			body: `{"choices":[{"message":{"tool_calls":[{"id":"k","function":{"name":"a","arguments":"{\"x\":"}}]}}]}`,
			want: agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "k", Name: "a", Arguments: `{"x":`}}}},
		},
		{
			name: "text",
			body: `{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			want: agent.Response{Message: agent.Message{Role: "assistant", Content: "done"}, Usage: agent.Usage{PromptTokens: 3, CompletionTokens: 1}, FinishReason: "stop"},
		},
		{
			name: "content parts",
			body: `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"length"}]}`,
			want: agent.Response{Message: agent.Message{Role: "assistant", Content: "ab"}, FinishReason: "length"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Reply(openaitest.Raw(tt.body))
			got, err := mustNew(t, Config{BaseURL: s.URL(), Model: "m"}).Complete(t.Context(), userRequest())
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Raw) != tt.body {
				t.Errorf("Raw = %s", got.Raw)
			}
			got.Raw = nil
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}

func TestMalformedResponses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, wantErr string }{
		{"not json", `<html>`, "malformed response"},
		{"no choices", `{"choices":[]}`, "no choices"},
		{"error in 200", `{"error":{"message":"model not loaded"}}`, "model not loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Reply(openaitest.Raw(tt.body))
			_, err := mustNew(t, fast(Config{BaseURL: s.URL(), Model: "m"})).Complete(t.Context(), userRequest())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d attempts, want 1", n)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cfg        Config
		steps      []openaitest.Step
		ctxTimeout time.Duration
		attempts   int
		minElapsed time.Duration
		check      func(t *testing.T, res agent.Response, err error)
	}{
		{
			name:     "429 retry-after 0 then success",
			steps:    []openaitest.Step{openaitest.Status(429, "0"), openaitest.Text("ok")},
			attempts: 2,
			check:    wantText("ok"),
		},
		{
			name:       "429 retry-after 1 then success",
			steps:      []openaitest.Step{openaitest.Status(429, "1"), openaitest.Text("ok")},
			attempts:   2,
			minElapsed: 900 * time.Millisecond,
			check:      wantText("ok"),
		},
		{
			name:     "503 retry-after http-date in the past then success",
			steps:    []openaitest.Step{openaitest.Status(503, "Mon, 02 Jan 2006 15:04:05 GMT"), openaitest.Text("ok")},
			attempts: 2,
			check:    wantText("ok"),
		},
		{
			name:     "500 then 502 then success",
			steps:    []openaitest.Step{openaitest.Status(500, ""), openaitest.Status(502, ""), openaitest.Text("ok")},
			attempts: 3,
			check:    wantText("ok"),
		},
		{
			name:     "400 not retried",
			steps:    []openaitest.Step{{Status: 400, Body: `{"error":{"message":"bad tool schema","type":"invalid_request_error"}}`}, openaitest.Text("unused")},
			attempts: 1,
			check: func(t *testing.T, _ agent.Response, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != 400 || se.Message != "bad tool schema" {
					t.Fatalf("err = %#v", err)
				}
				if !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "bad tool schema") {
					t.Errorf("err text = %q", err)
				}
			},
		},
		{
			name:     "500 until retries run out",
			cfg:      Config{MaxRetries: 2},
			steps:    []openaitest.Step{openaitest.Status(500, ""), openaitest.Status(500, ""), openaitest.Status(500, ""), openaitest.Text("unused")},
			attempts: 3,
			check: func(t *testing.T, _ agent.Response, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != 500 || se.Attempts != 3 {
					t.Fatalf("err = %#v", err)
				}
			},
		},
		{
			name:     "negative MaxRetries never retries",
			cfg:      Config{MaxRetries: -1},
			steps:    []openaitest.Step{openaitest.Status(503, ""), openaitest.Text("unused")},
			attempts: 1,
			check: func(t *testing.T, _ agent.Response, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != 503 {
					t.Fatalf("err = %#v", err)
				}
			},
		},
		{
			name:     "retry-after over the limit",
			steps:    []openaitest.Step{openaitest.Status(429, "120"), openaitest.Text("unused")},
			attempts: 1,
			check:    wantRetryAfter(429, 120*time.Second),
		},
		{
			name:       "retry-after past the deadline",
			steps:      []openaitest.Step{openaitest.Status(503, "30"), openaitest.Text("unused")},
			ctxTimeout: 5 * time.Second,
			attempts:   1,
			check:      wantRetryAfter(503, 30*time.Second),
		},
		{
			name:     "429 with retry-after until retries run out",
			cfg:      Config{MaxRetries: 1},
			steps:    []openaitest.Step{openaitest.Status(429, "0"), openaitest.Status(429, "0"), openaitest.Text("unused")},
			attempts: 2,
			check:    wantRetryAfter(429, 0),
		},
		{
			name:       "deadline during a slow answer",
			steps:      []openaitest.Step{openaitest.Delay(time.Minute, openaitest.Text("late"))},
			ctxTimeout: 100 * time.Millisecond,
			attempts:   1,
			check:      wantDeadline,
		},
		{
			name:       "deadline during backoff",
			cfg:        Config{MinBackoff: time.Minute, MaxBackoff: time.Minute},
			steps:      []openaitest.Step{openaitest.Status(500, ""), openaitest.Text("unused")},
			ctxTimeout: 100 * time.Millisecond,
			attempts:   1,
			check:      wantDeadline,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Reply(tt.steps...)
			cfg := tt.cfg
			cfg.BaseURL, cfg.Model = s.URL(), "m"
			if cfg.MinBackoff == 0 {
				cfg = fast(cfg)
			}
			ctx := t.Context()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			start := time.Now()
			res, err := mustNew(t, cfg).Complete(ctx, userRequest())
			elapsed := time.Since(start)
			tt.check(t, res, err)
			if n := len(s.Requests()); n != tt.attempts {
				t.Errorf("%d attempts, want %d", n, tt.attempts)
			}
			if elapsed < tt.minElapsed {
				t.Errorf("took %s, want at least %s", elapsed, tt.minElapsed)
			}
			if elapsed > 10*time.Second {
				t.Errorf("took %s", elapsed)
			}
		})
	}
}

func wantText(text string) func(*testing.T, agent.Response, error) {
	return func(t *testing.T, res agent.Response, err error) {
		t.Helper()
		if err != nil || res.Message.Content != text {
			t.Fatalf("res, err = %+v, %v", res, err)
		}
	}
}

func wantRetryAfter(status int, after time.Duration) func(*testing.T, agent.Response, error) {
	return func(t *testing.T, _ agent.Response, err error) {
		t.Helper()
		var ra *agent.RetryAfterError
		if !errors.As(err, &ra) || ra.Status != status || ra.After != after {
			t.Fatalf("err = %#v, want RetryAfterError %d after %s", err, status, after)
		}
	}
}

func wantDeadline(t *testing.T, _ agent.Response, err error) {
	t.Helper()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want one wrapping context.DeadlineExceeded", err)
	}
}

func TestCanceledNotRetried(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Reply(openaitest.Delay(time.Minute, openaitest.Text("late")))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := mustNew(t, fast(Config{BaseURL: s.URL(), Model: "m"})).Complete(ctx, userRequest())
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want canceled", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func TestTransportErrorRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // drop the connection without an answer
			}
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"}}]}`)
	}))
	defer srv.Close()
	res, err := mustNew(t, fast(Config{BaseURL: srv.URL + "/v1", Model: "m"})).Complete(t.Context(), userRequest())
	if err != nil || res.Message.Content != "ok" || res.Message.Role != "assistant" {
		t.Fatalf("res, err = %+v, %v", res, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = mustNew(t, fast(Config{BaseURL: "http://" + addr + "/v1", Model: "m", MaxRetries: 2})).Complete(t.Context(), userRequest())
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorMessageSafety(t *testing.T) {
	t.Parallel()
	const key = "sk-secret-abcdef0123456789"
	long := strings.Repeat("é", 2000)
	tests := []struct{ name, body string }{
		{"echoed key", `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`},
		{"string error", `{"error":"invalid key ` + key + `"}`},
		{"plain text", "unauthorized\n" + key + "\n" + long},
		{"long message", `{"error":{"message":"` + long + `"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openaitest.NewServer(t)
			s.Reply(openaitest.Step{Status: 401, Body: tt.body})
			_, err := mustNew(t, Config{BaseURL: s.URL(), Model: "m", APIKey: key}).Complete(t.Context(), userRequest())
			var se *StatusError
			if !errors.As(err, &se) || se.Status != 401 {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "Bearer") {
				t.Errorf("error leaks the key: %q", err)
			}
			if len(se.Message) > 512 || !strings.Contains(err.Error(), "401") {
				t.Errorf("message of %d bytes: %q", len(se.Message), err)
			}
			if strings.ContainsAny(se.Message, "\n\r") || !json.Valid([]byte(`"`+se.Message+`"`)) {
				t.Errorf("message not one clean line: %q", se.Message)
			}
		})
	}
}

func TestResponseTooLarge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		io.WriteString(w, strings.Repeat("x", MaxResponseBytes))
		io.WriteString(w, `"}}]}`)
	}))
	defer srv.Close()
	_, err := mustNew(t, Config{BaseURL: srv.URL, Model: "m"}).Complete(t.Context(), userRequest())
	if err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999999999", 0, false},
		{"9999999999999", time.Duration(1<<63 - 1).Truncate(time.Second), true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	p := mustNew(t, Config{BaseURL: "http://host/v1", Model: "m", MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for attempt := range 70 {
		ceiling := min(100*time.Millisecond<<min(attempt, 10), time.Second)
		for range 20 {
			d := p.backoff(attempt)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("backoff(%d) = %s, want in [%s, %s]", attempt, d, ceiling/2, ceiling)
			}
		}
	}
}
