package verify_test

import (
	"context"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

// TestObserveAndDerive runs a fix's new test on base and on the fix in the
// real sandbox, with the frozen test tree of the tests commit in place,
// and derives the lists from what happened: the new test fails on base
// and passes on the fix, the old test passes on both, and the proposed
// expected failure is the assertion's line.
func TestObserveAndDerive(t *testing.T) {
	runner := realRunner(t)
	ctx := context.Background()
	r, ids := gitRepo(t,
		map[string]string{
			"go.mod":            "module example.com/shop\n\ngo 1.22\n",
			"cart/cart.go":      "package cart\n\nfunc Total(p, qty int) int { return p * (qty - 1) }\n\nfunc Zero() int { return 0 }\n",
			"cart/zero_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {\n\tif Zero() != 0 {\n\t\tt.Fatal(\"not zero\")\n\t}\n}\n",
		},
		map[string]string{
			"cart/cart.go": "package cart\n\nfunc Total(p, qty int) int { return p * qty }\n\nfunc Zero() int { return 0 }\n",
			"cart/total_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tfor _, c := range []struct{ name string; p, q, want int }{{\"one\", 3, 1, 3}, {\"two\", 3, 2, 6}} {\n" +
				"\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tif got := Total(c.p, c.q); got != c.want {\n\t\t\t\tt.Errorf(\"Total(%d, %d) = %d, want %d\", c.p, c.q, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n",
		},
	)
	base, fix := ids[0], ids[1]
	when, _ := r.CommitTime(ctx, fix)
	tc, err := verify.CommitTestsFrom(ctx, r, base, fix, verify.Harness{}.ProtectedGlobs(), when)
	if err != nil {
		t.Fatal(err)
	}
	h := verify.Harness{Base: base, TestsFrom: tc.Commit, TestFiles: tc.Files, Command: []string{"go", "test", "-json", "./cart"},
		Format: verify.FormatGoTestJSON, TimeoutSeconds: 120, Runs: 2}
	obs, err := verify.Observe(ctx, verify.ObserveOptions{RepoDir: r.Dir, Harness: h, Reference: fix, Runs: 2, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Base) != 2 || len(obs.Reference) != 2 || obs.ReferenceCommit != fix {
		t.Fatalf("observed %d base and %d reference runs of %s", len(obs.Base), len(obs.Reference), obs.ReferenceCommit)
	}
	var baseRes, refRes []verify.Results
	for _, run := range slices.Concat(obs.Base, obs.Reference) {
		if run.Interrupted != "" {
			t.Fatalf("run interrupted: %s", run.Interrupted)
		}
	}
	for _, run := range obs.Base {
		baseRes = append(baseRes, run.Results)
		if run.ExitCode == 0 {
			t.Errorf("base run exited 0 with a failing test")
		}
	}
	for _, run := range obs.Reference {
		refRes = append(refRes, run.Results)
	}
	d, err := verify.Derive(h.Format, baseRes, refRes)
	if err != nil {
		t.Fatal(err)
	}
	const total, zero = "example.com/shop/cart.TestTotal", "example.com/shop/cart.TestZero"
	if !slices.Equal(d.FailToPass, []string{total}) || !slices.Equal(d.PassToPass, []string{zero}) {
		t.Errorf("fail_to_pass %q pass_to_pass %q", d.FailToPass, d.PassToPass)
	}
	if got := d.ExpectedFailures[total]; got != (verify.Matcher{Substring: "Total(3, 1) = 0, want 3"}) {
		t.Errorf("expected failure %q, want the first failing subtest's assertion", got)
	}
}
