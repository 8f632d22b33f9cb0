package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/openai/openaitest"
)

// signoffEnv runs the binary with extra environment variables.
func signoffEnv(t *testing.T, env []string, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

type agentSeed struct {
	db, ws        string
	triager, repr signoff.Actor
	task          signoff.Task
	// tokens of the triager, the reproducer and the owner
	triTok, repTok, ownerTok string
}

// seedAgents builds a database with a triager and a reproducer agent and
// one open triager task, signed with the key file beside it.
func seedAgents(t *testing.T) agentSeed {
	t.Helper()
	seed := seedWorkspace(t, "shop")
	defer seed.close()
	ctx, s, owner := context.Background(), seed.store, seed.owner
	var err error
	sd := agentSeed{db: seed.db, ws: seed.ws.ID}
	if sd.triager, err = s.CreateActor(ctx, owner, "tri", signoff.RoleTriager); err != nil {
		t.Fatal(err)
	}
	if sd.repr, err = s.CreateActor(ctx, owner, "rep", signoff.RoleReproducer); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		id  string
		dst *string
	}{{sd.triager.ID, &sd.triTok}, {sd.repr.ID, &sd.repTok}, {owner.ID, &sd.ownerTok}} {
		if _, *x.dst, err = s.CreateToken(ctx, owner, x.id, "test", nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: seed.project.ID, Kind: signoff.KindBug, Title: "coupon"})
	if err != nil {
		t.Fatal(err)
	}
	if sd.task, err = s.CreateTask(ctx, owner, signoff.TaskInput{CaseID: c.ID, Kind: "triager", Role: signoff.RoleTriager, Input: json.RawMessage(`{"report":"coupon applied twice"}`)}); err != nil {
		t.Fatal(err)
	}
	return sd
}

func TestAgentRunAndWorker(t *testing.T) {
	t.Parallel()
	sd := seedAgents(t)
	srv := openaitest.NewServer(t)
	roles := `roles:
  triager:
    provider: openai
    base_url: ` + srv.URL() + `
    model: llama3.1:8b
    api_key_env: TEST_MODEL_KEY
    handoffs: [reproducer]
  reproducer:
    provider: openai
    base_url: ` + srv.URL() + `
    model: llama3.1:8b
    handoffs: []
`
	if out, code := signoffEnv(t, nil, "roles: {triager: {provider: magic}}", "roles", "set", "--db", sd.db, "--workspace", sd.ws, "--file", "-"); code != 2 || !strings.Contains(out, "unknown provider") {
		t.Fatalf("roles set with a bad provider: %d %s", code, out)
	}
	if out, code := signoffEnv(t, nil, roles, "roles", "set", "--db", sd.db, "--workspace", sd.ws, "--file", "-"); code != 0 {
		t.Fatalf("roles set: %d %s", code, out)
	}
	if out, code := signoffCmd(t, "roles", "show", "--db", sd.db, "--workspace", sd.ws); code != 0 || !strings.Contains(out, srv.URL()) || !strings.Contains(out, "provider: external") {
		t.Fatalf("roles show: %d %s", code, out)
	}
	run := []string{"agent", "run", "--db", sd.db, "--workspace", sd.ws, "--role", "triager", "--task", sd.task.ID}
	// The key variable is unset: the role fails, it does not fall back.
	if out, code := signoffEnv(t, nil, "", run...); code != 2 || !strings.Contains(out, "TEST_MODEL_KEY") {
		t.Fatalf("run without the key: %d %s", code, out)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d model calls without a key", n)
	}
	srv.Reply(
		openaitest.ToolCall("record_note", `{"summary":"coupon code applied twice; reproducible"}`).WithUsage(300, 40),
		openaitest.ToolCall("handoff", `{"to":"reproducer","reason":"needs a failing test"}`).WithUsage(350, 20),
	)
	out, code := signoffEnv(t, []string{"TEST_MODEL_KEY=sk-test-123"}, "", run...)
	if code != 0 || !strings.Contains(out, "handed_off after 2 turn(s)") || !strings.Contains(out, "evidence live") {
		t.Fatalf("agent run: %d %s", code, out)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "Bearer sk-test-123" {
		t.Errorf("Authorization = %q", auth)
	}
	if strings.Contains(out, "sk-test-123") {
		t.Error("the API key was printed")
	}
	srv.Reply(openaitest.ToolCall("record_note", `{"summary":"wrote the test"}`))
	out, code = signoffCmd(t, "agent", "worker", "--db", sd.db, "--workspace", sd.ws, "--roles", "reproducer", "--once")
	if code != 0 || !strings.Contains(out, ": done after 1 turn(s)") {
		t.Fatalf("agent worker: %d %s", code, out)
	}
	if out, code = signoffCmd(t, "agent", "list", "--db", sd.db, "--workspace", sd.ws); code != 0 || !strings.Contains(out, "false") {
		t.Fatalf("agent list: %d %s", code, out)
	}
	if out, code = signoffCmd(t, "ledger", "verify", "--db", sd.db); code != 0 {
		t.Fatalf("ledger verify: %d %s", code, out)
	}
	// The closed task cannot run again.
	if out, code = signoffEnv(t, []string{"TEST_MODEL_KEY=x"}, "", run...); code != 4 {
		t.Fatalf("rerun: %d %s", code, out)
	}
}

// TestMCPStdio connects the SDK's client to the real binary over stdio.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	sd := seedAgents(t)
	ctx := context.Background()
	connect := func(token string) (*sdkmcp.ClientSession, error) {
		cmd := exec.Command(bin, "mcp", "--stdio", "--db", sd.db)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SIGNOFF_TOKEN=" + token}
		c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
		return c.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, nil)
	}
	sess, err := connect(sd.triTok)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "task.get") || !strings.Contains(got, "task.submit") || strings.Contains(got, "review.note") {
		t.Fatalf("triager tools over stdio: %s", got)
	}
	res, err := sess.CallTool(ctx, &sdkmcp.CallToolParams{Name: "task.get", Arguments: map[string]any{"task_id": sd.task.ID}})
	if err != nil || res.IsError {
		t.Fatalf("task.get: %v %+v", err, res)
	}
	if text := res.Content[0].(*sdkmcp.TextContent).Text; !strings.Contains(text, "UNTRUSTED") {
		t.Errorf("task.get prompt is not spotlighted: %s", text)
	}
	sess.Close()

	// The reproducer cannot read the triager's task.
	sess2, err := connect(sd.repTok)
	if err != nil {
		t.Fatal(err)
	}
	res, err = sess2.CallTool(ctx, &sdkmcp.CallToolParams{Name: "task.get", Arguments: map[string]any{"task_id": sd.task.ID}})
	if err != nil || !res.IsError {
		t.Fatalf("reproducer reading the triager's task: %v %+v", err, res)
	}
	sess2.Close()

	// A bad token and a human's token never get a session.
	for tok, code := range map[string]int{"so_bogus": 5, sd.ownerTok: 6} {
		if _, err := connect(tok); err == nil {
			t.Errorf("token %.8s…: connected", tok)
		}
		out, exit := signoffEnv(t, []string{"SIGNOFF_TOKEN=" + tok}, "", "mcp", "--stdio", "--db", sd.db)
		if exit != code {
			t.Errorf("token %.8s…: exit %d, want %d (%s)", tok, exit, code, out)
		}
	}
}
