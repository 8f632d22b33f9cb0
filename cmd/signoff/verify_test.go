package main_test

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sandbox"
)

// verifyFixture writes ShopLite and its coupon harness through the CLI and
// returns the repository, the harness file and a Go build cache shared with
// the verify package's tests (so only a cold machine compiles the standard
// library).
func verifyFixture(t *testing.T) (repo, harness, cache string) {
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
	repo = filepath.Join(t.TempDir(), "shop")
	harness = filepath.Join(t.TempDir(), "harness.json")
	if out, code := signoffCmd(t, "sample", "shoplite", "--out", repo, "--harness", harness); code != 0 {
		t.Fatalf("sample shoplite: exit %d\n%s", code, out)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return repo, harness, filepath.Join(d, "signoff", "go-build-test")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestVerifyCommandVerdictsAndExitCodes(t *testing.T) {
	t.Parallel()
	repo, harness, cache := verifyFixture(t)
	verifyArgs := func(cand string, extra ...string) []string {
		return append([]string{"verify", "--repo", repo, "--harness", harness, "--candidate", cand, "--cache", cache}, extra...)
	}
	for _, tc := range []struct {
		cand  string
		extra []string
		code  int
		last  string
	}{
		{"fix/genuine", nil, 0, "verdict: VERIFIED"},
		{"fix/false-test-edit", nil, 1, "verdict: REJECTED"},
		{"fix/false-breaks-p2p", nil, 1, "verdict: REJECTED"},
		{"fix/genuine", []string{"--allow", "cmd/**", "--allow", "README.md"}, 1, "verdict: REJECTED"},
	} {
		out, code := signoffCmd(t, verifyArgs(tc.cand, tc.extra...)...)
		if code != tc.code || lastLine(out) != tc.last {
			t.Errorf("verify %s %v: exit %d, want %d; last line %q, want %q\n%s", tc.cand, tc.extra, code, tc.code, lastLine(out), tc.last, out)
		}
	}

	// A harness whose fail-to-pass test passes on base: INCONCLUSIVE, exit 2.
	var h map[string]any
	raw, _ := os.ReadFile(harness)
	json.Unmarshal(raw, &h)
	h["fail_to_pass"] = []string{"TestZeroCoupon"}
	h["pass_to_pass"] = []string{"TestEmptyCart"}
	weak := filepath.Join(t.TempDir(), "weak.json")
	b, _ := json.Marshal(h)
	os.WriteFile(weak, b, 0o644)
	out, code := signoffCmd(t, "verify", "--repo", repo, "--harness", weak, "--candidate", "fix/genuine", "--cache", cache)
	if code != 2 || lastLine(out) != "verdict: INCONCLUSIVE" || !strings.Contains(out, "never detected the bug") {
		t.Errorf("weak harness: exit %d\n%s", code, out)
	}

	// --json is one object with the verdict, the stages, the digests.
	out, code = signoffCmd(t, verifyArgs("fix/false-test-edit", "--json")...)
	var rep struct {
		Verdict       string `json:"verdict"`
		HarnessDigest string `json:"harness_digest"`
		Fingerprint   string `json:"fingerprint"`
		HarnessEdits  []string
		Stages        []struct{ Name, Outcome, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Verdict != "REJECTED" ||
		len(rep.HarnessDigest) != 64 || len(rep.Fingerprint) != 64 || len(rep.Stages) != 4 || rep.Stages[0].Outcome != "harness-restored" ||
		rep.Stages[2].Name != "build" {
		t.Errorf("verify --json: exit %d, %v\n%s", code, err, out)
	}
}

func TestVerifyCommandSetupErrorsExit3(t *testing.T) {
	t.Parallel()
	repo, harness, cache := verifyFixture(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"base":"main"}`), 0o644)
	for _, args := range [][]string{
		{"verify"},
		{"verify", "--repo", repo, "--harness", harness},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--runs", "x"},
		{"verify", "--repo", repo, "--harness", bad, "--candidate", "fix/genuine"},
		{"verify", "--repo", repo, "--harness", filepath.Join(repo, "nope.json"), "--candidate", "fix/genuine"},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/nope", "--cache", cache},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--sandbox", "chroot"},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--runs", "11", "--cache", cache},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "stray"},
		{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--key", filepath.Join(t.TempDir(), "k")},
		{"evidence"},
		{"evidence", "check"},
		{"evidence", "verify"},
		{"evidence", "verify", filepath.Join(t.TempDir(), "missing")},
		{"evidence", "verify", "a", "b"},
	} {
		if out, code := signoffCmd(t, args...); code != 3 {
			t.Errorf("signoff %v: exit %d, want 3\n%s", args, code, out)
		}
	}
	for _, args := range [][]string{{"verify", "--help"}, {"evidence", "verify", "--help"}} {
		if out, code := signoffCmd(t, args...); code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("signoff %v: exit %d\n%s", args, code, out)
		}
	}
}

func TestEvidenceBundleThroughTheCLI(t *testing.T) {
	t.Parallel()
	repo, harness, cache := verifyFixture(t)
	dir := t.TempDir()

	// Without --key: a fresh key, said to be self-signed.
	selfBundle := filepath.Join(dir, "self")
	out, code := signoffCmd(t, "verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--cache", cache, "--out", selfBundle)
	if code != 0 || !strings.Contains(out, "self-signed") || lastLine(out) != "verdict: VERIFIED" {
		t.Fatalf("verify --out: exit %d\n%s", code, out)
	}
	out, code = signoffCmd(t, "evidence", "verify", selfBundle)
	if code != 0 || !strings.Contains(out, "authenticity not established") || !strings.Contains(out, "recorded verdict VERIFIED") {
		t.Fatalf("evidence verify (self-signed): exit %d\n%s", code, out)
	}

	// With --key: the bundle verifies under that key and no other.
	keyFile := filepath.Join(dir, "keys", "signer.key")
	key, _, err := keys.LoadOrCreate(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	pem, _ := keys.EncodePublic(pub)
	pubFile := filepath.Join(dir, "signer.pub")
	os.WriteFile(pubFile, pem, 0o644)
	otherFile := filepath.Join(dir, "keys", "other.key")
	keys.LoadOrCreate(otherFile)

	bundle := filepath.Join(dir, "signed")
	out, code = signoffCmd(t, "verify", "--repo", repo, "--harness", harness, "--candidate", "fix/false-test-edit", "--cache", cache, "--out", bundle, "--key", keyFile)
	if code != 1 || strings.Contains(out, "self-signed") || !strings.Contains(out, keys.ID(pub)) {
		t.Fatalf("verify --out --key: exit %d\n%s", code, out)
	}
	out, code = signoffCmd(t, "evidence", "verify", bundle, "--key", pubFile)
	if code != 0 || !strings.Contains(out, "signed by a trusted key") || !strings.Contains(out, "recorded verdict REJECTED") {
		t.Fatalf("evidence verify --key: exit %d\n%s", code, out)
	}
	if out, code = signoffCmd(t, "evidence", "verify", "--key", otherFile, bundle); code != 1 || !strings.Contains(out, "FAILED") {
		t.Fatalf("evidence verify under another key: exit %d\n%s", code, out)
	}
	out, code = signoffCmd(t, "evidence", "verify", bundle, "--key", pubFile, "--json")
	var findings struct {
		OK    bool `json:"ok"`
		Items []struct{ Item, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil || code != 0 || !findings.OK || len(findings.Items) < 10 {
		t.Fatalf("evidence verify --json: exit %d, %v\n%s", code, err, out)
	}

	// One byte changed in a statement, the harness or an output: exit 1,
	// and the finding names the file.
	for _, name := range []string{"statements/candidate-1.dsse.json", "statements/verdict.dsse.json", "harness.json", "tests/cart/coupon_repro_test.go", "outputs/base-1.stdout"} {
		tampered := filepath.Join(t.TempDir(), "b")
		if err := os.CopyFS(tampered, os.DirFS(bundle)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tampered, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x01
		os.WriteFile(p, b, 0o644)
		out, code := signoffCmd(t, "evidence", "verify", tampered, "--key", pubFile)
		if code != 1 || !strings.Contains(out, "FAILED     "+name+":") || !strings.Contains(lastLine(out), "evidence: FAILED") {
			t.Errorf("tampered %s: exit %d\n%s", name, code, out)
		}
	}
}

// TestVerifyCommandMemoryAndBaseCache checks --max-memory (a harness
// asking more memory than the server allows is a setup error, exit 3; a
// higher maximum lets it run) and the base cache: on by default, a second
// verification reuses base's run, --no-base-cache runs base again.
func TestVerifyCommandMemoryAndBaseCache(t *testing.T) {
	t.Parallel()
	repo, harness, cache := verifyFixture(t)
	var h map[string]any
	raw, _ := os.ReadFile(harness)
	json.Unmarshal(raw, &h)
	h["memory_mb"] = 12 << 10
	big := filepath.Join(t.TempDir(), "big.json")
	b, _ := json.Marshal(h)
	os.WriteFile(big, b, 0o644)
	args := func(harness string, extra ...string) []string {
		return append([]string{"verify", "--repo", repo, "--harness", harness, "--candidate", "fix/genuine", "--cache", cache}, extra...)
	}
	if out, code := signoffCmd(t, args(big)...); code != 3 || !strings.Contains(out, "the harness asks for 12 GiB of memory; this server allows at most 8 GiB (--max-memory)") {
		t.Errorf("a harness asking 12 GiB: exit %d, want 3 with the limits\n%s", code, out)
	}
	if out, code := signoffCmd(t, args(big, "--max-memory", "lots")...); code != 3 || !strings.Contains(out, "--max-memory") {
		t.Errorf("--max-memory lots: exit %d, want 3\n%s", code, out)
	}
	if out, code := signoffCmd(t, args(big, "--max-memory", "16GiB")...); code != 0 || lastLine(out) != "verdict: VERIFIED" {
		t.Errorf("a harness asking 12 GiB with --max-memory 16GiB: exit %d, want 0\n%s", code, out)
	}

	reused := func(extra ...string) string {
		t.Helper()
		out, code := signoffCmd(t, args(harness, append([]string{"--json"}, extra...)...)...)
		var rep struct {
			Stages []struct{ Name, Reused string }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
			t.Fatalf("verify --json %v: exit %d, %v\n%s", extra, code, err, out)
		}
		for _, s := range rep.Stages {
			if s.Name == "base" {
				return s.Reused
			}
		}
		t.Fatalf("no base stage:\n%s", out)
		return ""
	}
	reused() // stores base's run, if an earlier run had not
	if r := reused(); r == "" {
		t.Errorf("the second verification ran base again: the base cache is on by default")
	}
	if r := reused("--no-base-cache"); r != "" {
		t.Errorf("--no-base-cache reused base's run of %s", r)
	}
}
