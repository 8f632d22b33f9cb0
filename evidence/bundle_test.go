package evidence_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

const (
	base      = "1111111111111111111111111111111111111111"
	testsFrom = "2222222222222222222222222222222222222222"
	candidate = "3333333333333333333333333333333333333333"
)

// synthetic is a VERIFIED report of one base and two candidate runs, with
// its harness file, as Verify and the CLI would produce them.
func synthetic(t testing.TB) (verify.Report, []byte) {
	t.Helper()
	h := verify.Harness{
		Base: base, TestsFrom: testsFrom, TestFiles: []string{"cart/coupon_repro_test.go"},
		Command: []string{"go", "test", "-json", "./..."}, Format: verify.FormatGoTestJSON,
		FailToPass: []string{"TestCouponAppliesOnce"}, PassToPass: []string{"TestZeroCoupon"},
		ExpectedFailure: "8100", TimeoutSeconds: 60, Runs: 2,
	}
	raw, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n\nfunc TestCouponAppliesOnce(t *testing.T) {}\n")}
	hd, err := verify.DigestHarness(h, files)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, i int, outcome, out string) verify.Stage {
		stdout := []byte(fmt.Sprintf(`{"Action":"%s","Package":"example.com/shop/cart","Test":"TestCouponAppliesOnce","Output":%q}`+"\n", outcome, out))
		stderr := []byte("")
		return verify.Stage{Name: name, Run: i, Outcome: outcome, Detail: name + " detail", DurationMS: 120,
			Runner: &verify.RunSummary{Backend: "bwrap", Isolated: true, Limits: sandbox.Limits{WallTime: 60e9}, ExitCode: 1, DurationMS: 100,
				RunnerDigest: "r", StdoutSHA256: verify.SHA256(stdout), StderrSHA256: verify.SHA256(stderr)},
			Tests:  []verify.TestOutcome{{Name: "TestCouponAppliesOnce", Kind: verify.FailToPass, Outcome: verify.Fail}},
			Stdout: stdout, Stderr: stderr}
	}
	witnessed := func(s verify.Stage) verify.Stage {
		s.Witness = &verify.WitnessCheck{Applied: true, Instrumented: 2, Checked: 2}
		return s
	}
	r := verify.Report{
		Base: base, Candidate: candidate, CandidateRev: "fix/genuine", HarnessDigest: hd, RunnerDigest: "r", Runs: 2,
		Environment: verify.Environment{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", Sandbox: "bwrap", Isolated: true},
		Changed:     []string{"cart/cart.go"}, HarnessEdits: []string{}, TestFiles: files,
		Protected: h.ProtectedGlobs(), BuildChanges: h.BuildPolicy(), Cache: "layered",
		Stages: []verify.Stage{
			{Name: verify.StageDiff, Outcome: verify.OK, Detail: "1 file changed"},
			run(verify.StageBase, 1, verify.Reproduced, "got 8100"),
			run(verify.StageBase, 2, verify.Reproduced, "got 8100"),
			witnessed(run(verify.StageCandidate, 1, verify.Passed, "ok")),
			witnessed(run(verify.StageCandidate, 2, verify.Passed, "ok")),
		},
	}
	r.Verdict = verify.Decide(r.Stages)
	r.Fingerprint, err = verify.Fingerprint(r.Identity())
	if err != nil {
		t.Fatal(err)
	}
	return r, raw
}

func newKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, key
}

