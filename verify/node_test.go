package verify_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// A small JavaScript project tested with node's own test runner and its
// JUnit reporter: the verifier and its defences are not Go's alone.
const (
	jsCart = `'use strict';
// total prices items (cents) with an optional percentage coupon.
const coupons = { SAVE0: 0, SAVE10: 10, SAVE25: 25 };
function total(items, coupon) {
  let sum = 0;
  for (const it of items) sum += it.price * it.qty;
  if (!coupon) return sum;
  const pct = coupons[coupon];
  if (pct === undefined) throw new Error('unknown coupon ' + coupon);
  const once = Math.floor(sum * (100 - pct) / 100);
  return Math.floor(once * (100 - pct) / 100);
}
module.exports = { total };
`
	jsCartTest = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { total } = require('../lib/cart.js');
test('empty cart', () => { assert.strictEqual(total([], ''), 0); });
test('zero coupon changes nothing', () => { assert.strictEqual(total([{ price: 10000, qty: 1 }], 'SAVE0'), 10000); });
test('unknown coupon', () => { assert.throws(() => total([], 'NOPE')); });
`
	jsRepro = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { total } = require('../lib/cart.js');
test('percentage coupon applies once', () => { assert.strictEqual(total([{ price: 10000, qty: 1 }], 'SAVE10'), 9000); });
`
	jsBug   = "  const once = Math.floor(sum * (100 - pct) / 100);\n  return Math.floor(once * (100 - pct) / 100);\n"
	jsFixed = "  return Math.floor(sum * (100 - pct) / 100);\n"
)

func TestNodeRunnerAttacks(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if testing.Short() {
			t.Skip("node is not installed")
		}
		t.Fatal("node is not installed (run with -short to skip)")
	}
	runner := realRunner(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "jscart")
	repo := &gitx.Repo{Dir: dir}
	if err := repo.Init(ctx); err != nil {
		t.Fatal(err)
	}
	write := func(files map[string]string) string {
		t.Helper()
		for p, c := range files {
			full := filepath.Join(dir, filepath.FromSlash(p))
			os.MkdirAll(filepath.Dir(full), 0o755)
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
	base := write(map[string]string{
		"package.json":      `{"name": "jscart", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}}` + "\n",
		"lib/cart.js":       jsCart,
		"test/cart.test.js": jsCartTest,
	})
	testsFrom := write(map[string]string{"test/coupon_repro.test.js": jsRepro})
	h := verify.Harness{
		Base: base, TestsFrom: testsFrom, TestFiles: []string{"test/coupon_repro.test.js"},
		Command: []string{"node", "--test", "--test-reporter=junit"}, Format: verify.FormatJUnitXML,
		FailToPass:      []string{"percentage coupon applies once"},
		PassToPass:      []string{"empty cart", "zero coupon changes nothing", "unknown coupon"},
		ExpectedFailure: "8100", TimeoutSeconds: 120, Runs: 1,
	}
	fixed := strings.Replace(jsCart, jsBug, jsFixed, 1)
	type row struct {
		name  string
		files map[string]string
		want  string
		check func(t *testing.T, r verify.Report)
	}
	rows := []row{
		{name: "genuine fix", files: map[string]string{"lib/cart.js": fixed}, want: verify.Verified},
		{name: "pass-to-pass test rewritten to hide a broken coupon", want: verify.Rejected,
			files: map[string]string{
				"lib/cart.js":       strings.Replace(fixed, "if (!coupon) return sum;", "if (!coupon) return sum;\n  if (coupon === 'SAVE0') return 0;", 1),
				"test/cart.test.js": strings.Replace(jsCartTest, "assert.strictEqual(total([{ price: 10000, qty: 1 }], 'SAVE0'), 10000);", "", 1),
			},
			check: func(t *testing.T, r verify.Report) {
				if c := stage(r, verify.StageCandidate, 1); !strings.Contains(c.Detail, "zero coupon changes nothing failed") {
					t.Errorf("candidate run = %q", c.Detail)
				}
			}},
		{name: "forged JUnit report and an early exit", want: verify.Rejected,
			files: map[string]string{"lib/cart.js": jsCart + `
if (process.argv.includes('--test') || process.env.NODE_TEST_CONTEXT) {
  process.stdout.write('<?xml version="1.0"?><testsuites><testcase name="percentage coupon applies once" classname="test"/></testsuites>\n');
  process.exit(0);
}
`},
			check: func(t *testing.T, r verify.Report) {
				if !slices.ContainsFunc(r.Findings, func(f tamper.Finding) bool { return f.Rule == "exit-in-library" && f.Severity == tamper.Refuse }) {
					t.Errorf("findings = %+v", r.Findings)
				}
			}},
		{name: "test script changed in package.json", want: verify.Rejected,
			files: map[string]string{"lib/cart.js": fixed, "package.json": `{"name": "jscart", "version": "1.0.0", "private": true, "scripts": {"test": "true"}}` + "\n"}},
	}
	var summary strings.Builder
	tw := tabwriter.NewWriter(&summary, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CANDIDATE\tVERDICT\tREASON")
	for i, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			cand := commitChanges(t, dir, fmt.Sprintf("cand/%d", i), base, rw.files)
			rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t)})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", rw.name, rep.Verdict, trim(rep.Reason, 120))
			if rep.Verdict != rw.want {
				t.Fatalf("verdict = %s, want %s (%s)\n%s", rep.Verdict, rw.want, rep.Reason, verify.Table(rep))
			}
			if rw.check != nil {
				rw.check(t, rep)
			}
		})
	}
	tw.Flush()
	t.Logf("node --test on the real sandbox (%s):\n%s", runner.Name(), summary.String())
}
