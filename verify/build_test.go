package verify_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
)

// testHelper is a helper an existing test file of package cart declares:
// it compiles into the package under go test, and into nothing else.
const testHelper = "package cart\n\n// discounted is a test helper.\nfunc discounted(cents, pct int64) int64 { return cents * (100 - pct) / 100 }\n\nvar hundred int64 = 100\n"

// TestCandidateMustBuildWithoutItsTests verifies, with real git, the real
// sandbox and real go runs, candidates on a ShopLite whose cart package
// has a test helper and a variable (cart/discount_test.go): a fix that calls the helper
// passes every test but does not build without them and is REJECTED; the
// same fix written out is VERIFIED; and where base's own code already
// leans on the helper, a candidate that keeps doing so cannot be blamed
// for it: INCONCLUSIVE.
func TestCandidateMustBuildWithoutItsTests(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	main, _ := shoplite.Files(shoplite.BranchMain)
	repro, _ := shoplite.Files(shoplite.BranchReproCoupon)
	cart := string(main["cart/cart.go"])
	reproTest := string(repro["cart/coupon_repro_test.go"])
	if reproTest == "" || !strings.Contains(cart, buggyApply) {
		t.Fatal("ShopLite's files are not as this test expects")
	}
	// A base whose tests declare a helper, and the reproduction on it.
	base := commitChanges(t, s.Dir, "build/base", s.Base, map[string]string{"cart/discount_test.go": testHelper})
	tests := commitChanges(t, s.Dir, "build/repro", base, map[string]string{"cart/coupon_repro_test.go": reproTest})
	// A base whose own code already needs the helper to build.
	leaning := commitChanges(t, s.Dir, "build/leaning-base", base, map[string]string{
		"cart/cart.go": strings.Replace(cart, buggyApply, "return discounted(discounted(cents, c.Percent), c.Percent)", 1)})
	leaningTests := commitChanges(t, s.Dir, "build/leaning-repro", leaning, map[string]string{"cart/coupon_repro_test.go": reproTest})
	// A reproduction that also adds a package of tests only, which base
	// lacks, and a harness naming it.
	extraTests := commitChanges(t, s.Dir, "build/extra-repro", base, map[string]string{"cart/coupon_repro_test.go": reproTest,
		"extra/extra_test.go": "package extra\n\nimport \"testing\"\n\nfunc TestExtra(t *testing.T) {}\n"})
	fixed := strings.Replace(cart, buggyApply, genuineApply, 1)

	rows := []struct {
		name            string
		base, testsFrom string
		files           map[string]string
		want            string
		build           string   // the build stage's outcome
		detail          string   // in the build stage's detail
		pkgs            []string // the packages the harness tests; ./cart when nil
		flagBuild       bool     // build_changes: flag (the static checks refuse them by default)
	}{
		{name: "fix calling a helper of an existing test file", base: base, testsFrom: tests,
			files: map[string]string{"cart/cart.go": strings.Replace(cart, buggyApply, "return discounted(cents, c.Percent)", 1)},
			want:  verify.Rejected, build: verify.Failed,
			detail: `undefined: discounted" in shoplite/cart (base builds)`},
		{name: "fix using a variable only a test file declares", base: base, testsFrom: tests,
			files: map[string]string{"cart/cart.go": strings.Replace(cart, buggyApply, "return cents * (100 - c.Percent) / hundred", 1)},
			want:  verify.Rejected, build: verify.Failed, detail: "undefined: hundred"},
		{name: "the same fix written out", base: base, testsFrom: tests,
			files: map[string]string{"cart/cart.go": strings.Replace(cart, buggyApply, genuineApply, 1)},
			want:  verify.Verified, build: verify.Passed, detail: "compiles without its tests"},
		{name: "fix that breaks a package the harness does not test", base: base, testsFrom: tests,
			files: map[string]string{"cart/cart.go": fixed, "other/other.go": "package other\n\nfunc X() int { return missing() }\n"},
			want:  verify.Rejected, build: verify.Failed, detail: `undefined: missing" in shoplite/other (base builds)`},
		{name: "fix whose shipped twin hides behind a build constraint", base: base, testsFrom: tests,
			files:     map[string]string{"cart/cart.go": fixed, "cart/ship_cgo.go": "//go:build cgo\n\npackage cart\n\nfunc init() { panic(\"shipped\") }\n"},
			flagBuild: true, want: verify.Inconclusive, build: verify.NotExecuted, detail: "does not compile changed code: cart/ship_cgo.go"},
		{name: "harness naming a package base lacks", base: base, testsFrom: extraTests, pkgs: []string{"./cart", "./extra"},
			files: map[string]string{"cart/cart.go": strings.Replace(cart, buggyApply, "return discounted(cents, c.Percent)", 1)},
			want:  verify.Rejected, build: verify.Failed, detail: `undefined: discounted" in shoplite/cart (base builds)`},
		{name: "base's own code needs a test helper", base: leaning, testsFrom: leaningTests,
			files: map[string]string{"cart/cart.go": strings.Replace(cart, buggyApply, "return discounted(cents, c.Percent)", 1)},
			want:  verify.Inconclusive, build: verify.NotExecuted, detail: "base does not build without its tests either"},
	}
	var summary strings.Builder
	tw := tabwriter.NewWriter(&summary, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tVERDICT\tBUILD\tREASON")
	for i, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			cand := commitChanges(t, s.Dir, fmt.Sprintf("build/cand-%d", i), rw.testsFrom, rw.files)
			h := couponHarness(t, s, func(h *verify.Harness) {
				h.Base, h.TestsFrom = rw.base, rw.testsFrom
				// The harness tests package cart alone: with ./... the
				// test binary of cmd/shoplite, which imports cart, would
				// compile cart without its tests and fail to build.
				pkgs := rw.pkgs
				if pkgs == nil {
					pkgs = []string{"./cart"}
				}
				h.Command = append([]string{"go", "test", "-json", "-tags", "signoff"}, pkgs...)
				if rw.flagBuild {
					h.BuildChanges = "flag"
				}
				h.PassToPass = []string{"TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon", "TestUnknownCoupon", "TestInvalidItem"}
			})
			start := time.Now()
			rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
			if err != nil {
				t.Fatal(err)
			}
			b := stage(rep, verify.StageBuild, 0)
			fmt.Fprintf(tw, "%s\t%s\t%s %dms\t%s\n", rw.name, rep.Verdict, b.Outcome, b.DurationMS, trim(rep.Reason, 140))
			t.Logf("%s (%.1fs):\n%s", rw.name, time.Since(start).Seconds(), verify.Table(rep))
			if rep.Verdict != rw.want {
				t.Fatalf("verdict = %s, want %s (%s)", rep.Verdict, rw.want, rep.Reason)
			}
			// The report, build stage and all, makes an evidence bundle
			// that verifies.
			raw, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			pub, key, err := ed25519.GenerateKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "bundle")
			if err := evidence.WriteBundle(dir, rep, raw, key, false); err != nil {
				t.Fatal(err)
			}
			if f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub}); err != nil || !f.OK() || f.Verdict != rw.want {
				t.Errorf("the bundle does not verify (%v):\n%s", err, f)
			}
			if b.Outcome != rw.build || !strings.Contains(b.Detail, rw.detail) || b.Runner == nil || !b.Runner.Isolated {
				t.Errorf("build stage = %s %q (runner %+v), want %s with %q", b.Outcome, b.Detail, b.Runner, rw.build, rw.detail)
			}
			if rw.want != verify.Verified {
				if !strings.Contains(rep.Reason, rw.detail) {
					t.Errorf("reason = %q, want it to carry %q", rep.Reason, rw.detail)
				}
				if c := stage(rep, verify.StageCandidate, 0); c.Outcome != verify.Skipped || stage(rep, verify.StageCandidate, 1).Outcome != "" {
					t.Errorf("the candidate's runs started after its build failed: %+v", rep.Stages)
				}
			}
		})
	}
	tw.Flush()
	t.Logf("candidates that build only with their tests (sandbox %s):\n%s", runner.Name(), summary.String())
}

