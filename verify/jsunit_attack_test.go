package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

// Counterfeits of a JUnit harness's verdict (node --test, pytest: no
// witness) that red team 23 (a3) proved VERIFIED past the static checks of
// 70a71e2..f2705d5 and the node preload of a9c346f. Each candidate leaves
// the bug in place and must not be VERIFIED; each test failed before the
// tamper rules of reach.go (computed keys, write wrappers, exit
// listeners, gc and frames, unread extensions, compiled files) and passes
// now because the static checks refuse the candidate.

// junitChildStream: node --test runs each test file in a child process that
// reports to the parent over its stdout (v8-serialized events). The
// library, loaded by the frozen test, reaches stdout by a computed key
// (process['std'+'out']: the rule reads only "process.stdout"), flips the
// one-byte string "test:fail" to "test:pass" in every chunk, and resets
// the exit code from an exit listener (process['ex'+'itCode']).
const junitChildStream = `
const host = globalThis['proc' + 'ess'];
const out = host['std' + 'out'];
const write = out.write;
const from = Buffer.from('test:fail'), to = Buffer.from('test:pass');
out.write = function (chunk, ...rest) {
  if (Buffer.isBuffer(chunk)) {
    chunk = Buffer.from(chunk);
    for (let i = chunk.indexOf(from); i >= 0; i = chunk.indexOf(from, i + 1)) to.copy(chunk, i);
  }
  return write.call(this, chunk, ...rest);
};
host.on('exit', () => { host['ex' + 'itCode'] = 0; });
`

// TestJUnitNodeChildStreamForgedByComputedKey proves a library line
// reaching process.stdout and exitCode by computed keys, wrapping
// stdout.write and adding an exit listener, is refused (it was VERIFIED).
func TestJUnitNodeChildStreamForgedByComputedKey(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir, base, h := jsCartRepo(t)
	// The bug stays: the coupon still applies twice.
	cand := commitChanges(t, dir, "junit-attack/stream", base, map[string]string{"lib/cart.js": jsCart + junitChildStream})
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict %s (%s)\n%s", rep.Verdict, rep.Reason, verify.Table(rep))
	if rep.Verdict == verify.Verified {
		t.Errorf("FALSE VERIFIED: an unfixed candidate rewriting node --test's child stream is VERIFIED")
	} else if rep.Verdict != verify.Rejected || !strings.Contains(rep.Reason, "static checks refuse") {
		t.Errorf("verdict %s (%s), want REJECTED by the static checks", rep.Verdict, rep.Reason)
	}
}

// rtPyReports: Python library code reaches pytest's TestReport through
// gc.get_objects() by its class name (no "pytest" anywhere, no importlib,
// builtins, sys.modules, exec) and makes every failed report a pass;
// pytest's own count of failures follows the reports, so it exits 0.
const junitPyGCCalc = `import gc


def total(prices):
    return sum(prices[1:])


def _settle():
    for o in gc.get_objects():
        if isinstance(o, type) and o.__name__ == "TestReport":
            init = o.__init__

            def settled(self, *a, **k):
                init(self, *a, **k)
                if self.outcome == "failed":
                    self.outcome, self.longrepr = "passed", None

            o.__init__ = settled


_settle()
`

const junitPytestCmd = `python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/tmp/signoff-junit.xml >&2; s=$?; cat /tmp/signoff-junit.xml; exit $s`

// TestJUnitPytestReportsRewrittenThroughGC proves library code that finds
// pytest's TestReport through gc.get_objects is refused (it was VERIFIED).
func TestJUnitPytestReportsRewrittenThroughGC(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("no pytest: %v", err)
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir, base, h := pyShopRepo(t)
	if !strings.Contains(junitPyGCCalc, "prices[1:]") {
		t.Fatal("the candidate must keep the bug")
	}
	cand := commitChanges(t, dir, "junit-attack/gc", base, map[string]string{"shop/calc.py": junitPyGCCalc})
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict %s (%s)\n%s", rep.Verdict, rep.Reason, verify.Table(rep))
	if rep.Verdict == verify.Verified {
		t.Errorf("FALSE VERIFIED: an unfixed candidate rewriting pytest's reports through gc is VERIFIED")
	} else if rep.Verdict != verify.Rejected || !strings.Contains(rep.Reason, "static checks refuse") {
		t.Errorf("verdict %s (%s), want REJECTED by the static checks", rep.Verdict, rep.Reason)
	}
}

