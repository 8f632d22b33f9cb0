package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
)

// realRunner is the best isolated sandbox here. Without one the end-to-end
// tests fail, except under -short, where they are skipped.
func realRunner(t testing.TB) sandbox.Runner {
	t.Helper()
	r, err := sandbox.Default()
	if err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
	return r
}

// buildCache is the Go build cache the end-to-end tests share, so only the
// first verification of a test run compiles the standard library. It lives
// in the user cache directory beside the CLI's default cache.
func buildCache(t testing.TB) string {
	t.Helper()
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "signoff", "go-build-test")
}

// TestSYNKAITable reproduces SYNKAI's controlled comparison on ShopLite
// with real git, the real sandbox and real go test runs: the authored false
// fix is REJECTED because the harness is restored over it, the fix that
// breaks a pass-to-pass test is REJECTED, the genuine fix is VERIFIED on
// every run, a harness that does not fail on base and a harness that times
// out are INCONCLUSIVE, and candidates touching paths outside the
// allowlist are REJECTED before anything runs.
func TestSYNKAITable(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	slow := commitOn(t, s, "repro/slow", s.Branches[shoplite.BranchReproCoupon], map[string]string{
		"cart/slow_repro_test.go": "package cart\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(time.Hour) }\n",
	})
	broken := commitOn(t, s, "repro/broken", s.Branches[shoplite.BranchReproCoupon], map[string]string{
		"cart/broken_repro_test.go": "package cart\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
	})
	type row struct {
		name      string
		candidate string
		h         func(*verify.Harness)
		runs      int
		allow     []string
		want      string
		check     func(t *testing.T, r verify.Report)
	}
	rows := []row{
		{name: "authored false fix (edits the test to expect 8100)", candidate: shoplite.BranchFalseTestEdit, want: verify.Rejected,
			check: func(t *testing.T, r verify.Report) {
				if r.Stages[0].Outcome != verify.Restored || len(r.HarnessEdits) != 1 {
					t.Errorf("the candidate's test edit was not reported and discarded: %+v", r.Stages[0])
				}
				if c := stage(r, verify.StageCandidate, 1); !strings.Contains(c.Detail, "TestCouponAppliesOnce failed") || !strings.Contains(c.Detail, "8100") {
					t.Errorf("candidate stage = %q, want the restored test failing with 8100", c.Detail)
				}
			}},
		{name: "false fix that breaks a pass-to-pass test", candidate: shoplite.BranchFalseBreaks, want: verify.Rejected,
			check: func(t *testing.T, r verify.Report) {
				if c := stage(r, verify.StageCandidate, 1); !strings.Contains(c.Detail, "TestZeroCoupon failed") || !strings.Contains(c.Detail, "fail-to-pass 1/1 passed") {
					t.Errorf("candidate stage = %q", c.Detail)
				}
			}},
		{name: "genuine fix, 2 runs", candidate: shoplite.BranchGenuine, runs: 2, want: verify.Verified,
			check: func(t *testing.T, r verify.Report) {
				if len(r.Stages) != 6 || r.Stages[3].Name != verify.StageBuild || r.Stages[3].Outcome != verify.Passed {
					t.Errorf("stages = %d, want diff + 2 base + build + 2 candidate", len(r.Stages))
				}
				for _, st := range r.Stages[1:] {
					if st.Runner == nil || !st.Runner.Isolated || st.Runner.StdoutSHA256 != verify.SHA256(st.Stdout) {
						t.Errorf("stage %s %d: runner summary %+v", st.Name, st.Run, st.Runner)
					}
				}
			}},
		{name: "harness whose test passes on base", candidate: shoplite.BranchGenuine, want: verify.Inconclusive,
			h: func(h *verify.Harness) {
				h.FailToPass = []string{"TestZeroCoupon"}
				h.PassToPass = []string{"TestEmptyCart"}
			},
			check: func(t *testing.T, r verify.Report) {
				if !strings.Contains(r.Reason, "never detected the bug") || stage(r, verify.StageCandidate, 0).Outcome != verify.Skipped {
					t.Errorf("reason %q", r.Reason)
				}
			}},
		{name: "harness that times out", candidate: shoplite.BranchGenuine, want: verify.Inconclusive,
			h: func(h *verify.Harness) {
				h.TestsFrom = slow
				h.TestFiles = append(h.TestFiles, "cart/slow_repro_test.go")
				h.TimeoutSeconds = 8
			},
			check: func(t *testing.T, r verify.Report) {
				// The fail-to-pass test failed before the hang, so base
				// still reproduced; the candidate's run timed out.
				b, c := stage(r, verify.StageBase, 1), stage(r, verify.StageCandidate, 1)
				if b.Outcome != verify.Reproduced || !strings.Contains(b.Detail, "timed out after 8s") || b.Runner == nil || !b.Runner.TimedOut {
					t.Errorf("base stage = %s %q, runner %+v", b.Outcome, b.Detail, b.Runner)
				}
				if c.Outcome != verify.NotExecuted || c.Runner == nil || !c.Runner.TimedOut {
					t.Errorf("candidate stage = %s %q, runner %+v", c.Outcome, c.Detail, c.Runner)
				}
			}},
		{name: "harness that does not build", candidate: shoplite.BranchGenuine, want: verify.Inconclusive,
			h: func(h *verify.Harness) {
				h.TestsFrom = broken
				h.TestFiles = append(h.TestFiles, "cart/broken_repro_test.go")
			},
			check: func(t *testing.T, r verify.Report) {
				if b := stage(r, verify.StageBase, 1); b.Outcome != verify.NotExecuted || !strings.Contains(b.Detail, "failed to build") {
					t.Errorf("base stage = %s %q", b.Outcome, b.Detail)
				}
			}},
		{name: "genuine fix outside the allowlist cmd/**", candidate: shoplite.BranchGenuine, allow: []string{"cmd/**"}, want: verify.Rejected,
			check: func(t *testing.T, r verify.Report) {
				if stage(r, verify.StageBase, 0).Outcome != verify.Skipped || stage(r, verify.StageCandidate, 0).Outcome != verify.Skipped {
					t.Errorf("a refused candidate ran")
				}
			}},
		{name: "genuine fix inside the allowlist cart/**", candidate: shoplite.BranchGenuine, allow: []string{"cart/**"}, want: verify.Verified},
	}
	var summary strings.Builder
	tw := tabwriter.NewWriter(&summary, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tVERDICT\tSECONDS\tREASON")
	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			h := couponHarness(t, s, func(h *verify.Harness) {
				if rw.h != nil {
					rw.h(h)
				}
			})
			start := time.Now()
			rep, err := verify.Verify(context.Background(), verify.Options{
				RepoDir: s.Dir, Harness: h, Candidate: rw.candidate, Runs: rw.runs, Runner: runner,
				Allowlist: rw.allow, CacheDir: buildCache(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s on %s:\n%s", rw.candidate, rw.name, verify.Table(rep))
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\n", rw.name, rep.Verdict, time.Since(start).Seconds(), trim(rep.Reason, 90))
			if rep.Verdict != rw.want {
				t.Fatalf("verdict = %s, want %s (%s)", rep.Verdict, rw.want, rep.Reason)
			}
			if rw.check != nil {
				rw.check(t, rep)
			}
		})
	}
	tw.Flush()
	t.Logf("SYNKAI table on ShopLite (sandbox %s):\n%s", runner.Name(), summary.String())
}

func stage(r verify.Report, name string, run int) verify.Stage {
	for _, s := range r.Stages {
		if s.Name == name && s.Run == run {
			return s
		}
	}
	return verify.Stage{}
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// BenchmarkVerifyShopLite is a full verification of the genuine fix (diff,
// base run, candidate run, each in its own worktree and sandbox) with a
// warm build cache. Run with: go test -run '^$' -bench VerifyShopLite
// -benchtime 3x ./verify
func BenchmarkVerifyShopLite(b *testing.B) {
	runner := realRunner(b)
	s := sample(b)
	h := couponHarness(b, s)
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"sequential", false}, {"side-by-side", true}} {
		b.Run(mode.name, func(b *testing.B) {
			opts := verify.Options{RepoDir: s.Dir, Harness: h, Candidate: shoplite.BranchGenuine, Runner: runner, CacheDir: buildCache(b), Parallel: mode.parallel}
			if rep, err := verify.Verify(context.Background(), opts); err != nil || rep.Verdict != verify.Verified {
				b.Fatalf("warm-up: %s %v", rep.Verdict, err)
			}
			b.ResetTimer()
			var buildMS int64
			for b.Loop() {
				rep, err := verify.Verify(context.Background(), opts)
				if err != nil || rep.Verdict != verify.Verified {
					b.Fatalf("%s %v", rep.Verdict, err)
				}
				buildMS += stage(rep, verify.StageBuild, 0).DurationMS
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/verify")
			// What the build check (without the tests) adds.
			b.ReportMetric(float64(buildMS)/float64(b.N), "build-ms/verify")
		})
	}
}
