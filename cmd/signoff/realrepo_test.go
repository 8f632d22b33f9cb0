package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nonce is a comment that makes a dependency's bytes, and so the key of
// its deps cache entry, new on every run.
func nonce() string { return fmt.Sprintf("// run %d\n", time.Now().UnixNano()) }

// The acceptance of "real repositories": small repositories of several
// languages, each built here with the real git, go, npm and python, with a
// fix commit from which `signoff harness init` makes the harness that
// `signoff verify` then judges candidates with. Dependencies come from
// local directories the test builds (a file:// Go module proxy, a vendor
// directory, an npm tarball in the repository): nothing reaches the
// network.

// Go: a package using a module dependency. Sum skips the first value.
const (
	depGoMod = "module example.test/dep\n\ngo 1.22\n"
	depGo    = `package dep

// Clamp limits x to lo..hi.
func Clamp(x, lo, hi int) int { return min(max(x, lo), hi) }
`
	calcGoMod = "module example.test/calc\n\ngo 1.22\n\nrequire example.test/dep v1.0.0\n"
	calcBug   = `package calc

import "example.test/dep"

// Sum adds the values, each clamped to 0..100.
func Sum(xs []int) int {
	s := 0
	for i := 1; i < len(xs); i++ {
		s += dep.Clamp(xs[i], 0, 100)
	}
	return s
}

// Max is the largest value, clamped to 0..100.
func Max(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, dep.Clamp(x, 0, 100))
	}
	return m
}
`
	calcTest = `package calc

import "testing"

func TestSumEmpty(t *testing.T) {
	if got := Sum(nil); got != 0 {
		t.Errorf("Sum(nil) = %d, want 0", got)
	}
}

func TestMax(t *testing.T) {
	if got := Max([]int{3, 500, 7}); got != 100 {
		t.Errorf("Max = %d, want 100", got)
	}
}
`
	// The fix's new test is table-driven: the failure is printed by a
	// subtest, so its expected failure comes from the test's subtree.
	calcNewTest = `
func TestSumCountsFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int
		want int
	}{{"empty", []int{}, 0}, {"two", []int{5, 7}, WANT}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sum(tc.in); got != tc.want {
				t.Errorf("Sum(%v) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}
`
)

func calcCase(t *testing.T, vendored bool) realCase {
	// A fresh module each run (its go.sum hash, so the deps cache's key,
	// is new), so the deps stage really fetches it from the local proxy
	// rather than finding it in the user's cache from an earlier run.
	proxy := goModuleProxy(t, "example.test/dep", "v1.0.0", map[string]string{"go.mod": depGoMod, "dep.go": depGo + nonce()})
	g := newGitRepo(t, "calc")
	// go mod tidy writes go.sum (and go mod vendor vendor/) from the
	// local proxy, as a developer's machine would from theirs.
	g.env = []string{"GOPROXY=file://" + proxy, "GOSUMDB=off", "GONOSUMDB=example.test", "GOFLAGS=-modcacherw",
		"GOMODCACHE=" + t.TempDir(), "GOWORK=off", "GOTOOLCHAIN=local"}
	newTest := func(want string) string { return calcTest + strings.Replace(calcNewTest, "WANT", want, 1) }
	base := g.commit("", "", "calc: Sum and Max", map[string]string{"go.mod": calcGoMod, "calc/calc.go": calcBug, "calc/calc_test.go": calcTest}, func() {
		g.run("go", "mod", "tidy")
		if vendored {
			g.run("go", "mod", "vendor")
		}
	})
	fixed := strings.Replace(calcBug, "for i := 1; i < len(xs); i++ {", "for i := 0; i < len(xs); i++ {", 1)
	genuine := strings.Replace(calcBug, "for i := 1; i < len(xs); i++ {\n\t\ts += dep.Clamp(xs[i], 0, 100)", "for _, x := range xs {\n\t\ts += dep.Clamp(x, 0, 100)", 1)
	c := realCase{
		repo:      g,
		fix:       g.commit("fix", base, "calc: Sum counts the first value", map[string]string{"calc/calc.go": fixed, "calc/calc_test.go": newTest("12")}),
		genuine:   g.commit("cand/genuine", base, "calc: range over every value", map[string]string{"calc/calc.go": genuine}),
		testEdit:  g.commit("cand/test-edit", base, "calc: the test wants what Sum gives", map[string]string{"calc/calc_test.go": newTest("7")}),
		breaksP2P: g.commit("cand/breaks-p2p", base, "calc: range, and Max unclamped", map[string]string{"calc/calc.go": strings.Replace(genuine, "m = max(m, dep.Clamp(x, 0, 100))", "m = max(m, x)", 1)}),
		wantF2P:   []string{"TestSumCountsFirst"},
		wantP2P:   []string{"TestSumEmpty", "TestMax"},
		bugValue:  "= 7, want 12",
	}
	if genuine == calcBug || c.genuine == c.breaksP2P {
		t.Fatal("the candidates' edits did not apply")
	}
	if vendored {
		// No module is fetched for a vendored repository: the runs build
		// from vendor/, and the host has no proxy to fetch from.
		c.env = []string{"GOPROXY=off", "GOFLAGS=-modcacherw"}
	} else {
		// The deps stage fetches example.test/dep from the host's proxy
		// (this local directory) into its cache, outside the offline run.
		c.env = []string{"GOPROXY=file://" + proxy, "GOSUMDB=off", "GONOSUMDB=example.test"}
		c.deps = true
	}
	return c
}

