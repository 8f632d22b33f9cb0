package main_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
)

// realRepoPrereqs skips (under -short) or fails when a tool the
// acceptance needs is missing: git, an isolated sandbox and the named
// commands.
func realRepoPrereqs(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append([]string{"git"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("%s not installed", tool)
			}
			t.Fatalf("%s not installed (run with -short to skip)", tool)
		}
	}
	if _, err := sandbox.Default(); err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
}

// cliResult is one run of the real binary.
type cliResult struct {
	stdout, stderr string
	code           int
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// signoffIn runs the binary with PATH, a fresh HOME, the user's cache
// directory (so the Go build cache and the dependency cache stay warm
// across tests, as they would for a user) and extra, and keeps stdout and
// stderr apart: harness init writes its summary on stderr, verify --json
// its object on stdout. The environment is the child's own, so tests that
// point GOPROXY at a local directory stay parallel.
func signoffIn(t *testing.T, extra []string, args ...string) cliResult {
	t.Helper()
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		cacheDir = filepath.Join(os.TempDir(), "signoff-test-cache")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CACHE_HOME=" + cacheDir}, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("signoff %v: %v", args, err)
	}
	return res
}

// gitRepo is a repository built by a test with the real git.
type gitRepo struct {
	t   *testing.T
	dir string
	env []string // for commands the test runs in the work tree (go mod tidy, npm)
}

