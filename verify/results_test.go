package verify_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

// testdata/gotest.jsonl is real go test -json output of a module with a
// failing test, a passing one, a skipped one, subtests, a package that
// does not build and a package whose test panics.
func loadGoTest(t testing.TB) verify.Results {
	t.Helper()
	b, err := os.ReadFile("testdata/gotest.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := verify.ParseGoTestJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestParseGoTestJSON(t *testing.T) {
	t.Parallel()
	res := loadGoTest(t)
	for _, tc := range []struct{ name, want string }{
		{"TestCouponAppliesOnce", verify.Fail},
		{"cart.TestCouponAppliesOnce", verify.Fail},
		{"example.com/shop/cart.TestCouponAppliesOnce", verify.Fail},
		{"shop/cart.TestCouponAppliesOnce", verify.Fail},
		{"TestZeroCoupon", verify.Pass},
		{"TestSkipped", verify.Skip},
		{"TestSub/ok", verify.Pass},
		{"TestSub/bad", verify.Fail},
		{"TestSub", verify.Fail},
		{"TestPanics", verify.Fail},
		// TestAfter never ran: the panic ended its binary.
		{"crash.TestAfter", verify.Missing},
		{"other.TestZeroCoupon", verify.Missing},
		{"art.TestZeroCoupon", verify.Missing},
		// The broken package never built, so its tests could not run; a
		// bare name could have lived there too.
		{"broken.TestBroken", verify.NotRun},
		{"TestNowhere", verify.NotRun},
		{"cart.TestNowhere", verify.Missing},
	} {
		if got := res.Lookup(tc.name).Outcome; got != tc.want {
			t.Errorf("Lookup(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
	if out := res.Lookup("TestCouponAppliesOnce").Output(); !strings.Contains(out, "total = 8100, want 9000") {
		t.Errorf("output = %q, want the failure message", out)
	}
	if len(res.Failures) != 1 || res.Failures[0].Package != "example.com/shop/broken" || !res.Failures[0].Build ||
		!strings.Contains(res.Failures[0].Output, "undefined: undefined") {
		t.Errorf("Failures = %+v, want the broken package's build failure with its compiler output", res.Failures)
	}
}

func TestParseGoTestJSONFailsClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule, in, name, want string
	}{
		{"a test with no result failed",
			`{"Action":"run","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"output","Package":"p","Test":"TestX","Output":"panic: test timed out\n"}`,
			"TestX", verify.Fail},
		{"a later pass cannot undo a failure",
			`{"Action":"fail","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"pass","Package":"p","Test":"TestX"}`,
			"TestX", verify.Fail},
		{"a later failure wins",
			`{"Action":"pass","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestX"}`,
			"TestX", verify.Fail},
		{"a test that passes in one package and fails in another failed",
			`{"Action":"pass","Package":"a","Test":"TestX"}` + "\n" + `{"Action":"fail","Package":"b","Test":"TestX"}`,
			"TestX", verify.Fail},
		{"log text is not a result",
			"--- PASS: TestX (0.00s)\nok  \tp\t0.1s\n",
			"TestX", verify.Missing},
		{"a package failing without tests means its tests did not run",
			`{"Action":"start","Package":"p"}` + "\n" + `{"Action":"output","Package":"p","Output":"FAIL p [setup failed]\n"}` + "\n" + `{"Action":"fail","Package":"p"}`,
			"p.TestX", verify.NotRun},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res, err := verify.ParseGoTestJSON(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Lookup(tc.name).Outcome; got != tc.want {
				t.Fatalf("Lookup(%q) = %s, want %s (results %+v)", tc.name, got, tc.want, res)
			}
		})
	}
}

const junitSample = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="example.com/shop/cart" tests="4">
    <testcase classname="example.com/shop/cart" name="TestCouponAppliesOnce" time="0.00">
      <failure message="Failed" type="">cart_test.go:5: total = 8100, want 9000</failure>
    </testcase>
    <testcase classname="example.com/shop/cart" name="TestZeroCoupon" time="0.00"></testcase>
    <testcase classname="example.com/shop/cart" name="TestSkipped"><skipped message="not today"/></testcase>
    <testcase classname="example.com/shop/cart" name="TestErrors"><error message="exception">boom</error></testcase>
    <testsuite name="nested">
      <testcase name="test_inner"><system-out>inner ok</system-out></testcase>
    </testsuite>
  </testsuite>
  <testsuite name="com.example.CartTest">
    <testcase classname="com.example.CartTest" name="testTotal"/>
  </testsuite>
</testsuites>`

func TestParseJUnitXML(t *testing.T) {
	t.Parallel()
	res, err := verify.ParseJUnitXML(strings.NewReader(junitSample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"TestCouponAppliesOnce", verify.Fail},
		{"cart.TestCouponAppliesOnce", verify.Fail},
		{"TestZeroCoupon", verify.Pass},
		{"TestSkipped", verify.Skip},
		{"TestErrors", verify.Fail},
		{"test_inner", verify.Pass},
		{"nested.test_inner", verify.Pass},
		{"CartTest.testTotal", verify.Pass},
		{"com.example.CartTest.testTotal", verify.Pass},
		{"TestNowhere", verify.Missing},
	} {
		if got := res.Lookup(tc.name).Outcome; got != tc.want {
			t.Errorf("Lookup(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
	if out := res.Lookup("TestCouponAppliesOnce").Output(); !strings.Contains(out, "8100") {
		t.Errorf("output = %q", out)
	}
	// A single <testsuite> root is accepted too.
	one, err := verify.ParseJUnitXML(strings.NewReader(`<testsuite name="p"><testcase name="TestX"/></testsuite>`))
	if err != nil || one.Lookup("p.TestX").Outcome != verify.Pass {
		t.Fatalf("single suite = %+v, %v", one, err)
	}
	for _, bad := range []string{"", "not xml", `<html><testcase name="TestX"/></html>`, `<testsuites><testsuite>`} {
		if _, err := verify.ParseJUnitXML(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseJUnitXML(%q) accepted", bad)
		}
	}
}

func FuzzParseGoTestJSON(f *testing.F) {
	// Small seeds: the fuzzer minimizes every interesting input, which
	// takes long on a large one.
	b, err := os.ReadFile("testdata/gotest.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	var seed []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.Contains(l, []byte("broken")) || bytes.Contains(l, []byte("TestSub/bad")) {
			seed = append(seed, l...)
		}
	}
	f.Add(seed)
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"TestX"}`))
	f.Add([]byte(`{"Action":"fail","Package":"p","FailedBuild":"p [p.test]"}`))
	f.Add([]byte("not json\n{}\n{\"Action\":1}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := verify.ParseGoTestJSON(bytes.NewReader(in))
		if err != nil {
			return
		}
		checkResults(t, res)
	})
}