// TestBuildLimit compiles base with its tests on a cold cache (the real
// sandbox and go) under a build limit of one second: the build, not the
// tests, runs out of time, and the base run says so with its limit; the
// candidate's runs are not started.
func TestBuildLimit(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	start := time.Now()
	rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: shoplite.BranchGenuine,
		Runner: runner, CacheDir: filepath.Join(t.TempDir(), "cold"), BuildTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.1fs:\n%s", time.Since(start).Seconds(), verify.Table(rep))
	b := stage(rep, verify.StageBase, 1)
	if rep.Verdict != verify.Inconclusive || b.Outcome != verify.NotExecuted || !strings.HasPrefix(b.Detail, "timed out while building (limit 1s): go test") ||
		b.Runner == nil || !b.Runner.TimedOut || b.Runner.Limits.WallTime != time.Second {
		t.Fatalf("base = %+v, want not executed: timed out while building (limit 1s)", b)
	}
	if c := stage(rep, verify.StageCandidate, 1); c.Outcome != "" {
		t.Fatalf("the candidate ran: %+v", c)
	}
}

// TestBuildLimitScripted checks, with scripted runs, that base's build
// and the candidate's build check get the harness's build limit as their
// wall time (the runs keep the test timeout), and that either running out
// of it is said as a build's timeout, never as the tests'.
func TestBuildLimitScripted(t *testing.T) {
	t.Parallel()
	s := sample(t)
	timedOut := func(sp sandbox.Spec) (sandbox.Result, error) {
		return sandbox.Result{Backend: "fake", Limits: sp.Limits, TimedOut: true, Killed: sandbox.KilledWallTime, Isolated: true,
			Stdout: []byte(`{"ImportPath":"shoplite/cart [shoplite/cart.test]","Action":"build-output","Output":"# shoplite/cart\n"}` + "\n")}, nil
	}
	h := couponHarness(t, s, func(h *verify.Harness) { h.BuildTimeoutSeconds = 30 })
	for _, tc := range []struct {
		name            string
		prebuild, build func(sandbox.Spec) (sandbox.Result, error)
		script          []func(sandbox.Spec) (sandbox.Result, error)
		detail          string
	}{
		{"base's build", timedOut, nil, nil, `base run 1: timed out while building (limit 30s): go test -json ./... -run=^$ -exec=/bin/true; it had printed: "# shoplite/cart"`},
		{"the candidate's build check", nil, timedOut, []func(sandbox.Spec) (sandbox.Result, error){ok(baseFails)}, "timed out while building (limit 30s): go list -e -export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{script: tc.script, prebuild: tc.prebuild, build: tc.build}
			rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: shoplite.BranchGenuine, Runner: f, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != verify.Inconclusive || !strings.Contains(rep.Reason, tc.detail) || f.calls != len(tc.script) {
				t.Fatalf("%s (%q) after %d runs, want INCONCLUSIVE with %q\n%s", rep.Verdict, rep.Reason, f.calls, tc.detail, verify.Table(rep))
			}
			for _, sp := range append(f.prebuilds, f.builds...) {
				if sp.Limits.WallTime != 30*time.Second {
					t.Errorf("build %v: wall time %s, want the build limit 30s", sp.Command, sp.Limits.WallTime)
				}
			}
			for _, sp := range f.specs {
				if sp.Limits.WallTime != time.Duration(h.TimeoutSeconds)*time.Second {
					t.Errorf("run: wall time %s, want the test timeout", sp.Limits.WallTime)
				}
			}
		})
	}
}
