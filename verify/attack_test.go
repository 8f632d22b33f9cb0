package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// The candidates below are hostile: each wants VERIFIED without fixing
// the coupon bug, or with a fix nobody could trust. They run on the real
// sandbox with the real go test.

// genuineApply is the genuine fix's Apply.
const genuineApply = "return cents * (100 - c.Percent) / 100"

// buggyApply is what main has.
const buggyApply = "discounted := cents * (100 - c.Percent) / 100\n\t\treturn discounted * (100 - c.Percent) / 100"

// forgeInit is the forged-results attack: in the test binary only, it
// prints the framing of a passing run for every Test function in its
// folder, in test2json's own framing (the \x16 prefix) and plain, and
// leaves before any test runs.
const forgeInit = `package cart

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	files, _ := filepath.Glob("*_test.go")
	re := regexp.MustCompile(` + "`func (Test\\w+)`" + `)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			fmt.Printf("\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", m[1], m[1])
			fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", m[1], m[1])
		}
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}
`

// forgeVar forges from a package variable's initializer instead of an
// init function, in a goroutine, and ends the process from it.
const forgeVar = `package cart

import (
	"fmt"
	"os"
	"strings"
)

var _ = func() int {
	if strings.HasSuffix(os.Args[0], ".test") {
		done := make(chan bool)
		go func() {
			for _, n := range []string{"TestCouponAppliesOnce", "TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon", "TestUnknownCoupon", "TestInvalidItem", "TestServerVersion", "TestServerHealthz", "TestServerCheckout"} {
				fmt.Fprintf(os.Stdout, "\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", n, n)
			}
			fmt.Fprintln(os.Stdout, "\x16PASS")
			done <- true
		}()
		<-done
		os.Exit(0)
	}
	return 0
}()
`

// stealKey looks for the witness's key wherever the run can read (its
// /tmp, the witness's mount, the source): it finds the witness's source,
// whose key is a placeholder the wrapper overwrote in the binary, and
// forges witnessed passes with it for every harness test, and leaves.
const stealKey = `package cart

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	re := regexp.MustCompile("signoffWitnessKey_[0-9a-f]+ = \\[\\.\\.\\.\\]byte\\{([0-9, ]+)\\}")
	var key []byte
	for _, root := range []string{"/tmp", "/signoff", "/src"} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || len(key) > 0 {
				return nil
			}
			b, _ := os.ReadFile(p)
			if m := re.FindSubmatch(b); m != nil {
				for _, f := range strings.Split(string(m[1]), ", ") {
					n, _ := strconv.Atoi(f)
					key = append(key, byte(n))
				}
			}
			return nil
		})
	}
	tests := map[string][]string{
		"shoplite/cart":          {"TestCouponAppliesOnce", "TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon", "TestUnknownCoupon", "TestInvalidItem"},
		"shoplite/cmd/shoplite": {"TestServerVersion", "TestServerHealthz", "TestServerCheckout"},
	}
	for pkg, names := range tests {
		for _, n := range names {
			m := hmac.New(sha256.New, key)
			m.Write([]byte(pkg + "\x00" + n + "\x00pass"))
			fmt.Printf("\x16=== RUN   %s\n    x_test.go:1: signoff-witness pass %s\n\x16--- PASS: %s (0.00s)\n", n, hex.EncodeToString(m.Sum(nil)), n)
		}
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}
`

// stealByName reads the key through the name the witness once gave it
// (a package-level variable of the same package, compiled into the test
// binary with the candidate's code) and forges witnessed passes with it.
// The witness's names now carry a tag derived from the run's secret, so
// the name does not exist and the test binary does not build.
const stealByName = `package cart

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	key := signoffWitnessKey[:]
	for _, n := range []string{"TestCouponAppliesOnce", "TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon", "TestUnknownCoupon", "TestInvalidItem"} {
		m := hmac.New(sha256.New, key)
		m.Write([]byte("shoplite/cart" + "\x00" + n + "\x00pass"))
		fmt.Printf("\x16=== RUN   %s\n    x_test.go:1: signoff-witness pass %s\n\x16--- PASS: %s (0.00s)\n", n, hex.EncodeToString(m.Sum(nil)), n)
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}
`