func FuzzParseJUnitXML(f *testing.F) {
	f.Add([]byte(junitSample))
	f.Add([]byte(`<testsuite name="p"><testcase name="TestX"><failure/></testcase></testsuite>`))
	f.Add([]byte(`<testsuites><testsuite><testsuite><testcase/></testsuite></testsuite></testsuites>`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := verify.ParseJUnitXML(bytes.NewReader(in))
		if err != nil {
			return
		}
		checkResults(t, res)
	})
}

// checkResults holds for any input: outcomes are one of three, and a
// lookup of any parsed name finds it and never turns a failure into a pass.
func checkResults(t *testing.T, res verify.Results) {
	for _, tr := range res.Tests {
		switch tr.Outcome {
		case verify.Pass, verify.Fail, verify.Skip:
		default:
			t.Fatalf("test %q has outcome %q", tr.Name, tr.Outcome)
		}
		if tr.Name == "" {
			continue
		}
		m := res.Lookup(tr.Name)
		if m.Outcome == verify.Missing || m.Outcome == verify.NotRun {
			t.Fatalf("Lookup(%q) = %s for a parsed test", tr.Name, m.Outcome)
		}
		if tr.Outcome == verify.Fail && m.Outcome != verify.Fail {
			t.Fatalf("Lookup(%q) = %s, but a matching test failed", tr.Name, m.Outcome)
		}
	}
}

