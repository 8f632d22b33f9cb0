package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
)

// initRepo makes a Go module repository with one commit per file set (an
// empty content deletes the file) and returns it and the commit ids.
func initRepo(t *testing.T, commits ...map[string]string) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if _, err := sandbox.Default(); err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_AUTHOR_DATE=@1800000000 +0000", "GIT_COMMITTER_DATE=@1800000000 +0000"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(dir, 0o755)
	git("init", "-q", "-b", "main")
	var ids []string
	for _, files := range commits {
		for p, c := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			if c == "" {
				os.Remove(full)
				continue
			}
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "-m", "commit")
		ids = append(ids, git("rev-parse", "HEAD"))
	}
	return dir, ids
}

// initCmd runs the binary with stdout and stderr apart.
func initCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

func testCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "signoff", "go-build-test")
}

const (
	initGoMod     = "module example.com/shop\n\ngo 1.22\n"
	initZero      = "package cart\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {\n\tif Total(0, 3) != 0 {\n\t\tt.Fatal(\"not zero\")\n\t}\n}\n"
	initBuggy     = "package cart\n\n// Total is the price of qty items.\nfunc Total(p, qty int) int {\n\tif qty > 1 {\n\t\treturn p * (qty - 1)\n\t}\n\treturn p * qty\n}\n"
	initFixed     = "package cart\n\n// Total is the price of qty items.\nfunc Total(p, qty int) int {\n\treturn p * qty\n}\n"
	initTableTest = "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tfor _, c := range []struct {\n\t\tname      string\n\t\tp, q, want int\n\t}{{\"one\", 3, 1, 3}, {\"two\", 3, 2, 6}} {\n" +
		"\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tif got := Total(c.p, c.q); got != c.want {\n\t\t\t\tt.Errorf(\"Total(%d, %d) = %d, want %d\", c.p, c.q, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n"
)

// harnessInitVerify derives a harness from fix, checks it parses, and
// verifies the fix with it: it must be VERIFIED.
func harnessInitVerify(t *testing.T, repo, fix string, extra ...string) (verify.Harness, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "harness.json")
	_, stderr, code := initCmd(t, append([]string{"harness", "init", "--repo", repo, "--fix", fix, "--out", file, "--cache", testCache()}, extra...)...)
	if code != 0 {
		t.Fatalf("harness init: exit %d\n%s", code, stderr)
	}
	h, _, err := verify.LoadHarness(file)
	if err != nil {
		t.Fatalf("the written harness: %v\n%s", err, stderr)
	}
	for _, want := range []string{"base        " + h.Base, "tests_from  " + h.TestsFrom + " (refs/signoff/harness/", "fail_to_pass", "next: signoff verify --repo " + repo + " --harness " + file} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
	out, code := signoffCmd(t, "verify", "--repo", repo, "--harness", file, "--candidate", fix, "--cache", testCache(), "--runs", "2")
	if code != 0 || lastLine(out) != "verdict: VERIFIED" {
		t.Errorf("verify of the reference with the derived harness: exit %d\n%s\nharness init said:\n%s", code, out, stderr)
	}
	return h, stderr
}

// TestHarnessInitTableDrivenSubtest: the fix adds a table-driven test
// whose failing subtest prints the signature; the harness names the
// top-level test, expects the subtest's line, keeps the old test as
// pass-to-pass and verifies the fix.
func TestHarnessInitTableDrivenSubtest(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy, "cart/zero_test.go": initZero, "README.md": "shop\n"},
		map[string]string{"cart/cart.go": initFixed, "cart/total_test.go": initTableTest},
	)
	h, _ := harnessInitVerify(t, repo, ids[1])
	const total = "example.com/shop/cart.TestTotal"
	if !slices.Equal(h.FailToPass, []string{total}) || !slices.Equal(h.PassToPass, []string{"example.com/shop/cart.TestZero"}) {
		t.Errorf("fail_to_pass %q pass_to_pass %q", h.FailToPass, h.PassToPass)
	}
	if got := h.ExpectedFailures[total].Substring; got != "Total(3, 2) = 3, want 6" {
		t.Errorf("expected failure %q, want the failing subtest's line", got)
	}
	if h.Base != ids[0] || !slices.Equal(h.TestFiles, []string{"cart/total_test.go"}) || !slices.Equal(h.Command, []string{"go", "test", "-json", "./cart"}) || h.Format != verify.FormatGoTestJSON {
		t.Errorf("harness %+v", h)
	}
}