func TestRealRepoGoModuleDependency(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "go")
	c := calcCase(t, false)
	file := c.check(t)

	// On a host whose proxy lacks the module and a dependency cache that
	// does not hold it, nothing can be verified: INCONCLUSIVE, saying the
	// fetch failed and for which module, never a build failure of the
	// candidate's.
	c.env = []string{"GOPROXY=file://" + t.TempDir(), "GOSUMDB=off", "GONOSUMDB=example.test", "XDG_CACHE_HOME=" + t.TempDir()}
	v, res := c.verify(t, file, c.genuine)
	var deps string
	for _, s := range v.Stages {
		if s.Name == "deps" {
			deps = s.Outcome + ": " + s.Detail
		}
	}
	if v.Verdict != "INCONCLUSIVE" || res.code != 2 || !strings.HasPrefix(deps, "not-executed: dependencies could not be fetched") || !strings.Contains(deps, "example.test/dep") {
		t.Errorf("verify with the module nowhere to fetch: %s (exit %d), deps stage %q: %s\n%s", v.Verdict, res.code, deps, v.Reason, res.stdout)
	}
}

func TestRealRepoGoVendored(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "go")
	c := calcCase(t, true)
	file := c.check(t)

	// A genuine fix that also edits the vendored dependency changes what
	// the tests build against: refused before anything runs.
	vendored := strings.Replace(depGo, "return min(max(x, lo), hi)", "return min(max(x, lo), hi) + 0", 1)
	cand := c.repo.commit("cand/edits-vendor", c.genuine, "calc: and a vendored change", map[string]string{"vendor/example.test/dep/dep.go": vendored})
	v, res := c.verify(t, file, cand)
	if v.Verdict != "REJECTED" || res.code != 1 || !strings.Contains(res.stdout, "vendor/") {
		t.Errorf("verify of a candidate editing vendor/: %s (exit %d), want REJECTED naming vendor/: %s\n%s", v.Verdict, res.code, v.Reason, res.stdout)
	}
}

// JavaScript: node's own test runner in describe blocks, a dependency in
// package-lock.json resolved from a tarball in the repository. total
// skips the first item.
const (
	cartPackageJSON = `{
  "name": "cart",
  "version": "1.0.0",
  "private": true,
  "scripts": {"test": "node --test"},
  "dependencies": {"dep": "file:deps/dep-1.0.0.tgz"}
}
`
	cartJSBug = `'use strict';
const { roundCents } = require('dep');

// total is the price of the items, in cents.
function total(items) {
  let s = 0;
  for (let i = 1; i < items.length; i++) s += items[i].price * items[i].qty;
  return roundCents(s);
}

// count is the number of units.
function count(items) {
  return items.reduce((n, it) => n + it.qty, 0);
}

module.exports = { total, count };
`
	// The same case name in two describe blocks: only the suite path
	// tells them apart.
	cartJSTest = `'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { total, count } = require('../lib/cart.js');

describe('cart', () => {
  describe('total', () => {
    it('is zero when empty', () => { assert.strictEqual(total([]), 0); });
  });
  describe('count', () => {
    it('is zero when empty', () => { assert.strictEqual(count([]), 0); });
    it('adds quantities', () => { assert.strictEqual(count([{ qty: 2 }, { qty: 3 }]), 5); });
  });
});
`
	cartJSNewTest = `
describe('cart', () => {
  describe('total', () => {
    it('counts every item', () => {
      const got = total([{ price: 500, qty: 1 }, { price: 700, qty: 1 }]);
      assert.strictEqual(got, WANT, 'total = ' + got + ', want WANT');
    });
  });
});
`
)