// JUnit cases are named by their suite path, so a case name used in
// several describe blocks can be targeted, while a bare case name, a
// package-qualified one and pytest's single "pytest" suite still match.
func TestJUnitSuitePaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule, xml string
		names     map[string]string // harness name -> outcome
		full      []string          // the parsed names
	}{
		{"node's reporter: classname test, describe blocks as suites", `<testsuites>
	<testsuite name="outer"><testsuite name="inner">
		<testcase name="works" classname="test"/>
		<testcase name="breaks" classname="test"><failure type="testCodeFailure" message="want 2 got 1">AssertionError</failure></testcase>
	</testsuite><testcase name="works" classname="test"/></testsuite>
	<testsuite name="other"><testcase name="works" classname="test"><failure message="boom"/></testcase></testsuite>
	<testcase name="top" classname="test"/>
	<testsuite name="parent"><testcase name="child" classname="test"/></testsuite>
</testsuites>`, map[string]string{
			"outer > inner > works": verify.Pass, "inner > works": verify.Pass, "outer > works": verify.Pass,
			"other > works": verify.Fail,
			// The bare name matches all three: any failure fails it.
			"works": verify.Fail, "top": verify.Pass,
			// A suite stands for its cases.
			"outer > inner": verify.Fail, "outer": verify.Fail, "parent": verify.Pass,
			"nner > works": verify.Missing, "outer > inner > works > x": verify.Missing, "test.top": verify.Pass,
		}, []string{"top", "outer > works", "outer > inner > works", "outer > inner > breaks", "other > works", "parent > child"}},
		{"pytest: one suite named pytest, classname the module and class", `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2">
	<testcase classname="tests.test_cart.TestCoupon" name="test_applies_once" time="0.001"><failure message="assert 8100 == 9000">tests/test_cart.py:9: AssertionError</failure></testcase>
	<testcase classname="tests.test_cart" name="test_zero" time="0.001"/>
</testsuite></testsuites>`, map[string]string{
			"test_applies_once": verify.Fail, "TestCoupon.test_applies_once": verify.Fail, "tests.test_cart.TestCoupon.test_applies_once": verify.Fail,
			"test_cart.test_zero": verify.Pass, "pytest > test_zero": verify.Pass, "other.test_zero": verify.Missing,
		}, []string{"pytest > test_applies_once", "pytest > test_zero"}},
		{"Surefire: one suite per class", `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.example.CartTest" tests="2" failures="1">
  <properties><property name="java.version" value="21"/></properties>
  <testcase name="testTotal" classname="com.example.CartTest" time="0.01"/>
  <testcase name="testCoupon" classname="com.example.CartTest" time="0.01"><failure message="expected:&lt;9000&gt; but was:&lt;8100&gt;" type="org.opentest4j.AssertionFailedError"/></testcase>
  <system-out/>
</testsuite>`, map[string]string{
			"testTotal": verify.Pass, "CartTest.testTotal": verify.Pass, "com.example.CartTest.testCoupon": verify.Fail,
			"com.example.CartTest": verify.Fail, "OtherTest.testTotal": verify.Missing,
		}, []string{"com.example.CartTest > testTotal", "com.example.CartTest > testCoupon"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			res, err := verify.ParseJUnitXML(strings.NewReader(tc.xml))
			if err != nil {
				t.Fatal(err)
			}
			var full []string
			for _, r := range res.Tests {
				full = append(full, r.Name)
			}
			if !slices.Equal(full, tc.full) {
				t.Errorf("names = %q, want %q", full, tc.full)
			}
			for name, want := range tc.names {
				if got := res.Lookup(name).Outcome; got != want {
					t.Errorf("Lookup(%q) = %s, want %s", name, got, want)
				}
			}
			checkResults(t, res)
		})
	}
}