// TestHarnessInitTwoMessages: two fail-to-pass tests print different
// messages; each gets its own expected failure.
func TestHarnessInitTwoMessages(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy + "\nfunc Tax(p int) int { return p / 10 }\n", "cart/zero_test.go": initZero},
		map[string]string{"cart/cart.go": initFixed + "\nfunc Tax(p int) int { return p / 5 }\n",
			"cart/fix_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif got := Total(2, 2); got != 4 {\n\t\tt.Fatalf(\"got %d for two items, want 4\", got)\n\t}\n}\n\n" +
				"func TestTax(t *testing.T) {\n\tif Tax(100) != 20 {\n\t\tt.Error(\"tax mismatch: not a fifth\")\n\t}\n}\n"},
	)
	h, _ := harnessInitVerify(t, repo, ids[1])
	two, tax := "example.com/shop/cart.TestTwo", "example.com/shop/cart.TestTax"
	if !slices.Equal(h.FailToPass, []string{tax, two}) {
		t.Errorf("fail_to_pass %q", h.FailToPass)
	}
	if h.ExpectedFailures[two].Substring != "got 2 for two items, want 4" || h.ExpectedFailures[tax].Substring != "tax mismatch: not a fifth" {
		t.Errorf("expected failures %+v", h.ExpectedFailures)
	}
}

// TestHarnessInitFlakyLeftOut: a test whose outcome changes from run to
// run of the same commit (a coin toss of math/rand) is left out and named
// with its outcomes; as it still fails on some reference runs, the Go
// command is narrowed to the harness's tests, and the fix is VERIFIED.
func TestHarnessInitFlakyLeftOut(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy, "cart/zero_test.go": initZero},
		map[string]string{"cart/cart.go": initFixed,
			"cart/fix_test.go": "package cart\n\nimport (\n\t\"math/rand/v2\"\n\t\"testing\"\n)\n\nfunc TestTwo(t *testing.T) {\n\tif got := Total(2, 2); got != 4 {\n\t\tt.Fatalf(\"got %d for two items, want 4\", got)\n\t}\n}\n\n" +
				"func TestFlaky(t *testing.T) {\n\tif rand.IntN(2) == 0 {\n\t\tt.Fatal(\"unlucky\")\n\t}\n}\n"},
	)
	// Eight runs a side: the coin lands the same way on all of both
	// sides' runs once in about 16000 tests.
	h, stderr := harnessInitVerify(t, repo, ids[1], "--runs", "8")
	if !slices.Equal(h.FailToPass, []string{"example.com/shop/cart.TestTwo"}) || slices.Contains(h.PassToPass, "example.com/shop/cart.TestFlaky") {
		t.Errorf("fail_to_pass %q pass_to_pass %q", h.FailToPass, h.PassToPass)
	}
	if !strings.Contains(stderr, "flaky     example.com/shop/cart.TestFlaky: base ") {
		t.Errorf("the flaky test is not listed:\n%s", stderr)
	}
	if want := []string{"go", "test", "-json", "-run=^(TestTwo|TestZero)$", "./cart"}; strings.Contains(stderr, "reference fail") && !slices.Equal(h.Command, want) {
		t.Errorf("command %q, want %q (a flaky test failed on the reference)", h.Command, want)
	}
}

// TestHarnessInitNewTestDoesNotBuildOnBase: the fix's test calls a
// function the fix adds, so its package does not build on base; it cannot
// be fail-to-pass, and with no other test there is nothing to verify.
func TestHarnessInitNewTestDoesNotBuildOnBase(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy, "cart/zero_test.go": initZero},
		map[string]string{"cart/cart.go": initFixed + "\n// Discount takes a tenth off.\nfunc Discount(p int) int { return p - p/10 }\n",
			"cart/discount_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestDiscount(t *testing.T) {\n\tif Discount(100) != 90 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"},
	)
	stdout, stderr, code := initCmd(t, "harness", "init", "--repo", repo, "--fix", ids[1], "--cache", testCache())
	if code != 3 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 3 and no harness", code, stdout)
	}
	for _, want := range []string{"left out  example.com/shop/cart.TestDiscount (base not-run, reference pass): its package did not build or start on base", "undefined: Discount", "nothing to verify"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestHarnessInitUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--fix", "HEAD", "--base", "HEAD"},
		{"--base", "HEAD", "--reference", "HEAD"},
		{"--base", "HEAD", "--tests", "HEAD", "--test-patch", "x.patch", "--reference", "HEAD"},
		{"--fix", "HEAD", "--command", `["go","test"]`},
		{"--fix", "HEAD", "--runs", "0"},
	} {
		_, stderr, code := initCmd(t, append([]string{"harness", "init"}, args...)...)
		if code != 3 || !strings.Contains(stderr, "Usage: signoff harness init") {
			t.Errorf("harness init %q: exit %d\n%s", args, code, stderr)
		}
	}
}

