package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/openai/openaitest"
)

// `agent worker --once --record` then `--replay` of the same task set in
// another database (other ids, other boundaries, other times): the same
// outcome, labelled replayed, with no model reachable; a transcript never
// holds the key; a diverging replay and a corrupt transcript fail clearly.
func TestAgentRecordReplay(t *testing.T) {
	t.Parallel()
	srv := openaitest.NewServer(t)
	rolesFor := func(url, handoffs string) string {
		return `roles:
  triager:
    provider: openai
    base_url: ` + url + `
    model: llama3.1:8b
    api_key_env: TEST_MODEL_KEY
    handoffs: ` + handoffs + `
  reproducer:
    provider: openai
    base_url: ` + url + `
    model: llama3.1:8b
    handoffs: []
`
	}
	setRoles := func(sd agentSeed, roles string) {
		t.Helper()
		if out, code := signoffEnv(t, nil, roles, "roles", "set", "--db", sd.db, "--workspace", sd.ws, "--file", "-"); code != 0 {
			t.Fatalf("roles set: %d %s", code, out)
		}
	}
	worker := func(sd agentSeed, env []string, extra ...string) (string, int) {
		return signoffEnv(t, env, "", append([]string{"agent", "worker", "--db", sd.db, "--workspace", sd.ws, "--roles", "triager", "--once"}, extra...)...)
	}
	const key = "sk-test-0123456789abcdefSECRET"
	transcript := filepath.Join(t.TempDir(), "walk.jsonl")

	rec := seedAgents(t)
	setRoles(rec, rolesFor(srv.URL(), "[reproducer]"))
	srv.Reply(
		openaitest.ToolCall("record_note", `{"summary":"coupon code applied twice; reproducible"}`).WithUsage(300, 40),
		openaitest.ToolCall("handoff", `{"to":"reproducer","reason":"needs a failing test"}`).WithUsage(350, 20),
	)
	out, code := worker(rec, []string{"TEST_MODEL_KEY=" + key}, "--record", transcript)
	if code != 0 || !strings.Contains(out, "handed_off after 2 turn(s), 650+60 tokens") || !strings.Contains(out, "evidence live") || !strings.Contains(out, "recorded 2 model exchange(s)") {
		t.Fatalf("worker --record: %d %s", code, out)
	}
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) || strings.Contains(string(b), "Authorization") || !strings.HasPrefix(string(b), `{"format":"signoff-replay","version":1}`) {
		t.Fatalf("transcript:\n%s", b)
	}
	if out, code := worker(rec, []string{"TEST_MODEL_KEY=" + key}, "--record", transcript); code != 4 || !strings.Contains(out, "never overwritten") {
		t.Errorf("--record over an existing transcript: %d %s", code, out)
	}

	// Replay in a fresh database, with no key and the model unreachable.
	rep := seedAgents(t)
	setRoles(rep, rolesFor("http://127.0.0.1:9/v1", "[reproducer]"))
	seen := len(srv.Requests())
	out, code = worker(rep, nil, "--replay", transcript)
	if code != 0 || !strings.Contains(out, "handed_off after 2 turn(s), 650+60 tokens") || !strings.Contains(out, "evidence replayed") || !strings.Contains(out, "replayed 2 of 2 recorded exchange(s)") {
		t.Fatalf("worker --replay: %d %s", code, out)
	}
	if len(srv.Requests()) != seen {
		t.Error("the replay reached the model")
	}
	if out, code := signoffCmd(t, "ledger", "verify", "--db", rep.db); code != 0 {
		t.Fatalf("ledger verify: %d %s", code, out)
	}

	// A run that is not the recorded one (the triager may no longer hand
	// off, so it is offered other tools) fails: exit 4, naming what differs.
	div := seedAgents(t)
	setRoles(div, rolesFor("http://127.0.0.1:9/v1", "[]"))
	if out, code := worker(div, nil, "--replay", transcript); code != 4 || !strings.Contains(out, "role triager, task kind triager, turn 1") || !strings.Contains(out, "tools offered") {
		t.Fatalf("diverging replay: %d %s", code, out)
	}

	// A worker that keeps polling stops too, after the round.
	if out, code := signoffEnv(t, nil, "", "agent", "worker", "--db", div.db, "--workspace", div.ws, "--roles", "triager", "--poll", "10ms", "--replay", transcript); code != 4 || !strings.Contains(out, "tools offered") {
		t.Fatalf("diverging replay, polling worker: %d %s", code, out)
	}

	// A cut transcript does not load.
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	os.WriteFile(cut, b[:len(b)-20], 0o600)
	if out, code := worker(div, nil, "--replay", cut); code != 2 || !strings.Contains(out, "cut short") {
		t.Fatalf("cut transcript: %d %s", code, out)
	}
	if out, code := worker(div, nil, "--replay", transcript, "--record", cut+".new"); code != 2 || !strings.Contains(out, "cannot be used together") {
		t.Fatalf("--record with --replay: %d %s", code, out)
	}
}