func writeBundle(t testing.TB, key ed25519.PrivateKey, selfSigned bool) string {
	t.Helper()
	r, raw := synthetic(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := evidence.WriteBundle(dir, r, raw, key, selfSigned); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBundleVerifiesUnderTheTrustedKey(t *testing.T) {
	t.Parallel()
	pub, key := newKey(t)
	dir := writeBundle(t, key, false)
	f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
	if err != nil {
		t.Fatal(err)
	}
	if !f.OK() || f.Verdict != verify.Verified {
		t.Fatalf("findings:\n%s", f)
	}
	for _, want := range []string{
		"statements/base-1.dsse.json", "statements/candidate-2.dsse.json", "statements/verdict.dsse.json",
		"outputs/base-1.stdout", "outputs/candidate-2.stderr", "harness.json", "tests/cart/coupon_repro_test.go",
		"harness digest", "fingerprint", "verdict", "candidate run 2",
		"frozen test tree", "static checks", "witness of candidate run 1", "witness of candidate run 2",
	} {
		if !slices.ContainsFunc(f.Items, func(it evidence.Finding) bool { return it.Item == want && it.Status == evidence.StatusOK }) {
			t.Errorf("no ok finding for %s:\n%s", want, f)
		}
	}
	// What an offline check cannot establish is said, even when all holds.
	if u := f.With(evidence.StatusUnchecked); len(u) != 1 || u[0].Item != "runs" {
		t.Errorf("unchecked = %+v, want only the note that runs are not re-executed", u)
	}
}

// TestBundleChecksTheDefences signs reports that claim VERIFIED against
// their own record of the defences (as a broken or lying verifier would)
// and checks that evidence verify catches each.
func TestBundleChecksTheDefences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, item string
		edit       func(*verify.Report)
	}{
		{"an unwitnessed pass", "witness of candidate run 2", func(r *verify.Report) {
			r.Stages[4].Witness = &verify.WitnessCheck{Applied: true, Checked: 2, Missing: []string{"example.com/shop/cart.TestCouponAppliesOnce"}}
		}},
		{"a finding that refuses", "static checks", func(r *verify.Report) {
			r.Findings = []tamper.Finding{{Rule: "exit-in-library", Severity: tamper.Refuse, Path: "cart/zz.go", Detail: "calls os.Exit"}}
		}},
		{"a test tree other than the harness's", "frozen test tree", func(r *verify.Report) {
			r.Protected = []string{"cart/coupon_repro_test.go"}
		}},
		{"a build policy other than the harness's", "frozen test tree", func(r *verify.Report) {
			r.BuildChanges = verify.BuildFlag
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pub, key := newKey(t)
			r, raw := synthetic(t)
			tc.edit(&r)
			dir := filepath.Join(t.TempDir(), "bundle")
			if err := evidence.WriteBundle(dir, r, raw, key, false); err != nil {
				t.Fatal(err)
			}
			f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
			if err != nil {
				t.Fatal(err)
			}
			if f.OK() || !slices.ContainsFunc(f.Items, func(it evidence.Finding) bool { return it.Item == tc.item && it.Status == evidence.StatusFailed }) {
				t.Fatalf("no failed finding for %q:\n%s", tc.item, f)
			}
		})
	}
}

func TestBundleWithoutTrustedKeySaysSo(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	dir := writeBundle(t, key, true)
	f, err := evidence.VerifyBundle(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.OK() {
		t.Fatalf("an untampered self-signed bundle failed:\n%s", f)
	}
	out := f.String()
	for _, want := range []string{"no trusted key given", "authenticity not established", "self-signed"} {
		if !strings.Contains(out, want) {
			t.Errorf("findings do not say %q:\n%s", want, out)
		}
	}
	// Under someone else's key every statement fails.
	other, _ := newKey(t)
	f, _ = evidence.VerifyBundle(dir, []ed25519.PublicKey{other})
	if f.OK() || !strings.Contains(f.String(), "signature") {
		t.Fatalf("a bundle verified under the wrong key:\n%s", f)
	}
}

// TestBundleTamper changes one byte of every file in the bundle, at
// several places, and expects a failure that names the file.
func TestBundleTamper(t *testing.T) {
	t.Parallel()
	pub, key := newKey(t)
	dir := writeBundle(t, key, false)
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(files) < 10 {
		t.Fatalf("bundle files = %v", files)
	}
	for _, name := range files {
		orig, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(orig) == 0 {
			continue // nothing to change; an added byte is tested below
		}
		positions := []int{0, len(orig) / 3, len(orig) / 2, len(orig) - 1}
		for i := 0; i < 8; i++ {
			positions = append(positions, (i*7919+13)%len(orig))
		}
		for _, pos := range positions {
			t.Run(fmt.Sprintf("%s@%d", name, pos), func(t *testing.T) {
				tampered := slices.Clone(orig)
				tampered[pos] ^= 0x01
				copyDir := cloneBundle(t, dir)
				os.WriteFile(filepath.Join(copyDir, name), tampered, 0o644)
				f, err := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
				if err != nil {
					t.Fatal(err)
				}
				if f.OK() {
					t.Fatalf("tampered bundle verified:\n%s", f)
				}
				if !slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool { return it.Item == name }) {
					t.Fatalf("no failure names %s:\n%s", name, f)
				}
			})
		}
	}
	t.Run("appended byte to an empty output", func(t *testing.T) {
		copyDir := cloneBundle(t, dir)
		os.WriteFile(filepath.Join(copyDir, "outputs/base-1.stderr"), []byte("x"), 0o644)
		f, _ := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
		if f.OK() || !slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool { return it.Item == "outputs/base-1.stderr" }) {
			t.Fatalf("findings:\n%s", f)
		}
	})
	t.Run("added file", func(t *testing.T) {
		copyDir := cloneBundle(t, dir)
		os.WriteFile(filepath.Join(copyDir, "outputs/extra.stdout"), []byte("PASS"), 0o644)
		f, _ := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
		if f.OK() || !strings.Contains(f.String(), "outputs/extra.stdout: not covered") {
			t.Fatalf("findings:\n%s", f)
		}
	})
	t.Run("removed run statement", func(t *testing.T) {
		copyDir := cloneBundle(t, dir)
		os.Remove(filepath.Join(copyDir, "statements/candidate-2.dsse.json"))
		f, _ := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
		if f.OK() || !strings.Contains(f.String(), "candidate-2.dsse.json") {
			t.Fatalf("findings:\n%s", f)
		}
	})
	t.Run("removed verdict", func(t *testing.T) {
		copyDir := cloneBundle(t, dir)
		os.Remove(filepath.Join(copyDir, "statements/verdict.dsse.json"))
		f, _ := evidence.VerifyBundle(copyDir, []ed25519.PublicKey{pub})
		if f.OK() || !strings.Contains(f.String(), "no verdict") {
			t.Fatalf("findings:\n%s", f)
		}
	})
}

