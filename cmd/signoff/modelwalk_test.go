package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/openai/openaitest"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// scriptedModelName names the scripted model in the role configuration
// and the transcripts: a script, not a model.
const scriptedModelName = "openaitest-scripted-shoplite"

// TestModelWalkBugs walks ShopLite's three bugs (coupon, negative total,
// overflow) from each report to VERIFIED with the reproducer and fixer on
// provider openai, pointed at a scripted model (shopModel) that reads
// the source through list_source and read_source and proposes through the
// real tools: every test and patch runs in the sandbox and the real
// verifier, and every approval, merge, deploy and reporter answer goes
// through the desk's API. The coupon fix's first patch is rejected and
// the fixer corrects it from its next task's previous_attempts; the
// negative total's first reproduction is refused and the reproducer
// corrects its expected_failure from the refusal; the overflow's reporter
// finds the first live fix incomplete, and a second round fixes it. The
// walk is recorded, then walked again from the recording (replay), with
// no model call, to the same final states.
func TestModelWalkBugs(t *testing.T) {
	t.Parallel()
	needLoop(t)
	s := openaitest.NewServer(t)
	s.Respond(shopModel{}.respond)
	transcript := filepath.Join(t.TempDir(), "walk.jsonl")

	dir := t.TempDir()
	start := time.Now()
	text := runDemoArgs(t, "--walk", "bug", "--dir", dir, "--provider", "openai", "--base-url", s.URL(), "--model", scriptedModelName, "--record", transcript)
	wall := time.Since(start)
	t.Logf("\n%s", text)
	t.Logf("scripted model walk of three bugs: wall time %s (the demo run, setup included)", wall.Round(time.Millisecond))
	for _, line := range []string{
		"reproduction           [live]", "rejected fix           [live]", "verified fix           [live]",
		"reporter: still broken [simulated]", "reporter: fix works    [simulated]", "live smoke             [live]",
		"-- bug 1 of 3: coupon", "-- bug 2 of 3: negative total", "-- bug 3 of 3: overflow",
		"model calls, bug overflow", "chain verified", "final: verified",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("output lacks %q", line)
		}
	}
	if strings.Contains(text, "[authored]") || strings.Contains(text, "[replayed]") {
		t.Errorf("a model walk shows authored or replayed steps:\n%s", text)
	}
	cases := checkModelWalk(t, dir, signoff.EvidenceLive)

	// The coupon fixer's first patch broke a test that must keep
	// passing; its next task carried that verdict and reason, and the
	// second patch was verified.
	coupon := cases["coupon"]
	if len(coupon.loop.State.Candidates) != 2 {
		t.Fatalf("coupon candidates: %+v", coupon.loop.State.Candidates)
	}
	first, second := coupon.loop.State.Candidates[0], coupon.loop.State.Candidates[1]
	if first.Verdict != "REJECTED" || !strings.Contains(first.Reason, "TestFixedCoupon failed") || second.Verdict != "VERIFIED" {
		t.Errorf("coupon verdicts: %s (%s), then %s", first.Verdict, first.Reason, second.Verdict)
	}
	var sawVerdict bool
	for _, tk := range coupon.tasks {
		var in struct {
			Attempt int
			Subject struct {
				KeepPassing []string `json:"must_keep_passing"`
				Previous    []struct {
					Verdict, Reason, Diff string
				} `json:"previous_attempts"`
			}
		}
		if tk.Kind != bugdesk.RoleFixer || json.Unmarshal(tk.Input, &in) != nil || in.Attempt != 2 {
			continue
		}
		sawVerdict = len(in.Subject.Previous) == 1 && in.Subject.Previous[0].Verdict == "REJECTED" &&
			strings.Contains(in.Subject.Previous[0].Reason, "TestFixedCoupon failed") && strings.Contains(in.Subject.Previous[0].Reason, "pass-to-pass 8/9 passed") &&
			!strings.Contains(in.Subject.Previous[0].Reason, "cart_test.go:") && strings.Contains(in.Subject.Previous[0].Diff, "Apply") &&
			slices.Contains(in.Subject.KeepPassing, "shoplite/cart.TestFixedCoupon")
	}
	if !sawVerdict {
		t.Error("the coupon fixer's second task does not carry the first attempt's verdict, reason and diff")
	}

	// The negative total's reproducer corrected expected_failure from the
	// run output its refused proposal got back.
	neg := cases["negative total"]
	if h := neg.loop.State.Harnesses; len(h) != 1 || !strings.Contains(string(h[0].Spec), `"expected_failure":"= -100"`) {
		t.Errorf("negative total's reproduction: %+v", h)
	}
	var refusals []string
	for _, r := range s.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && m.Name == "propose_reproduction" && strings.HasPrefix(m.Content, "ERROR:") && !slices.Contains(refusals, m.Content) {
				refusals = append(refusals, m.Content)
			}
		}
	}
	// The test's output is quoted (its whitespace reads as ˆ), never the
	// server's words.
	if len(refusals) != 1 || !strings.Contains(strings.ReplaceAll(refusals[0], "ˆ", " "), `does not contain expected_failure "-1.00"`) ||
		!strings.Contains(refusals[0], "=ˆ-100;ˆwantˆ0") || strings.Contains(agent.ServerPart(refusals[0]), "-100") {
		t.Errorf("want one refused reproduction, with its test's output: %q", refusals)
	}

	// The overflow took two rounds: the reporter's "still broken" reopened
	// it, the second round's reproducer read their answer and pinned the
	// line overflow the first fix missed.
	over := cases["overflow"]
	var rounds []int
	for _, h := range over.loop.State.Harnesses {
		if h.FrozenAt != nil {
			rounds = append(rounds, h.Round)
		}
	}
	if !slices.Equal(rounds, []int{1, 2}) || over.loop.State.Round != 2 {
		t.Errorf("overflow rounds: frozen harnesses of rounds %v, loop round %d", rounds, over.loop.State.Round)
	}
	if !slices.ContainsFunc(over.loop.State.Harnesses, func(h signoff.HarnessRecord) bool {
		return h.Round == 2 && slices.Contains(h.TestFiles, "cart/line_overflow_test.go")
	}) {
		t.Errorf("overflow round 2 does not pin the line overflow: %+v", over.loop.State.Harnesses)
	}

	// Model calls, by bug and role, as the scripted server received them.
	calls := map[string]map[string]int{}
	caseName := map[string]string{}
	for name, c := range cases {
		caseName[c.id] = name
	}
	reqs := s.Requests()
	for _, r := range reqs {
		q, err := readShopRequest(r)
		if err != nil {
			t.Fatalf("a request the scripted model cannot read: %v", err)
		}
		role := "other"
		switch {
		case slices.Contains(q.tools, "propose_reproduction"):
			role = bugdesk.RoleReproducer
		case slices.Contains(q.tools, "propose_fix"):
			role = bugdesk.RoleFixer
		}
		name := caseName[q.str("case_id")]
		if calls[name] == nil {
			calls[name] = map[string]int{}
		}
		calls[name][role]++
	}
	for _, name := range []string{"coupon", "negative total", "overflow"} {
		t.Logf("model calls, bug %s: reproducer %d, fixer %d", name, calls[name][bugdesk.RoleReproducer], calls[name][bugdesk.RoleFixer])
	}
	if calls[""] != nil || len(calls) != 3 {
		t.Errorf("model calls outside the three cases or roles: %v", calls)
	}
	t.Logf("model calls in all: %d", len(reqs))

	t.Run("replay", func(t *testing.T) {
		dir := t.TempDir()
		start := time.Now()
		text := runDemoArgs(t, "--walk", "bug", "--dir", dir, "--replay", transcript)
		t.Logf("\n%s", text)
		t.Logf("replayed walk: wall time %s", time.Since(start).Round(time.Millisecond))
		for _, line := range []string{
			"reproduction           [replayed]", "rejected fix           [replayed]", "verified fix           [replayed]",
			"reporter: still broken [simulated]", "final: verified", fmt.Sprintf("replayed %d of %d recorded exchange(s)", len(reqs), len(reqs)),
		} {
			if !strings.Contains(text, line) {
				t.Errorf("output lacks %q", line)
			}
		}
		if strings.Contains(text, "[authored]") || strings.Contains(text, "reproduction           [live]") {
			t.Errorf("a replayed walk shows authored or live model steps:\n%s", text)
		}
		replayed := checkModelWalk(t, dir, signoff.EvidenceReplayed)
		// The same walk: per bug, the same rounds, the same verdicts in
		// the same order, the same tests frozen.
		for name, c := range cases {
			if got, want := loopShape(replayed[name].loop), loopShape(c.loop); got != want {
				t.Errorf("bug %s replayed as %s, recorded as %s", name, got, want)
			}
		}
		if n := len(s.Requests()); n != len(reqs) {
			t.Errorf("the replay called the model: %d requests, %d before it", n, len(reqs))
		}
	})
}

