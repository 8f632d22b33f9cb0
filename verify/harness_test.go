package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/verify"
)

const (
	sha1a = "1111111111111111111111111111111111111111"
	sha1b = "2222222222222222222222222222222222222222"
)

func validHarness() verify.Harness {
	return verify.Harness{
		Base: sha1a, TestsFrom: sha1b, TestFiles: []string{"cart/coupon_repro_test.go"},
		Command: []string{"go", "test", "-json", "./..."}, Format: verify.FormatGoTestJSON,
		FailToPass: []string{"TestCouponAppliesOnce"}, PassToPass: []string{"TestZeroCoupon", "TestEmptyCart"},
		ExpectedFailure: "8100", TimeoutSeconds: 300, Runs: 1,
	}
}

func harnessJSON(t *testing.T, h verify.Harness) string {
	t.Helper()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseHarnessAcceptsTheIssueExample(t *testing.T) {
	t.Parallel()
	raw := `{"base": "` + sha1a + `", "tests_from": "` + sha1b + `",
	 "test_files": ["cart/coupon_repro_test.go"],
	 "command": ["go", "test", "-json", "./..."], "format": "go-test-json",
	 "fail_to_pass": ["TestCouponAppliesOnce"], "pass_to_pass": ["TestZeroCoupon", "TestEmptyCart"],
	 "expected_failure": "8100", "timeout_seconds": 300, "runs": 1}`
	h, err := verify.ParseHarness([]byte(raw))
	if err != nil {
		t.Fatalf("ParseHarness = %v", err)
	}
	if h.Base != sha1a || h.ExpectedFailure != "8100" || len(h.PassToPass) != 2 {
		t.Fatalf("ParseHarness = %+v", h)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "h.json")
	os.WriteFile(file, []byte(raw), 0o644)
	if _, b, err := verify.LoadHarness(file); err != nil || string(b) != raw {
		t.Fatalf("LoadHarness = %v", err)
	}
}

func TestParseHarnessRefuses(t *testing.T) {
	t.Parallel()
	mod := func(f func(*verify.Harness)) func(t *testing.T) string {
		return func(t *testing.T) string {
			h := validHarness()
			f(&h)
			return harnessJSON(t, h)
		}
	}
	raw := func(s string) func(t *testing.T) string { return func(*testing.T) string { return s } }
	for _, tc := range []struct {
		rule string
		in   func(t *testing.T) string
		want string
	}{
		{"unknown field", func(t *testing.T) string {
			return strings.Replace(harnessJSON(t, validHarness()), `"runs"`, `"retries":2,"runs"`, 1)
		}, `unknown key "retries"`},
		{"duplicate key", func(t *testing.T) string {
			return strings.Replace(harnessJSON(t, validHarness()), `"runs":1`, `"runs":1,"runs":2`, 1)
		}, "duplicate"},
		{"trailing data", func(t *testing.T) string { return harnessJSON(t, validHarness()) + "{}" }, "trailing"},
		{"not an object", raw(`[]`), "cannot unmarshal"},
		{"abbreviated base", mod(func(h *verify.Harness) { h.Base = "1111111" }), "base"},
		{"ref as base", mod(func(h *verify.Harness) { h.Base = "main" }), "base"},
		{"uppercase commit", mod(func(h *verify.Harness) { h.TestsFrom = strings.ToUpper(sha1b[:39]) + "A" }), "tests_from"},
		{"no test files", mod(func(h *verify.Harness) { h.TestFiles = nil }), "test_files is empty"},
		{"absolute path", mod(func(h *verify.Harness) { h.TestFiles = []string{"/etc/passwd"} }), "absolute"},
		{"dot dot", mod(func(h *verify.Harness) { h.TestFiles = []string{"../x_test.go"} }), "leaves"},
		{"unclean path", mod(func(h *verify.Harness) { h.TestFiles = []string{"cart/./x_test.go"} }), "not clean"},
		{"inside .git", mod(func(h *verify.Harness) { h.TestFiles = []string{".git/config"} }), ".git"},
		{"duplicate test file", mod(func(h *verify.Harness) { h.TestFiles = []string{"a_test.go", "a_test.go"} }), "twice"},
		{"empty command", mod(func(h *verify.Harness) { h.Command = nil }), "command is empty"},
		{"blank command", mod(func(h *verify.Harness) { h.Command = []string{" "} }), "command is empty"},
		{"unknown format", mod(func(h *verify.Harness) { h.Format = "tap" }), "format"},
		{"no fail_to_pass", mod(func(h *verify.Harness) { h.FailToPass = nil }), "nothing to verify"},
		{"test in both lists", mod(func(h *verify.Harness) { h.PassToPass = []string{"TestCouponAppliesOnce"} }), "already in fail_to_pass"},
		{"blank test name", mod(func(h *verify.Harness) { h.PassToPass = []string{" TestX"} }), "test name"},
		{"no expected failure", mod(func(h *verify.Harness) { h.ExpectedFailure = "" }), "expected_failure"},
		{"zero timeout", mod(func(h *verify.Harness) { h.TimeoutSeconds = 0 }), "timeout_seconds"},
		{"huge timeout", mod(func(h *verify.Harness) { h.TimeoutSeconds = verify.MaxTimeoutSeconds + 1 }), "timeout_seconds"},
		{"zero runs", mod(func(h *verify.Harness) { h.Runs = 0 }), "runs"},
		{"eleven runs", mod(func(h *verify.Harness) { h.Runs = 11 }), "runs"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := verify.ParseHarness([]byte(tc.in(t)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseHarness = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDigestHarnessCoversFieldsAndTestCode(t *testing.T) {
	t.Parallel()
	h := validHarness()
	files := map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n")}
	d0, err := verify.DigestHarness(h, files)
	if err != nil || len(d0) != 64 {
		t.Fatalf("DigestHarness = %q, %v", d0, err)
	}
	again, _ := verify.DigestHarness(h, map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n")})
	if again != d0 {
		t.Fatalf("digest is not deterministic")
	}
	h2 := h
	h2.ExpectedFailure = "8101"
	if d, _ := verify.DigestHarness(h2, files); d == d0 {
		t.Fatalf("changing expected_failure kept the digest")
	}
	if d, _ := verify.DigestHarness(h, map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart \n")}); d == d0 {
		t.Fatalf("changing one byte of a test file kept the digest")
	}
	h3 := h
	h3.PassToPass = nil
	h4 := h
	h4.PassToPass = []string{}
	d3, _ := verify.DigestHarness(h3, files)
	d4, _ := verify.DigestHarness(h4, files)
	if d3 != d4 {
		t.Fatalf("missing and empty pass_to_pass digest differently")
	}
	if _, err := verify.DigestHarness(h, map[string][]byte{}); err == nil {
		t.Fatalf("DigestHarness without the test file content succeeded")
	}
	if _, err := verify.DigestHarness(h, map[string][]byte{"cart/coupon_repro_test.go": nil, "other_test.go": nil}); err == nil {
		t.Fatalf("DigestHarness with an extra file succeeded")
	}
}

// replaceKey swaps the first `"from":` of a harness's JSON for `"to":`.
func replaceKey(t *testing.T, h verify.Harness, from, to string) string {
	t.Helper()
	return strings.Replace(harnessJSON(t, h), `"`+from+`":`, `"`+to+`":`, 1)
}

func TestParseHarnessKeysAreCaseSensitive(t *testing.T) {
	t.Parallel()
	withEntries := validHarness()
	withEntries.ExpectedFailures = map[string]verify.Matcher{"TestCouponAppliesOnce": {Regexp: `got \d+`}}
	withEntries.Unprotect = []verify.Exemption{{Glob: "**/testdata/**", Reason: "fixtures are generated"}}
	for _, tc := range []struct {
		rule, in, want string
	}{
		{"upper-case key", replaceKey(t, validHarness(), "fail_to_pass", "FAIL_TO_PASS"),
			`unknown key "FAIL_TO_PASS" (keys are case-sensitive: did you mean "fail_to_pass"?)`},
		// encoding/json would let the second spelling replace the list.
		{"second spelling after the first", strings.Replace(harnessJSON(t, validHarness()), `"runs":1`, `"runs":1,"Fail_To_Pass":["TestZeroCoupon"]`, 1),
			`unknown key "Fail_To_Pass"`},
		{"unknown key", strings.Replace(harnessJSON(t, validHarness()), `"runs":1`, `"runs":1,"retries":2`, 1), `unknown key "retries"`},
		{"new field in another case", replaceKey(t, withEntries, "expected_failures", "Expected_Failures"), `did you mean "expected_failures"?`},
		{"unprotect entry key", replaceKey(t, withEntries, "glob", "Glob"), `unprotect: unknown key "Glob" (keys are case-sensitive: did you mean "glob"?)`},
		{"matcher object key", replaceKey(t, withEntries, "regexp", "RegExp"), `unknown key "RegExp" (keys are case-sensitive: did you mean "regexp"?)`},
		{"matcher object with two keys", strings.Replace(harnessJSON(t, withEntries), `{"regexp":`, `{"substring":"x","regexp":`, 1), `unknown key "substring"`},
		{"empty matcher object", strings.Replace(harnessJSON(t, withEntries), `{"regexp":"got \\d+"}`, `{}`, 1), `exactly one key`},
		{"duplicate key stays refused", strings.Replace(harnessJSON(t, withEntries), `{"regexp":`, `{"regexp":"a","regexp":`, 1), "duplicate"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := verify.ParseHarness([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseHarness(%s) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
	if _, err := verify.ParseHarness([]byte(harnessJSON(t, withEntries))); err != nil {
		t.Fatalf("the well-spelt harness: %v", err)
	}
}

func TestParseHarnessExpectedFailures(t *testing.T) {
	t.Parallel()
	two := func(f func(*verify.Harness)) verify.Harness {
		h := validHarness()
		h.FailToPass = []string{"TestBool", "TestCouponAppliesOnce"}
		f(&h)
		return h
	}
	for _, tc := range []struct {
		rule string
		h    verify.Harness
		want string // "" accepts
	}{
		{"an entry per test, no expected_failure", two(func(h *verify.Harness) {
			h.ExpectedFailure = ""
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Substring: "want true"}, "TestCouponAppliesOnce": {Regexp: `got 8[0-9]{3}`}}
		}), ""},
		{"expected_failure covers the tests without an entry", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Substring: "want true"}}
		}), ""},
		{"a test covered by nothing", two(func(h *verify.Harness) {
			h.ExpectedFailure = ""
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Substring: "want true"}}
		}), "TestCouponAppliesOnce has no expected failure"},
		{"neither field", two(func(h *verify.Harness) { h.ExpectedFailure = "" }), "expected_failure is empty"},
		{"a blank expected_failure", two(func(h *verify.Harness) { h.ExpectedFailure = "  " }), "expected_failure is empty"},
		{"an entry for a pass-to-pass test", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestZeroCoupon": {Substring: "x"}}
		}), `"TestZeroCoupon" is not a fail_to_pass test`},
		{"a blank entry", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Substring: " \t"}}
		}), "is empty"},
		{"a bad pattern", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Regexp: "(unclosed"}}
		}), "regexp"},
		{"a pattern matching empty output", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Regexp: "x*"}}
		}), "matches empty output"},
		{"a huge pattern", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Regexp: "a" + strings.Repeat("b", 1024)}}
		}), "longer than"},
		{"a huge substring", two(func(h *verify.Harness) {
			h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Substring: strings.Repeat("b", 1025)}}
		}), "longer than"},
		{"memory at the floor", two(func(h *verify.Harness) { h.MemoryMB = 64 }), ""},
		{"memory below the floor", two(func(h *verify.Harness) { h.MemoryMB = 63 }), "memory_mb"},
		{"memory above the ceiling", two(func(h *verify.Harness) { h.MemoryMB = 1<<20 + 1 }), "memory_mb"},
		{"negative memory", two(func(h *verify.Harness) { h.MemoryMB = -1 }), "memory_mb"},
		{"build timeout at the ceiling", two(func(h *verify.Harness) { h.BuildTimeoutSeconds = verify.MaxTimeoutSeconds }), ""},
		{"build timeout above the ceiling", two(func(h *verify.Harness) { h.BuildTimeoutSeconds = verify.MaxTimeoutSeconds + 1 }), "build_timeout_seconds"},
		{"negative build timeout", two(func(h *verify.Harness) { h.BuildTimeoutSeconds = -5 }), "build_timeout_seconds"},
		{"a Go example in pass_to_pass", two(func(h *verify.Harness) { h.PassToPass = []string{"example.com/m.ExampleMax"} }), "is a Go example"},
		{"a bare Go example in pass_to_pass", two(func(h *verify.Harness) { h.PassToPass = []string{"Example"} }), "is a Go example"},
		{"a test named Examples is not one", two(func(h *verify.Harness) { h.PassToPass = []string{"Examples_x", "m.TestExample"} }), ""},
		{"a JUnit case called Example is fine", two(func(h *verify.Harness) {
			h.Format, h.PassToPass = verify.FormatJUnitXML, []string{"ExampleMax"}
		}), ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			// Through JSON, so the matcher's own decoding is checked too.
			h, err := verify.ParseHarness([]byte(harnessJSON(t, tc.h)))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ParseHarness = %v, want it accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ParseHarness = %v, want an error containing %q", err, tc.want)
			case tc.want == "" && !reflect.DeepEqual(h, tc.h):
				t.Fatalf("round trip: %+v, want %+v", h, tc.h)
			}
		})
	}
}