func newGitRepo(t *testing.T, name string) *gitRepo {
	t.Helper()
	g := &gitRepo{t: t, dir: filepath.Join(t.TempDir(), name)}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g.git("init", "-q", "-b", "main")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// run runs a tool in the work tree with the repository's environment.
func (g *gitRepo) run(name string, args ...string) {
	g.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), g.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		g.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func (g *gitRepo) write(files map[string]string) {
	g.t.Helper()
	for p, c := range files {
		full := filepath.Join(g.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
}

// commit writes files on a branch made from parent ("" for the current
// branch), commits everything in the tree, and returns the commit id.
func (g *gitRepo) commit(branch, parent, msg string, files map[string]string, after ...func()) string {
	g.t.Helper()
	if parent != "" {
		g.git("checkout", "-q", "-B", branch, parent)
	}
	g.write(files)
	for _, f := range after {
		f()
	}
	g.git("add", "-A")
	g.git("commit", "-q", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

// goModuleProxy writes module mod@version, made of files, in the file://
// GOPROXY layout under a new directory and returns the directory.
func goModuleProxy(t *testing.T, mod, version string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	vdir := filepath.Join(dir, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for p, c := range files {
		w, err := zw.Create(mod + "@" + version + "/" + p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(c))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`),
		version + ".mod":  []byte(files["go.mod"]),
		version + ".zip":  buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// npmTarball is a package in npm's tarball layout (every entry under
// package/), gzipped.
func npmTarball(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for p, c := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + p, Mode: 0o644, Size: int64(len(c)), ModTime: time.Unix(1_700_000_000, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(c))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// realCase is one repository of the acceptance: base (the bug), fix (the
// fix and its new failing test) and three candidates built on base.
type realCase struct {
	repo *gitRepo
	env  []string // for signoff (GOPROXY and friends)
	fix  string
	// genuine fixes the bug another way; testEdit edits the test to pass
	// and leaves the bug; breaksP2P fixes the bug and breaks a test that
	// passed before.
	genuine, testEdit, breaksP2P string
	// wantF2P and wantP2P name the tests the repository implies, by their
	// own names (a derived name may carry a package or suite path before).
	wantF2P, wantP2P []string
	// hostile are more candidates that must be REJECTED, by what they try.
	hostile map[string]string
	// deps says whether the checkouts have dependencies to fetch: the
	// genuine candidate's verification then has a deps stage that did.
	deps bool
	// bugValue is what the bug computes: the expected failure of every
	// fail-to-pass test must say it, so it is the bug's signature and not
	// any failure.
	bugValue string
}

// derivedHarness is the part of the written harness the checks read.
type derivedHarness struct {
	FailToPass       []string                   `json:"fail_to_pass"`
	PassToPass       []string                   `json:"pass_to_pass"`
	ExpectedFailure  string                     `json:"expected_failure"`
	ExpectedFailures map[string]json.RawMessage `json:"expected_failures"`
}

// sameTest says whether a derived test name names the test want: equal,
// or want preceded by a package (".", "/") or suite path (" > ", "::").
func sameTest(name, want string) bool {
	if name == want {
		return true
	}
	for _, sep := range []string{".", "/", " > ", "::"} {
		if strings.HasSuffix(name, sep+want) {
			return true
		}
	}
	return false
}

// checkNames reports unless names are exactly the wanted tests, each once.
func checkNames(t *testing.T, field string, names, want []string) {
	t.Helper()
	if len(names) != len(want) {
		t.Errorf("%s = %q, want the %d tests %q", field, names, len(want), want)
		return
	}
	for _, w := range want {
		n := 0
		for _, name := range names {
			if sameTest(name, w) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s = %q: %d names for %q, want 1", field, names, n, w)
		}
	}
}

// expectedFor is the expected failure of a fail-to-pass test: its own
// entry (a string, or {"regexp": ...}) or the common one.
func expectedFor(t *testing.T, h derivedHarness, name string) (text string, re *regexp.Regexp) {
	t.Helper()
	raw, ok := h.ExpectedFailures[name]
	if !ok {
		return h.ExpectedFailure, nil
	}
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil
	}
	var m struct {
		Regexp string `json:"regexp"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("expected_failures[%q] = %s: neither a string nor {\"regexp\": ...}", name, raw)
	}
	return "", regexp.MustCompile(m.Regexp)
}

// verifyJSON is what the acceptance reads of verify --json.
type verifyJSON struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Stages  []struct {
		Name    string `json:"name"`
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
		Reused  string `json:"reused"`
	} `json:"stages"`
}

func (c realCase) verify(t *testing.T, harness, cand string) (verifyJSON, cliResult) {
	t.Helper()
	res := signoffIn(t, c.env, "verify", "--repo", c.repo.dir, "--harness", harness, "--candidate", cand, "--json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("verify %s --json: not one JSON object (%v)\n%s", cand, err, res)
	}
	return v, res
}

// harnessInit runs signoff harness init on the fix and returns the file
// and what it holds, after checking the file is a harness verify accepts.
func (c realCase) harnessInit(t *testing.T) (string, derivedHarness) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "harness.json")
	start := time.Now()
	res := signoffIn(t, c.env, "harness", "init", "--repo", c.repo.dir, "--fix", c.fix, "--out", file)
	t.Logf("harness init: %s", time.Since(start).Round(time.Millisecond))
	if res.code != 0 {
		t.Fatalf("harness init --fix %s: %s", c.fix, res)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("harness:\n%s\nsummary:\n%s", raw, res.stderr)
	if _, err := verify.ParseHarness(raw); err != nil {
		t.Fatalf("the harness init wrote is refused: %v\n%s", err, raw)
	}
	var h derivedHarness
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return file, h
}

// check is the acceptance on one repository: harness init derives what
// the repository implies; the genuine candidate is VERIFIED, the
// test-editing and the pass-to-pass-breaking ones REJECTED; a misspelled
// pass-to-pass name is a harness mistake (INCONCLUSIVE), never a
// candidate's fault. It returns the harness file.
func (c realCase) check(t *testing.T) string {
	file, h := c.harnessInit(t)
	checkNames(t, "fail_to_pass", h.FailToPass, c.wantF2P)
	checkNames(t, "pass_to_pass", h.PassToPass, c.wantP2P)
	for _, name := range h.FailToPass {
		text, re := expectedFor(t, h, name)
		if re == nil && !strings.Contains(text, c.bugValue) || re != nil && !strings.Contains(re.String(), c.bugValue) {
			t.Errorf("expected failure of %s = %q %v: it does not say what the bug computes (%q)", name, text, re, c.bugValue)
		}
	}
	for i, row := range []struct {
		name, cand, verdict string
		code                int
	}{
		{"genuine", c.genuine, "VERIFIED", 0},
		{"edits the test", c.testEdit, "REJECTED", 1},
		{"breaks a pass-to-pass test", c.breaksP2P, "REJECTED", 1},
	} {
		start := time.Now()
		v, res := c.verify(t, file, row.cand)
		t.Logf("verify %s: %s %s", row.name, v.Verdict, time.Since(start).Round(time.Millisecond))
		if v.Verdict != row.verdict || res.code != row.code {
			t.Errorf("verify %s: %s (exit %d), want %s (exit %d): %s\n%s", row.name, v.Verdict, res.code, row.verdict, row.code, v.Reason, res.stdout)
		}
		// Base ran for the first candidate (or an earlier test run of
		// the same commits did); the others reuse its runs.
		for _, s := range v.Stages {
			if s.Name == "base" && i > 0 && s.Reused == "" {
				t.Errorf("verify %s: base stage ran again, want the first candidate's base runs reused: %s", row.name, s.Detail)
			}
		}
		if row.code == 0 {
			var deps []string
			for _, s := range v.Stages {
				if s.Name == "deps" {
					deps = append(deps, s.Outcome+": "+s.Detail)
					if s.Outcome != "ok" {
						t.Errorf("deps stage: %s: %s", s.Outcome, s.Detail)
					}
				}
			}
			t.Logf("deps stages: %q", deps)
			if c.deps != (len(deps) > 0) {
				t.Errorf("deps stages %q; want one per checkout: %v", deps, c.deps)
			}
		}
	}

	for name, cand := range c.hostile {
		v, res := c.verify(t, file, cand)
		t.Logf("verify a candidate that %s: %s: %s", name, v.Verdict, v.Reason)
		if v.Verdict != "REJECTED" || res.code != 1 {
			t.Errorf("verify of a candidate that %s: %s (exit %d), want REJECTED: %s\n%s", name, v.Verdict, res.code, v.Reason, res.stdout)
		}
	}

	// One pass-to-pass name misspelled: the base run says so, and the
	// genuine candidate is INCONCLUSIVE, not REJECTED.
	var m map[string]any
	raw, _ := os.ReadFile(file)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	p2p, _ := m["pass_to_pass"].([]any)
	if len(p2p) == 0 {
		t.Fatalf("no pass_to_pass to misspell: %s", raw)
	}
	p2p[0] = p2p[0].(string) + "Typo"
	typo := filepath.Join(t.TempDir(), "typo.json")
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(typo, b, 0o644); err != nil {
		t.Fatal(err)
	}
	v, res := c.verify(t, typo, c.genuine)
	if v.Verdict != "INCONCLUSIVE" || res.code != 2 || !strings.Contains(res.stdout, "the harness names tests the base does not have") {
		t.Errorf("verify with a misspelled pass-to-pass name: %s (exit %d), want INCONCLUSIVE naming the tests base lacks: %s\n%s", v.Verdict, res.code, v.Reason, res.stdout)
	}
	return file
}