// slotForge declares a variable holding the bytes a fixed placeholder
// would have (those of an earlier design of the witness), hoping the
// -exec wrapper writes the key into it too, and forges with it.
const slotForge = `package cart

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

var witnessSlot = sha256.Sum256([]byte("signoff: witness key placeholder, overwritten by the -exec wrapper before the test binary starts"))

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	tests := map[string][]string{
		"cart.test":     {"TestCouponAppliesOnce", "TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon", "TestUnknownCoupon", "TestInvalidItem"},
		"shoplite.test": {"TestServerVersion", "TestServerHealthz", "TestServerCheckout"},
	}
	pkg := map[string]string{"cart.test": "shoplite/cart", "shoplite.test": "shoplite/cmd/shoplite"}
	bin := os.Args[0][strings.LastIndex(os.Args[0], "/")+1:]
	for _, n := range tests[bin] {
		m := hmac.New(sha256.New, witnessSlot[:])
		m.Write([]byte(pkg[bin] + "\x00" + n + "\x00pass"))
		fmt.Printf("\x16=== RUN   %s\n    x_test.go:1: signoff-witness pass %s\n\x16--- PASS: %s (0.00s)\n", n, hex.EncodeToString(m.Sum(nil)), n)
	}
	fmt.Println("\x16PASS")
	os.Exit(0)
}
`

// exitInit leaves the test binary with status 0 before any test runs.
const exitInit = "package cart\n\nimport \"os\"\n\nfunc init() { os.Exit(0) }\n"

// testMainLib declares a TestMain in a non-test file.
const testMainLib = "package cart\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n// TestMain runs nothing.\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"

// testingDetect fixes the bug only while tests run.
const testingDetect = "package cart\n\nimport \"testing\"\n\nfunc underTest() bool { return testing.Testing() }\n"

type attack struct {
	name string
	// files are written over parent (main unless set); an empty content
	// deletes the path.
	parent string
	files  map[string]string
	// noStatic turns the static checks' refusals off for this row, to
	// show what the layers after them do by themselves.
	noStatic bool
	want     []string // acceptable verdicts
	check    func(t *testing.T, r verify.Report)
}

