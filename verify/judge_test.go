package verify_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

func results(tests ...verify.TestResult) verify.Results { return verify.Results{Tests: tests} }

func tr(name, outcome, output string) verify.TestResult {
	return verify.TestResult{Package: "example.com/shop/cart", Name: name, Outcome: outcome, Output: output}
}

func TestJudgeBase(t *testing.T) {
	t.Parallel()
	h := validHarness()
	buildFailed := verify.Results{Failures: []verify.PackageFailure{{Package: "example.com/shop/cart", Build: true}}}
	for _, tc := range []struct {
		rule   string
		res    verify.Results
		want   string
		detail string
	}{
		{"the bug is reproduced when every f2p fails with the signature",
			results(tr("TestCouponAppliesOnce", verify.Fail, "got 8100, want 9000"), tr("TestZeroCoupon", verify.Pass, ""), tr("TestEmptyCart", verify.Pass, "")),
			verify.Reproduced, `failed with "8100"`},
		{"pass-to-pass tests do not count on base",
			results(tr("TestCouponAppliesOnce", verify.Fail, "got 8100"), tr("TestZeroCoupon", verify.Fail, ""), tr("TestEmptyCart", verify.Pass, "")),
			verify.Reproduced, ""},
		{"an f2p that passes on base never detected the bug",
			results(tr("TestCouponAppliesOnce", verify.Pass, "")),
			verify.NotReproduced, "TestCouponAppliesOnce passed"},
		{"a failure without the expected signature is a different failure",
			results(tr("TestCouponAppliesOnce", verify.Fail, "nil pointer dereference")),
			verify.NotReproduced, `without "8100"`},
		{"a skipped f2p did not detect the bug",
			results(tr("TestCouponAppliesOnce", verify.Skip, "8100")),
			verify.NotReproduced, "skipped"},
		{"a missing f2p did not detect the bug",
			results(tr("TestOther", verify.Fail, "8100")),
			verify.NotReproduced, "missing"},
		{"a harness that does not build did not execute",
			buildFailed,
			verify.NotExecuted, "failed to build"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, detail, tests := verify.JudgeBase(h, tc.res)
			if got != tc.want || !strings.Contains(detail, tc.detail) {
				t.Fatalf("JudgeBase = %s %q, want %s containing %q", got, detail, tc.want, tc.detail)
			}
			if len(tests) != len(h.FailToPass)+len(h.PassToPass) {
				t.Fatalf("tests = %+v", tests)
			}
		})
	}
}