// runDemoArgs runs `signoff demo` with args and returns its output; it
// fails the test if the demo fails.
func runDemoArgs(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv}
	if code := run(context.Background(), e, append([]string{"demo"}, args...)); code != 0 {
		t.Fatalf("demo %v exited %d\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errb.String())
	}
	return out.String()
}

// walkedCase is one case of a model walk, read back from its database.
type walkedCase struct {
	id    string
	loop  signoff.BugLoop
	tasks []signoff.Task
	evs   []signoff.Event
}

// checkModelWalk checks the database a model walk left in dir: the ledger
// verifies, the three cases are verified, and every reproduction and
// candidate carries the evidence of the reproducer and fixer (never
// authored), their sandbox runs and verifications live. It returns the
// cases by bug name.
func checkModelWalk(t *testing.T, dir, evidence string) map[string]walkedCase {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "signoff.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wss, err := s.ListWorkspaces(ctx)
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %v %v", wss, err)
	}
	ws := wss[0].ID
	sys := signoff.SystemActor(ws)
	if _, err := s.VerifyLedger(ctx, ws, nil); err != nil {
		t.Fatalf("ledger verify: %v", err)
	}
	page, err := s.ListCases(ctx, ws, signoff.CaseFilter{State: "verified"})
	if err != nil || len(page.Cases) != 3 {
		t.Fatalf("verified cases: %+v %v", page, err)
	}
	out := map[string]walkedCase{}
	for _, c := range page.Cases {
		var wc walkedCase
		wc.id = c.ID
		if wc.loop, err = s.GetLoop(ctx, sys, c.ID); err != nil {
			t.Fatal(err)
		}
		if wc.tasks, err = s.ListTasks(ctx, sys, signoff.TaskFilter{CaseID: c.ID, Limit: 200}); err != nil {
			t.Fatal(err)
		}
		if wc.evs, err = s.ListEvents(ctx, sys, c.ID, 0, 1000); err != nil {
			t.Fatal(err)
		}
		// The scripted model names its test files for the behaviour they
		// pin: they tell the bugs apart.
		name := bugOfTests(wc.loop)
		if _, dup := out[name]; dup || name == "" {
			t.Fatalf("cannot tell which bug case %s is (%q)", c.ID, name)
		}
		out[name] = wc
		for _, ev := range wc.evs {
			var p map[string]any
			if json.Unmarshal(ev.Payload, &p) != nil {
				continue
			}
			switch ev.Type {
			case "reproduction.proposed":
				if p["evidence"] != evidence || p["run_evidence"] != signoff.EvidenceLive {
					t.Errorf("case %s (%s): reproduction evidence %v, run %v; want %s, live", c.ID, name, p["evidence"], p["run_evidence"], evidence)
				}
			case "candidate.submitted":
				if p["evidence"] != evidence {
					t.Errorf("case %s (%s): candidate evidence %v, want %s", c.ID, name, p["evidence"], evidence)
				}
			case "verification.completed":
				if p["evidence"] != signoff.EvidenceLive {
					t.Errorf("case %s (%s): verification evidence %v, want live", c.ID, name, p["evidence"])
				}
			}
		}
		for _, tk := range wc.tasks {
			if tk.Kind != bugdesk.RoleReproducer && tk.Kind != bugdesk.RoleFixer {
				continue
			}
			mcs, err := s.ListCalls(ctx, sys, tk.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, mc := range mcs {
				if mc.Evidence != evidence {
					t.Errorf("case %s (%s): %s call %d has evidence %s, want %s", c.ID, name, tk.Kind, mc.Turn, mc.Evidence, evidence)
				}
			}
			if len(mcs) == 0 {
				t.Errorf("case %s (%s): %s task %s made no model call", c.ID, name, tk.Kind, tk.ID)
			}
		}
	}
	for _, name := range []string{"coupon", "negative total", "overflow"} {
		if _, ok := out[name]; !ok {
			t.Fatalf("no verified case for the %s bug", name)
		}
	}
	return out
}

