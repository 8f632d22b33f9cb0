package changedesk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/sandbox"
)

// testSandbox is the best isolated sandbox here; the test is skipped only
// when no isolated backend works on this machine at all.
func testSandbox(t *testing.T) sandbox.Runner {
	t.Helper()
	r, err := sandbox.Default()
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("no isolated sandbox backend here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runbookFixture is a repository with runbooks and an actuator on it.
func runbookFixture(t *testing.T, files map[string]string) (*gitFixture, *RunbookActuator) {
	t.Helper()
	r := testSandbox(t)
	g := newGitFixture(t, true, files)
	return g, &RunbookActuator{Repo: FixedRepo(g.Dir, "main"), Runner: r, Timeout: 20 * time.Second}
}

type runValue struct {
	Runbook    string `json:"runbook"`
	Exit       int    `json:"exit"`
	Killed     string `json:"killed"`
	StdoutTail string `json:"stdout_tail"`
	StderrTail string `json:"stderr_tail"`
	DurationMS *int64 `json:"duration_ms"`
	Network    bool   `json:"network"`
}

func decodeRun(t *testing.T, st State) runValue {
	t.Helper()
	var v runValue
	if err := json.Unmarshal(st.Value, &v); err != nil {
		t.Fatalf("state value %s: %v", st.Value, err)
	}
	if v.DurationMS == nil {
		t.Fatalf("state value %s has no duration_ms", st.Value)
	}
	return v
}

const echoScript = `set -u
echo "args:$*"
echo "greeting:${GREETING:-none} runbook:$SIGNOFF_RUNBOOK case:$SIGNOFF_CASE_ID"
echo "whoami:$(id -u)"
echo oops >&2
`

func TestRunbookRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGitFixture(t, true, map[string]string{
		"runbooks/plain":       "echo plain\n",
		"runbooks/plain.sh":    "echo shadowed\n",
		"runbooks/with-sh.sh":  "echo sh\n",
		"runbooks/linked.sh":   "->with-sh.sh",
		"runbooks/dir/x":       "x",
		"scripts/real.sh":      "echo real\n",
		"other/runbooks-alias": "x",
	})
	a := &RunbookActuator{Repo: FixedRepo(g.Dir, "main")}
	tests := []struct {
		name, path, code string
	}{
		{name: "plain", path: "runbooks/plain"},
		{name: "with-sh", path: "runbooks/with-sh.sh"},
		{name: "missing", code: signoff.ENOTFOUND},
		{name: "linked", code: signoff.EINVALID},
		{name: "dir", code: signoff.EINVALID},
	}
	for _, tt := range tests {
		st, err := a.Read(ctx, testScope(), mustParseTarget(t, "runbook:"+tt.name))
		if tt.code != "" {
			wantCode(t, err, tt.code)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var v struct {
			Path string `json:"path"`
		}
		json.Unmarshal(st.Value, &v)
		if v.Path != tt.path || st.Digest != st.Content || !change.ValidDigest(st.Digest) {
			t.Fatalf("%s: state %+v, want path %s", tt.name, st, tt.path)
		}
	}
	// A symbolic link as the runbooks directory is refused too.
	g2 := newGitFixture(t, true, map[string]string{"scripts/x.sh": "echo\n", "runbooks": "->scripts"})
	_, err := (&RunbookActuator{Repo: FixedRepo(g2.Dir, "main")}).Read(ctx, testScope(), mustParseTarget(t, "runbook:x"))
	wantCode(t, err, signoff.EINVALID)
	// Draft promises no state change and no rollback.
	d, err := a.Draft(ctx, testScope(), mustParseTarget(t, "runbook:plain"), json.RawMessage(`{"args":["a"]}`))
	if err != nil || d.After != d.Before.Digest || d.Rollback != nil {
		t.Fatalf("Draft %+v, %v: want After == Before and no rollback", d, err)
	}
}

func TestRunbookApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, a := runbookFixture(t, map[string]string{"runbooks/restart-cache.sh": echoScript, "runbooks/fail": "echo broken >&2\nexit 3\n"})

	t.Run("success", func(t *testing.T) {
		t.Parallel()
		plan, d := planFor(t, a, "runbook:restart-cache", `{"args":["--region","eu west"],"env":{"GREETING":"hi there"}}`)
		if err := plan.Validate(); err != nil {
			t.Fatalf("the drafted plan does not validate: %v", err)
		}
		old := g.head()
		st, err := a.Apply(ctx, testScope(), plan, d.Before)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if st.Digest != d.Before.Digest || st.Content != d.Before.Content {
			t.Fatalf("a runbook changed its own state: %s, was %s", st.Digest, d.Before.Digest)
		}
		v := decodeRun(t, st)
		want := []string{"args:--region eu west\n", "greeting:hi there runbook:restart-cache case:" + testCaseID + "\n"}
		for _, w := range want {
			if !strings.Contains(v.StdoutTail, w) {
				t.Fatalf("stdout %q does not contain %q", v.StdoutTail, w)
			}
		}
		if v.Exit != 0 || v.StderrTail != "oops\n" || v.Network {
			t.Fatalf("run %+v", v)
		}
		if strings.Contains(v.StdoutTail, "whoami:0\n") {
			t.Fatalf("the runbook ran as root: %q", v.StdoutTail)
		}
		if g.head() != old {
			t.Fatal("running a runbook moved main")
		}
	})

	t.Run("non-zero exit", func(t *testing.T) {
		t.Parallel()
		plan, d := planFor(t, a, "runbook:fail", `{}`)
		st, err := a.Apply(ctx, testScope(), plan, d.Before)
		if !errors.Is(err, ErrRunbookFailed) {
			t.Fatalf("Apply error %v, want ErrRunbookFailed", err)
		}
		wantCode(t, err, signoff.EUNAVAILABLE)
		if msg := signoff.ErrorMessage(err); !strings.Contains(msg, "status 3") || !strings.Contains(msg, "broken") {
			t.Fatalf("message %q should say the status and the error output", msg)
		}
		if v := decodeRun(t, st); v.Exit != 3 || v.StderrTail != "broken\n" {
			t.Fatalf("run %+v", v)
		}
		if st.Digest != d.Before.Digest {
			t.Fatal("a failed run returned no state")
		}
	})

	t.Run("time limit", func(t *testing.T) {
		t.Parallel()
		_, slow := runbookFixture(t, map[string]string{"runbooks/slow": "sleep 30\n"})
		slow.Timeout = time.Second
		plan, d := planFor(t, slow, "runbook:slow", `{}`)
		start := time.Now()
		st, err := slow.Apply(ctx, testScope(), plan, d.Before)
		if !errors.Is(err, ErrRunbookFailed) || time.Since(start) > 15*time.Second {
			t.Fatalf("Apply after %v: %v", time.Since(start), err)
		}
		if v := decodeRun(t, st); v.Killed != sandbox.KilledWallTime {
			t.Fatalf("run %+v, want killed for wall time", v)
		}
	})

	t.Run("script changed since approval", func(t *testing.T) {
		t.Parallel()
		g, a := runbookFixture(t, map[string]string{"runbooks/deploy": "echo v1\n"})
		plan, d := planFor(t, a, "runbook:deploy", `{}`)
		g.commitElsewhere("runbooks/deploy", "echo v2 does something else\n")
		st, err := a.Apply(ctx, testScope(), plan, d.Before)
		wantCode(t, err, signoff.ECONFLICT)
		if st.Digest == d.Before.Digest || strings.Contains(string(st.Value), "exit") {
			t.Fatalf("state %+v: want the live digest and no run", st)
		}
	})

	t.Run("no sandbox", func(t *testing.T) {
		t.Parallel()
		none := &RunbookActuator{Repo: a.Repo}
		plan, d := planFor(t, none, "runbook:restart-cache", `{}`)
		_, err := none.Apply(ctx, testScope(), plan, d.Before)
		wantCode(t, err, signoff.EUNAVAILABLE)
	})
}

// TestRunbookNetwork runs a script that connects to a TCP listener on the
// host's loopback: without network it must fail, and the control run (an
// unisolated runner standing in for a network-granting one) must reach it,
// which shows the probe itself works.
func TestRunbookNetwork(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed (the script uses its /dev/tcp)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	script := fmt.Sprintf("%s -c 'exec 3<>/dev/tcp/$0/$1' \"$1\" \"$2\" && echo connected || { echo unreachable; exit 7; }\n", bash)
	_, a := runbookFixture(t, map[string]string{"runbooks/ping": script})
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := context.Background()

	plan, d := planFor(t, a, "runbook:ping", fmt.Sprintf(`{"args":[%q,%q]}`, host, port))
	st, err := a.Apply(ctx, testScope(), plan, d.Before)
	if !errors.Is(err, ErrRunbookFailed) {
		t.Fatalf("without network: %v, want the run to fail", err)
	}
	if v := decodeRun(t, st); v.Exit != 7 || !strings.Contains(v.StdoutTail, "unreachable") {
		t.Fatalf("without network: run %+v", v)
	}
	if accepted.Load() != 0 {
		t.Fatal("the host listener accepted a connection from a run without network")
	}

	// Asking for the network with no runner that grants it is refused
	// when drafting, and runs nothing if executed anyway.
	netParams := fmt.Sprintf(`{"args":[%q,%q],"network":true}`, host, port)
	_, err = a.Draft(ctx, testScope(), mustParseTarget(t, "runbook:ping"), json.RawMessage(netParams))
	wantCode(t, err, signoff.EUNAVAILABLE)
	netPlan := plan
	netPlan.Params = json.RawMessage(netParams)
	_, err = a.Apply(ctx, testScope(), netPlan, d.Before)
	wantCode(t, err, signoff.EUNAVAILABLE)
	if errors.Is(err, ErrRunbookFailed) {
		t.Fatal("a run that never started is reported as a failed run")
	}

	// The control: the network runner is used only when asked for.
	none, err := sandbox.New(sandbox.BackendNone)
	if err != nil {
		t.Fatal(err)
	}
	a.NetworkRunner = none
	st, err = a.Apply(ctx, testScope(), netPlan, d.Before)
	if err != nil {
		t.Fatalf("with network: %v (%s)", err, st.Value)
	}
	if v := decodeRun(t, st); !v.Network || !strings.Contains(v.StdoutTail, "connected") {
		t.Fatalf("with network: run %+v", v)
	}
	if _, err := a.Apply(ctx, testScope(), plan, d.Before); !errors.Is(err, ErrRunbookFailed) {
		t.Fatalf("network off again: %v, want a failed run", err)
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("the listener accepted %d connections, want 1 (the network run only)", n)
	}
}

func TestRunbookRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, a := runbookFixture(t, map[string]string{
		"runbooks/scale.sh":   "echo \"scale:$*\"\n",
		"runbooks/undo-scale": "echo \"undo:$*:$MODE\"\n",
	})
	plan, d := planFor(t, a, "runbook:scale", `{"args":["up"]}`)
	after, err := a.Apply(ctx, testScope(), plan, d.Before)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		rollback string
		allowed  func(ctx context.Context, sc Scope, name string, network bool) error
		code     string
		stdout   string
	}{
		{name: "none", rollback: ``, code: signoff.EINVALID},
		{name: "null", rollback: `null`, code: signoff.EINVALID},
		{name: "same runbook", rollback: `{"args":["down"]}`, stdout: "scale:down\n"},
		{name: "same runbook named", rollback: `{"runbook":"scale","args":["down"]}`, stdout: "scale:down\n"},
		{name: "another runbook without a policy check", rollback: `{"runbook":"undo-scale"}`, code: signoff.EFORBIDDEN},
		{name: "network the plan did not have", rollback: `{"network":true}`, code: signoff.EFORBIDDEN},
		{name: "another runbook allowed", rollback: `{"runbook":"undo-scale","args":["x"],"env":{"MODE":"fast"}}`,
			allowed: func(context.Context, Scope, string, bool) error { return nil }, stdout: "undo:x:fast\n"},
		{name: "another runbook refused by the policy", rollback: `{"runbook":"undo-scale"}`,
			allowed: func(_ context.Context, _ Scope, name string, _ bool) error {
				return signoff.Errorf(signoff.EFORBIDDEN, "runbook %s is not allowlisted", name)
			}, code: signoff.EFORBIDDEN},
		{name: "missing runbook", rollback: `{"runbook":"nope"}`, allowed: func(context.Context, Scope, string, bool) error { return nil }, code: signoff.ENOTFOUND},
		{name: "bad shape", rollback: `{"runbook":"../x"}`, code: signoff.EINVALID},
		{name: "unknown member", rollback: `{"command":"rm -rf /"}`, code: signoff.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := *a
			b.Allowed = tt.allowed
			p := plan
			p.Rollback = json.RawMessage(tt.rollback)
			st, err := b.Restore(ctx, testScope(), p, after)
			if tt.code != "" {
				wantCode(t, err, tt.code)
				if tt.name == "none" && !strings.Contains(signoff.ErrorMessage(err), "this runbook has no rollback") {
					t.Fatalf("message %q", signoff.ErrorMessage(err))
				}
				return
			}
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if v := decodeRun(t, st); v.StdoutTail != tt.stdout {
				t.Fatalf("rollback stdout %q, want %q", v.StdoutTail, tt.stdout)
			}
			if st.Digest != after.Digest {
				t.Fatal("Restore reports another state of the plan's runbook")
			}
		})
	}
	call, err := ParseRunbookRollback(json.RawMessage(`{"runbook":"undo-scale","network":true}`), "scale")
	if err != nil || call.Name != "undo-scale" || !call.Network {
		t.Fatalf("ParseRunbookRollback: %+v, %v", call, err)
	}
}

