package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/mcp"
)

// stubDesk stands in for the bug desk's registry tools. The real
// propose_fix commits the change, runs the frozen harness in the sandbox
// and opens a candidate; it is exercised end to end by the bug desk's own
// tests. Here it only records what it was given and answers the way the
// real one does (an Output and Final), so the test can check what the MCP
// tool passes in and what it does with the answer.
type stubDesk struct {
	mu    sync.Mutex
	calls []stubCall
}

type stubCall struct {
	tool string
	env  agent.Env
	args json.RawMessage
}

// stubFixArgs are propose_fix's parameters.
type stubFixArgs struct {
	Files   []bugdesk.FileArg `json:"files,omitempty"`
	Patch   string            `json:"patch,omitempty"`
	Summary string            `json:"summary"`
}

type stubReadArgs struct {
	Path string `json:"path"`
}

// stubOutput is what the stub's propose_fix records.
var stubOutput = map[string]any{"candidate_id": "cand_stub", "commit": "0123abcd", "summary": "dedupe coupons before applying them"}

func (d *stubDesk) record(tool string, env *agent.Env, in any) {
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, stubCall{tool: tool, env: *env, args: raw})
}

func (d *stubDesk) snapshot() []stubCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// tools are the stub's propose_fix, whose schema is stricter than the MCP
// tool's (a summary of at least 12 characters) so that the test can tell
// the tool's own Prepare ran, and read_source, which only answers.
func (d *stubDesk) tools() []*agent.Tool {
	s, err := jsonschema.For[stubFixArgs](nil)
	if err != nil {
		panic(err)
	}
	s.Properties["summary"].MinLength = jsonschema.Ptr(12)
	fix := agent.NewToolWithSchema("propose_fix", "stub of the bug desk's propose_fix", s,
		func(_ context.Context, env *agent.Env, in stubFixArgs) (agent.Result, error) {
			d.record("propose_fix", env, in)
			return agent.Result{Text: "Accepted as candidate cand_stub.", Output: stubOutput, Final: true}, nil
		})
	read := agent.NewTool("read_source", "stub of the bug desk's read_source",
		func(_ context.Context, env *agent.Env, in stubReadArgs) (agent.Result, error) {
			d.record("read_source", env, in)
			return agent.Result{Text: "FILE " + in.Path}, nil
		})
	return []*agent.Tool{fix, read}
}

// assigned opens a task of kind for role, assigned to assignee.
func (f *fixture) assigned(t testing.TB, kind string, role signoff.Role, assignee string, input map[string]any) signoff.Task {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := f.st.CreateTask(context.Background(), f.cli, signoff.TaskInput{CaseID: f.bug.ID, Kind: kind, Role: role, AssigneeID: assignee, Input: raw})
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", kind, err)
	}
	return tk
}