func TestHarnessExpectedForAndLimits(t *testing.T) {
	t.Parallel()
	h := validHarness()
	h.FailToPass = []string{"TestBool", "TestCouponAppliesOnce"}
	h.ExpectedFailures = map[string]verify.Matcher{"TestBool": {Regexp: `want (true|false)`}}
	if m := h.ExpectedFor("TestBool"); m.Regexp != `want (true|false)` || !m.Match("got x, want false") || m.Match("8100") {
		t.Errorf("ExpectedFor(TestBool) = %+v", m)
	}
	if m := h.ExpectedFor("TestCouponAppliesOnce"); m.Substring != "8100" || !m.Match("got 8100") {
		t.Errorf("ExpectedFor(TestCouponAppliesOnce) = %+v", m)
	}
	h.ExpectedFailure = ""
	if m := h.ExpectedFor("TestCouponAppliesOnce"); m.Match("") || m.Match("anything") {
		t.Errorf("a test without an expectation matched: %+v", m)
	}
	if h.MemoryBytes() != 0 || h.BuildTimeout() != 10*time.Minute {
		t.Errorf("defaults: %d bytes, %s", h.MemoryBytes(), h.BuildTimeout())
	}
	h.MemoryMB, h.BuildTimeoutSeconds = 2048, 90
	if h.MemoryBytes() != 2048<<20 || h.BuildTimeout() != 90*time.Second {
		t.Errorf("set: %d bytes, %s", h.MemoryBytes(), h.BuildTimeout())
	}
}

