package verify_test

import (
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