// The same rules on the reports the real runners write.
func TestJUnitSuitePathsOfRealRunners(t *testing.T) {
	t.Parallel()
	t.Run("node", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("node"); err != nil {
			t.Skip("node not installed")
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "cart.test.js"), []byte(`const {describe, it, test} = require('node:test');
const assert = require('node:assert');
describe('coupon', () => {
  describe('applies once', () => { it('works', () => { assert.strictEqual(8100, 9000, 'got 8100, want 9000'); }); });
  it('works', () => {});
});
describe('totals', () => { it('works', () => {}); });
test('parent', async (t) => { await t.test('child', () => {}); });
`), 0o644)
		cmd := exec.Command("node", "--test", "--test-reporter=junit", "cart.test.js")
		cmd.Dir = dir
		out, _ := cmd.Output() // a failing test exits 1
		res, err := verify.ParseJUnitXML(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for name, want := range map[string]string{
			"coupon > applies once > works": verify.Fail, "applies once > works": verify.Fail, "coupon > works": verify.Pass,
			"totals > works": verify.Pass, "works": verify.Fail, "coupon": verify.Fail, "totals": verify.Pass, "parent": verify.Pass,
			"parent > child": verify.Pass, "test.parent > child": verify.Pass,
		} {
			if got := res.Lookup(name).Outcome; got != want {
				t.Errorf("Lookup(%q) = %s, want %s", name, got, want)
			}
		}
		if m := res.Lookup("coupon"); !strings.Contains(m.Output(), "got 8100, want 9000") {
			t.Errorf("the suite's output lacks its failing case's: %q", m.Output())
		}
	})
	t.Run("pytest", func(t *testing.T) {
		t.Parallel()
		py := "/usr/bin/python3"
		if err := exec.Command(py, "-m", "pytest", "--version").Run(); err != nil {
			t.Skip("pytest not installed")
		}
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
		os.WriteFile(filepath.Join(dir, "tests", "__init__.py"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, "tests", "test_cart.py"), []byte(`
class TestCoupon:
    def test_applies_once(self):
        assert 8100 == 9000, "got 8100, want 9000"

def test_zero():
    pass
`), 0o644)
		report := filepath.Join(dir, "report.xml")
		cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml="+report, "tests")
		cmd.Dir = dir
		cmd.Run() // a failing test exits 1
		f, err := os.Open(report)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		res, err := verify.ParseJUnitXML(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{
			"test_applies_once": verify.Fail, "TestCoupon.test_applies_once": verify.Fail,
			"tests.test_cart.TestCoupon.test_applies_once": verify.Fail, "test_zero": verify.Pass, "test_cart.test_zero": verify.Pass,
		} {
			if got := res.Lookup(name).Outcome; got != want {
				t.Errorf("Lookup(%q) = %s, want %s", name, got, want)
			}
		}
	})
}

// A test's subtests are its subtree: their output is the test's for the
// expected failure, but a subtest never stands in for a Go test's own
// result.
func TestLookupSubtree(t *testing.T) {
	t.Parallel()
	res := loadGoTest(t)
	m := res.Lookup("TestSub")
	if m.Outcome != verify.Fail || len(m.Subtests) != 2 || m.Output() == m.TreeOutput() {
		t.Fatalf("Lookup(TestSub) = %+v", m)
	}
	for _, s := range m.Subtests {
		if !strings.Contains(m.TreeOutput(), s.Output) {
			t.Errorf("TreeOutput lacks %s's output", s.Name)
		}
	}
	// Forged subtest events without their parent do not make a test.
	forged, err := verify.ParseGoTestJSON(strings.NewReader(`{"Action":"pass","Package":"p","Test":"TestX/a"}` + "\n" +
		`{"Action":"pass","Package":"p","Test":"TestX > a"}` + "\n" + `{"Action":"pass","Package":"p"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := forged.Lookup("TestX").Outcome; got != verify.Missing {
		t.Errorf("Lookup(TestX) with only its subtests = %s, want missing", got)
	}
}

// A test binary that dies mid-run is a crash: the test running and the
// panic or fatal error line with the first frame of the code under test.
func TestParseGoTestJSONCrashes(t *testing.T) {
	t.Parallel()
	res := loadGoTest(t)
	if len(res.Crashes) != 1 || res.Crashes[0].Package != "example.com/shop/crash" || res.Crashes[0].Test != "TestPanics" ||
		!strings.HasPrefix(res.Crashes[0].FirstLines, "panic: boom") {
		t.Fatalf("Crashes = %+v", res.Crashes)
	}
	for _, tc := range []struct {
		rule, in string
		want     verify.Crash // zero: no crash
	}{
		{"a test left without a result",
			`{"Action":"run","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"fail","Package":"p"}`,
			verify.Crash{Package: "p", Test: "TestX", FirstLines: "TestX started but reported no result"}},
		{"a fatal error in the package output",
			`{"Action":"output","Package":"p","Output":"fatal error: all goroutines are asleep - deadlock!\n"}` + "\n" + `{"Action":"fail","Package":"p"}`,
			verify.Crash{Package: "p", FirstLines: "fatal error: all goroutines are asleep - deadlock!"}},
		{"logged text is indented, not a crash",
			`{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:3: panic: not really\n"}` + "\n" + `{"Action":"fail","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"fail","Package":"p"}`,
			verify.Crash{}},
		{"a package that passed did not crash",
			`{"Action":"output","Package":"p","Test":"TestX","Output":"panic: printed\n"}` + "\n" + `{"Action":"pass","Package":"p","Test":"TestX"}` + "\n" + `{"Action":"pass","Package":"p"}`,
			verify.Crash{}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			res, err := verify.ParseGoTestJSON(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == verify.Crash{} && len(res.Crashes) != 0:
				t.Fatalf("Crashes = %+v, want none", res.Crashes)
			case tc.want != verify.Crash{} && (len(res.Crashes) != 1 || res.Crashes[0] != tc.want):
				t.Fatalf("Crashes = %+v, want %+v", res.Crashes, tc.want)
			}
		})
	}
}

