package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
