package verify

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func tr(pkg, name, outcome, output string) TestResult {
	return TestResult{Package: pkg, Name: name, Outcome: outcome, Output: output}
}

func TestDeriveLists(t *testing.T) {
	t.Parallel()
	const p, q = "example.com/m/cart", "example.com/m/tax"
	fail := func(name, out string) TestResult { return tr(p, name, Fail, out) }
	pass := func(name string) TestResult { return tr(p, name, Pass, "") }
	type want struct {
		f2p, p2p []string
		ef       map[string]string
		flaky    []string
		leftOut  map[string]string // name -> part of why
	}
	for _, c := range []struct {
		name      string
		format    string
		base, ref []Results
		want      want
	}{
		{
			name:   "subtest signature, pass-to-pass, framing and volatile lines skipped",
			format: FormatGoTestJSON,
			base: []Results{{Tests: []TestResult{
				fail("TestCoupon", "=== RUN   TestCoupon\n--- FAIL: TestCoupon (0.00s)\n"),
				fail("TestCoupon/twice", "=== RUN   TestCoupon/twice\n    coupon_test.go:12: at 0xc000123 took 12ms\n    coupon_test.go:13: Total() = 8100, want 9000\n--- FAIL: TestCoupon/twice (0.00s)\n"),
				pass("TestCoupon/once"), pass("TestEmpty"),
			}}},
			ref: []Results{{Tests: []TestResult{pass("TestCoupon"), pass("TestCoupon/twice"), pass("TestCoupon/once"), pass("TestEmpty")}}},
			want: want{f2p: []string{p + ".TestCoupon"}, p2p: []string{p + ".TestEmpty"},
				ef: map[string]string{p + ".TestCoupon": "Total() = 8100, want 9000"}},
		},
		{
			name:   "marker line preferred over an earlier plain one; a line the reference prints too is not proposed",
			format: FormatGoTestJSON,
			base:   []Results{{Tests: []TestResult{fail("TestA", "    a_test.go:5: computing totals\n    a_test.go:6: applying coupon\n    a_test.go:7: got 1, expected 2\n")}}},
			ref:    []Results{{Tests: []TestResult{tr(p, "TestA", Pass, "    a_test.go:5: computing totals\n")}}},
			want:   want{f2p: []string{p + ".TestA"}, ef: map[string]string{p + ".TestA": "got 1, expected 2"}},
		},
		{
			name:   "two tests, two messages: one expected failure each",
			format: FormatGoTestJSON,
			base: []Results{{Tests: []TestResult{
				fail("TestA", "    a_test.go:1: got 1 want 2\n"), fail("TestB", "    b_test.go:1: mismatch in tax\n"),
			}}},
			ref: []Results{{Tests: []TestResult{pass("TestA"), pass("TestB")}}},
			want: want{f2p: []string{p + ".TestA", p + ".TestB"},
				ef: map[string]string{p + ".TestA": "got 1 want 2", p + ".TestB": "mismatch in tax"}},
		},
		{
			name:   "a line that is not in every base run is not proposed; flaky and left-out tests",
			format: FormatGoTestJSON,
			base: []Results{
				{Tests: []TestResult{fail("TestA", "got 1 want 2\nseed 17\n"), pass("TestFlaky"), fail("TestBoth", "x"), tr(p, "TestSkip", Skip, "")}},
				{Tests: []TestResult{fail("TestA", "got 1 want 2\nseed 4\n"), fail("TestFlaky", "no"), fail("TestBoth", "x"), tr(p, "TestSkip", Skip, "")}},
			},
			ref: []Results{
				{Tests: []TestResult{pass("TestA"), pass("TestFlaky"), fail("TestBoth", "x"), tr(p, "TestSkip", Skip, ""), pass("TestNew")}},
				{Tests: []TestResult{pass("TestA"), pass("TestFlaky"), fail("TestBoth", "x"), tr(p, "TestSkip", Skip, ""), pass("TestNew")}},
			},
			want: want{f2p: []string{p + ".TestA"}, ef: map[string]string{p + ".TestA": "got 1 want 2"},
				flaky: []string{p + ".TestFlaky"},
				leftOut: map[string]string{p + ".TestBoth": "fails on base and on the reference", p + ".TestSkip": "skipped on base and the reference",
					p + ".TestNew": "missing on base"}},
		},
		{
			name:   "a bare got: label is not proposed; its value on the next line is, as a pattern for both",
			format: FormatGoTestJSON,
			base: []Results{{Tests: []TestResult{
				fail("TestTrim", "=== RUN   TestTrim\n--- FAIL: TestTrim (0.00s)\n"),
				fail("TestTrim/.5", "    trim_test.go:81: \n        error:\n          values are not equal\n        got:\n          \"\"\n        want:\n          \"0\"\n        stack:\n          c.Assert(trimDecimal(testCase.input), qt.Equals, testCase.expected)\n"),
			}}},
			ref:  []Results{{Tests: []TestResult{pass("TestTrim"), pass("TestTrim/.5")}}},
			want: want{f2p: []string{p + ".TestTrim"}, ef: map[string]string{p + ".TestTrim": `/got:[ \t]*\n\s*""/`}},
		},
		{
			name:   "Go examples are left out: the witness cannot mark them",
			format: FormatGoTestJSON,
			base:   []Results{{Tests: []TestResult{fail("TestA", "got 1 want 2\n"), pass("Example"), pass("ExampleToInt"), pass("Examples_x")}}},
			ref:    []Results{{Tests: []TestResult{pass("TestA"), pass("Example"), pass("ExampleToInt"), pass("Examples_x")}}},
			want: want{f2p: []string{p + ".TestA"}, p2p: []string{p + ".Examples_x"}, ef: map[string]string{p + ".TestA": "got 1 want 2"},
				leftOut: map[string]string{p + ".Example": "Go example", p + ".ExampleToInt": "Go example"}},
		},
		{
			name:   "a new test whose package does not build on base cannot be fail-to-pass",
			format: FormatGoTestJSON,
			base:   []Results{{Tests: []TestResult{tr(q, "TestOld", Pass, "")}, Failures: []PackageFailure{{Package: p, Build: true, Output: "# example.com/m/cart\ncart/x_test.go:3:9: undefined: Discount\n"}}}},
			ref:    []Results{{Tests: []TestResult{tr(q, "TestOld", Pass, ""), pass("TestDiscount")}}},
			want: want{p2p: []string{q + ".TestOld"},
				leftOut: map[string]string{p + ".TestDiscount": "did not build or start on base with the new tests, so it cannot be fail-to-pass (a build failure is not the bug's signature): cart/x_test.go:3:9: undefined: Discount"}},
		},
		{
			name:   "JUnit names bare unless two suites share one, then the shortest qualifier",
			format: FormatJUnitXML,
			base: []Results{{Tests: []TestResult{
				tr("test/a.test.js", "adds", Fail, "AssertionError: 3 !== 4\n"), tr("test/b.test.js", "adds", Pass, ""), tr("test/b.test.js", "rounds", Pass, ""),
			}}},
			ref: []Results{{Tests: []TestResult{tr("test/a.test.js", "adds", Pass, ""), tr("test/b.test.js", "adds", Pass, ""), tr("test/b.test.js", "rounds", Pass, "")}}},
			want: want{f2p: []string{"a.test.js.adds"}, p2p: []string{"b.test.js.adds", "rounds"},
				ef: map[string]string{"a.test.js.adds": "AssertionError: 3 !== 4"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, err := Derive(c.format, c.base, c.ref)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.FailToPass, c.want.f2p) || !slices.Equal(d.PassToPass, c.want.p2p) {
				t.Errorf("fail_to_pass %q pass_to_pass %q, want %q %q", d.FailToPass, d.PassToPass, c.want.f2p, c.want.p2p)
			}
			wantEF := map[string]Matcher{}
			for n, e := range c.want.ef {
				// A pattern is written /like this/ in the table.
				if re, ok := strings.CutPrefix(e, "/"); ok {
					wantEF[n] = Matcher{Regexp: strings.TrimSuffix(re, "/")}
				} else {
					wantEF[n] = Matcher{Substring: e}
				}
			}
			if !maps.Equal(d.ExpectedFailures, wantEF) {
				t.Errorf("expected failures %q, want %q", d.ExpectedFailures, c.want.ef)
			}
			var flaky []string
			for _, f := range d.Flaky {
				flaky = append(flaky, f.Name)
			}
			if !slices.Equal(flaky, c.want.flaky) {
				t.Errorf("flaky %q, want %q", flaky, c.want.flaky)
			}
			if len(d.LeftOut) != len(c.want.leftOut) {
				t.Errorf("left out %+v, want %v", d.LeftOut, c.want.leftOut)
			}
			for _, l := range d.LeftOut {
				if w, ok := c.want.leftOut[l.Name]; !ok || !strings.Contains(l.Why, w) {
					t.Errorf("left out %s: %q, want %q", l.Name, l.Why, w)
				}
			}
		})
	}
}

func TestFailureLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) // 300 bytes
	for _, c := range []struct {
		name      string
		base, ref []string
		want      []string
	}{
		{"file prefix stripped", []string{"    x_test.go:9: wrong total\n"}, []string{""}, []string{"wrong total"}},
		{"panic frames and goroutine headers skipped", []string{"panic: boom [recovered]\ngoroutine 7 [running]:\nmain.f()\n\t/src/x.go:12 +0x1d\nindex out of range\n"}, []string{""},
			[]string{"panic: boom", "index out of range"}},
		{"a panic's message without the runtime's note", []string{"panic: runtime error: index out of range [3] with length 3 [recovered, repanicked]\n\ngoroutine 18 [running]:\n" +
			"testing.tRunner.func1.2({0x574440, 0x287e50d5c000})\n\t/usr/local/go/src/testing/testing.go:1974 +0x232\nexample.com/p/lst.Last(...)\n\t/tmp/panicrepo/lst/lst.go:3\n"}, []string{""},
			[]string{"panic: runtime error: index out of range [3] with length 3"}},
		{"timestamps, temp paths and durations are volatile", []string{"2026-01-02 10:11:12 start\nopen /tmp/x: no such file\nwaited 3s\nstable line\n"}, []string{""}, []string{"stable line"}},
		{"capped at 200 bytes on a rune boundary", []string{long + "\n"}, []string{""}, []string{long[:200]}},
		{"nothing stable", []string{"seed 1\n", "seed 2\n"}, []string{"", ""}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := failureLines(c.base, c.ref); !slices.Equal(got, c.want) {
				t.Errorf("failureLines = %q, want %q", got, c.want)
			}
		})
	}
}