// The crashes of a real go test run: a stack overflow (the test never
// reports a result) and a panic in a subtest (the parent fails, later
// tests never run).
func TestParseGoTestJSONCrashesOfRealRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module ex.com/m\n\ngo 1.22\n",
		"deep/d_test.go": "package deep\n\nimport (\n\t\"runtime/debug\"\n\t\"testing\"\n)\n\nfunc f(n int) int { return f(n+1) + 1 }\n\nfunc TestFirst(t *testing.T) { t.Error(\"got 8100, want 9000\") }\n\n// A small stack overflows in milliseconds.\nfunc TestDeep(t *testing.T) { debug.SetMaxStack(1 << 20); f(0) }\n\nfunc TestAfter(t *testing.T) {}\n",
		"sub/s_test.go":  "package sub\n\nimport \"testing\"\n\nfunc TestMap(t *testing.T) {\n\tt.Run(\"nil\", func(t *testing.T) { var m map[string]int; m[\"x\"] = 1 })\n}\n\nfunc TestAfter(t *testing.T) {}\n",
		"fine/f_test.go": "package fine\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) {}\n",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, _ := cmd.Output()
	res, err := verify.ParseGoTestJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]verify.Crash{}
	for _, c := range res.Crashes {
		got[c.Package] = c
	}
	if c := got["ex.com/m/deep"]; c.Test != "TestDeep" || !strings.HasPrefix(c.FirstLines, "runtime: goroutine stack exceeds") {
		t.Errorf("deep crash = %+v", c)
	}
	if c := got["ex.com/m/sub"]; c.Test != "TestMap" || !strings.HasPrefix(c.FirstLines, "panic: assignment to entry in nil map") ||
		!strings.Contains(c.FirstLines, "ex.com/m/sub.TestMap.func1 at ") || !strings.Contains(c.FirstLines, "s_test.go:6") {
		t.Errorf("sub crash = %+v", c)
	}
	if _, ok := got["ex.com/m/fine"]; ok || len(res.Crashes) != 2 {
		t.Errorf("Crashes = %+v, want deep and sub only", res.Crashes)
	}
	for name, want := range map[string]string{"deep.TestFirst": verify.Fail, "deep.TestDeep": verify.Fail, "deep.TestAfter": verify.Missing,
		"sub.TestMap": verify.Fail, "sub.TestAfter": verify.Missing, "TestFine": verify.Pass} {
		if got := res.Lookup(name).Outcome; got != want {
			t.Errorf("Lookup(%q) = %s, want %s", name, got, want)
		}
	}
}

// A JUnit name's "/" is part of the name: node's "GET /users/:id" is not
// a subtest of "GET /users", so its failure is not "GET /users"'s
// (red-team finding, issue 23).
func TestJUnitSlashIsNotALevel(t *testing.T) {
	t.Parallel()
	const report = `<testsuites>
<testcase name="GET /users" classname="test"/>
<testcase name="GET /users/:id" classname="test"><failure message="todo">'none' !== 'show'</failure></testcase>
</testsuites>`
	res, err := verify.ParseJUnitXML(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Lookup("GET /users"); m.Outcome != verify.Pass || len(m.Subtests) != 0 {
		t.Errorf("GET /users = %s with %d subtests, want a pass with none", m.Outcome, len(m.Subtests))
	}
	if m := res.Lookup("GET /users/:id"); m.Outcome != verify.Fail {
		t.Errorf("GET /users/:id = %s, want fail", m.Outcome)
	}
	goRes := verify.Results{Tests: []verify.TestResult{{Package: "p", Name: "TestA", Outcome: verify.Pass}, {Package: "p", Name: "TestA/x", Outcome: verify.Fail}}}
	if m := goRes.Lookup("TestA"); len(m.Subtests) != 1 {
		t.Errorf("a Go subtest is below its parent: %d subtests", len(m.Subtests))
	}
}
