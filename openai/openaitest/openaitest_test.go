package openaitest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/openai/openaitest"
)

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, map[string]any, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, raw)
	}
	return resp, v, nil
}

func message(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	choices, _ := v["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("choices = %v", v["choices"])
	}
	return choices[0].(map[string]any)["message"].(map[string]any)
}

const reqBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],
	"tools":[{"type":"function","function":{"name":"read_case","parameters":{"type":"object"}}}],"tool_choice":"auto"}`

func TestScript(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Reply(
		openaitest.ToolCall("read_case", `{"id":"c1"}`).WithUsage(10, 3),
		openaitest.Status(429, "1"),
		openaitest.Text("done"),
	)
	url := s.URL() + "/chat/completions"
	ctx := t.Context()

	resp, v, err := post(t, ctx, url, reqBody)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("step 1: %v %v", resp, err)
	}
	m := message(t, v)
	if m["content"] != nil {
		t.Errorf("content = %v, want null", m["content"])
	}
	calls := m["tool_calls"].([]any)
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "read_case" || fn["arguments"] != `{"id":"c1"}` || calls[0].(map[string]any)["id"] == "" {
		t.Errorf("tool call = %v", calls[0])
	}
	if u := v["usage"].(map[string]any); u["prompt_tokens"] != 10.0 || u["completion_tokens"] != 3.0 {
		t.Errorf("usage = %v", u)
	}
	if fr := v["choices"].([]any)[0].(map[string]any)["finish_reason"]; fr != "tool_calls" {
		t.Errorf("finish_reason = %v", fr)
	}

	resp, _, err = post(t, ctx, url, reqBody)
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("step 2: %v %v", resp, err)
	}

	_, v, err = post(t, ctx, url, reqBody)
	if err != nil || message(t, v)["content"] != "done" {
		t.Fatalf("step 3: %v %v", v, err)
	}

	resp, v, err = post(t, ctx, url, reqBody)
	if err != nil || resp.StatusCode != 500 {
		t.Fatalf("exhausted: %v %v", resp, err)
	}
	if msg := v["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "script exhausted") {
		t.Errorf("exhausted message = %q", msg)
	}

	reqs := s.Requests()
	if len(reqs) != 4 || s.Remaining() != 0 {
		t.Fatalf("recorded %d requests, %d remaining", len(reqs), s.Remaining())
	}
	r := reqs[0]
	if r.Model != "m" || len(r.Messages) != 1 || r.Messages[0].Content != "hi" ||
		strings.Join(r.ToolNames(), ",") != "read_case" || r.ToolChoice != "auto" ||
		r.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("recorded request = %+v", r)
	}
}

func TestDelayHonoursContext(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Reply(openaitest.Delay(time.Minute, openaitest.Text("late")))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := post(t, ctx, s.URL()+"/chat/completions", reqBody)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestRawAndRoutes(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Reply(openaitest.Raw(`{"choices":[{"message":{"role":"assistant","content":"x"}}]}`))
	_, v, err := post(t, t.Context(), s.URL()+"/chat/completions", reqBody)
	if err != nil || message(t, v)["content"] != "x" {
		t.Fatalf("raw: %v %v", v, err)
	}
	resp, _, err := post(t, t.Context(), s.URL()+"/completions", reqBody)
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("wrong path: %v %v", resp, err)
	}
	resp, _, err = post(t, t.Context(), s.URL()+"/chat/completions", `not json`)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("bad body: %v %v", resp, err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2 (the 404 is not recorded)", n)
	}
}

func TestRespondAfterScript(t *testing.T) {
	t.Parallel()
	s := openaitest.NewServer(t)
	s.Reply(openaitest.Text("queued"))
	s.Respond(func(r openaitest.ChatRequest) openaitest.Step {
		return openaitest.Text("saw " + r.Messages[len(r.Messages)-1].Content)
	})
	for i, want := range []string{"queued", "saw hello", "saw again"} {
		msg := []string{"x", "hello", "again"}[i]
		body := `{"model":"m","messages":[{"role":"user","content":"` + msg + `"}]}`
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || len(out.Choices) != 1 || out.Choices[0].Message.Content != want {
			t.Fatalf("request %d: %+v, %v; want %q", i, out, err, want)
		}
	}
}