func TestRealRepoNode(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "node", "npm")
	g := newGitRepo(t, "cart")
	// npm writes the lock file from the tarball alone (file: needs no
	// registry), as it would on a developer's machine.
	g.env = []string{"npm_config_cache=" + t.TempDir(), "npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false"}
	tgz := npmTarball(t, map[string]string{
		"package.json": `{"name": "dep", "version": "1.0.0", "main": "index.js"}` + "\n",
		"index.js":     "'use strict';\nexports.roundCents = (x) => Math.round(x);\n" + nonce(), // a new lock key each run
	})
	newTest := func(want string) string { return cartJSTest + strings.ReplaceAll(cartJSNewTest, "WANT", want) }
	base := g.commit("", "", "cart: total and count", map[string]string{
		".gitignore": "node_modules/\n", "package.json": cartPackageJSON, "deps/dep-1.0.0.tgz": tgz,
		"lib/cart.js": cartJSBug, "test/cart.test.js": cartJSTest,
	}, func() { g.run("npm", "install", "--package-lock-only", "--ignore-scripts") })
	genuine := strings.Replace(cartJSBug, "for (let i = 1; i < items.length; i++) s += items[i].price * items[i].qty;", "for (const it of items) s += it.price * it.qty;", 1)
	c := realCase{
		repo:      g,
		fix:       g.commit("fix", base, "cart: total counts the first item", map[string]string{"lib/cart.js": strings.Replace(cartJSBug, "let i = 1", "let i = 0", 1), "test/cart.test.js": newTest("1200")}),
		genuine:   g.commit("cand/genuine", base, "cart: for-of over the items", map[string]string{"lib/cart.js": genuine}),
		testEdit:  g.commit("cand/test-edit", base, "cart: the test wants what total gives", map[string]string{"test/cart.test.js": newTest("700")}),
		breaksP2P: g.commit("cand/breaks-p2p", base, "cart: for-of, count the lines", map[string]string{"lib/cart.js": strings.Replace(genuine, "items.reduce((n, it) => n + it.qty, 0)", "items.length", 1)}),
		wantF2P:   []string{"cart > total > counts every item"},
		wantP2P:   []string{"cart > total > is zero when empty", "cart > count > is zero when empty", "cart > count > adds quantities"},
		bugValue:  "700",
		deps:      true,
		hostile: map[string]string{
			// node_modules committed over the fetched one, with a
			// dependency that turns the wrong total into the right one.
			"commits a node_modules shadowing the dependency": g.commit("cand/shadow-dep", base, "cart: vendor dep", map[string]string{
				".gitignore":                    "",
				"node_modules/dep/package.json": `{"name": "dep", "version": "1.0.0", "main": "index.js"}` + "\n",
				"node_modules/dep/index.js":     "'use strict';\nexports.roundCents = (x) => (x === 700 ? 1200 : Math.round(x));\n",
			}),
		},
	}
	if genuine == cartJSBug {
		t.Fatal("the genuine candidate's edit did not apply")
	}
	shadow := c.hostile["commits a node_modules shadowing the dependency"]
	var lock struct {
		Packages map[string]struct {
			Resolved string `json:"resolved"`
		} `json:"packages"`
	}
	if err := json.Unmarshal([]byte(g.git("show", base+":package-lock.json")), &lock); err != nil || lock.Packages["node_modules/dep"].Resolved == "" {
		t.Fatalf("package-lock.json does not resolve dep (%v): %+v", err, lock)
	}
	file := c.check(t)

	// With build changes only flagged, the static checks let the shadowing
	// node_modules through; the runs still see the fetched one, mounted
	// over it, so the bug shows.
	var m map[string]any
	raw, _ := os.ReadFile(file)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["build_changes"] = "flag"
	flagged := filepath.Join(t.TempDir(), "flag.json")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(flagged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	v, res := c.verify(t, flagged, shadow)
	t.Logf("shadowing node_modules with build changes flagged: %s: %s", v.Verdict, v.Reason)
	if v.Verdict != "REJECTED" || res.code != 1 || !strings.Contains(v.Reason, "counts every item failed") {
		t.Errorf("verify of a node_modules shadowing the dependency, build changes flagged: %s (exit %d), want REJECTED by the failing test: %s\n%s", v.Verdict, res.code, v.Reason, res.stdout)
	}
}

