package bugdesk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/verify"
)

// TestRolesInstructModels: the reproducer and fixer carry instructions a
// tool-calling model can act on (their tools by name, what the server
// checks), and the configuration still parses for every provider.
func TestRolesInstructModels(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{agent.ProviderExternal, agent.ProviderAuthored} {
		cfg, err := agent.ParseConfig([]byte(Roles(provider)), nil)
		if err != nil {
			t.Fatalf("Roles(%s): %v", provider, err)
		}
		for role, words := range map[string][]string{
			RoleReproducer: {"list_source", "read_source", "propose_reproduction", "fail_to_pass", "expected_failure", "ERROR:", "give_up", "reporter_said_not_this"},
			RoleFixer:      {"list_source", "read_source", "propose_fix", "previous_attempts", "allowed_paths", "_test.go", "ERROR:", "give_up"},
		} {
			rc := cfg.Roles[role]
			if rc.Provider != provider || rc.MaxOutputTokens < 4096 {
				t.Errorf("%s on %s: provider %s, max_output_tokens %d", role, provider, rc.Provider, rc.MaxOutputTokens)
			}
			for _, w := range words {
				if !strings.Contains(rc.Instructions, w) {
					t.Errorf("%s's instructions do not mention %q", role, w)
				}
			}
		}
		if cfg.Roles[RoleReviewer].Instructions != "" {
			t.Error("the builtin reviewer got model instructions")
		}
	}
}

// TestNoTestEdits: an agent's fix may not change any path the frozen
// harness protects, named or by default; code changes pass.
func TestNoTestEdits(t *testing.T) {
	t.Parallel()
	spec, err := json.Marshal(verify.Harness{TestFiles: []string{"cart/coupon_repro_test.go"}, Protect: []string{"fixtures/**"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		changed []string
		refused string
	}{
		{"code only", []string{"cart/cart.go", "cmd/shoplite/main.go"}, ""},
		{"an existing test", []string{"cart/cart.go", "cart/cart_test.go"}, "cart/cart_test.go"},
		{"the harness's own test", []string{"cart/coupon_repro_test.go"}, "cart/coupon_repro_test.go"},
		{"test data", []string{"cart/testdata/prices.json"}, "cart/testdata/prices.json"},
		{"a path the harness protects", []string{"fixtures/a.json"}, "fixtures/a.json"},
		{"a file named like a test but not one", []string{"cart/contest.go"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := noTestEdits(tc.changed, spec)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if signoff.ErrorCode(err) != signoff.EFORBIDDEN || !strings.Contains(signoff.ErrorMessage(err), tc.refused) {
				t.Fatalf("got %v, want EFORBIDDEN naming %s", err, tc.refused)
			}
		})
	}
	if err := noTestEdits([]string{"cart/cart.go"}, []byte("{")); err == nil {
		t.Error("an unreadable harness spec let the fix through")
	}
}

// TestReproRunOutput: a refused reproduction is told what its test
// printed (so expected_failure can be taken from it), that a passing test
// does not detect the bug, and what the compiler said.
func TestReproRunOutput(t *testing.T) {
	t.Parallel()
	no := false
	h := verify.Harness{Format: verify.FormatGoTestJSON, FailToPass: []string{"TestNeverNegative"}, ExpectedFailure: "-1.00"}
	for _, tc := range []struct {
		name  string
		stage verify.Stage
		want  []string
	}{
		{"expected text missing", verify.Stage{Name: verify.StageBase, Run: 1, Outcome: verify.NotReproduced,
			Tests: []verify.TestOutcome{{Name: "TestNeverNegative", Kind: verify.FailToPass, Outcome: verify.Fail, ExpectedSeen: &no,
				Output: "=== RUN   TestNeverNegative\n    neg_test.go:9: Total(200 cents, SAVE300) = -100; want 0\n--- FAIL: TestNeverNegative (0.00s)\n"}}},
			[]string{"Base run 1: not-reproduced", `TestNeverNegative: fail, and its output does not contain expected_failure "-1.00"`, "= -100; want 0"}},
		{"test passes", verify.Stage{Name: verify.StageBase, Run: 1, Outcome: verify.NotReproduced,
			Tests: []verify.TestOutcome{{Name: "TestNeverNegative", Kind: verify.FailToPass, Outcome: verify.Pass}}},
			[]string{"TestNeverNegative: pass: the test passes on base, so it does not detect the reported bug"}},
		{"does not build", verify.Stage{Name: verify.StageBase, Run: 1, Outcome: verify.NotExecuted,
			Stdout: []byte(`{"Action":"output","Package":"shoplite/cart","Output":"cart/neg_test.go:5:2: undefined: Totall\n"}` + "\n" +
				`{"Action":"fail","Package":"shoplite/cart","FailedBuild":"shoplite/cart [shoplite/cart.test]"}` + "\n"),
			Tests: []verify.TestOutcome{{Name: "TestNeverNegative", Kind: verify.FailToPass, Outcome: verify.NotRun}}},
			[]string{"Base run 1: not-executed", "package shoplite/cart failed to build", "undefined: Totall"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := reproRunOutput(verify.Report{Stages: []verify.Stage{tc.stage}}, h)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the refusal lacks %q:\n%s", w, got)
				}
			}
		})
	}
	long := strings.Repeat("é", maxQuotedTestOutput)
	got := reproRunOutput(verify.Report{Stages: []verify.Stage{{Name: verify.StageBase, Run: 1, Outcome: verify.NotReproduced,
		Tests: []verify.TestOutcome{{Name: "TestNeverNegative", Kind: verify.FailToPass, Outcome: verify.Fail, ExpectedSeen: &no, Output: long}}}}}, h)
	if len(got) > maxQuotedTestOutput+400 || !strings.Contains(got, "[... cut]") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("long output not cut at a rune boundary (%d bytes)", len(got))
	}
}