func TestJudgeCandidate(t *testing.T) {
	t.Parallel()
	h := validHarness()
	all := func(f2p, zero, empty string) verify.Results {
		return results(tr("TestCouponAppliesOnce", f2p, "got 8100, want 9000"), tr("TestZeroCoupon", zero, ""), tr("TestEmptyCart", empty, ""))
	}
	for _, tc := range []struct {
		rule   string
		res    verify.Results
		want   string
		detail string
	}{
		{"everything passing passes", all(verify.Pass, verify.Pass, verify.Pass), verify.Passed, "fail-to-pass 1/1 passed, pass-to-pass 2/2 passed"},
		{"a failing f2p fails", all(verify.Fail, verify.Pass, verify.Pass), verify.Failed, "TestCouponAppliesOnce failed (got 8100, want 9000)"},
		{"a broken p2p fails", all(verify.Pass, verify.Fail, verify.Pass), verify.Failed, "TestZeroCoupon failed"},
		{"a skipped f2p is a failure", all(verify.Skip, verify.Pass, verify.Pass), verify.Failed, "skipped"},
		{"a skipped p2p is a failure", all(verify.Pass, verify.Pass, verify.Skip), verify.Failed, "TestEmptyCart was skipped"},
		{"a missing f2p is a failure", results(tr("TestZeroCoupon", verify.Pass, ""), tr("TestEmptyCart", verify.Pass, "")), verify.Failed, "missing"},
		{"a harness that does not build did not execute",
			verify.Results{Failures: []verify.PackageFailure{{Package: "example.com/shop/cart", Build: true}}}, verify.NotExecuted, "failed to build"},
		{"a definite failure outweighs a package that did not run",
			verify.Results{Tests: []verify.TestResult{tr("TestCouponAppliesOnce", verify.Fail, "")},
				Failures: []verify.PackageFailure{{Package: "example.com/shop/other"}}}, verify.Failed, "failed"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, detail, _ := verify.JudgeCandidate(h, tc.res)
			if got != tc.want || !strings.Contains(detail, tc.detail) {
				t.Fatalf("JudgeCandidate = %s %q, want %s containing %q", got, detail, tc.want, tc.detail)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	st := func(name string, run int, outcome string) verify.Stage {
		return verify.Stage{Name: name, Run: run, Outcome: outcome}
	}
	diff := st(verify.StageDiff, 0, verify.OK)
	for _, tc := range []struct {
		rule   string
		stages []verify.Stage
		want   string
	}{
		{"all held is VERIFIED", []verify.Stage{diff, st("base", 1, verify.Reproduced), st("candidate", 1, verify.Passed)}, verify.Verified},
		{"restored harness edits can still be VERIFIED",
			[]verify.Stage{st("diff", 0, verify.Restored), st("base", 1, verify.Reproduced), st("candidate", 1, verify.Passed)}, verify.Verified},
		{"a refused diff is REJECTED", []verify.Stage{st("diff", 0, verify.Refused), st("base", 0, verify.Skipped), st("candidate", 0, verify.Skipped)}, verify.Rejected},
		{"a failed candidate run is REJECTED",
			[]verify.Stage{diff, st("base", 1, verify.Reproduced), st("candidate", 1, verify.Passed), st("candidate", 2, verify.Failed)}, verify.Rejected},
		{"a base that did not reproduce is INCONCLUSIVE",
			[]verify.Stage{diff, st("base", 1, verify.NotReproduced), st("candidate", 0, verify.Skipped)}, verify.Inconclusive},
		{"a base that did not execute is INCONCLUSIVE",
			[]verify.Stage{diff, st("base", 1, verify.NotExecuted), st("candidate", 0, verify.Skipped)}, verify.Inconclusive},
		{"a candidate run that did not execute is INCONCLUSIVE",
			[]verify.Stage{diff, st("base", 1, verify.Reproduced), st("candidate", 1, verify.NotExecuted)}, verify.Inconclusive},
		{"no candidate run is INCONCLUSIVE", []verify.Stage{diff, st("base", 1, verify.Reproduced)}, verify.Inconclusive},
		{"no base run is INCONCLUSIVE", []verify.Stage{diff, st("candidate", 1, verify.Passed)}, verify.Inconclusive},
		{"no stages is INCONCLUSIVE", nil, verify.Inconclusive},
		{"an unknown outcome is INCONCLUSIVE",
			[]verify.Stage{diff, st("base", 1, verify.Reproduced), st("candidate", 1, "PASSED")}, verify.Inconclusive},
		{"an unknown stage is INCONCLUSIVE",
			[]verify.Stage{diff, st("base", 1, verify.Reproduced), st("candidate", 1, verify.Passed), st("lint", 0, verify.OK)}, verify.Inconclusive},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := verify.Decide(tc.stages); got != tc.want {
				t.Fatalf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCheckDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule                              string
		changed, edited, protected, allow []string
		want, detail                      string
	}{
		{"no policy accepts", []string{"cart/cart.go"}, nil, nil, nil, verify.OK, "1 file changed"},
		{"inside the allowlist accepts", []string{"cart/cart.go", "cart/sub/x.go"}, nil, nil, []string{"cart/**"}, verify.OK, "all inside the allowlist"},
		{"outside the allowlist refuses", []string{"cart/cart.go", "server/main.go"}, nil, nil, []string{"cart/**"}, verify.Refused, "server/main.go is outside the allowlist"},
		{"a protected path refuses", []string{"cart/cart.go", "harness/coupon.json"}, nil, []string{"harness/**"}, nil, verify.Refused, "harness/coupon.json is a protected harness path"},
		{"harness test edits are discarded, not refused", []string{"cart/cart.go", "cart/coupon_repro_test.go"}, []string{"cart/coupon_repro_test.go"}, nil, nil, verify.Restored, "cart/coupon_repro_test.go are discarded"},
		{"harness test edits are exempt from the allowlist", []string{"cart/cart.go", "tests/coupon_test.go"}, []string{"tests/coupon_test.go"}, nil, []string{"cart/*.go"}, verify.Restored, "discarded"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, detail := verify.CheckDiff(tc.changed, tc.edited, tc.protected, tc.allow)
			if got != tc.want || !strings.Contains(detail, tc.detail) {
				t.Fatalf("CheckDiff = %s %q, want %s containing %q", got, detail, tc.want, tc.detail)
			}
		})
	}
}

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"internal/cart/**", "internal/cart/cart.go", true},
		{"internal/cart/**", "internal/cart/sub/x.go", true},
		{"internal/cart/**", "internal/cartx/x.go", false},
		{"internal/cart/**", "internal/other.go", false},
		{"**/*_test.go", "a/b/c_test.go", true},
		{"**/*_test.go", "c_test.go", true},
		{"**/*_test.go", "c.go", false},
		{"cart/*.go", "cart/cart.go", true},
		{"cart/*.go", "cart/sub/cart.go", false},
		{"a/**/b/*.go", "a/b/x.go", true},
		{"a/**/b/*.go", "a/x/y/b/x.go", true},
		{"a/**/b/*.go", "a/x/y/c/x.go", false},
		{"**", "anything/at/all", true},
		{"[", "[", false},
		{"go.mod", "go.mod", true},
	} {
		if got := verify.MatchGlob(tc.glob, tc.path); got != tc.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestTableEndsWithTheVerdict(t *testing.T) {
	t.Parallel()
	r := verify.Report{Verdict: verify.Rejected, Runs: 2, Environment: verify.Environment{Sandbox: "bwrap", Isolated: true}, Stages: []verify.Stage{
		{Name: "diff", Outcome: verify.Restored, Detail: "2 files changed; the candidate's edits\nto harness files are discarded"},
		{Name: "base", Run: 1, Outcome: verify.Reproduced, Detail: `fail-to-pass 1/1 failed with "8100"`},
		{Name: "candidate", Run: 1, Outcome: verify.Failed, Detail: "TestCouponAppliesOnce failed"},
	}}
	out := verify.Table(r)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[len(lines)-1] != "verdict: REJECTED" {
		t.Fatalf("last line = %q", lines[len(lines)-1])
	}
	if !strings.HasPrefix(lines[0], "STAGE") || !strings.Contains(out, "candidate run 1/2") || !strings.Contains(out, "edits to harness") {
		t.Fatalf("table:\n%s", out)
	}
	r.Environment = verify.Environment{Sandbox: "none"}
	if out := verify.Table(r); !strings.Contains(out, "without isolation") {
		t.Fatalf("a run without a sandbox is not flagged:\n%s", out)
	}
}

func gr(pkg, name, outcome, output string) verify.TestResult {
	return verify.TestResult{Package: pkg, Name: name, Outcome: outcome, Output: output}
}

func TestJudgeBaseExpectedFailuresAndCrashes(t *testing.T) {
	t.Parallel()
	const cart = "example.com/shop/cart"
	two := validHarness()
	two.FailToPass = []string{"TestBool", "TestCouponAppliesOnce"}
	two.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Regexp: `want true, got (false|nil)`}}
	p2p := func(h verify.Harness) []verify.TestResult {
		var out []verify.TestResult
		for _, n := range h.PassToPass {
			out = append(out, gr(cart, n, verify.Pass, ""))
		}
		return out
	}
	bothFail := []verify.TestResult{
		gr(cart, "TestBool", verify.Fail, "=== RUN   TestBool\n--- FAIL: TestBool (0.00s)\n"),
		gr(cart, "TestBool/#18/Value/ToE", verify.Fail, "    bool_test.go:40: want true, got false\n"),
		gr(cart, "TestCouponAppliesOnce", verify.Fail, "got 8100, want 9000"),
	}
	stackOverflow := verify.Crash{Package: cart, Test: "TestLater", FirstLines: "runtime: goroutine stack exceeds 1000000000-byte limit"}
	panicked := verify.Crash{Package: cart, Test: "TestFirst", FirstLines: "panic: assignment to entry in nil map [cart.TestFirst at /src/cart/x_test.go:9]"}
	many := validHarness()
	many.PassToPass = []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestG"}
	for _, tc := range []struct {
		rule   string
		h      verify.Harness
		res    verify.Results
		want   string
		detail string // the detail starts with it
	}{
		{"each test with its own expected failure, matched in its subtests",
			two, verify.Results{Tests: slices.Concat(bothFail, p2p(two))},
			verify.Reproduced, "fail-to-pass 2/2 failed as expected"},
		{"a test's own expected failure is required, not the shared one",
			two, verify.Results{Tests: slices.Concat([]verify.TestResult{gr(cart, "TestBool", verify.Fail, "got 8100")}, bothFail[2:], p2p(two))},
			verify.NotReproduced, "the check never detected the bug: TestBool failed without regexp /want true, got (false|nil)/"},
		{"a subtest of another test does not lend its output",
			two, verify.Results{Tests: slices.Concat([]verify.TestResult{gr(cart, "TestBool", verify.Fail, ""), gr(cart, "TestBoolean/x", verify.Fail, "want true, got false")}, bothFail[2:], p2p(two))},
			verify.NotReproduced, "the check never detected the bug: TestBool failed without"},
		{"failures before a crash still count",
			validHarness(), verify.Results{Tests: []verify.TestResult{gr(cart, "TestCouponAppliesOnce", verify.Fail, "got 8100"), gr(cart, "TestZeroCoupon", verify.Pass, "")},
				Crashes: []verify.Crash{stackOverflow}},
			verify.Reproduced, `fail-to-pass 1/1 failed with "8100"; then the test binary of example.com/shop/cart crashed: runtime: goroutine stack exceeds 1000000000-byte limit`},
		{"a crash before the fail-to-pass test ran did not execute it",
			validHarness(), verify.Results{Tests: []verify.TestResult{gr(cart, "TestFirst", verify.Fail, "panic: assignment to entry in nil map")}, Crashes: []verify.Crash{panicked}},
			verify.NotExecuted, "the base run crashed before TestCouponAppliesOnce ran: panic: assignment to entry in nil map [cart.TestFirst at /src/cart/x_test.go:9]"},
		{"the fail-to-pass test that crashed without its expected failure did not execute",
			validHarness(), verify.Results{Tests: []verify.TestResult{{Package: cart, Name: "TestCouponAppliesOnce", Outcome: verify.Fail, Output: "runtime: goroutine stack exceeds", Unfinished: true}},
				Crashes: []verify.Crash{{Package: cart, Test: "TestCouponAppliesOnce", FirstLines: "runtime: goroutine stack exceeds 1000000000-byte limit"}}},
			verify.NotExecuted, "the base run crashed before TestCouponAppliesOnce ran"},
		{"a crash in a package that cannot hold the test hides nothing",
			func() verify.Harness {
				h := validHarness()
				h.FailToPass = []string{"cart.TestCouponAppliesOnce"}
				h.PassToPass = nil
				return h
			}(),
			verify.Results{Tests: []verify.TestResult{gr(cart, "TestZeroCoupon", verify.Pass, "")}, Crashes: []verify.Crash{{Package: "example.com/shop/other", FirstLines: "panic: x"}}},
			verify.NotReproduced, "the test binary of example.com/shop/other crashed: panic: x; the check never detected the bug: cart.TestCouponAppliesOnce is missing"},
		{"an interrupted run counts what failed before",
			validHarness(), verify.Results{Tests: []verify.TestResult{gr(cart, "TestCouponAppliesOnce", verify.Fail, "got 8100")}, Interrupted: "killed by the sandbox: memory"},
			verify.Reproduced, `fail-to-pass 1/1 failed with "8100"; then the run was interrupted: killed by the sandbox: memory`},
		{"an interrupted run that cut the test short did not execute it",
			validHarness(), verify.Results{Tests: []verify.TestResult{{Package: cart, Name: "TestCouponAppliesOnce", Outcome: verify.Fail, Unfinished: true}}, Interrupted: "timed out after 5m0s"},
			verify.NotExecuted, "the base run was interrupted (timed out after 5m0s) before TestCouponAppliesOnce ran"},
		{"an interrupted run before the test started did not execute it",
			validHarness(), verify.Results{Tests: []verify.TestResult{gr(cart, "TestZeroCoupon", verify.Pass, "")}, Interrupted: "the command died of signal SIGKILL"},
			verify.NotExecuted, "the base run was interrupted (the command died of signal SIGKILL) before TestCouponAppliesOnce ran"},
		{"a pass-to-pass test base lacks is the harness's mistake",
			validHarness(), results(tr("TestCouponAppliesOnce", verify.Fail, "got 8100")),
			verify.NotExecuted, "the harness names tests the base does not have: TestZeroCoupon, TestEmptyCart"},
		{"a package that crashed is named before the tests it hid",
			func() verify.Harness {
				h := validHarness()
				h.FailToPass = []string{"cart.TestCouponAppliesOnce"}
				h.PassToPass = nil
				return h
			}(),
			verify.Results{Tests: []verify.TestResult{gr(cart, "TestZeroCoupon", verify.Pass, "")}, Failures: []verify.PackageFailure{{Package: "example.com/shop/other", Build: true, Output: "other/x.go:1:1: syntax error\n"}}},
			verify.NotReproduced, "example.com/shop/other failed to build: other/x.go:1:1: syntax error; the check never detected the bug: cart.TestCouponAppliesOnce is missing"},
		{"a long list of them is shortened",
			many, results(tr("TestCouponAppliesOnce", verify.Fail, "got 8100")),
			verify.NotExecuted, "the harness names tests the base does not have: TestA, TestB, TestC, TestD, TestE and 2 more"},
		{"a crash may hide them, so it is not a mistake then",
			validHarness(), verify.Results{Tests: []verify.TestResult{gr(cart, "TestCouponAppliesOnce", verify.Fail, "got 8100")}, Crashes: []verify.Crash{stackOverflow}},
			verify.Reproduced, `fail-to-pass 1/1 failed with "8100"; then`},
		{"a build failure shows its first compiler lines first",
			validHarness(), verify.Results{Failures: []verify.PackageFailure{{Package: cart, Build: true,
				Output: "# example.com/shop/cart\ncart/cart.go:3:2: undefined: Total\ncart/cart.go:4:2: undefined: Sum\ncart/cart.go:5:2: undefined: Avg\ncart/cart.go:6:2: undefined: Max\nFAIL\texample.com/shop/cart [build failed]\n"}}},
			verify.NotExecuted, "example.com/shop/cart failed to build: cart/cart.go:3:2: undefined: Total | cart/cart.go:4:2: undefined: Sum | cart/cart.go:5:2: undefined: Avg; could not run TestCouponAppliesOnce"},
		{"a package that panicked before its tests shows the panic",
			validHarness(), verify.Results{Failures: []verify.PackageFailure{{Package: cart, Output: "panic: init failed\n\ngoroutine 1 [running]:\nexample.com/shop/cart.init.0()\n\t/src/cart/cart.go:9 +0x25\n"}}},
			verify.NotExecuted, "example.com/shop/cart failed before running tests: panic: init failed [example.com/shop/cart.init.0 at /src/cart/cart.go:9]"},
		{"a dependency missing from the offline cache is said plainly",
			validHarness(), verify.Results{Failures: []verify.PackageFailure{{Package: cart, Build: true,
				Output: "# example.com/shop/cart\ncart/cart.go:3:8: no required module provides package github.com/shopspring/decimal; to add it:\n"}}},
			verify.NotExecuted, "example.com/shop/cart: dependency github.com/shopspring/decimal is not in the offline cache: fetch it first (go mod download / npm ci / pip install)"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, detail, tests := verify.JudgeBase(tc.h, tc.res)
			if got != tc.want || !strings.HasPrefix(detail, tc.detail) {
				t.Fatalf("JudgeBase = %s %q, want %s starting %q", got, detail, tc.want, tc.detail)
			}
			if len(tests) != len(tc.h.FailToPass)+len(tc.h.PassToPass) {
				t.Fatalf("tests = %+v", tests)
			}
		})
	}
}