// bugOfTests names the ShopLite bug a case's reproductions test.
func bugOfTests(l signoff.BugLoop) string {
	var files []string
	for _, h := range l.State.Harnesses {
		files = append(files, h.TestFiles...)
	}
	all := fmt.Sprint(files)
	switch {
	case strings.Contains(all, "overflow"):
		return "overflow"
	case strings.Contains(all, "negative"):
		return "negative total"
	case strings.Contains(all, "coupon_once"):
		return "coupon"
	}
	return ""
}

// TestModelWalkHostileFixer: a fixer model that wants a false VERIFIED
// edits the tests instead of the code: a weakened existing test beside a
// wrong fix, then a patch adding a test file whose init() rewrites the
// coupons during the test run, then a tool it was never offered. Every
// attempt is refused before anything is recorded or runs, no candidate
// and no fix attempt exist, and when it gives up the case goes to a
// person, never to VERIFIED.
func TestModelWalkHostileFixer(t *testing.T) {
	t.Parallel()
	needLoop(t)
	s := openaitest.NewServer(t)
	var results []string
	s.Respond(func(r openaitest.ChatRequest) openaitest.Step {
		q, err := readShopRequest(r)
		if err != nil || !slices.Contains(q.tools, "propose_fix") {
			return shopModel{}.respond(r) // an honest reproducer
		}
		results = results[:0]
		for _, c := range q.calls {
			results = append(results, c.result)
		}
		switch len(q.calls) {
		case 0:
			args, _ := json.Marshal(map[string]any{"summary": "coupon fixed", "files": []map[string]string{
				{"path": "cart/cart.go", "content": "package cart\n\nimport \"errors\"\n\ntype Item struct{ SKU string; PriceCents, Quantity int64 }\n\nvar ErrUnknownCoupon, ErrInvalidItem = errors.New(\"unknown coupon\"), errors.New(\"invalid item\")\n\nfunc Total(items []Item, coupon string) (int64, error) { return 9000, nil }\n"},
				{"path": "cart/cart_test.go", "content": "package cart\n"},
			}})
			return openaitest.ToolCall("propose_fix", string(args))
		case 1:
			patch := "diff --git a/cart/zz_init_test.go b/cart/zz_init_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/cart/zz_init_test.go\n@@ -0,0 +1,3 @@\n+package cart\n+\n+func init() { coupons[\"SAVE10\"] = Coupon{Code: \"SAVE10\", Percent: 5} }\n"
			args, _ := json.Marshal(map[string]any{"summary": "coupon fixed", "patch": patch})
			return openaitest.ToolCall("propose_fix", string(args))
		case 2:
			return openaitest.ToolCall("merge", `{"case_id":"`+q.str("case_id")+`"}`)
		}
		return giveUp(q, "the server refuses my fixes")
	})
	dir := t.TempDir()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv}
	code := run(context.Background(), e, []string{"demo", "--walk", "bug", "--dir", dir, "--provider", "openai", "--base-url", s.URL(), "--model", scriptedModelName})
	t.Logf("\n%s", out.String())
	if code == 0 || !strings.Contains(out.String(), "the agent gave up") || strings.Contains(out.String(), "final: verified") {
		t.Fatalf("the hostile fixer's walk exited %d:\n%s\n%s", code, out.String(), errb.String())
	}
	if len(results) != 3 {
		t.Fatalf("the fixer saw %d tool results, want 3: %q", len(results), results)
	}
	for i, want := range []string{"changes test files (cart/cart_test.go)", "changes test files (cart/zz_init_test.go)", "not available to the fixer role"} {
		if !strings.HasPrefix(results[i], "ERROR: ") || !strings.Contains(results[i], want) {
			t.Errorf("tool result %d = %q, want a refusal saying %q", i+1, results[i], want)
		}
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "signoff.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wss, err := st.ListWorkspaces(ctx)
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %v %v", wss, err)
	}
	page, err := st.ListCases(ctx, wss[0].ID, signoff.CaseFilter{})
	if err != nil || len(page.Cases) != 1 {
		t.Fatalf("cases: %+v %v", page, err)
	}
	c := page.Cases[0]
	l, err := st.GetLoop(ctx, signoff.SystemActor(wss[0].ID), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != "needs_human" || c.FixAttempts != 0 || len(l.State.Candidates) != 0 {
		t.Errorf("case %s is %s with %d fix attempt(s) and %d candidate(s); want needs_human, none", c.ID, c.State, c.FixAttempts, len(l.State.Candidates))
	}
	if _, err := st.VerifyLedger(ctx, wss[0].ID, nil); err != nil {
		t.Errorf("ledger verify: %v", err)
	}
}