// A harness written before expected_failures, memory_mb and
// build_timeout_seconds digests exactly as it did: the identity of an
// approved harness must not move under it.
func TestDigestHarnessOfAnOldHarnessIsUnchanged(t *testing.T) {
	t.Parallel()
	h := validHarness()
	files := map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n")}
	got, err := verify.DigestHarness(h, files)
	if err != nil {
		t.Fatal(err)
	}
	// The identity as the code before these fields wrote it.
	old := map[string]any{
		"harness": map[string]any{
			"base": h.Base, "tests_from": h.TestsFrom, "test_files": h.TestFiles, "command": h.Command, "format": h.Format,
			"fail_to_pass": h.FailToPass, "pass_to_pass": h.PassToPass, "expected_failure": h.ExpectedFailure,
			"timeout_seconds": h.TimeoutSeconds, "runs": h.Runs,
		},
		"test_files": map[string]string{"cart/coupon_repro_test.go": verify.SHA256(files["cart/coupon_repro_test.go"])},
	}
	want, err := canonical.Digest(old)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("an old harness digests as %s, before %s", got, want)
	}
	h.ExpectedFailures = map[string]verify.Matcher{"TestCouponAppliesOnce": {Substring: "8100"}}
	withSubstring, _ := verify.DigestHarness(h, files)
	if withSubstring == got {
		t.Fatalf("adding expected_failures kept the digest")
	}
	h2 := validHarness()
	h2.ExpectedFailures = map[string]verify.Matcher{"TestCouponAppliesOnce": {Regexp: "8100"}}
	if d, _ := verify.DigestHarness(h2, files); d == withSubstring || d == "" {
		t.Fatalf("a regexp and a substring of the same text digest alike")
	}
	h3 := validHarness()
	h3.MemoryMB = 512
	if d, _ := verify.DigestHarness(h3, files); d == got {
		t.Fatalf("memory_mb is outside the digest")
	}
}
