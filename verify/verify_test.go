package verify_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
)

// fakeRunner answers runs from a script instead of running anything, so
// the orchestration (worktrees, restored harness files, stopping rules,
// fail-closed outcomes) is tested without a sandbox. It records the
// harness test file each run would have seen.
type fakeRunner struct {
	mu     sync.Mutex
	script []func(sandbox.Spec) (sandbox.Result, error)
	calls  int
	seen   []string // content of cart/coupon_repro_test.go per run
	specs  []sandbox.Spec
	// builds are the build checks' runs (go list -export), answered by build
	// (a build that succeeds when nil) outside the script.
	builds []sandbox.Spec
	build  func(sandbox.Spec) (sandbox.Result, error)
	// prebuilds are base's compilations before its runs (go test
	// -exec=/bin/true), answered by prebuild (a build that succeeds when
	// nil) outside the script.
	prebuilds []sandbox.Spec
	prebuild  func(sandbox.Spec) (sandbox.Result, error)
}

func (f *fakeRunner) Name() string { return "fake" }
func (f *fakeRunner) Digest(l sandbox.Limits) string {
	return fmt.Sprintf("fake:%d:%d", l.WallTime, l.MemoryBytes)
}

func (f *fakeRunner) Run(_ context.Context, s sandbox.Spec) (sandbox.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(s.Command, "-export") {
		f.builds = append(f.builds, s)
		if f.build != nil {
			return f.build(s)
		}
		return sandbox.Result{Backend: "fake", Limits: s.Limits, Isolated: true, Stdout: builtCart}, nil
	}
	if slices.Contains(s.Command, "-exec=/bin/true") {
		f.prebuilds = append(f.prebuilds, s)
		if f.prebuild != nil {
			return f.prebuild(s)
		}
		return sandbox.Result{Backend: "fake", Limits: s.Limits, Isolated: true}, nil
	}
	b, _ := os.ReadFile(filepath.Join(s.Src, "cart", "coupon_repro_test.go"))
	f.seen = append(f.seen, string(b))
	f.specs = append(f.specs, s)
	i := f.calls
	f.calls++
	if i >= len(f.script) {
		return sandbox.Result{}, errors.New("fake: no more runs scripted")
	}
	return f.script[i](s)
}

// builtCart is a build check's listing (go list -e -export -json) in which
// package cart, the genuine fix's one changed file included, compiled.
var builtCart = []byte(`{"ImportPath":"shoplite/cart","Root":"/src","Dir":"/src/cart","GoFiles":["cart.go"]}` + "\n")

// events renders go test -json events for tests of package shoplite/cart:
// each argument is "TestName=action" or "TestName=action:output".
func events(tests ...string) []byte {
	var b strings.Builder
	for _, t := range tests {
		name, rest, _ := strings.Cut(t, "=")
		action, out, _ := strings.Cut(rest, ":")
		pkg := "shoplite/cart"
		if strings.HasPrefix(name, "TestServer") {
			pkg = "shoplite/cmd/shoplite"
		}
		fmt.Fprintf(&b, `{"Action":"run","Package":%q,"Test":%q}`+"\n", pkg, name)
		if out != "" {
			fmt.Fprintf(&b, `{"Action":"output","Package":%q,"Test":%q,"Output":%q}`+"\n", pkg, name, out+"\n")
		}
		fmt.Fprintf(&b, `{"Action":%q,"Package":%q,"Test":%q}`+"\n", action, pkg, name)
	}
	return []byte(b.String())
}

// ok is a run that printed stdout and exited as go test would: 1 when a
// test failed, else 0.
func ok(stdout []byte) func(sandbox.Spec) (sandbox.Result, error) {
	return func(s sandbox.Spec) (sandbox.Result, error) {
		code := 0
		if strings.Contains(string(stdout), `"Action":"fail"`) {
			code = 1
		}
		return sandbox.Result{Backend: "fake", Limits: s.Limits, ExitCode: code, Stdout: stdout, Isolated: true}, nil
	}
}

