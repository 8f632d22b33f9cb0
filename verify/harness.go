// Package verify checks a candidate fix against a frozen harness: the
// reproduction tests must fail on the base commit with the expected
// signature, and with those same tests restored over the candidate every
// fail-to-pass and pass-to-pass test must pass on every run. It runs
// everything in a sandbox, reads structured test results only, and fails
// closed: anything it could not establish is INCONCLUSIVE, never VERIFIED.
package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/canonical"
)

// Result formats a harness command may produce on its standard output.
const (
	FormatGoTestJSON = "go-test-json" // the event stream of go test -json
	FormatJUnitXML   = "junit-xml"    // a JUnit XML report
)

// Bounds of a harness. A run longer than two hours or more than ten repeats
// is a different kind of job than checking one fix.
const (
	MaxRuns           = 10
	MaxTimeoutSeconds = 7200
	maxHarnessBytes   = 1 << 20
)

// Harness is the frozen definition of "fixed": which commit has the bug,
// where the reproduction tests come from, how to run them and which tests
// must change from failing to passing and which must keep passing. Its
// digest (HarnessDigest) covers these fields and the bytes of every test
// file, so an approval of the digest is an approval of the test code too.
type Harness struct {
	// Base is the full commit id of the buggy revision.
	Base string `json:"base"`
	// TestsFrom is the full commit id that holds the reproduction tests.
	TestsFrom string `json:"tests_from"`
	// TestFiles are the harness test files, relative to the repository
	// root. They are copied from TestsFrom over both base and candidate.
	TestFiles []string `json:"test_files"`
	// Command runs the tests; its standard output is parsed as Format.
	Command []string `json:"command"`
	Format  string   `json:"format"`
	// FailToPass tests must fail on base and pass on the candidate.
	// PassToPass tests must pass on the candidate. Names are bare
	// (TestX) or qualified by package (cart.TestX, example.com/shop/cart.TestX).
	FailToPass []string `json:"fail_to_pass"`
	PassToPass []string `json:"pass_to_pass"`
	// ExpectedFailure must appear in the output of every fail-to-pass test
	// on base, so a failure for an unrelated reason does not count as
	// reproducing the bug.
	ExpectedFailure string `json:"expected_failure"`
	TimeoutSeconds  int    `json:"timeout_seconds"`
	Runs            int    `json:"runs"`
	// Protect adds globs to the frozen test tree (DefaultProtected);
	// Unprotect removes default globs, each with a reason the card shows.
	// A harness written before these existed has neither, and the same
	// digest.
	Protect   []string    `json:"protect,omitempty"`
	Unprotect []Exemption `json:"unprotect,omitempty"`
	// BuildChanges says what a candidate that changes which tests run or
	// how they build gets: BuildRefuse (the default, also when empty) or
	// BuildFlag.
	BuildChanges string `json:"build_changes,omitempty"`
	// ExpectedFailures gives a fail-to-pass test its own expected failure,
	// matched against the output of the test and all its subtests;
	// ExpectedFailure applies to every test without an entry.
	ExpectedFailures map[string]Matcher `json:"expected_failures,omitempty"`
	// MemoryMB and BuildTimeoutSeconds override the server's memory limit
	// and the build stage's time limit; 0 keeps the default. The server
	// enforces its own maximum.
	MemoryMB            int `json:"memory_mb,omitempty"`
	BuildTimeoutSeconds int `json:"build_timeout_seconds,omitempty"`
}

// Bounds of the per-harness limits.
const (
	MinMemoryMB         = 64
	MaxMemoryMB         = 1 << 20
	DefaultBuildTimeout = 10 * time.Minute
)

// ExpectedFor is the expected failure of the fail-to-pass test name: its
// own entry, or expected_failure. A name with neither gets the zero
// Matcher, which matches nothing.
func (h Harness) ExpectedFor(name string) Matcher {
	if m, ok := h.ExpectedFailures[name]; ok {
		return m
	}
	if strings.TrimSpace(h.ExpectedFailure) == "" {
		return Matcher{}
	}
	return Matcher{Substring: h.ExpectedFailure}
}

// MemoryBytes is memory_mb in bytes, 0 for the server's default.
func (h Harness) MemoryBytes() int64 { return int64(h.MemoryMB) << 20 }

// BuildTimeout is the build stage's time limit.
func (h Harness) BuildTimeout() time.Duration {
	if h.BuildTimeoutSeconds <= 0 {
		return DefaultBuildTimeout
	}
	return time.Duration(h.BuildTimeoutSeconds) * time.Second
}

