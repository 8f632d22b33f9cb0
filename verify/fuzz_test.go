package verify_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

// FuzzParseHarness: ParseHarness never panics and refuses with a message;
// a harness it accepts validates, reads back from its own JSON to the same
// harness, and has one well-formed digest.
func FuzzParseHarness(f *testing.F) {
	valid := `{"base":"` + sha1a + `","tests_from":"` + sha1b + `","test_files":["cart/coupon_repro_test.go"],` +
		`"command":["go","test","-json","./..."],"format":"go-test-json","fail_to_pass":["TestCouponAppliesOnce"],` +
		`"pass_to_pass":["TestZeroCoupon","TestEmptyCart"],"expected_failure":"8100","timeout_seconds":300,"runs":1}`
	sha256a := strings.Repeat("ab", 32)
	for _, s := range []string{
		valid,
		strings.NewReplacer(sha1a, sha256a, `"go-test-json"`, `"junit-xml"`, `"runs":1`, `"runs":10`).Replace(valid),
		strings.Replace(valid, `"runs":1`, `"runs":1,"runs":2`, 1),         // duplicate key
		strings.Replace(valid, `"runs":1`, `"runs":1,"retries":2`, 1),      // unknown field
		strings.Replace(valid, `"runs":1`, `"Runs":1`, 1),                  // another case
		strings.Replace(valid, `"cart/coupon_repro_test.go"`, `"../x"`, 1), // leaves the repository
		strings.Replace(valid, `"pass_to_pass":["TestZeroCoupon"`, `"pass_to_pass":["TestCouponAppliesOnce"`, 1),
		strings.Replace(valid, `"timeout_seconds":300`, `"timeout_seconds":1e400`, 1),
		valid + "{}",
		// Per-test expected failures, limits and keys in another case.
		strings.Replace(valid, `"runs":1`, `"runs":1,"expected_failures":{"TestCouponAppliesOnce":{"regexp":"got [0-9]+"}},"memory_mb":512,"build_timeout_seconds":600`, 1),
		strings.Replace(valid, `"expected_failure":"8100"`, `"expected_failure":"","expected_failures":{"TestCouponAppliesOnce":"8100"}`, 1),
		strings.Replace(valid, `"runs":1`, `"runs":1,"expected_failures":{"TestZeroCoupon":"x"}`, 1),
		strings.Replace(valid, `"runs":1`, `"runs":1,"expected_failures":{"TestCouponAppliesOnce":{"Regexp":"x"}}`, 1),
		strings.Replace(valid, `"runs":1`, `"runs":1,"expected_failures":{"TestCouponAppliesOnce":{"regexp":".*"}}`, 1),
		strings.Replace(valid, `"runs":1`, `"runs":1,"memory_mb":63,"build_timeout_seconds":-1`, 1),
		strings.Replace(valid, `"fail_to_pass"`, `"FAIL_TO_PASS"`, 1),
		strings.Replace(valid, `"runs":1`, `"runs":1,"unprotect":[{"Glob":"**/testdata/**","reason":"r"}]`, 1),
		"", "null", "[]", "{}", `{"base":null}`, `"\ud800"`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := verify.ParseHarness(raw)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("ParseHarness refused %q without a message", raw)
			}
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("ParseHarness accepted a harness that does not validate: %v", err)
		}
		// Every fail-to-pass test has an expectation that empty output
		// does not meet.
		for _, n := range h.FailToPass {
			if m := h.ExpectedFor(n); m == (verify.Matcher{}) || m.Match("") {
				t.Fatalf("accepted %s without a usable expected failure: %+v", n, m)
			}
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatalf("Marshal of an accepted harness: %v", err)
		}
		again, err := verify.ParseHarness(b)
		if err != nil {
			t.Fatalf("ParseHarness of the harness's own JSON %s: %v", b, err)
		}
		if !reflect.DeepEqual(again, h) {
			t.Fatalf("round trip changed the harness:\n%+v\n%+v", h, again)
		}
		files := map[string][]byte{}
		for _, p := range h.TestFiles {
			files[p] = []byte("package x // " + p)
		}
		d, err := verify.DigestHarness(h, files)
		if err != nil {
			t.Fatalf("DigestHarness: %v", err)
		}
		if d2, _ := verify.DigestHarness(again, files); d2 != d || len(d) != 64 {
			t.Fatalf("harness digest %q is not stable (%q)", d, d2)
		}
	})
}