// TestHarnessInitPytest: a Python repository gets a pytest command whose
// standard output is the JUnit report alone (pytest's own text goes to
// stderr), and the fix is VERIFIED with the derived harness.
func TestHarnessInitPytest(t *testing.T) {
	t.Parallel()
	if err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("no pytest for /usr/bin/python3: %v", err)
	}
	repo, ids := initRepo(t,
		map[string]string{"shop.py": "def total(p, q):\n    return p * (q - 1) if q > 1 else p * q\n", "test_zero.py": "from shop import total\n\n\ndef test_zero():\n    assert total(0, 3) == 0\n"},
		map[string]string{"shop.py": "def total(p, q):\n    return p * q\n",
			"test_total.py": "from shop import total\n\n\ndef test_two():\n    assert total(3, 2) == 6, \"total of two items\"\n\n\ndef test_one():\n    assert total(3, 1) == 3\n"},
	)
	h, _ := harnessInitVerify(t, repo, ids[1])
	if h.Format != verify.FormatJUnitXML || len(h.Command) != 3 || h.Command[0] != "sh" || !strings.Contains(h.Command[2], "'test_total.py'") {
		t.Errorf("command %q format %s", h.Command, h.Format)
	}
	if len(h.FailToPass) != 1 || !strings.HasSuffix(h.FailToPass[0], "test_two") || len(h.PassToPass) != 1 || !strings.HasSuffix(h.PassToPass[0], "test_one") {
		t.Errorf("fail_to_pass %q pass_to_pass %q", h.FailToPass, h.PassToPass)
	}
	if got := h.ExpectedFailures[h.FailToPass[0]].Substring; !strings.Contains(got, "total of two items") {
		t.Errorf("expected failure %q", got)
	}
}

// TestHarnessInitNode: a package.json repository gets node's test runner
// with its JUnit reporter on the changed test files.
func TestHarnessInitNode(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	repo, ids := initRepo(t,
		map[string]string{"package.json": "{\"name\": \"shop\", \"private\": true}\n", "shop.js": "exports.total = (p, q) => q > 1 ? p * (q - 1) : p * q;\n"},
		map[string]string{"shop.js": "exports.total = (p, q) => p * q;\n",
			"shop.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\nconst { total } = require('./shop.js');\n\ntest('two items', () => {\n  assert.strictEqual(total(3, 2), 6);\n});\n"},
	)
	h, _ := harnessInitVerify(t, repo, ids[1])
	if !slices.Equal(h.Command, []string{"node", "--test", "--test-reporter=junit", "shop.test.js"}) || h.Format != verify.FormatJUnitXML || len(h.FailToPass) != 1 {
		t.Errorf("harness %+v", h)
	}
}

// TestHarnessInitRefusesUnreadRuns: runs that time out say nothing about
// any test, so nothing is derived from them (and a test that passes on
// both sides alone is nothing to verify).
func TestHarnessInitRefusesUnreadRuns(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy, "cart/zero_test.go": initZero},
		map[string]string{"cart/cart.go": initFixed,
			"cart/slow_test.go": "package cart\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlow(t *testing.T) { time.Sleep(time.Minute) }\n"},
		map[string]string{"cart/slow_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestSame(t *testing.T) {\n\tif Total(1, 1) != 1 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n"},
	)
	_, stderr, code := initCmd(t, "harness", "init", "--repo", repo, "--fix", ids[1], "--runs", "1", "--timeout", "3", "--cache", testCache())
	if code != 3 || !strings.Contains(stderr, "not every run could be read") || !strings.Contains(stderr, "timed out") {
		t.Errorf("timed-out runs: exit %d\n%s", code, stderr)
	}
	_, stderr, code = initCmd(t, "harness", "init", "--repo", repo, "--fix", ids[2], "--runs", "1", "--cache", testCache())
	if code != 3 || !strings.Contains(stderr, "passes    example.com/shop/cart.TestSame on every base and reference run") || !strings.Contains(stderr, "nothing to verify") {
		t.Errorf("no fail-to-pass test: exit %d\n%s", code, stderr)
	}
}