// TestBundleResignedLiesAreCaught re-signs statements whose contents lie
// with the real key, as a compromised verifier could: the recomputed
// verdict and fingerprint still catch the lie.
func TestBundleResignedLiesAreCaught(t *testing.T) {
	t.Parallel()
	pub, key := newKey(t)
	for _, tc := range []struct {
		rule string
		lie  func(r *verify.Report)
		want string
	}{
		{"a verdict the stages do not give", func(r *verify.Report) { r.Stages[3].Outcome = verify.Failed }, "verdict"},
		{"a fingerprint over other inputs", func(r *verify.Report) { r.Candidate = base }, "fingerprint"},
		{"a harness digest over other tests", func(r *verify.Report) { r.HarnessDigest = strings.Repeat("0", 64) }, "harness digest"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			r, raw := synthetic(t)
			tc.lie(&r)
			dir := filepath.Join(t.TempDir(), "b")
			if err := evidence.WriteBundle(dir, r, raw, key, false); err != nil {
				t.Fatal(err)
			}
			f, _ := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
			if f.OK() || !slices.ContainsFunc(f.With(evidence.StatusFailed), func(it evidence.Finding) bool { return it.Item == tc.want }) {
				t.Fatalf("findings:\n%s", f)
			}
		})
	}
}

func TestBundleOfACandidateRefusedBeforeRunning(t *testing.T) {
	t.Parallel()
	pub, key := newKey(t)
	r, raw := synthetic(t)
	r.Stages = []verify.Stage{
		{Name: verify.StageDiff, Outcome: verify.Refused, Detail: "not run: server/main.go is outside the allowlist"},
		{Name: verify.StageBase, Outcome: verify.Skipped}, {Name: verify.StageCandidate, Outcome: verify.Skipped},
	}
	r.Verdict = verify.Decide(r.Stages)
	dir := filepath.Join(t.TempDir(), "b")
	if err := evidence.WriteBundle(dir, r, raw, key, false); err != nil {
		t.Fatal(err)
	}
	f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
	if err != nil || !f.OK() || f.Verdict != verify.Rejected {
		t.Fatalf("findings (%v):\n%s", err, f)
	}
	if _, err := os.Stat(filepath.Join(dir, "outputs")); err == nil {
		t.Fatalf("a bundle without runs has outputs")
	}
}

func TestWriteBundleRefusesANonEmptyDir(t *testing.T) {
	t.Parallel()
	_, key := newKey(t)
	r, raw := synthetic(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := evidence.WriteBundle(dir, r, raw, key, false); err == nil {
		t.Fatal("WriteBundle wrote into a non-empty directory")
	}
	if _, err := evidence.VerifyBundle(filepath.Join(dir, "missing"), nil); err == nil {
		t.Fatal("VerifyBundle of a missing directory did not fail")
	}
}

func cloneBundle(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}