// commitID is a full SHA-1 or SHA-256 object name. Abbreviations and ref
// names are refused because they can point somewhere else tomorrow.
var commitID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// LoadHarness reads and validates a harness file. It returns the raw bytes
// too, because evidence keeps the file exactly as it was given.
func LoadHarness(file string) (Harness, []byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return Harness{}, nil, fmt.Errorf("harness: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxHarnessBytes+1))
	if err != nil {
		return Harness{}, nil, fmt.Errorf("harness %s: %w", file, err)
	}
	h, err := ParseHarness(raw)
	if err != nil {
		return Harness{}, nil, fmt.Errorf("harness %s: %w", file, err)
	}
	return h, raw, nil
}

// ParseHarness decodes a harness strictly: the text must be one valid JSON
// object with no duplicate or unknown fields, and the result must pass
// Validate.
func ParseHarness(raw []byte) (Harness, error) {
	if len(raw) > maxHarnessBytes {
		return Harness{}, fmt.Errorf("larger than %d bytes", maxHarnessBytes)
	}
	// Transform refuses duplicate keys, which encoding/json would resolve
	// silently in favour of the last one.
	if _, err := canonical.Transform(raw); err != nil {
		return Harness{}, err
	}
	if err := checkHarnessKeys(raw); err != nil {
		return Harness{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var h Harness
	if err := dec.Decode(&h); err != nil {
		return Harness{}, err
	}
	if err := h.Validate(); err != nil {
		return Harness{}, err
	}
	return h, nil
}

// Validate reports the first reason h cannot be used.
func (h Harness) Validate() error {
	if !commitID.MatchString(h.Base) {
		return fmt.Errorf("base %q is not a full lowercase commit id", h.Base)
	}
	if !commitID.MatchString(h.TestsFrom) {
		return fmt.Errorf("tests_from %q is not a full lowercase commit id", h.TestsFrom)
	}
	if len(h.TestFiles) == 0 {
		return fmt.Errorf("test_files is empty")
	}
	seen := map[string]bool{}
	for _, p := range h.TestFiles {
		if err := CheckPath(p); err != nil {
			return fmt.Errorf("test_files: %w", err)
		}
		if seen[p] {
			return fmt.Errorf("test_files: %q listed twice", p)
		}
		seen[p] = true
	}
	if len(h.Command) == 0 || strings.TrimSpace(h.Command[0]) == "" {
		return fmt.Errorf("command is empty")
	}
	for _, a := range h.Command {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("command contains a NUL byte")
		}
	}
	if h.Format != FormatGoTestJSON && h.Format != FormatJUnitXML {
		return fmt.Errorf("format %q is not %s or %s", h.Format, FormatGoTestJSON, FormatJUnitXML)
	}
	if len(h.FailToPass) == 0 {
		return fmt.Errorf("fail_to_pass is empty: there is nothing to verify")
	}
	names := map[string]string{}
	for _, list := range []struct {
		field string
		names []string
	}{{"fail_to_pass", h.FailToPass}, {"pass_to_pass", h.PassToPass}} {
		for _, n := range list.names {
			if err := checkTestName(n); err != nil {
				return fmt.Errorf("%s: %w", list.field, err)
			}
			if prev, ok := names[n]; ok {
				return fmt.Errorf("%s: %q is already in %s", list.field, n, prev)
			}
			names[n] = list.field
			if h.Format == FormatGoTestJSON && isGoExample(n) {
				return fmt.Errorf("%s: %q is a Go example: it is checked by what it prints, and the witness that must vouch for every passing harness test cannot mark one, so every candidate's pass of it would count as counterfeit; leave it out", list.field, n)
			}
		}
	}
	if err := h.validateExpected(); err != nil {
		return err
	}
	if h.TimeoutSeconds < 1 || h.TimeoutSeconds > MaxTimeoutSeconds {
		return fmt.Errorf("timeout_seconds %d is outside 1..%d", h.TimeoutSeconds, MaxTimeoutSeconds)
	}
	if h.Runs < 1 || h.Runs > MaxRuns {
		return fmt.Errorf("runs %d is outside 1..%d", h.Runs, MaxRuns)
	}
	if h.MemoryMB != 0 && (h.MemoryMB < MinMemoryMB || h.MemoryMB > MaxMemoryMB) {
		return fmt.Errorf("memory_mb %d is outside %d..%d (or 0 for the server's default)", h.MemoryMB, MinMemoryMB, MaxMemoryMB)
	}
	if h.BuildTimeoutSeconds != 0 && (h.BuildTimeoutSeconds < 1 || h.BuildTimeoutSeconds > MaxTimeoutSeconds) {
		return fmt.Errorf("build_timeout_seconds %d is outside 1..%d (or 0 for the default)", h.BuildTimeoutSeconds, MaxTimeoutSeconds)
	}
	return h.validateProtection()
}

// validateExpected checks that every fail-to-pass test has a usable
// expected failure, and that every entry of expected_failures names one.
func (h Harness) validateExpected() error {
	emptyMsg := "expected_failure is empty: a failure for any reason would count as reproducing the bug"
	// expected_failure keeps its old rules (no length cap), so harnesses
	// written before expected_failures still parse.
	if h.ExpectedFailure != "" && strings.TrimSpace(h.ExpectedFailure) == "" {
		return fmt.Errorf("%s", emptyMsg)
	}
	keys := slices.Sorted(maps.Keys(h.ExpectedFailures))
	for _, k := range keys {
		if !slices.Contains(h.FailToPass, k) {
			return fmt.Errorf("expected_failures: %q is not a fail_to_pass test", k)
		}
		if err := h.ExpectedFailures[k].check(); err != nil {
			return fmt.Errorf("expected_failures: %q: %w", k, err)
		}
	}
	if h.ExpectedFailure == "" {
		for _, n := range h.FailToPass {
			if _, ok := h.ExpectedFailures[n]; !ok {
				if len(h.ExpectedFailures) == 0 {
					return fmt.Errorf("%s", emptyMsg)
				}
				return fmt.Errorf("%s has no expected failure: give it an entry in expected_failures or set expected_failure (otherwise a failure for any reason would count as reproducing the bug)", n)
			}
		}
	}
	return nil
}

// CheckPath accepts a clean, relative, slash-separated path inside the
// repository.
func CheckPath(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("empty path")
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("path %q contains a backslash or NUL", p)
	case path.IsAbs(p):
		return fmt.Errorf("path %q is absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean (want %q)", p, path.Clean(p))
	case p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q leaves the repository", p)
	case p == ".git" || strings.HasPrefix(p, ".git/"):
		return fmt.Errorf("path %q is inside .git", p)
	}
	return nil
}

func checkTestName(n string) error {
	if n == "" || strings.TrimSpace(n) != n || strings.ContainsAny(n, "\x00\n\r\t") {
		return fmt.Errorf("test name %q is empty or has surrounding or control whitespace", n)
	}
	return nil
}

// normalized returns a copy whose nil lists are empty, so that a missing
// pass_to_pass and an empty one have the same digest.
func (h Harness) normalized() Harness {
	h.TestFiles = orEmpty(h.TestFiles)
	h.Command = orEmpty(h.Command)
	h.FailToPass = orEmpty(h.FailToPass)
	h.PassToPass = orEmpty(h.PassToPass)
	return h
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// harnessIdentity is what a harness digest covers.
type harnessIdentity struct {
	Harness   Harness           `json:"harness"`
	TestFiles map[string]string `json:"test_files"` // path -> sha256 hex of the bytes
}

// DigestHarness returns the harness digest given the contents of its test
// files as they are at tests_from: the SHA-256 of the canonical JSON of
// {harness, test_files: {path: sha256}}. Every listed file must be present
// and no other file may be given.
func DigestHarness(h Harness, files map[string][]byte) (string, error) {
	id := harnessIdentity{Harness: h.normalized(), TestFiles: map[string]string{}}
	for _, p := range h.TestFiles {
		b, ok := files[p]
		if !ok {
			return "", fmt.Errorf("harness digest: no content for test file %s", p)
		}
		id.TestFiles[p] = SHA256(b)
	}
	if len(files) != len(id.TestFiles) {
		return "", fmt.Errorf("harness digest: %d files given for %d test files", len(files), len(id.TestFiles))
	}
	return canonical.Digest(id)
}

// SHA256 is the lowercase hex SHA-256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// isGoExample says whether a go-test-json harness name (bare, qualified
// by its package, or a subtest path) names an example function.
func isGoExample(name string) bool {
	// The test's own name follows some "." of a qualified name (package
	// paths hold dots and slashes), up to the first "/" of its subtests.
	for i := -1; i < len(name); i++ {
		if i >= 0 && name[i] != '.' {
			continue
		}
		top, _, _ := strings.Cut(name[i+1:], "/")
		if goExample.MatchString(top) && !strings.ContainsAny(top, ". ") {
			return true
		}
	}
	return false
}