func TestFixProposeRunsTheDeskTool(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	stub := &stubDesk{}
	srv := serveHTTP(t, f.st, mcp.Options{Tools: agent.NewRegistry(stub.tools()...)})
	fixer := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")
	reviewer := mustConnectHTTP(t, srv, f.revToken, "reviewer-test")

	other := f.actor(t, "fixer-two", signoff.RoleFixer)
	theirs := f.assigned(t, string(signoff.RoleFixer), signoff.RoleFixer, other.ID, map[string]any{"report": "theirs"})
	wrongKind := f.assigned(t, string(signoff.RoleReproducer), signoff.RoleFixer, f.fixer.ID, map[string]any{"report": "a reproduction"})
	var gu mcp.GiveUpResult
	ok(t, fixer, "task.give_up", map[string]any{"task_id": f.otherFixer.ID, "reason": "duplicate"}, &gu)
	task := f.fixerTask

	// task.get points the fixer at fix.propose.
	res := ok(t, fixer, "task.get", map[string]any{"task_id": task.ID}, nil)
	if !strings.Contains(text(res), "fix.propose(task_id='"+task.ID+"', input_digest='"+task.InputDigest+"'") {
		t.Fatalf("task.get next step does not name fix.propose: %s", text(res))
	}

	// Reading runs the tool and records nothing.
	head := f.head(t)
	var read mcp.DeskResult
	res = ok(t, fixer, "fix.read_source", map[string]any{"task_id": task.ID, "input_digest": task.InputDigest, "path": "cart.go"}, &read)
	if read.Text != "FILE cart.go" || read.Recorded || read.Status != signoff.TaskOpen || text(res) != "FILE cart.go" {
		t.Fatalf("fix.read_source = %+v, text %q", read, text(res))
	}
	if got := f.head(t); got != head {
		t.Fatalf("HeadSeq moved %d -> %d on a read", head, got)
	}

	propose := func(tk signoff.Task, digest string) map[string]any {
		return map[string]any{"task_id": tk.ID, "input_digest": digest,
			"patch": "--- a/cart.go\n+++ b/cart.go\n", "summary": "dedupe coupons before applying them"}
	}
	calls := len(stub.snapshot())
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"wrong digest", "fix.propose", propose(task, f.otherFixer.InputDigest), signoff.ECONFLICT},
		{"someone else's task", "fix.propose", propose(theirs, theirs.InputDigest), signoff.ENOTFOUND},
		{"a reproducer task", "fix.propose", propose(wrongKind, wrongKind.InputDigest), signoff.EFORBIDDEN},
		{"a closed task", "fix.propose", propose(f.otherFixer, f.otherFixer.InputDigest), signoff.ECONFLICT},
		{"arguments the tool refuses", "fix.propose", map[string]any{"task_id": task.ID, "input_digest": task.InputDigest, "patch": "p", "summary": "short"}, signoff.EINVALID},
		{"arguments the schema refuses", "fix.propose", map[string]any{"task_id": task.ID, "input_digest": task.InputDigest, "patch": "p"}, signoff.EINVALID},
		{"a tool the registry lacks", "fix.list_source", map[string]any{"task_id": task.ID, "input_digest": task.InputDigest}, signoff.EUNAVAILABLE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := f.head(t)
			msg := refused(t, fixer, tc.tool, tc.args, tc.code)
			if got := f.head(t); got != head {
				t.Fatalf("HeadSeq moved %d -> %d on a refusal (%s)", head, got, msg)
			}
		})
	}
	t.Run("a reviewer", func(t *testing.T) {
		head := f.head(t)
		if _, err := reviewer.CallTool(ctx, &sdk.CallToolParams{Name: "fix.propose", Arguments: propose(task, task.InputDigest)}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("reviewer calling fix.propose: err = %v, want unknown tool", err)
		}
		if got := f.head(t); got != head {
			t.Fatalf("HeadSeq moved %d -> %d", head, got)
		}
	})
	if got := len(stub.snapshot()); got != calls {
		t.Fatalf("the desk tool ran %d times on refused calls", got-calls)
	}
	if tk, err := f.st.GetTask(ctx, f.cli, task.ID); err != nil || tk.Status != signoff.TaskOpen {
		t.Fatalf("task after refusals = %+v, %v", tk, err)
	}

	// A bare task.submit cannot finish a task whose result is a proposal
	// the desk checks.
	head = f.head(t)
	refused(t, fixer, "task.submit", map[string]any{"task_id": task.ID, "input_digest": task.InputDigest, "output": map[string]any{"patch": "p"}}, signoff.EFORBIDDEN)
	if f.head(t) != head {
		t.Fatal("a refused task.submit moved the ledger")
	}

	// The right receipt runs the tool with the caller's arguments and
	// closes the task as the runtime does.
	var out mcp.DeskResult
	res = ok(t, fixer, "fix.propose", propose(task, task.InputDigest), &out)
	if !out.Recorded || out.Status != signoff.TaskClosed || out.Outcome != signoff.OutcomeDone || out.Evidence != signoff.EvidenceLive ||
		out.NextStep != "done" || out.ReceiptSeq != f.head(t) || out.Text != "Accepted as candidate cand_stub." {
		t.Fatalf("fix.propose = %+v", out)
	}
	if !strings.Contains(text(res), "Accepted as candidate cand_stub.") || !strings.Contains(text(res), "done") {
		t.Fatalf("fix.propose text = %q", text(res))
	}
	got := stub.snapshot()
	if len(got) != calls+1 || got[calls].tool != "propose_fix" {
		t.Fatalf("desk calls = %+v", got)
	}
	c := got[calls]
	if c.env.Task.ID != task.ID || c.env.Task.InputDigest != task.InputDigest || c.env.Actor.ID != f.fixer.ID ||
		c.env.Role.Name != "fixer" || c.env.Evidence != signoff.EvidenceLive || c.env.Store == nil || c.env.Config.Roles["fixer"].Name != "fixer" {
		t.Fatalf("desk env = task %s actor %s role %q evidence %q config %v", c.env.Task.ID, c.env.Actor.ID, c.env.Role.Name, c.env.Evidence, c.env.Config.Roles)
	}
	var args stubFixArgs
	if err := json.Unmarshal(c.args, &args); err != nil {
		t.Fatal(err)
	}
	if args.Patch != "--- a/cart.go\n+++ b/cart.go\n" || args.Summary != "dedupe coupons before applying them" || args.Files != nil {
		t.Fatalf("desk args = %s", c.args)
	}

	stored, err := f.st.GetTask(ctx, f.cli, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var recorded map[string]any
	if err := json.Unmarshal(stored.Output, &recorded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recorded, stubOutput) || stored.Status != signoff.TaskClosed || stored.Outcome != signoff.OutcomeDone ||
		stored.Evidence != signoff.EvidenceLive || stored.ReceiptSeq != out.ReceiptSeq || stored.OutputDigest != out.OutputDigest {
		t.Fatalf("stored task = %+v, output %s", stored, stored.Output)
	}
	var rc mcp.Receipt
	ok(t, fixer, "receipt.get", map[string]any{"task_id": task.ID}, &rc)
	if rc.Event.Seq != out.ReceiptSeq || rc.Event.Type != "task.recorded" || rc.InputDigest != task.InputDigest {
		t.Fatalf("receipt = %+v", rc)
	}

	// A receipt is good once.
	head = f.head(t)
	refused(t, fixer, "fix.propose", propose(task, task.InputDigest), signoff.ECONFLICT)
	if f.head(t) != head || len(stub.snapshot()) != calls+1 {
		t.Fatal("a replayed proposal ran or moved the ledger")
	}
}