// Python: pytest from Debian, JUnit XML, tests in tests/. total skips the
// first item.
const (
	shopPyBug = `"""Cart arithmetic."""


def total(items):
    """The price of (price, qty) items, in cents."""
    s = 0
    for price, qty in items[1:]:
        s += price * qty
    return s


def count(items):
    """The number of units."""
    return sum(qty for _, qty in items)
`
	shopPyTest = `from shop.cart import count, total


class TestTotal:
    def test_empty_total(self):
        assert total([]) == 0


class TestCount:
    def test_quantities(self):
        assert count([(1, 2), (1, 3)]) == 5
`
	shopPyNewTest = `

class TestTotalItems:
    def test_counts_every_item(self):
        got = total([(500, 1), (700, 1)])
        assert got == WANT, f"total = {got}, want WANT"
`
)

func TestRealRepoPytest(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "/usr/bin/python3")
	g := newGitRepo(t, "shop")
	g.run("/usr/bin/python3", "-m", "pytest", "--version")
	newTest := func(want string) string { return shopPyTest + strings.ReplaceAll(shopPyNewTest, "WANT", want) }
	base := g.commit("", "", "shop: total and count", map[string]string{
		"shop/__init__.py": "", "shop/cart.py": shopPyBug, "tests/test_cart.py": shopPyTest,
	})
	genuine := strings.Replace(shopPyBug, "    s = 0\n    for price, qty in items[1:]:\n        s += price * qty\n    return s\n", "    return sum(price * qty for price, qty in items)\n", 1)
	c := realCase{
		repo:      g,
		fix:       g.commit("fix", base, "shop: total counts the first item", map[string]string{"shop/cart.py": strings.Replace(shopPyBug, "items[1:]", "items", 1), "tests/test_cart.py": newTest("1200")}),
		genuine:   g.commit("cand/genuine", base, "shop: total as one sum", map[string]string{"shop/cart.py": genuine}),
		testEdit:  g.commit("cand/test-edit", base, "shop: the test wants what total gives", map[string]string{"tests/test_cart.py": newTest("700")}),
		breaksP2P: g.commit("cand/breaks-p2p", base, "shop: one sum, count the lines", map[string]string{"shop/cart.py": strings.Replace(genuine, "return sum(qty for _, qty in items)", "return len(items)", 1)}),
		wantF2P:   []string{"test_counts_every_item"},
		wantP2P:   []string{"test_empty_total", "test_quantities"},
		bugValue:  "700",
		hostile: map[string]string{
			// A conftest.py that reports every failing test as passed.
			"adds a conftest.py turning failures into passes": g.commit("cand/conftest", base, "shop: test settings", map[string]string{"conftest.py": `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        rep.outcome = "passed"
`}),
		},
	}
	if genuine == shopPyBug {
		t.Fatal("the genuine candidate's edit did not apply")
	}
	c.check(t)
}

