package verify_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/verify"
)

// TestNodeAssertionsFrozen: a JUnit run has no witness, so library code
// that rewrites node's assertion functions once made every frozen
// assertion a no-op and the unfixed candidate VERIFIED (red-team finding,
// issue 23). With the static checks off, so that only the run itself
// stands between such a candidate and the verdict, every way of writing
// the assertion modules is REJECTED: the preload froze them before any
// test file loaded, so strict code throws and sloppy code changes
// nothing. The genuine fix, with the same preload, is still VERIFIED.
func TestNodeAssertionsFrozen(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if testing.Short() {
			t.Skip("node is not installed")
		}
		t.Fatal("node is not installed (run with -short to skip)")
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir, base, h := jsCartRepo(t)
	// sloppy is a module without 'use strict', where a write to a frozen
	// property is ignored instead of throwing: the frozen test's own
	// assertion must still fail on the bug.
	const sloppy = "const check = require('assert');\nfor (const k of Object.keys(check)) if (typeof check[k] === 'function') check[k] = function () {};\nfor (const k of Object.keys(check.strict)) if (typeof check.strict[k] === 'function') check.strict[k] = function () {};\nrequire('assert/strict').strictEqual = function () {};\n"
	requirePatch := strings.Replace(jsCart, "'use strict';\n", "'use strict';\nrequire('./patch.js');\n", 1)
	rows := []struct {
		name, want, failing string
		static              bool
		files               map[string]string
	}{
		{name: "genuine fix", want: verify.Verified, static: true,
			files: map[string]string{"lib/cart.js": strings.Replace(jsCart, jsBug, jsFixed, 1)}},
		// Red team 23's candidate: strict code, so the write throws when
		// the tests load the library.
		{name: "assert functions overwritten in strict code (red-team PoC)", want: verify.Rejected,
			files: map[string]string{"lib/cart.js": jsCart + "\nconst check = require('assert');\nfor (const k of Object.keys(check)) if (typeof check[k] === 'function') check[k] = function () {};\nfor (const k of Object.keys(check.strict)) if (typeof check.strict[k] === 'function') check.strict[k] = function () {};\n"}},
		{name: "assert functions overwritten in sloppy code", want: verify.Rejected, failing: "percentage coupon applies once",
			files: map[string]string{"lib/cart.js": requirePatch, "lib/patch.js": sloppy}},
		{name: "assert redefined", want: verify.Rejected,
			files: map[string]string{"lib/cart.js": requirePatch, "lib/patch.js": "Object.defineProperty(require('node:assert'), 'strictEqual', { value() {} });\n"}},
		{name: "node:test's test replaced", want: verify.Rejected, failing: "percentage coupon applies once",
			files: map[string]string{"lib/cart.js": requirePatch, "lib/patch.js": "const t = require('node:test');\nt.test = t.skip;\nObject.assign(t, { it: t.skip });\n"}},
	}
	for i, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			cand := commitChanges(t, dir, fmt.Sprintf("freeze/%d", i), base, rw.files)
			if !rw.static {
				defer verify.SetStaticChecks(false)()
			}
			rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != rw.want {
				t.Fatalf("verdict = %s, want %s (%s)\n%s", rep.Verdict, rw.want, rep.Reason, verify.Table(rep))
			}
			if rw.want != verify.Rejected {
				return
			}
			c := stage(rep, verify.StageCandidate, 1)
			if c.Runner == nil {
				t.Fatalf("the candidate did not run (the static checks refused it?): %s\n%s", rep.Reason, verify.Table(rep))
			}
			if rw.failing != "" && !strings.Contains(c.Detail, rw.failing) {
				t.Errorf("candidate run = %q, want %q failing", c.Detail, rw.failing)
			}
		})
	}
}

// commitFiles writes files into the repository at dir, made on first use,
// and commits them.
func commitFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	ctx := context.Background()
	repo := &gitx.Repo{Dir: dir}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if err := repo.Init(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := repo.Commit(ctx, "commit", gitx.Signature{Name: "t", Email: "t@example.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// jsCartRepo writes the JavaScript cart of node_test.go as a repository
// (base: the bug and its tests; tests_from: the reproduction) and returns
// its directory, base and the harness over it.
func jsCartRepo(t *testing.T) (dir, base string, h verify.Harness) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "jscart")
	base = commitFiles(t, dir, map[string]string{
		"package.json":      `{"name": "jscart", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}}` + "\n",
		"lib/cart.js":       jsCart,
		"test/cart.test.js": jsCartTest,
	})
	testsFrom := commitFiles(t, dir, map[string]string{"test/coupon_repro.test.js": jsRepro})
	return dir, base, verify.Harness{
		Base: base, TestsFrom: testsFrom, TestFiles: []string{"test/coupon_repro.test.js"},
		Command: []string{"node", "--test", "--test-reporter=junit"}, Format: verify.FormatJUnitXML,
		FailToPass:      []string{"percentage coupon applies once"},
		PassToPass:      []string{"empty cart", "zero coupon changes nothing", "unknown coupon"},
		ExpectedFailure: "8100", TimeoutSeconds: 120, Runs: 1,
	}
}
