// Package agent runs untrusted agent workers: role configuration, tools with
// schema guards, a bounded loop per task, budgets, handoffs and transcripts.
// Providers (a model endpoint, deterministic builtin code, authored
// fixtures, recorded replays) sit behind one interface; which one a role uses
// is explicit configuration, never a silent fallback.
package agent

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one chat message in a model conversation. Role is system,
// user, assistant or tool. An assistant message may carry tool calls; a tool
// message answers one of them by ToolCallID.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is a model's request to run one tool. Arguments is the raw JSON
// text the model produced: it may be malformed, and the runtime treats it as
// untrusted input.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is what a model is told about a tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name.
	Model    string     `json:"model"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// MaxTokens bounds the completion; the worst-case booking of a call
	// that times out uses it.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature is passed through when set.
	Temperature *float64 `json:"temperature,omitempty"`

	// Task is what the call is for. Providers that answer from code or
	// fixtures (builtin, authored, replay) read it; model endpoints ignore it.
	Task TaskContext `json:"-"`
}

// TaskContext tells deterministic providers which task a call belongs to.
type TaskContext struct {
	WorkspaceID string
	TaskID      string
	CaseID      string
	Kind        string
	Role        string
	Input       json.RawMessage
	InputDigest string
}

// Usage is what a call consumed, as the provider reported it.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Response is a model's answer: text, tool calls or both.
type Response struct {
	Message Message `json:"message"`
	Usage   Usage   `json:"usage"`
	// FinishReason is the provider's, e.g. stop, tool_calls, length.
	FinishReason string `json:"finish_reason,omitempty"`
	// Raw is the provider's response body, kept as evidence when present.
	Raw json.RawMessage `json:"-"`
}

// Provider answers model calls. Evidence is the evidence type of what it
// produces: live for a model or code that really ran here, replayed for
// recorded outputs, authored for human-written fixtures.
type Provider interface {
	Name() string
	Evidence() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// RetryAfterError is returned by a provider that was told to come back
// later (HTTP 429 or 503 with Retry-After) and gave up retrying.
type RetryAfterError struct {
	Status int
	After  time.Duration
	Msg    string
}

func (e *RetryAfterError) Error() string { return e.Msg }