func TestRunbookParams(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t, true, map[string]string{"runbooks/x": "true\n"})
	a := &RunbookActuator{Repo: FixedRepo(g.Dir, "main")}
	many := make([]string, MaxRunbookArgs+1)
	manyArgs, _ := json.Marshal(many)
	env := map[string]string{}
	for i := range MaxRunbookEnv + 1 {
		env[fmt.Sprintf("V%d", i)] = "x"
	}
	manyEnv, _ := json.Marshal(env)
	tests := []struct{ name, params string }{
		{"not an object", `[]`},
		{"args not strings", `{"args":[1]}`},
		{"too many args", `{"args":` + string(manyArgs) + `}`},
		{"NUL in an arg", `{"args":["a\u0000b"]}`},
		{"lower-case env name", `{"env":{"path":"/x"}}`},
		{"env name with a dash", `{"env":{"A-B":"x"}}`},
		{"reserved env name", `{"env":{"SIGNOFF_CASE_ID":"case_x"}}`},
		{"PATH points the script's commands elsewhere", `{"env":{"PATH":"/tmp:/usr/bin"}}`},
		{"HOME is set by Signoff", `{"env":{"HOME":"/root"}}`},
		{"the loader runs a library first", `{"env":{"LD_PRELOAD":"/tmp/x.so"}}`},
		{"bash runs a file first", `{"env":{"BASH_ENV":"/tmp/x.sh"}}`},
		{"an exported bash function", `{"env":{"BASH_FUNC_ls%%":"() { id; }"}}`},
		{"field splitting changed", `{"env":{"IFS":"/"}}`},
		{"env not strings", `{"env":{"A":1}}`},
		{"too many env", `{"env":` + string(manyEnv) + `}`},
		{"network not a bool", `{"network":"yes"}`},
		{"network null", `{"network":null}`},
		{"Network spelled otherwise", `{"Network":true}`},
		{"runbook in params", `{"runbook":"other"}`},
		{"unknown member", `{"script":"rm -rf /"}`},
		{"duplicate key", `{"args":[],"args":["x"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := a.Draft(context.Background(), testScope(), mustParseTarget(t, "runbook:x"), json.RawMessage(tt.params))
			wantCode(t, err, signoff.EINVALID)
			plan := change.Plan{Kind: change.KindRunbook, Target: "runbook:x", Params: json.RawMessage(tt.params)}
			_, err = a.Apply(context.Background(), testScope(), plan, State{})
			wantCode(t, err, signoff.EINVALID)
		})
	}
	// A file plan is not a runbook plan.
	_, err := a.Apply(context.Background(), testScope(), change.Plan{Kind: change.KindFile, Target: "runbook:x", Params: json.RawMessage(`{}`)}, State{})
	wantCode(t, err, signoff.EINVALID)
}