func TestJudgeCandidateStaysStrict(t *testing.T) {
	t.Parallel()
	const cart = "example.com/shop/cart"
	h := validHarness()
	all := []verify.TestResult{gr(cart, "TestCouponAppliesOnce", verify.Pass, ""), gr(cart, "TestZeroCoupon", verify.Pass, ""), gr(cart, "TestEmptyCart", verify.Pass, "")}
	suite := validHarness()
	suite.FailToPass, suite.PassToPass = []string{"coupon"}, []string{"totals"}
	node := func(outcomes ...string) verify.Results {
		var res verify.Results
		for i, n := range []string{"coupon > applies once > works", "coupon > works", "totals > works"} {
			res.Tests = append(res.Tests, gr("test", n, outcomes[i], ""))
		}
		return res
	}
	for _, tc := range []struct {
		rule   string
		h      verify.Harness
		res    verify.Results
		want   string
		detail string
	}{
		{"a crash that hid a test fails, its first lines first",
			h, verify.Results{Tests: all[:2], Crashes: []verify.Crash{{Package: cart, Test: "TestZeroCoupon", FirstLines: "panic: boom"}}},
			verify.Failed, "the test binary of example.com/shop/cart crashed: panic: boom; TestEmptyCart missing from the results"},
		{"an interrupted run never passes",
			h, verify.Results{Tests: all, Interrupted: "timed out after 5m0s"},
			verify.NotExecuted, "the run was interrupted (timed out after 5m0s)"},
		{"many missing tests are shortened",
			func() verify.Harness {
				h := validHarness()
				h.PassToPass = []string{"TestA", "TestB", "TestC", "TestD", "TestE", "TestF", "TestG"}
				return h
			}(), verify.Results{Tests: all[:1]},
			verify.Failed, "TestA, TestB, TestC, TestD, TestE and 2 more missing from the results"},
		{"a suite name passes when every case in it passes", suite, node(verify.Pass, verify.Pass, verify.Pass), verify.Passed, "fail-to-pass 1/1 passed, pass-to-pass 1/1 passed"},
		{"a suite name fails when one case fails", suite, node(verify.Pass, verify.Fail, verify.Pass), verify.Failed, "coupon failed"},
		{"a suite name with a skipped case is a failure", suite, node(verify.Pass, verify.Pass, verify.Skip), verify.Failed, "totals was skipped"},
		// Code under test can register a top-level node test named like
		// the suite; it must not stand in for the suite's failing case.
		{"a case named like the suite does not hide the suite's failure", suite,
			verify.Results{Tests: append(node(verify.Fail, verify.Pass, verify.Pass).Tests, gr("test", "coupon", verify.Pass, ""))},
			verify.Failed, "coupon failed"},
		{"nor its skipped case", suite,
			verify.Results{Tests: append(node(verify.Pass, verify.Pass, verify.Skip).Tests, gr("test", "totals", verify.Pass, ""))},
			verify.Failed, "totals was skipped"},
		{"a Go subtest skipped inside a passing test is fine", h,
			verify.Results{Tests: append(slices.Clone(all), gr(cart, "TestZeroCoupon/later", verify.Skip, ""))},
			verify.Passed, "fail-to-pass 1/1 passed, pass-to-pass 2/2 passed"},
		{"a forged pass of a Go test whose subtest failed is a failure", h,
			verify.Results{Tests: append(slices.Clone(all), gr(cart, "TestZeroCoupon/case", verify.Fail, "got 1"))},
			verify.Failed, "TestZeroCoupon failed"},
		{"a suite name with no cases is missing", suite, verify.Results{Tests: node(verify.Pass, verify.Pass, verify.Pass).Tests[:2]}, verify.Failed, "totals missing"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, detail, _ := verify.JudgeCandidate(tc.h, tc.res)
			if got != tc.want || !strings.HasPrefix(detail, tc.detail) {
				t.Fatalf("JudgeCandidate = %s %q, want %s starting %q", got, detail, tc.want, tc.detail)
			}
		})
	}
}

// A failing test's detail quotes why it failed, not the witness's line,
// which its output carries first when a deferred check logs it (seen on
// spf13/cast: "number_internal_test.go:84: signoff-witness fail 981c…").
func TestJudgeCandidateDetailSkipsTheWitnessLine(t *testing.T) {
	t.Parallel()
	h := verify.Harness{FailToPass: []string{"TestA"}, ExpectedFailure: "want 9000"}
	res := verify.Results{Tests: []verify.TestResult{{Package: "p", Name: "TestA", Outcome: verify.Fail,
		Output: "    a_test.go:9: signoff-witness fail 981c4617a398f280a77b1d027d6683278e758dc38d30\n    a_test.go:7: got 8100\n"}}}
	_, detail, _ := verify.JudgeCandidate(h, res)
	if strings.Contains(detail, "signoff-witness") || !strings.Contains(detail, "got 8100") {
		t.Errorf("detail %q: want the test's own message, not the witness line", detail)
	}
}