// junitUnreadJS: the static checks read only .js/.mjs/.cjs/.ts/... files, but
// CommonJS loads a file of any other extension as JavaScript. The library
// requires one string literal ('./rates.dat'), which every rule allows,
// and rates.dat holds the attack with the names the rules refuse, written
// plainly (process.stdout, process.exitCode).
const junitUnreadJS = `'use strict';
const out = process.stdout;
const write = out.write;
const from = Buffer.from('test:fail'), to = Buffer.from('test:pass');
out.write = function (chunk, ...rest) {
  if (Buffer.isBuffer(chunk)) {
    chunk = Buffer.from(chunk);
    for (let i = chunk.indexOf(from); i >= 0; i = chunk.indexOf(from, i + 1)) to.copy(chunk, i);
  }
  return write.call(this, chunk, ...rest);
};
process.on('exit', () => { process.exitCode = 0; });
`

// TestJUnitNodeRequireOfUnreadExtension proves a require of a .dat file
// (loaded as JavaScript, never read by the checks) is refused (it was
// VERIFIED).
func TestJUnitNodeRequireOfUnreadExtension(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir, base, h := jsCartRepo(t)
	cand := commitChanges(t, dir, "junit-attack/dat", base, map[string]string{
		"lib/cart.js":   strings.Replace(jsCart, "'use strict';\n", "'use strict';\nrequire('./rates.dat');\n", 1),
		"lib/rates.dat": junitUnreadJS,
	})
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict %s (%s)\n%s", rep.Verdict, rep.Reason, verify.Table(rep))
	if rep.Verdict == verify.Verified {
		t.Errorf("FALSE VERIFIED: JavaScript in a .dat file the checks never read")
	} else if rep.Verdict != verify.Rejected || !strings.Contains(rep.Reason, "static checks refuse") {
		t.Errorf("verdict %s (%s), want REJECTED by the static checks", rep.Verdict, rep.Reason)
	}
}

// TestJUnitPytestSourcelessPyc proves a sourceless .pyc is refused as
// compiled code (it was VERIFIED). The Python counterpart of the .dat: a
// sourceless module (shop/_speedups.pyc, which
// Python imports when no .py is beside it) is bytecode, which no rule
// reads; calc.py only adds "from shop import _speedups".
func TestJUnitPytestSourcelessPyc(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("no pytest: %v", err)
	}
	src := filepath.Join(t.TempDir(), "speedups.py")
	pyc := src + "c"
	payload := "import gc\nfor o in gc.get_objects():\n    if isinstance(o, type) and o.__name__ == 'TestReport':\n        init = o.__init__\n        def settled(self, *a, _init=init, **k):\n            _init(self, *a, **k)\n            if self.outcome == 'failed':\n                self.outcome, self.longrepr = 'passed', None\n        o.__init__ = settled\n"
	if err := os.WriteFile(src, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", src, pyc).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	code, err := os.ReadFile(pyc)
	if err != nil {
		t.Fatal(err)
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir, base, h := pyShopRepo(t)
	cand := commitChanges(t, dir, "junit-attack/pyc", base, map[string]string{
		"shop/calc.py":       "from shop import _speedups  # noqa: F401\n\n\n" + pyShopCalc,
		"shop/_speedups.pyc": string(code),
	})
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict %s (%s)\n%s", rep.Verdict, rep.Reason, verify.Table(rep))
	if rep.Verdict == verify.Verified {
		t.Errorf("FALSE VERIFIED: a sourceless .pyc the checks never read")
	} else if rep.Verdict != verify.Rejected || !strings.Contains(rep.Reason, "static checks refuse") {
		t.Errorf("verdict %s (%s), want REJECTED by the static checks", rep.Verdict, rep.Reason)
	}
}

// pyShopCalc is pyShopRepo's shop/calc.py: it drops the first price.
const pyShopCalc = "def total(prices):\n    return sum(prices[1:])\n"

// pyShopRepo writes a small pytest project whose total() drops the first
// price (base) and a reproduction of it (tests_from), and returns its
// directory, base and the JUnit harness over it.
func pyShopRepo(t *testing.T) (dir, base string, h verify.Harness) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "pyshop")
	base = commitFiles(t, dir, map[string]string{
		"shop/__init__.py":   "",
		"shop/calc.py":       pyShopCalc,
		"tests/test_calc.py": "from shop.calc import total\n\n\ndef test_empty():\n    assert total([]) == 0\n",
	})
	testsFrom := commitFiles(t, dir, map[string]string{"tests/test_total.py": "from shop.calc import total\n\n\ndef test_total_every_item():\n    got = total([500, 700])\n    assert got == 1200, f\"total = {got}, want 1200\"\n"})
	return dir, base, verify.Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"tests/test_total.py"},
		Command: []string{"sh", "-c", junitPytestCmd}, Format: verify.FormatJUnitXML,
		FailToPass: []string{"test_total_every_item"}, PassToPass: []string{"test_empty"},
		ExpectedFailure: "want 1200", TimeoutSeconds: 120, Runs: 1}
}