// TestHarnessInitTestPatch: tests given as a patch onto base, with the
// reference apart; a patch that touches anything but test files is
// refused before anything runs.
func TestHarnessInitTestPatch(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "cart/cart.go": initBuggy, "cart/zero_test.go": initZero},
		map[string]string{"cart/cart.go": initFixed, "cart/total_test.go": initTableTest},
	)
	diff := func(paths ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "diff", ids[0], ids[1], "--"}, paths...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "tests.patch")
		os.WriteFile(file, out, 0o644)
		return file
	}
	_, stderr, code := initCmd(t, "harness", "init", "--repo", repo, "--base", ids[0], "--test-patch", diff(), "--reference", ids[1])
	if code != 3 || !strings.Contains(stderr, "non-test files cart/cart.go") {
		t.Errorf("a patch with the fix in it: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := initCmd(t, "harness", "init", "--repo", repo, "--base", ids[0], "--test-patch", diff("cart/total_test.go"), "--reference", ids[1], "--runs", "1", "--cache", testCache())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	h, err := verify.ParseHarness([]byte(stdout))
	if err != nil || h.Base != ids[0] || !slices.Equal(h.FailToPass, []string{"example.com/shop/cart.TestTotal"}) {
		t.Errorf("harness %+v (%v)", h, err)
	}
}

// TestHarnessInitShopLite derives ShopLite's coupon harness from its base,
// its reproduction branch and its genuine fix, and finds the lists a
// person wrote by hand: the same fail-to-pass test and the same nine
// pass-to-pass tests (qualified by package). The fix that breaks a
// pass-to-pass test is REJECTED with it.
func TestHarnessInitShopLite(t *testing.T) {
	t.Parallel()
	repo, harness, cache := verifyFixture(t)
	manual, _, err := verify.LoadHarness(harness)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "derived.json")
	_, stderr, code := initCmd(t, "harness", "init", "--repo", repo, "--base", manual.Base, "--tests", "repro/coupon", "--reference", "fix/genuine", "--all-packages", "--out", file, "--cache", cache)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	h, _, err := verify.LoadHarness(file)
	if err != nil {
		t.Fatal(err)
	}
	bare := func(names []string) []string {
		var out []string
		for _, n := range names {
			out = append(out, n[strings.LastIndex(n, ".")+1:])
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(bare(h.FailToPass), bare(manual.FailToPass)) || !slices.Equal(bare(h.PassToPass), bare(manual.PassToPass)) {
		t.Errorf("derived fail_to_pass %q pass_to_pass %q, written by hand %q %q", h.FailToPass, h.PassToPass, manual.FailToPass, manual.PassToPass)
	}
	if got := h.ExpectedFailures[h.FailToPass[0]].Substring; !strings.Contains(got, manual.ExpectedFailure) {
		t.Errorf("expected failure %q does not hold the hand-written %q", got, manual.ExpectedFailure)
	}
	for cand, want := range map[string]string{"fix/genuine": "verdict: VERIFIED", "fix/false-breaks-p2p": "verdict: REJECTED"} {
		if out, _ := signoffCmd(t, "verify", "--repo", repo, "--harness", file, "--candidate", cand, "--cache", cache, "--runs", "1"); lastLine(out) != want {
			t.Errorf("verify %s with the derived harness:\n%s", cand, out)
		}
	}
}

// TestHarnessInitPanickingBase: the bug panics on base; the panic's
// message (without the runtime's note) is the expected failure, and the
// fix is VERIFIED with it.
func TestHarnessInitPanickingBase(t *testing.T) {
	t.Parallel()
	repo, ids := initRepo(t,
		map[string]string{"go.mod": initGoMod, "lst/lst.go": "package lst\n\nfunc Last(s []int) int { return s[len(s)] }\n"},
		map[string]string{"lst/lst.go": "package lst\n\nfunc Last(s []int) int { return s[len(s)-1] }\n",
			"lst/lst_test.go": "package lst\n\nimport \"testing\"\n\nfunc TestLast(t *testing.T) {\n\tif Last([]int{1, 2, 3}) != 3 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"},
	)
	h, _ := harnessInitVerify(t, repo, ids[1], "--runs", "1")
	if got := h.ExpectedFailures["example.com/shop/lst.TestLast"].Substring; got != "panic: runtime error: index out of range [3] with length 3" {
		t.Errorf("expected failure %q", got)
	}
}