// Without the bug desk's tools the role tools are offered but answer that
// the desk is not available; with the desk's real tools in a process that
// does not run the desk, its own refusal comes back.
func TestDeskToolsUnavailable(t *testing.T) {
	f := newFixture(t)
	args := map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "patch": "p", "summary": "a fix for the coupon"}

	bare := mustConnectHTTP(t, serveHTTP(t, f.st, mcp.Options{}), f.fixerToken, "fixer-test")
	head := f.head(t)
	if msg := refused(t, bare, "fix.propose", args, signoff.EUNAVAILABLE); msg != "unavailable: the bug desk is not available on this server" {
		t.Fatalf("refusal = %q", msg)
	}
	res := ok(t, bare, "task.get", map[string]any{"task_id": f.fixerTask.ID}, nil)
	if strings.Contains(text(res), "fix.propose") {
		t.Fatalf("task.get names fix.propose without a desk: %s", text(res))
	}

	idle := mustConnectHTTP(t, serveHTTP(t, f.st, mcp.Options{Tools: agent.NewRegistry((&bugdesk.Desk{}).AgentTools()...)}), f.fixerToken, "fixer-test")
	if msg := refused(t, idle, "fix.propose", args, signoff.EUNAVAILABLE); !strings.Contains(msg, "not running in this process") {
		t.Fatalf("refusal = %q", msg)
	}
	refused(t, idle, "fix.list_source", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest}, signoff.EUNAVAILABLE)
	if got := f.head(t); got != head {
		t.Fatalf("HeadSeq moved %d -> %d", head, got)
	}
}

// The MCP tools take the bug desk's own parameters, plus the receipt.
func TestDeskToolSchemasMatchTheRegistry(t *testing.T) {
	reg := agent.NewRegistry((&bugdesk.Desk{}).AgentTools()...)
	ctx := context.Background()
	for role, pairs := range map[signoff.Role]map[string]string{
		signoff.RoleReproducer: {"repro.list_source": "list_source", "repro.read_source": "read_source", "repro.propose": "propose_reproduction"},
		signoff.RoleFixer:      {"fix.list_source": "list_source", "fix.read_source": "read_source", "fix.propose": "propose_fix"},
	} {
		by := signoff.Actor{ID: signoff.NewID(signoff.PrefixActor), WorkspaceID: signoff.NewID(signoff.PrefixWorkspace), Name: "bot", Role: role}
		srv, err := mcp.NewServer(nil, by, mcp.Options{Tools: reg})
		if err != nil {
			t.Fatal(err)
		}
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "lister", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		schemas := map[string]any{}
		for _, tl := range list.Tools {
			schemas[tl.Name] = tl.InputSchema
		}
		for _, name := range slices.Sorted(maps.Keys(pairs)) {
			got := shape(t, schemas[name])
			props, _ := got["properties"].(map[string]any)
			if props["task_id"] == nil || props["input_digest"] == nil {
				t.Errorf("%s does not take the receipt: %v", name, got)
			}
			delete(props, "task_id")
			delete(props, "input_digest")
			if len(props) == 0 {
				delete(got, "properties")
			}
			got["required"] = slices.DeleteFunc(got["required"].([]string), func(s string) bool { return s == "task_id" || s == "input_digest" })
			if want := shape(t, reg.Get(pairs[name]).Schema()); !reflect.DeepEqual(got, want) {
				t.Errorf("%s schema = %v, want %s's %v", name, got, pairs[name], want)
			}
		}
	}
}

// shape is a schema without its descriptions, required names sorted.
func shape(t *testing.T, s any) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "description")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(m)
	req := []string{}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			req = append(req, x.(string))
		}
	}
	slices.Sort(req)
	m["required"] = req
	return m
}

// A role the workspace runs with another provider is worked by its worker,
// not over MCP: the desk tool does not run.
func TestDeskToolsRefuseARoleRunHere(t *testing.T) {
	f := newFixture(t)
	stub := &stubDesk{}
	reg := agent.NewRegistry(append(agent.BaseTools(), stub.tools()...)...)
	if _, err := agent.SaveConfig(context.Background(), f.st, f.owner, []byte("roles:\n  fixer:\n    provider: builtin\n    tools: [propose_fix]\n"), reg); err != nil {
		t.Fatalf("SaveConfig: %v", err)
	}
	fixer := mustConnectHTTP(t, serveHTTP(t, f.st, mcp.Options{Tools: reg}), f.fixerToken, "fixer-test")
	head := f.head(t)
	msg := refused(t, fixer, "fix.propose", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"patch": "p", "summary": "dedupe coupons before applying them"}, signoff.ECONFLICT)
	if !strings.Contains(msg, "builtin provider") || f.head(t) != head || len(stub.snapshot()) != 0 {
		t.Fatalf("refusal %q; head %d -> %d; desk calls %d", msg, head, f.head(t), len(stub.snapshot()))
	}
}
