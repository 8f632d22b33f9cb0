package verify_test

import (
	"bytes"
	"os"
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