// Go, base crashing: the fix's second new test recurses without end on
// base, so the test binary dies of a stack overflow after the first one
// (the bug's own test) has failed. Its failure still counts.
const (
	treeBug = `package tree

// Node is a tree of values.
type Node struct {
	Val  int
	Kids []*Node
}

// Total is the sum of the values in the tree.
func Total(n *Node) int {
	if n == nil {
		return 0
	}
	s := 0
	for _, k := range n.Kids {
		s += Total(k)
	}
	return s
}

// Depth is the number of steps from n down to 0 (0 for n <= 0).
func Depth(n int) int {
	if n == 0 {
		return 0
	}
	return 1 + Depth(n-1)
}
`
	treeTest = `package tree

import "testing"

func TestDepthThree(t *testing.T) {
	if got := Depth(3); got != 3 {
		t.Errorf("Depth(3) = %d, want 3", got)
	}
}
`
	// A small stack limit makes the overflow quick; the test file is the
	// harness's, not the candidate's. It is walk_test.go, after
	// tree_test.go: go test runs files in name order, so base's own test
	// runs before the crash.
	treeNewTest = `package tree

import (
	"runtime/debug"
	"testing"
)

func TestTotal(t *testing.T) {
	n := &Node{Val: 1, Kids: []*Node{{Val: 2}, {Val: 3}}}
	if got := Total(n); got != 6 {
		t.Errorf("Total = %d, want 6", got)
	}
}

func TestTotalNil(t *testing.T) {
	if got := Total(nil); got != 0 {
		t.Errorf("Total(nil) = %d, want 0", got)
	}
}

func TestDepthNegative(t *testing.T) {
	debug.SetMaxStack(1 << 20)
	if got := Depth(-1); got != 0 {
		t.Errorf("Depth(-1) = %d, want 0", got)
	}
}
`
)

func TestRealRepoGoBaseCrashes(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "go")
	g := newGitRepo(t, "tree")
	base := g.commit("", "", "tree: Total and Depth", map[string]string{"go.mod": "module example.test/tree\n\ngo 1.22\n", "tree/tree.go": treeBug, "tree/tree_test.go": treeTest})
	fixed := strings.Replace(strings.Replace(treeBug, "s := 0", "s := n.Val", 1), "if n == 0 {", "if n <= 0 {", 1)
	genuine := strings.Replace(strings.Replace(treeBug, "s := 0\n\tfor", "s := 0\n\ts += n.Val\n\tfor", 1), "if n == 0 {\n\t\treturn 0", "if n < 1 {\n\t\treturn 0", 1)
	c := realCase{
		repo:    g,
		fix:     g.commit("fix", base, "tree: Total counts every node, Depth stops below zero", map[string]string{"tree/tree.go": fixed, "tree/walk_test.go": treeNewTest}),
		genuine: g.commit("cand/genuine", base, "tree: Total adds the node's value", map[string]string{"tree/tree.go": genuine}),
	}
	if fixed == treeBug || genuine == treeBug {
		t.Fatal("the fixes' edits did not apply")
	}
	file, h := c.harnessInit(t)
	// The tests that failed before the crash are fail-to-pass, each with
	// its own failure. TestDepthNegative was running when the binary died:
	// it may be fail-to-pass too, but only with the crash as its expected
	// failure (on base, the overflow is what the bug does to it).
	var total string
	for _, n := range h.FailToPass {
		switch {
		case sameTest(n, "TestTotal"):
			total = n
		case sameTest(n, "TestDepthNegative"):
			if text, re := expectedFor(t, h, n); re != nil || !strings.Contains(text, "stack exceeds") {
				t.Errorf("expected failure of %s = %q %v, want the stack overflow it died of", n, text, re)
			}
		default:
			t.Errorf("fail_to_pass holds %s, which passes on base", n)
		}
	}
	if total == "" {
		t.Fatalf("fail_to_pass = %q: TestTotal, which failed on base before the crash, is not in it", h.FailToPass)
	}
	checkNames(t, "pass_to_pass", h.PassToPass, []string{"TestDepthThree", "TestTotalNil"})
	if text, re := expectedFor(t, h, total); re != nil || !strings.Contains(text, "Total = 0, want 6") {
		t.Errorf("expected failure of %s = %q %v, want the bug's signature %q", total, text, re, "Total = 0, want 6")
	}
	for _, cand := range []string{c.fix, c.genuine} {
		v, res := c.verify(t, file, cand)
		if v.Verdict != "VERIFIED" || res.code != 0 {
			t.Errorf("verify %s on a crashing base: %s (exit %d), want VERIFIED: %s\n%s", cand, v.Verdict, res.code, v.Reason, res.stdout)
		}
		for _, s := range v.Stages {
			if s.Name == "base" {
				t.Logf("base: %s: %s", s.Outcome, s.Detail)
			}
			if s.Name == "base" && (s.Outcome != "reproduced" || !strings.Contains(s.Detail, "crash")) {
				t.Errorf("base stage: %s %q, want reproduced, saying the binary crashed after", s.Outcome, s.Detail)
			}
		}
	}
}