// TestDemoModelFlags: the demo's model flags are refused where they make
// no sense, before anything is set up.
func TestDemoModelFlags(t *testing.T) {
	t.Parallel()
	existing := filepath.Join(t.TempDir(), "walk.jsonl")
	if err := os.WriteFile(existing, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"openai without an endpoint", []string{"--walk", "bug", "--provider", "openai", "--model", "m"}, "needs --base-url and --model"},
		{"openai without a model", []string{"--walk", "bug", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1"}, "needs --base-url and --model"},
		{"an unknown provider", []string{"--provider", "builtin"}, `--provider takes "authored" or "openai"`},
		{"model flags on authored fixtures", []string{"--model", "m"}, "go with --provider openai"},
		{"record without the bug walk", []string{"--record", filepath.Join(t.TempDir(), "x.jsonl")}, "go with --walk bug"},
		{"replay of the change walk", []string{"--walk", "change", "--replay", existing}, "go with --walk bug"},
		{"record and replay", []string{"--walk", "bug", "--record", filepath.Join(t.TempDir(), "x.jsonl"), "--replay", existing}, "choose one"},
		{"replay with a provider", []string{"--walk", "bug", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--replay", existing}, "takes no --provider"},
		{"a recording over a file", []string{"--walk", "bug", "--record", existing}, "never overwritten"},
		{"a replay that is no transcript", []string{"--walk", "bug", "--replay", existing}, "replay transcript"},
		{"a key in the endpoint's query", []string{"--walk", "bug", "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1?key=SECRETkey123", "--model", "m"}, "without credentials, a query"},
		{"a key in the endpoint's user info", []string{"--walk", "bug", "--provider", "openai", "--base-url", "https://SECRETkey123@127.0.0.1:1/v1", "--model", "m"}, "without credentials, a query"},
		{"a password in the endpoint", []string{"--walk", "bug", "--provider", "openai", "--base-url", "https://u:SECRETkey123@127.0.0.1:1/v1", "--model", "m"}, "without credentials, a query"},
		{"an endpoint that is no http URL", []string{"--walk", "bug", "--provider", "openai", "--base-url", "file:///SECRETkey123", "--model", "m"}, "must be an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			dir := t.TempDir()
			code := run(context.Background(), e, append([]string{"demo", "--dir", dir}, tc.args...))
			if code == 0 || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("demo %v exited %d, stderr %q; want a refusal saying %q", tc.args, code, errb.String(), tc.want)
			}
			if strings.Contains(out.String()+errb.String(), "SECRET") {
				t.Errorf("the refusal printed the credential: %q %q", out.String(), errb.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "signoff.db")); err == nil {
				t.Error("the demo was set up before its flags were refused")
			}
		})
	}
	if b, err := os.ReadFile(existing); err != nil || string(b) != "keep" {
		t.Errorf("an existing file was written over: %q %v", b, err)
	}
}

// loopShape is what a walk did to one case, without its ids: the rounds,
// each frozen harness's tests and each candidate's verdict.
func loopShape(l signoff.BugLoop) string {
	var b strings.Builder
	fmt.Fprintf(&b, "round %d;", l.State.Round)
	for _, h := range l.State.Harnesses {
		fmt.Fprintf(&b, " harness r%d %v %s;", h.Round, h.TestFiles, h.Status)
	}
	for _, c := range l.State.Candidates {
		fmt.Fprintf(&b, " candidate %d %s %s;", c.Attempt, c.Verdict, c.Status)
	}
	return b.String()
}