func result(r sandbox.Result, err error) func(sandbox.Spec) (sandbox.Result, error) {
	return func(s sandbox.Spec) (sandbox.Result, error) {
		r.Limits = s.Limits
		return r, err
	}
}

// p2pPass are events for every ShopLite pass-to-pass test passing.
func p2pPass() []string {
	var out []string
	for _, n := range shoplite.PassToPass {
		out = append(out, n+"=pass")
	}
	return out
}

var (
	baseFails     = events(append([]string{"TestCouponAppliesOnce=fail:cart_test.go:12: Total(10000 cents, SAVE10) = 8100; want 9000"}, p2pPass()...)...)
	candidatePass = events(append([]string{"TestCouponAppliesOnce=pass"}, p2pPass()...)...)
)

func TestVerifyRestoresTheHarnessOverTheCandidate(t *testing.T) {
	t.Parallel()
	s := sample(t)
	h := couponHarness(t, s)
	f := &fakeRunner{script: []func(sandbox.Spec) (sandbox.Result, error){ok(baseFails), ok(candidatePass)}}
	rep, err := verify.Verify(context.Background(), verify.Options{
		RepoDir: s.Dir, Harness: h, Candidate: shoplite.BranchFalseTestEdit, Runner: f, CacheDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	repro, _ := shoplite.Files(shoplite.BranchReproCoupon)
	for i, got := range f.seen {
		if got != string(repro["cart/coupon_repro_test.go"]) {
			t.Fatalf("run %d saw a harness test file other than tests_from's:\n%s", i+1, got)
		}
	}
	if len(f.seen) != 2 {
		t.Fatalf("runs = %d, want 2", len(f.seen))
	}
	if rep.Stages[0].Outcome != verify.Restored || len(rep.HarnessEdits) != 1 || rep.HarnessEdits[0] != "cart/coupon_repro_test.go" {
		t.Fatalf("diff stage = %+v, harness edits %v", rep.Stages[0], rep.HarnessEdits)
	}
	// The scripted runs pass, so the restored harness, not the candidate's
	// own test, decided: VERIFIED here proves only the orchestration.
	if rep.Verdict != verify.Verified {
		t.Fatalf("verdict = %s\n%s", rep.Verdict, verify.Table(rep))
	}
	// Runs see the source read-only at /src; the base run writes only the
	// shared build cache, the candidate's no host path at all.
	sp := f.specs[0]
	if len(sp.Writable) != 1 || sp.Env["GOPROXY"] != "off" || sp.Env["GOFLAGS"] == "" || sp.Env["GOWORK"] != "off" || sp.Limits.WallTime.Seconds() != float64(h.TimeoutSeconds) {
		t.Fatalf("base spec = %+v", sp)
	}
	if cs := f.specs[1]; len(cs.Writable) != 0 || !strings.HasPrefix(cs.Env["GOCACHE"], "/tmp/") {
		t.Fatalf("candidate spec = %+v: a candidate's run may write no host path", cs)
	}
	// The candidate's non-test code is built once, before its runs, as
	// they are run: offline, in its own layer of the cache.
	if len(f.builds) != 1 {
		t.Fatalf("builds = %d, want 1", len(f.builds))
	}
	if bs := f.builds[0]; strings.Join(bs.Command, " ") != "go list -e -export -json=ImportPath,Root,Dir,GoFiles,CgoFiles,Error,DepsErrors ./..." || len(bs.Writable) != 0 || bs.Env["GOPROXY"] != "off" || bs.Env["GOFLAGS"] != f.specs[1].Env["GOFLAGS"] || bs.Env["GOCACHE"] != f.specs[1].Env["GOCACHE"] || bs.Limits.WallTime != 10*time.Minute || bs.Limits.MemoryBytes != f.specs[1].Limits.MemoryBytes {
		t.Fatalf("build spec = %+v", bs)
	}
	if fp, _ := verify.Fingerprint(rep.Identity()); fp != rep.Fingerprint || len(fp) != 64 {
		t.Fatalf("fingerprint %s does not recompute (%s)", rep.Fingerprint, fp)
	}
}

func TestVerifyFailsClosed(t *testing.T) {
	t.Parallel()
	// One repository for all rows: each verification works in worktrees of
	// its own.
	s := sample(t)
	type script = []func(sandbox.Spec) (sandbox.Result, error)
	for _, tc := range []struct {
		rule   string
		runs   int
		script script
		want   string
		detail string
		calls  int
		build  func(sandbox.Spec) (sandbox.Result, error)
	}{
		{"all runs hold: VERIFIED", 3, script{ok(baseFails), ok(baseFails), ok(baseFails), ok(candidatePass), ok(candidatePass), ok(candidatePass)}, verify.Verified, "", 6, nil},
		{"one failing candidate run of three: REJECTED", 3,
			script{ok(baseFails), ok(baseFails), ok(baseFails), ok(candidatePass), ok(baseFails)}, verify.Rejected, "candidate run 2", 5, nil},
		{"a base that passes never detected the bug: INCONCLUSIVE, candidate not run", 1,
			script{ok(candidatePass)}, verify.Inconclusive, "never detected the bug", 1, nil},
		{"a base run that reproduces only once of two: INCONCLUSIVE", 2,
			script{ok(baseFails), ok(candidatePass)}, verify.Inconclusive, "base run 2", 2, nil},
		{"a runner crash: INCONCLUSIVE", 1,
			script{ok(baseFails), result(sandbox.Result{}, errors.New("helper died"))}, verify.Inconclusive, "helper died", 2, nil},
		{"a timeout: INCONCLUSIVE", 1,
			script{result(sandbox.Result{TimedOut: true, Killed: sandbox.KilledWallTime, Stdout: events("TestZeroCoupon=pass")}, nil)}, verify.Inconclusive, "timed out", 1, nil},
		{"a base timed out after its fail-to-pass tests failed as expected still reproduced", 1,
			script{result(sandbox.Result{TimedOut: true, Killed: sandbox.KilledWallTime, Stdout: baseFails}, nil), ok(candidatePass)}, verify.Verified, "", 2, nil},
		{"a base killed for memory after its fail-to-pass tests failed still reproduced", 1,
			script{result(sandbox.Result{Killed: sandbox.KilledMemory, ExitCode: 2, Stdout: baseFails}, nil), ok(candidatePass)}, verify.Verified, "", 2, nil},
		{"a base whose output was truncated is not judged", 1,
			script{result(sandbox.Result{Truncated: true, Stdout: baseFails}, nil)}, verify.Inconclusive, "truncated", 1, nil},
		{"a candidate timed out after every test passed is not judged", 1,
			script{ok(baseFails), result(sandbox.Result{TimedOut: true, Killed: sandbox.KilledWallTime, Stdout: candidatePass}, nil)}, verify.Inconclusive, "timed out", 2, nil},
		{"a memory kill: INCONCLUSIVE", 1,
			script{ok(baseFails), result(sandbox.Result{Killed: sandbox.KilledMemory, Stdout: candidatePass}, nil)}, verify.Inconclusive, "memory", 2, nil},
		{"truncated output: INCONCLUSIVE", 1,
			script{ok(baseFails), result(sandbox.Result{Truncated: true, Stdout: candidatePass}, nil)}, verify.Inconclusive, "truncated", 2, nil},
		{"a module missing from the offline cache: INCONCLUSIVE, said plainly", 1,
			script{result(sandbox.Result{ExitCode: 1, Stdout: []byte("FAIL\tshoplite/cart [setup failed]\n"), Stderr: []byte("go: example.com/dep@v1.2.0: module lookup disabled by GOPROXY=off\n")}, nil)},
			verify.Inconclusive, "no test results (exit 1): dependency example.com/dep is not in the offline cache", 1, nil},
		{"a build failure's first lines: INCONCLUSIVE", 1,
			script{ok(baseFails), result(sandbox.Result{ExitCode: 1, Stdout: []byte(`{"ImportPath":"shoplite/cart","Action":"build-output","Output":"# shoplite/cart\n"}` + "\n" +
				`{"ImportPath":"shoplite/cart","Action":"build-output","Output":"cart/cart.go:3:1: syntax error\n"}` + "\n")}, nil)},
			verify.Inconclusive, `no test results (exit 1): "# shoplite/cart", "cart/cart.go:3:1: syntax error"`, 2, nil},
		{"no structured output: INCONCLUSIVE", 1,
			script{ok(baseFails), result(sandbox.Result{ExitCode: 2, Stdout: []byte("PASS\nok shoplite/cart\n"), Stderr: []byte("go: cannot find main module")}, nil)}, verify.Inconclusive, "no test results", 2, nil},
		{"a harness that does not build on the candidate: INCONCLUSIVE", 1,
			script{ok(baseFails), ok([]byte(`{"Action":"fail","Package":"shoplite/cart","FailedBuild":"shoplite/cart [shoplite/cart.test]"}` + "\n"))}, verify.Inconclusive, "failed to build", 2, nil},
		{"a skipped fail-to-pass test: REJECTED", 1,
			script{ok(baseFails), ok(events(append([]string{"TestCouponAppliesOnce=skip"}, p2pPass()...)...))}, verify.Rejected, "skipped", 2, nil},
		{"a missing pass-to-pass test: REJECTED", 1,
			script{ok(baseFails), ok(events("TestCouponAppliesOnce=pass"))}, verify.Rejected, "missing", 2, nil},
		{"a candidate whose code builds only with its tests: REJECTED, its runs not started", 1,
			script{ok(baseFails)}, verify.Rejected, `the candidate does not build without its tests: "cart/cart.go:51:10: undefined: discounted" in shoplite/cart (base builds)`, 1,
			func(s sandbox.Spec) (sandbox.Result, error) {
				// The candidate (the genuine fix's cart.go) does not build;
				// base does.
				if b, _ := os.ReadFile(filepath.Join(s.Src, "cart", "cart.go")); !strings.Contains(string(b), genuineApply) {
					return sandbox.Result{Backend: "fake", Limits: s.Limits, Isolated: true}, nil
				}
				return sandbox.Result{Backend: "fake", Limits: s.Limits, Isolated: true, ExitCode: 1, Stderr: []byte("# shoplite/cart\ncart/cart.go:51:10: undefined: discounted\n")}, nil
			}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			f := &fakeRunner{script: tc.script, build: tc.build}
			rep, err := verify.Verify(context.Background(), verify.Options{
				RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: shoplite.BranchGenuine, Runs: tc.runs, Runner: f, CacheDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.want || !strings.Contains(rep.Reason, tc.detail) || f.calls != tc.calls {
				t.Fatalf("verdict %s (%q) after %d runs, want %s containing %q after %d\n%s", rep.Verdict, rep.Reason, f.calls, tc.want, tc.detail, tc.calls, verify.Table(rep))
			}
		})
	}
}

func TestVerifyRefusesBeforeRunning(t *testing.T) {
	t.Parallel()
	s := sample(t)
	for _, tc := range []struct {
		rule      string
		h         func(*verify.Harness)
		allow     []string
		protected []string
		detail    string
	}{
		{"a path outside the allowlist", nil, []string{"cmd/**"}, nil, "cart/cart.go is outside the allowlist"},
		{"a protected path", nil, nil, []string{"cart/cart.go"}, "cart/cart.go is a protected harness path"},
		{"a candidate that does not descend from base", func(h *verify.Harness) { h.Base = s.Branches[shoplite.BranchReproCoupon] }, nil, nil, "does not descend from base"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			h := couponHarness(t, s)
			if tc.h != nil {
				tc.h(&h)
			}
			f := &fakeRunner{}
			rep, err := verify.Verify(context.Background(), verify.Options{
				RepoDir: s.Dir, Harness: h, Candidate: shoplite.BranchGenuine, Runner: f, CacheDir: t.TempDir(),
				Allowlist: tc.allow, HarnessPaths: tc.protected,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != verify.Rejected || !strings.Contains(rep.Reason, tc.detail) || f.calls != 0 {
				t.Fatalf("verdict %s (%q) after %d runs\n%s", rep.Verdict, rep.Reason, f.calls, verify.Table(rep))
			}
		})
	}
}

func TestVerifySetupErrors(t *testing.T) {
	t.Parallel()
	s := sample(t)
	f := &fakeRunner{}
	for _, tc := range []struct {
		rule string
		opts func(o *verify.Options)
		want string
	}{
		{"invalid harness", func(o *verify.Options) { o.Harness.Runs = 0 }, "runs"},
		{"too many runs", func(o *verify.Options) { o.Runs = 11 }, "runs 11"},
		{"no runner", func(o *verify.Options) { o.Runner = nil }, "no sandbox runner"},
		{"unknown candidate", func(o *verify.Options) { o.Candidate = "fix/nope" }, "candidate"},
		{"base not in the repository", func(o *verify.Options) { o.Harness.Base = strings.Repeat("a", 40) }, "base"},
		{"test file missing at tests_from", func(o *verify.Options) { o.Harness.TestFiles = []string{"cart/none_test.go"} }, "cart/none_test.go"},
		{"bad glob", func(o *verify.Options) { o.Allowlist = []string{"cart/["} }, "glob"},
		{"more memory than the server allows", func(o *verify.Options) { o.Harness.MemoryMB = 12 << 10 },
			"the harness asks for 12 GiB of memory; this server allows at most 8 GiB (--max-memory)"},
		{"more memory than this server's maximum", func(o *verify.Options) { o.Harness.MemoryMB, o.MaxMemoryBytes = 1024, 512<<20 },
			"the harness asks for 1 GiB of memory; this server allows at most 512 MiB (--max-memory)"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			o := verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: shoplite.BranchGenuine, Runner: f, CacheDir: t.TempDir()}
			tc.opts(&o)
			rep, err := verify.Verify(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || rep.Verdict == verify.Verified {
				t.Fatalf("Verify = %s, %v; want an error containing %q", rep.Verdict, err, tc.want)
			}
		})
	}
	if f.calls != 0 {
		t.Fatalf("setup errors ran %d commands", f.calls)
	}
	// The harness digest read from the repository covers the test code.
	h := couponHarness(t, s)
	d, err := verify.HarnessDigest(context.Background(), s.Dir, h)
	files, _ := shoplite.Files(shoplite.BranchReproCoupon)
	want, _ := verify.DigestHarness(h, map[string][]byte{"cart/coupon_repro_test.go": files["cart/coupon_repro_test.go"]})
	if err != nil || d != want {
		t.Fatalf("HarnessDigest = %s, %v; want %s", d, err, want)
	}
}

// TestHarnessMemory gives every run and build the memory the harness asks
// for, within the server's maximum, and the options' limit otherwise.
func TestHarnessMemory(t *testing.T) {
	t.Parallel()
	s := sample(t)
	for _, tc := range []struct {
		name     string
		memoryMB int
		limits   int64
		want     int64
	}{
		{"the harness's", 3 << 10, 1 << 30, 3 << 30},
		{"the options' when the harness asks nothing", 0, 1 << 30, 1 << 30},
	} {
		f := &fakeRunner{script: []func(sandbox.Spec) (sandbox.Result, error){ok(baseFails), ok(candidatePass)}}
		h := couponHarness(t, s, func(h *verify.Harness) { h.MemoryMB = tc.memoryMB })
		rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: shoplite.BranchGenuine, Runner: f,
			CacheDir: t.TempDir(), Limits: sandbox.Limits{MemoryBytes: tc.limits}})
		if err != nil || rep.Verdict != verify.Verified {
			t.Fatalf("%s: %s, %v", tc.name, rep.Verdict, err)
		}
		for _, sp := range slices.Concat(f.specs, f.builds, f.prebuilds) {
			if sp.Limits.MemoryBytes != tc.want {
				t.Errorf("%s: %v ran with %d bytes, want %d", tc.name, sp.Command, sp.Limits.MemoryBytes, tc.want)
			}
		}
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
	}{{"8GiB", 8 << 30}, {"512MiB", 512 << 20}, {"1.5GiB", 3 << 29}, {"4G", 4 << 30}, {"2048", 2048}, {" 64 MiB ", 64 << 20},
		{"", 0}, {"GiB", 0}, {"-1GiB", 0}, {"8XB", 0}, {"1.2.3G", 0}, {"0", 0}} {
		got, err := verify.ParseBytes(tc.in)
		if got != tc.want || (err == nil) != (tc.want > 0) {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	if got := verify.FormatBytes(12 << 30); got != "12 GiB" {
		t.Errorf("FormatBytes = %q", got)
	}
}

// TestInterruptedBaseStillReproduces runs, with the real sandbox and go
// test, bases whose fail-to-pass test fails as expected before a later
// test brings the test binary down (a stack overflow, memory beyond the
// harness's limit): what the stream said before the crash still
// reproduces the bug, and the detail says how the run ended.
func TestInterruptedBaseStillReproduces(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	repro, _ := shoplite.Files(shoplite.BranchReproCoupon)
	genuine, _ := shoplite.Files(shoplite.BranchGenuine)
	for i, tc := range []struct {
		name     string
		test     string
		memoryMB int
		timeout  int
		words    []string // one of them in the base run's detail
	}{
		{"a hang past the harness's timeout, the sandbox stopping the run", "package cart\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestZZHang(t *testing.T) { time.Sleep(time.Hour) }\n",
			0, 4, []string{"timed out after 4s"}},
		{"a stack overflow", "package cart\n\nimport (\n\t\"runtime/debug\"\n\t\"testing\"\n)\n\nfunc TestZZOverflow(t *testing.T) {\n\tdebug.SetMaxStack(1 << 20)\n\tvar f func(int) int\n\tf = func(n int) int { return f(n+1) + 1 }\n\tf(0)\n}\n",
			0, 0, []string{"crash", "overflow"}},
		{"memory beyond the harness's limit", "package cart\n\nimport \"testing\"\n\nvar kept [][]byte\n\nfunc TestZZMemory(t *testing.T) {\n\tfor {\n\t\tb := make([]byte, 64<<20)\n\t\tfor i := range b {\n\t\t\tb[i] = 1\n\t\t}\n\t\tkept = append(kept, b)\n\t}\n}\n",
			512, 0, []string{"crash", "killed", "memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tests := commitChanges(t, s.Dir, fmt.Sprintf("interrupted/tests-%d", i), s.Base, map[string]string{
				"cart/coupon_repro_test.go": string(repro["cart/coupon_repro_test.go"]), "cart/zz_crash_test.go": tc.test})
			cand := commitChanges(t, s.Dir, fmt.Sprintf("interrupted/cand-%d", i), tests, map[string]string{"cart/cart.go": string(genuine["cart/cart.go"])})
			h := couponHarness(t, s, func(h *verify.Harness) {
				h.TestsFrom, h.MemoryMB = tests, tc.memoryMB
				h.Command = []string{"go", "test", "-json", "./cart"}
				h.PassToPass = nil
				if tc.timeout > 0 {
					h.TimeoutSeconds = tc.timeout
				}
			})
			rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s", verify.Table(rep))
			b := stage(rep, verify.StageBase, 1)
			said := slices.ContainsFunc(tc.words, func(w string) bool { return strings.Contains(b.Detail, w) })
			if b.Outcome != verify.Reproduced || !said {
				t.Fatalf("base = %s %q, want reproduced, saying one of %v", b.Outcome, b.Detail, tc.words)
			}
			if rep.Verdict == verify.Verified {
				t.Fatalf("a candidate whose run crashes was VERIFIED")
			}
		})
	}
}
