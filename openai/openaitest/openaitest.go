// Package openaitest is a scripted OpenAI-compatible chat-completions server
// for tests.
//
// A test queues Steps; each POST /v1/chat/completions takes the next one, in
// order, and answers it. Every request body is recorded, so the test can
// assert what the model was shown. When the script runs out, the server
// answers 500 with a message saying so.
//
//	s := openaitest.NewServer(t)
//	s.Reply(
//		openaitest.ToolCall("read_case", `{"id":"c1"}`),
//		openaitest.Status(429, "0"),
//		openaitest.Text("done").WithUsage(120, 8),
//	)
//	// point the client at s.URL(), run, then inspect s.Requests()
package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/agent"
)

// Step is one scripted answer. The zero Step answers 200 with an empty
// assistant message.
type Step struct {
	// Delay is waited before answering. The wait ends early, without an
	// answer, if the request's context ends or the server is closed.
	Delay time.Duration
	// Status is the HTTP status; 0 means 200. A non-2xx status answers
	// with Body, or a generated OpenAI-shaped error body when Body is empty.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Body, when set, is sent verbatim instead of a generated body (for
	// answers the helpers cannot express, e.g. arguments as an object).
	Body string

	// Text is the assistant message content; null when empty and there are
	// tool calls.
	Text string
	// ToolCalls are the assistant's tool calls. An empty ID becomes
	// "call_<request>_<index>".
	ToolCalls []agent.ToolCall
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string
	// Usage is reported as given (zero unless set).
	Usage agent.Usage
}

// Text is a step answering with assistant text.
func Text(s string) Step { return Step{Text: s} }

// ToolCall is a step answering with one tool call; args is the arguments'
// JSON text, sent as the string OpenAI servers send.
func ToolCall(name, args string) Step {
	return Step{ToolCalls: []agent.ToolCall{{Name: name, Arguments: args}}}
}

// ToolCalls is a step answering with several tool calls in one message.
func ToolCalls(calls ...agent.ToolCall) Step { return Step{ToolCalls: calls} }

// Status is a step answering an HTTP error status, with a Retry-After header
// when retryAfter is not empty (delta-seconds or an HTTP-date).
func Status(code int, retryAfter string) Step {
	return Step{Status: code, RetryAfter: retryAfter}
}

// Raw is a step answering 200 with body verbatim.
func Raw(body string) Step { return Step{Body: body} }

// Delay is then, answered after waiting d.
func Delay(d time.Duration, then Step) Step {
	then.Delay = d
	return then
}

// WithUsage returns the step reporting the given token usage.
func (s Step) WithUsage(prompt, completion int64) Step {
	s.Usage = agent.Usage{PromptTokens: prompt, CompletionTokens: completion}
	return s
}

// ChatRequest is a recorded request body, decoded.
type ChatRequest struct {
	Model       string        `json:"model"`
	Messages    []ChatMessage `json:"messages"`
	Tools       []ChatTool    `json:"tools,omitempty"`
	ToolChoice  any           `json:"tool_choice,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	Stream      bool          `json:"stream,omitempty"`

	// Header is the request's HTTP header (Authorization included: use
	// test keys only).
	Header http.Header `json:"-"`
	// Body is the raw request body.
	Body []byte `json:"-"`
}

// ChatMessage is a message in the OpenAI wire shape.
type ChatMessage struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []ChatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

// ChatToolCall is an assistant message's tool call in the wire shape.
type ChatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ChatTool is an offered tool in the wire shape.
type ChatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// ToolNames lists the offered tools' names, in order.
func (r ChatRequest) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Function.Name
	}
	return names
}

// Server is a scripted chat-completions server on loopback.
type Server struct {
	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	script   []Step
	queued   int
	requests []ChatRequest
	// respond, when set, answers every request the script has no step
	// for: a scripted model that decides from what it is shown.
	respond func(ChatRequest) Step
}

// NewServer starts a server that is closed when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// URL is the base URL a client is configured with, ending in "/v1".
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Reply appends steps to the script.
func (s *Server) Reply(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, steps...)
	s.queued += len(steps)
}

// Respond sets a function that answers each request the queued script
// does not: queued steps are used first, in order, then respond. It lets a
// test script a model that reads its prompt and tool results and decides,
// as a real one would, instead of a fixed sequence.
func (s *Server) Respond(f func(ChatRequest) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// Requests returns every chat-completions request received so far, in
// order, including those answered with an error.
func (s *Server) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatRequest(nil), s.requests...)
}

// Remaining is how many queued steps have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "openaitest: no route "+r.URL.Path+"; the client should post to /v1/chat/completions")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "openaitest: use POST")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "openaitest: reading body: "+err.Error())
		return
	}
	var req ChatRequest
	decodeErr := json.Unmarshal(body, &req)
	req.Header = r.Header.Clone()
	req.Body = body

	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	var step Step
	ok := decodeErr == nil && len(s.script) > 0
	if ok {
		step, s.script = s.script[0], s.script[1:]
	}
	respond := s.respond
	queued := s.queued
	s.mu.Unlock()
	if decodeErr == nil && !ok && respond != nil {
		step, ok = respond(req), true
	}

	if decodeErr != nil {
		// A malformed request is recorded but uses no step.
		writeError(w, http.StatusBadRequest, "openaitest: request body is not a chat completions request: "+decodeErr.Error())
		return
	}
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf(
			"openaitest: script exhausted: request %d has no scripted step (%d were queued)", n, queued))
		return
	}
	if step.Delay > 0 {
		t := time.NewTimer(step.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	s.answer(w, req, step, n)
}

func (s *Server) answer(w http.ResponseWriter, req ChatRequest, step Step, n int) {
	status := step.Status
	if status == 0 {
		status = http.StatusOK
	}
	if step.RetryAfter != "" {
		w.Header().Set("Retry-After", step.RetryAfter)
	}
	if step.Body != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, step.Body)
		return
	}
	if status < 200 || status > 299 {
		writeError(w, status, fmt.Sprintf("openaitest: scripted status %d", status))
		return
	}

	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var content *string
	if step.Text != "" || len(step.ToolCalls) == 0 {
		content = &step.Text
	}
	calls := make([]toolCall, 0, len(step.ToolCalls))
	for i, tc := range step.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		}
		calls = append(calls, toolCall{ID: id, Type: "function", Function: function{Name: tc.Name, Arguments: tc.Arguments}})
	}
	finish := step.FinishReason
	if finish == "" {
		finish = "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	writeJSON(w, status, map[string]any{
		"id":      "chatcmpl-openaitest-" + strconv.Itoa(n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]int64{
			"prompt_tokens":     step.Usage.PromptTokens,
			"completion_tokens": step.Usage.CompletionTokens,
			"total_tokens":      step.Usage.PromptTokens + step.Usage.CompletionTokens,
		},
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "openaitest"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