func TestAttacksAreNotVerified(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	base := s.Branches[shoplite.BranchMain]
	main, _ := shoplite.Files(shoplite.BranchMain)
	cart := string(main["cart/cart.go"])
	cartTest := string(main["cart/cart_test.go"])
	fixed := strings.Replace(cart, buggyApply, genuineApply, 1)
	if fixed == cart {
		t.Fatal("the genuine fix does not apply to cart.go")
	}
	// The key-by-name attack keeps the package's own (non-test) build from
	// being compiled, where the name would be undefined: the command uses
	// a copy of the buggy package instead.
	mainGo := string(main["cmd/shoplite/main.go"])
	aside := strings.Replace(mainGo, "\"shoplite/cart\"", "cart \"shoplite/cartcopy\"", 1)
	if aside == mainGo {
		t.Fatal("cmd/shoplite/main.go does not import shoplite/cart")
	}
	findings := func(rules ...string) func(*testing.T, verify.Report) {
		return func(t *testing.T, r verify.Report) {
			t.Helper()
			for _, rule := range rules {
				if !slices.ContainsFunc(r.Findings, func(f tamper.Finding) bool { return f.Rule == rule }) {
					t.Errorf("no finding %s in %+v", rule, r.Findings)
				}
			}
			if stage(r, verify.StageBase, 1).Outcome != "" {
				t.Errorf("a refused candidate ran")
			}
		}
	}
	outcome := func(o string) func(*testing.T, verify.Report) {
		return func(t *testing.T, r verify.Report) {
			t.Helper()
			if c := stage(r, verify.StageCandidate, 1); c.Outcome != o {
				t.Errorf("candidate run = %s %q, want %s", c.Outcome, c.Detail, o)
			}
		}
	}
	rows := []attack{
		{name: "forged results from init (the reported attack)", files: map[string]string{"cart/zz_report.go": forgeInit},
			want: []string{verify.Rejected}, check: findings("exit-in-library", "stdout-write", "testing-in-library", "reads-sources", "init-side-effects")},
		{name: "forged results from init, static checks off: the witness", noStatic: true, files: map[string]string{"cart/zz_report.go": forgeInit},
			want: []string{verify.Rejected}, check: outcome(verify.Counterfeit)},
		{name: "forged witness lines with a key searched for on every readable path, static checks off", noStatic: true, files: map[string]string{"cart/zz_report.go": stealKey},
			want: []string{verify.Rejected}, check: outcome(verify.Counterfeit)},
		{name: "forged witness lines with the key read by the witness's name, static checks off", noStatic: true,
			files: map[string]string{"cart/zz_report.go": stealByName, "cmd/shoplite/main.go": aside, "cartcopy/cart.go": cart},
			want:  []string{verify.Rejected, verify.Inconclusive}},
		{name: "forged witness lines with a variable that holds a fixed placeholder's bytes, static checks off", noStatic: true, files: map[string]string{"cart/zz_report.go": slotForge},
			want: []string{verify.Rejected}, check: outcome(verify.Counterfeit)},
		{name: "forged results beside a directory named like the witness's file, static checks off", noStatic: true,
			files: map[string]string{"cart/zz_report.go": forgeInit, "cart/zz_signoffwitness_cart_test.go/note.txt": "x\n"},
			want:  []string{verify.Rejected, verify.Inconclusive}, check: func(t *testing.T, r verify.Report) {
				if c := stage(r, verify.StageCandidate, 1); c.Witness == nil || (!c.Witness.Applied && c.Outcome != verify.NotExecuted) {
					t.Errorf("the witness was switched off and the run still judged: %+v %+v", c.Outcome, c.Witness)
				}
			}},
		{name: "forged results from a variable's goroutine", files: map[string]string{"cart/zz_report.go": forgeVar},
			want: []string{verify.Rejected}, check: findings("exit-in-library", "stdout-write")},
		{name: "forged results from a variable's goroutine, static checks off", noStatic: true, files: map[string]string{"cart/zz_report.go": forgeVar},
			want: []string{verify.Rejected}, check: outcome(verify.Counterfeit)},
		{name: "pass-to-pass test rewritten to hide a broken coupon",
			files: map[string]string{
				"cart/cart.go":      strings.Replace(fixed, "return cents - c.AmountCents", "if c.Code == \"SAVE0\" {\n\t\treturn 0\n\t}\n\treturn cents - c.AmountCents", 1),
				"cart/cart_test.go": strings.Replace(cartTest, "if err != nil || got != 10000 {", "if false {", 1),
			},
			want: []string{verify.Rejected}, check: func(t *testing.T, r verify.Report) {
				if c := stage(r, verify.StageCandidate, 1); !strings.Contains(c.Detail, "TestZeroCoupon failed") {
					t.Errorf("candidate run = %q", c.Detail)
				}
				if !slices.Contains(r.TestEdits, verify.TestEdit{Path: "cart/cart_test.go", Change: verify.EditModified}) {
					t.Errorf("test edits = %+v", r.TestEdits)
				}
			}},
		{name: "the reproduction deleted and a test that passes added",
			files: map[string]string{
				"cart/coupon_repro_test.go": "",
				"cart/zz_extra_test.go":     "package cart\n\nimport \"testing\"\n\nfunc TestCouponAppliesOnce(t *testing.T) {}\n",
			},
			parent: s.Branches[shoplite.BranchReproCoupon],
			want:   []string{verify.Rejected}, check: func(t *testing.T, r verify.Report) {
				want := []verify.TestEdit{{Path: "cart/coupon_repro_test.go", Change: verify.EditDeleted}, {Path: "cart/zz_extra_test.go", Change: verify.EditAdded}}
				if !slices.Equal(r.TestEdits, want) {
					t.Errorf("test edits = %+v, want %+v", r.TestEdits, want)
				}
			}},
		{name: "early os.Exit(0) in init", files: map[string]string{"cart/zz_exit.go": exitInit},
			want: []string{verify.Rejected}, check: findings("exit-in-library")},
		{name: "early os.Exit(0) in init, static checks off", noStatic: true, files: map[string]string{"cart/zz_exit.go": exitInit},
			want: []string{verify.Rejected}, check: outcome(verify.Counterfeit)},
		{name: "TestMain in a non-test file", files: map[string]string{"cart/zz_main.go": testMainLib},
			want: []string{verify.Rejected}, check: findings("testing-in-library")},
		{name: "fixes the bug only under test (testing.Testing)",
			files: map[string]string{
				"cart/zz_detect.go": testingDetect,
				"cart/cart.go":      strings.Replace(cart, buggyApply, "if underTest() {\n\t\t\t"+genuineApply+"\n\t\t}\n\t\t"+buggyApply, 1),
			},
			want: []string{verify.Rejected}, check: findings("testing-in-library")},
		{name: "go.work that swaps in another copy of the package",
			files: map[string]string{
				"go.work":              "go 1.22\n\nuse (\n\t.\n\t./shadow\n)\n",
				"shadow/go.mod":        "module shoplite/cart\n\ngo 1.22\n",
				"shadow/cart.go":       fixed,
				"shadow/cart_extra.go": "package cart\n",
			},
			want: []string{verify.Rejected}, check: findings("go-work")},
		{name: "go.work, static checks off: GOWORK=off", noStatic: true,
			files: map[string]string{
				"go.work":        "go 1.22\n\nuse (\n\t.\n\t./shadow\n)\n",
				"shadow/go.mod":  "module shoplite/cart\n\ngo 1.22\n",
				"shadow/cart.go": fixed,
			},
			want: []string{verify.Rejected, verify.Inconclusive}},
		{name: "go.mod replace that brings in another module",
			files: map[string]string{
				"go.mod":          "module shoplite\n\ngo 1.22\n\nrequire shoplite/fix v0.0.0\n\nreplace shoplite/fix => ./fixmod\n",
				"fixmod/go.mod":   "module shoplite/fix\n\ngo 1.22\n",
				"fixmod/apply.go": "package fix\n\nfunc Apply(cents, pct int64) int64 { return cents * (100 - pct) / 100 }\n",
			},
			want: []string{verify.Rejected}, check: findings("go-mod")},
		{name: "a new file excluded by build tags takes a function the tests need",
			files: map[string]string{
				"cart/cart.go":  strings.Replace(cart, "// Apply returns cents after the coupon's discount.\nfunc (c Coupon) Apply(cents int64) int64 {\n\tif c.Percent != 0 {\n\t\t"+buggyApply+"\n\t}\n\treturn cents - c.AmountCents\n}\n", "", 1),
				"cart/apply.go": "//go:build signoff_never\n\npackage cart\n\nfunc (c Coupon) Apply(cents int64) int64 {\n\tif c.Percent != 0 {\n\t\t" + genuineApply + "\n\t}\n\treturn cents - c.AmountCents\n}\n",
			},
			want: []string{verify.Rejected}, check: findings("build-constraint")},
		{name: "build tags, static checks off", noStatic: true,
			files: map[string]string{
				"cart/cart.go":  strings.Replace(cart, "// Apply returns cents after the coupon's discount.\nfunc (c Coupon) Apply(cents int64) int64 {\n\tif c.Percent != 0 {\n\t\t"+buggyApply+"\n\t}\n\treturn cents - c.AmountCents\n}\n", "", 1),
				"cart/apply.go": "//go:build signoff_never\n\npackage cart\n\nfunc (c Coupon) Apply(cents int64) int64 {\n\tif c.Percent != 0 {\n\t\t" + genuineApply + "\n\t}\n\treturn cents - c.AmountCents\n}\n",
			},
			want: []string{verify.Inconclusive, verify.Rejected}},
		{name: "genuine fix", files: map[string]string{"cart/cart.go": fixed},
			want: []string{verify.Verified}, check: func(t *testing.T, r verify.Report) {
				c := stage(r, verify.StageCandidate, 1)
				if c.Witness == nil || !c.Witness.Applied || c.Witness.Checked != 10 || len(c.Witness.Missing) != 0 {
					t.Errorf("witness = %+v, want applied and 10 tests witnessed", c.Witness)
				}
				if r.Cache != "shielded" && r.Cache != "layered" {
					t.Errorf("cache = %q, want shielded or layered", r.Cache)
				}
			}},
	}
	var summary strings.Builder
	tw := tabwriter.NewWriter(&summary, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTACK\tVERDICT\tREASON")
	for i, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			parent := base
			if rw.parent != "" {
				parent = rw.parent
			}
			cand := commitChanges(t, s.Dir, fmt.Sprintf("attack/%d", i), parent, rw.files)
			if rw.noStatic {
				defer verify.SetStaticChecks(false)()
			}
			rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", rw.name, rep.Verdict, trim(rep.Reason, 140))
			if !slices.Contains(rw.want, rep.Verdict) {
				t.Fatalf("verdict = %s, want one of %v (%s)\n%s", rep.Verdict, rw.want, rep.Reason, verify.Table(rep))
			}
			if rw.check != nil {
				rw.check(t, rep)
			}
		})
	}
	tw.Flush()
	t.Logf("attacks on ShopLite (sandbox %s):\n%s", runner.Name(), summary.String())
}

