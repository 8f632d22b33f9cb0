package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Red team 23 (a2), as regressions: harness init and verify on real
// repositories, real git, the real sandbox and the real runners.

// A Go repository whose test file holds a testable example (ExampleMax,
// checked by what it prints). go test -json reports it like a test, but
// the witness instruments Test and Fuzz functions only, so an example in
// pass_to_pass made every candidate's pass counterfeit, the reference
// fix's included.
const (
	exampleGo = `package ex

// Sum adds the values.
func Sum(xs []int) int {
	s := 0
	for i := 1; i < len(xs); i++ {
		s += xs[i]
	}
	return s
}

// Max is the largest value (0 for none).
func Max(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
`
	exampleTest = `package ex

import (
	"fmt"
	"testing"
)

func ExampleMax() {
	fmt.Println(Max([]int{3, 9, 4}))
	// Output: 9
}

func TestMax(t *testing.T) {
	if got := Max([]int{1, 2}); got != 2 {
		t.Errorf("Max = %d, want 2", got)
	}
}
`
	exampleNewTest = `
func TestSumCountsFirst(t *testing.T) {
	if got := Sum([]int{5, 7}); got != 12 {
		t.Errorf("Sum([5 7]) = %d, want 12", got)
	}
}
`
)

// TestHarnessInitLeavesOutGoExamples: harness init leaves the example out
// and the reference is VERIFIED with the harness it wrote; a harness
// naming the example by hand is refused when read, saying why.
func TestHarnessInitLeavesOutGoExamples(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "go")
	g := newGitRepo(t, "ex")
	base := g.commit("", "", "ex: Sum and Max", map[string]string{"go.mod": "module example.test/ex\n\ngo 1.22\n", "ex/ex.go": exampleGo, "ex/ex_test.go": exampleTest})
	fixed := strings.Replace(exampleGo, "for i := 1;", "for i := 0;", 1)
	c := realCase{repo: g, fix: g.commit("fix", base, "ex: Sum counts the first value", map[string]string{"ex/ex.go": fixed, "ex/ex_test.go": exampleTest + exampleNewTest})}
	file, h := c.harnessInit(t)
	for _, n := range append(h.FailToPass, h.PassToPass...) {
		if strings.Contains(n, "Example") {
			t.Errorf("harness init put the example %s in the harness: %q, %q", n, h.FailToPass, h.PassToPass)
		}
	}
	if v, res := c.verify(t, file, c.fix); v.Verdict != "VERIFIED" {
		t.Errorf("the reference with the harness harness init wrote is %s (exit %d), want VERIFIED: %s", v.Verdict, res.code, v.Reason)
	}

	var m map[string]any
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["pass_to_pass"] = append(m["pass_to_pass"].([]any), "example.test/ex/ex.ExampleMax")
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	byHand := filepath.Join(t.TempDir(), "by-hand.json")
	if err := os.WriteFile(byHand, b, 0o644); err != nil {
		t.Fatal(err)
	}
	res := signoffIn(t, c.env, "verify", "--repo", g.dir, "--harness", byHand, "--candidate", c.fix, "--json")
	if res.code == 0 || !strings.Contains(res.stderr, "ExampleMax") || !strings.Contains(res.stderr, "is a Go example") {
		t.Errorf("a harness naming the example by hand: want it refused, naming the example:\n%s", res)
	}
}

// TestVerifyRefusesPytestReportPatchFromLibrary: library code that
// reaches pytest's internals through importlib and marks every failing
// report passed (the same hook a refused conftest.py uses, moved into
// shop/cart.py outside the frozen tree) is REJECTED by the static checks;
// it was VERIFIED, the bug left as it was.
func TestVerifyRefusesPytestReportPatchFromLibrary(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "/usr/bin/python3")
	g := newGitRepo(t, "shop")
	newTest := func(want string) string { return shopPyTest + strings.ReplaceAll(shopPyNewTest, "WANT", want) }
	base := g.commit("", "", "shop: total and count", map[string]string{
		"shop/__init__.py": "", "shop/cart.py": shopPyBug, "tests/test_cart.py": shopPyTest,
	})
	hostile := shopPyBug + `

import importlib as _il

_reports = _il.import_module("_pytest.reports")
_made = _reports.TestReport.from_item_and_call.__func__


def _as_passed(cls, item, call):
    rep = _made(cls, item, call)
    if rep.failed:
        rep.outcome, rep.longrepr = "passed", None
    return rep


_reports.TestReport.from_item_and_call = classmethod(_as_passed)
`
	c := realCase{
		repo: g,
		fix:  g.commit("fix", base, "shop: total counts the first item", map[string]string{"shop/cart.py": strings.Replace(shopPyBug, "items[1:]", "items", 1), "tests/test_cart.py": newTest("1200")}),
	}
	cand := g.commit("cand/report-patch", base, "shop: cart helpers", map[string]string{"shop/cart.py": hostile})
	file, _ := c.harnessInit(t)
	v, res := c.verify(t, file, cand)
	if v.Verdict != "REJECTED" || !strings.Contains(v.Reason, "_pytest") {
		t.Errorf("a library that rewrites pytest's reports is %s: %s, want REJECTED by the static checks naming _pytest\n%s", v.Verdict, v.Reason, res)
	}
}

// TestHarnessInitNodeSlashNames: for a JUnit case with no suite path
// (node's top-level test()), a "/" is part of the name, not a level: the
// route test "GET /users" does not have "GET /users/:id" as a subtest, so
// a failing todo test under that name (node exits 0 for it; the JUnit
// report still holds its failure) does not fail the pass-to-pass test,
// and the reference is VERIFIED with the harness harness init wrote.
func TestHarnessInitNodeSlashNames(t *testing.T) {
	t.Parallel()
	realRepoPrereqs(t, "node")
	g := newGitRepo(t, "api")
	api := `'use strict';
function route(method, path) {
  if (method === 'GET' && path === '/users') return 'list';
  if (method === 'POST' && path === '/users') return 'list';
  return 'none';
}
module.exports = { route };
`
	apiTest := `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { route } = require('../lib/api.js');
test('GET /users', () => { assert.strictEqual(route('GET', '/users'), 'list'); });
test('GET /users/:id', { todo: 'ids are not routed yet' }, () => { assert.strictEqual(route('GET', '/users/7'), 'show'); });
`
	newTest := apiTest + "test('POST /users', () => { assert.strictEqual(route('POST', '/users'), 'create'); });\n"
	base := g.commit("", "", "api: routes", map[string]string{
		"package.json": `{"name": "api", "version": "1.0.0", "private": true}` + "\n", "lib/api.js": api, "test/api.test.js": apiTest,
	})
	fixed := strings.Replace(api, "path === '/users') return 'list';\n  return", "path === '/users') return 'create';\n  return", 1)
	if fixed == api {
		t.Fatal("the fix did not apply")
	}
	c := realCase{repo: g, fix: g.commit("fix", base, "api: POST /users creates", map[string]string{"lib/api.js": fixed, "test/api.test.js": newTest})}
	file, h := c.harnessInit(t)
	checkNames(t, "pass_to_pass", h.PassToPass, []string{"GET /users"})
	if v, res := c.verify(t, file, c.fix); v.Verdict != "VERIFIED" {
		t.Errorf("the reference with the harness harness init wrote is %s (exit %d), want VERIFIED: %s", v.Verdict, res.code, v.Reason)
	}
}