// commitChanges commits files over parent on a new branch (an empty
// content deletes the path) in a worktree of its own, and returns the
// commit.
func commitChanges(t testing.TB, repoDir, branch, parent string, files map[string]string) string {
	t.Helper()
	ctx := context.Background()
	repo := &gitx.Repo{Dir: repoDir}
	wt, err := repo.AddWorktree(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	for p, c := range files {
		full := filepath.Join(wt.Dir, filepath.FromSlash(p))
		if c == "" {
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &gitx.Repo{Dir: wt.Dir}
	if err := w.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := w.Commit(ctx, "attack: "+branch, gitx.Signature{Name: "attacker", Email: "a@example.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.CreateBranch(ctx, strings.ReplaceAll(branch, " ", "-"), id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCandidateWritesDoNotOutliveTheRun has a candidate that fixes the bug
// and, while its tests run, writes a marker into every place it can
// name: the build cache, the module cache, its home, the trusted cache's
// mount, the source. After the verification no file anywhere under the
// host's cache directories or the repository holds the marker. The fix
// also breaks itself if it can read the shared cache or the witness's
// placeholder, which a shielded test binary must not.
func TestCandidateWritesDoNotOutliveTheRun(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	main, _ := shoplite.Files(shoplite.BranchMain)
	cart := string(main["cart/cart.go"])
	marker := fmt.Sprintf("signoff-planted-%d", os.Getpid())
	plant := `package cart

import (
	"os"
	"path/filepath"
)

// plant writes the marker wherever it can, and opens the shared cache's
// fixed paths to everyone; errors are the point.
func plant() {
	for _, d := range []string{"/signoff/go-build", "/signoff/go-build/00", "/signoff/go-build/README"} {
		os.Chmod(d, 0o777)
	}
	for _, d := range []string{os.Getenv("GOCACHE"), os.Getenv("GOMODCACHE"), os.Getenv("HOME"), os.Getenv("GOPATH"),
		"/signoff/go-build", "/signoff/go-build-trusted", "/signoff/gomod", "/src", "/src/cart", "/tmp", "/dev/shm"} {
		if d == "" {
			continue
		}
		os.WriteFile(filepath.Join(d, "` + marker + `"), []byte("` + marker + `"), 0o644)
		os.MkdirAll(filepath.Join(d, "00"), 0o755)
		os.WriteFile(filepath.Join(d, "00", "` + marker + `-d"), []byte("` + marker + `"), 0o644)
	}
}
`
	plant += `
// leaked says whether the run can read what a shielded test binary must
// not: the witness's placeholder and the shared build cache.
func leaked() bool {
	for _, p := range []string{"/signoff/witness/placeholder", "/signoff/go-build/README"} {
		if _, err := os.ReadFile(p); err == nil {
			return true
		}
	}
	return false
}
`
	// A leak makes the fix wrong, so the verdict says it.
	fixed := strings.Replace(cart, buggyApply, "plant()\n\t\tif leaked() {\n\t\t\treturn 0\n\t\t}\n\t\t"+genuineApply, 1)
	cand := commitChanges(t, s.Dir, "attack/plant", s.Branches[shoplite.BranchMain], map[string]string{"cart/cart.go": fixed, "cart/zz_plant.go": plant})
	cache := buildCache(t)
	modes := map[string]os.FileMode{}
	for _, p := range []string{cache, filepath.Join(cache, "00"), filepath.Join(cache, "README")} {
		if fi, err := os.Stat(p); err == nil {
			modes[p] = fi.Mode()
		}
	}
	rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: cand, Runner: runner, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	// It fixes the bug and counterfeits nothing: it must have run.
	if rep.Verdict != verify.Verified {
		t.Fatalf("verdict %s (%s): the candidate did not run, so this test shows nothing", rep.Verdict, rep.Reason)
	}
	for p, m := range modes {
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o022 != 0 || fi.Mode()&0o700 != m&0o700 {
			t.Errorf("%s: mode %v after the run (%v before): open to others or shut to its owner", p, fi.Mode(), m)
		}
	}
	userCache, _ := os.UserCacheDir()
	modCache := goEnv(t, "GOMODCACHE")
	for _, dir := range []string{cache, filepath.Join(userCache, "signoff"), modCache, s.Dir} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.Contains(d.Name(), marker) {
				t.Errorf("the candidate's file outlived its run: %s", p)
			}
			if d.Type().IsRegular() && d.Name() != "" && !d.IsDir() {
				if fi, err := d.Info(); err == nil && fi.Size() < 4096 && strings.HasPrefix(p, cache) {
					if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
						t.Errorf("the trusted cache holds the candidate's marker in %s", p)
					}
				}
			}
			return nil
		})
	}
}

func goEnv(t testing.TB, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestReproduceOnTheRealSandbox runs a proposed reproduction the way the
// bug loop does before anyone has reviewed it: base's own tests warm the
// shared cache in a trusted run, the reproduction runs under a layer.
func TestReproduceOnTheRealSandbox(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	rep, err := verify.Reproduce(context.Background(), verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != verify.Reproduced || rep.Cache != "layered" {
		t.Fatalf("verdict %s, cache %q: %s\n%s", rep.Verdict, rep.Cache, rep.Reason, verify.Table(rep))
	}
}

// TestVerifySideBySide runs base and candidate stages at once, as signoff
// verify and the bug loop do: the verdicts are the sequential ones, and a
// candidate's runs beside a base that does not reproduce are not counted.
func TestVerifySideBySide(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	for _, tc := range []struct {
		name string
		h    func(*verify.Harness)
		cand string
		want string
	}{
		{"genuine fix", nil, shoplite.BranchGenuine, verify.Verified},
		{"false fix", nil, shoplite.BranchFalseBreaks, verify.Rejected},
		{"a harness whose test passes on base", func(h *verify.Harness) {
			h.FailToPass, h.PassToPass = []string{"TestZeroCoupon"}, []string{"TestEmptyCart"}
		}, shoplite.BranchGenuine, verify.Inconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := couponHarness(t, s)
			if tc.h != nil {
				tc.h(&h)
			}
			rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: tc.cand, Runner: runner, CacheDir: buildCache(t), Parallel: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s: %s\n%s", rep.Verdict, tc.want, rep.Reason, verify.Table(rep))
			}
			if c := stage(rep, verify.StageCandidate, 0); tc.want == verify.Inconclusive && (c.Outcome != verify.Skipped || !strings.Contains(c.Detail, "not counted")) {
				t.Fatalf("candidate stage beside a base that did not reproduce = %+v", c)
			}
			if fp, _ := verify.Fingerprint(rep.Identity()); fp != rep.Fingerprint {
				t.Fatal("fingerprint does not recompute")
			}
		})
	}
}

// TestShieldOnEachIsolatedBackend: both isolated backends run the
// candidate shielded with the witness applied; the genuine fix VERIFIES
// and forged results (static checks off) are counterfeit on each.
func TestShieldOnEachIsolatedBackend(t *testing.T) {
	s := sample(t)
	forged := commitChanges(t, s.Dir, "attack/backends", s.Branches[shoplite.BranchMain], map[string]string{"cart/zz_report.go": forgeInit})
	ran := 0
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendNamespaces} {
		r, err := sandbox.New(backend)
		if err != nil {
			t.Logf("%s: %v", backend, err)
			continue
		}
		ran++
		t.Run(backend, func(t *testing.T) {
			opts := verify.Options{RepoDir: s.Dir, Harness: couponHarness(t, s), Candidate: shoplite.BranchGenuine, Runner: r, CacheDir: buildCache(t), Parallel: true}
			rep, err := verify.Verify(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if c := stage(rep, verify.StageCandidate, 1); rep.Verdict != verify.Verified || c.Witness == nil || !c.Witness.Applied {
				t.Fatalf("genuine fix: %s (%s), witness %+v\n%s", rep.Verdict, rep.Reason, c.Witness, verify.Table(rep))
			}
			defer verify.SetStaticChecks(false)()
			opts.Candidate = forged
			rep, err = verify.Verify(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if c := stage(rep, verify.StageCandidate, 1); rep.Verdict != verify.Rejected || c.Outcome != verify.Counterfeit {
				t.Fatalf("forged results: %s, candidate %s (%s)", rep.Verdict, c.Outcome, c.Detail)
			}
		})
	}
	if ran == 0 {
		realRunner(t) // fails, or skips under -short, as the other end-to-end tests do
	}
}

// TestTestHelpersAreFrozen: a candidate that makes a test-only helper
// package's check vacuous instead of fixing the bug has its edit
// discarded, because the package is frozen with the tests.
func TestTestHelpersAreFrozen(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	helper := "package testutil\n\nimport \"testing\"\n\n// Equal fails t unless got is want.\nfunc Equal(t *testing.T, got, want int64) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Errorf(\"got %d, want %d\", got, want)\n\t}\n}\n"
	base := commitChanges(t, s.Dir, "helpers/base", s.Branches[shoplite.BranchMain], map[string]string{"internal/testutil/equal.go": helper})
	repro := "package cart\n\nimport (\n\t\"testing\"\n\n\t\"shoplite/internal/testutil\"\n)\n\nfunc TestCouponAppliesOnce(t *testing.T) {\n\tgot, err := Total([]Item{{SKU: \"lamp\", PriceCents: 10000, Quantity: 1}}, \"SAVE10\")\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\ttestutil.Equal(t, got, 9000)\n}\n"
	testsFrom := commitChanges(t, s.Dir, "helpers/repro", base, map[string]string{"cart/coupon_repro_test.go": repro})
	vacuous := strings.Replace(helper, "\tif got != want {\n\t\tt.Errorf(\"got %d, want %d\", got, want)\n\t}\n", "", 1)
	cand := commitChanges(t, s.Dir, "helpers/cand", base, map[string]string{"internal/testutil/equal.go": vacuous})
	h := couponHarness(t, s, func(h *verify.Harness) { h.Base, h.TestsFrom = base, testsFrom })
	rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != verify.Rejected || !slices.Contains(rep.TestOnly, "internal/testutil") ||
		!slices.Contains(rep.TestEdits, verify.TestEdit{Path: "internal/testutil/equal.go", Change: verify.EditModified}) {
		t.Fatalf("verdict %s (%s), test-only %v, test edits %v\n%s", rep.Verdict, rep.Reason, rep.TestOnly, rep.TestEdits, verify.Table(rep))
	}
}
