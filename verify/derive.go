package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file derives a harness's test lists from observed runs (signoff
// harness init): which tests the fix turns from failing to passing, which
// keep passing, and a line of each failing test's base output that says
// what the bug looks like. It is pure: the runs are made by Observe.

// maxExpectedFailure bounds a proposed expected failure: a whole paragraph
// of output is as brittle as a single word is weak.
const maxExpectedFailure = 200

// Derivation is what the observed runs say the harness should check.
type Derivation struct {
	// FailToPass tests failed on every base run and passed on every
	// reference run; PassToPass passed on every run of both.
	FailToPass []string
	PassToPass []string
	// ExpectedFailures proposes, for each fail-to-pass test, a line of
	// its base output over its whole subtree that every base run printed
	// and no reference run did (or, where the line that says what went
	// wrong is a bare label such as "got:" with the value on the next
	// line, a pattern for the two lines). A test with none is absent.
	ExpectedFailures map[string]Matcher
	// Flaky tests changed outcome across runs of the same commit.
	Flaky []FlakyTest
	// LeftOut are the other tests, each with why.
	LeftOut []LeftOutTest
}

// FlakyTest is a test whose outcome differed across runs of one commit.
type FlakyTest struct {
	Name      string
	Base      []string // outcome of each base run
	Reference []string // outcome of each reference run
}

// LeftOutTest is a test in neither list.
type LeftOutTest struct {
	Name      string
	Base      string // outcome on base (the same on every run)
	Reference string
	Why       string
}

// testKey is one top-level test.
type testKey struct{ pkg, name string }

// Derive classifies the top-level tests seen in the base and reference
// runs of one command (Go: names without "/"; JUnit: every case). Names
// are qualified by package when the format is go-test-json (the full
// import path, which a decoy test in another package cannot share) and
// when two packages of a JUnit report hold the same name.
func Derive(format string, base, ref []Results) (Derivation, error) {
	if len(base) == 0 || len(ref) == 0 {
		return Derivation{}, fmt.Errorf("derive: need at least one base and one reference run (got %d and %d)", len(base), len(ref))
	}
	var keys []testKey
	seen := map[testKey]bool{}
	for _, r := range slices.Concat(base, ref) {
		for _, t := range r.Tests {
			k := testKey{t.Package, t.Name}
			if format == FormatGoTestJSON && strings.Contains(t.Name, "/") || seen[k] {
				continue
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b testKey) int {
		return strings.Compare(a.pkg+"\x00"+a.name, b.pkg+"\x00"+b.name)
	})
	names := qualify(format, keys)
	d := Derivation{ExpectedFailures: map[string]Matcher{}}
	var f2pKeys []testKey
	for _, k := range keys {
		n := names[k]
		bo, ro := outcomes(base, k), outcomes(ref, k)
		if !uniform(bo) || !uniform(ro) {
			d.Flaky = append(d.Flaky, FlakyTest{Name: n, Base: bo, Reference: ro})
			continue
		}
		b, r := bo[0], ro[0]
		switch {
		case format == FormatGoTestJSON && goExample.MatchString(k.name):
			d.LeftOut = append(d.LeftOut, LeftOutTest{Name: n, Base: b, Reference: r,
				Why: "a Go example is checked by comparing what it prints; the witness that vouches for every passing test of a candidate cannot mark one, so its pass would count as counterfeit"})
		case b == Fail && r == Pass:
			d.FailToPass = append(d.FailToPass, n)
			f2pKeys = append(f2pKeys, k)
		case b == Pass && r == Pass:
			d.PassToPass = append(d.PassToPass, n)
		default:
			d.LeftOut = append(d.LeftOut, LeftOutTest{Name: n, Base: b, Reference: r, Why: leftOutWhy(b, r, base[0], k)})
		}
	}
	for i, k := range f2pKeys {
		bOut, rOut := subtreeOutputs(format, base, k), subtreeOutputs(format, ref, k)
		cands := failureLines(bOut, rOut)
		pairs := labelPairs(bOut, rOut)
		switch {
		case len(cands) > 0 && markers.MatchString(cands[0]):
			d.ExpectedFailures[d.FailToPass[i]] = Matcher{Substring: cands[0]}
		case len(pairs) > 0:
			d.ExpectedFailures[d.FailToPass[i]] = pairs[0]
		case len(cands) > 0:
			d.ExpectedFailures[d.FailToPass[i]] = Matcher{Substring: cands[0]}
		}
	}
	return d, nil
}

// leftOutWhy says why a test with uniform outcomes b on base and r on the
// reference is in neither list.
func leftOutWhy(b, r string, base Results, k testKey) string {
	switch {
	case b == NotRun:
		why := "its package did not build or start on base with the new tests, so it cannot be fail-to-pass (a build failure is not the bug's signature)"
		for _, f := range base.Failures {
			if f.Package == k.pkg {
				if l := strings.TrimSpace(firstOutputLine(f.Output)); l != "" {
					why += ": " + l
				}
				break
			}
		}
		return why
	case r == NotRun:
		return "its package did not build or start on the reference"
	case b == Skip || r == Skip:
		return "skipped on " + sideOf(b == Skip, r == Skip)
	case b == Missing || r == Missing:
		return "missing on " + sideOf(b == Missing, r == Missing)
	case b == Fail && r == Fail:
		return "fails on base and on the reference"
	case b == Pass && r == Fail:
		return "passes on base and fails on the reference"
	}
	return fmt.Sprintf("%s on base, %s on the reference", b, r)
}

func sideOf(onBase, onRef bool) string {
	switch {
	case onBase && onRef:
		return "base and the reference"
	case onBase:
		return "base"
	}
	return "the reference"
}

func firstOutputLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// outcomes is k's outcome in each run: its own result, else NotRun when
// its package failed before running tests, else Missing.
func outcomes(runs []Results, k testKey) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = Missing
		for _, f := range r.Failures {
			if f.Package == k.pkg {
				out[i] = NotRun
			}
		}
		for _, t := range r.Tests {
			if t.Package == k.pkg && t.Name == k.name {
				out[i] = t.Outcome
				if out[i] != Pass && out[i] != Skip {
					out[i] = Fail
				}
				break
			}
		}
	}
	return out
}

func uniform(s []string) bool {
	return !slices.ContainsFunc(s, func(o string) bool { return o != s[0] })
}

// subtreeOutputs is, for each run, the output of k and of every subtest
// under it, which is what a per-test expected failure is matched against.
func subtreeOutputs(format string, runs []Results, k testKey) []string {
	// Go subtests are below "/"; a JUnit name's only level is " > ".
	sep := "/"
	if format == FormatJUnitXML {
		sep = junitSep
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		var b strings.Builder
		for _, t := range r.Tests {
			if t.Package == k.pkg && (t.Name == k.name || strings.HasPrefix(t.Name, k.name+sep)) {
				b.WriteString(t.Output)
				b.WriteString("\n")
			}
		}
		out[i] = b.String()
	}
	return out
}

// qualify names each key: Go tests by their full import path (a bare or
// shortened name would match a decoy test of the same name in a package a
// candidate adds), JUnit cases bare unless two packages share the name,
// then by the shortest package suffix that matches no other.
func qualify(format string, keys []testKey) map[testKey]string {
	byName := map[string][]string{}
	for _, k := range keys {
		byName[k.name] = append(byName[k.name], k.pkg)
	}
	out := map[testKey]string{}
	for _, k := range keys {
		switch {
		case k.pkg == "":
			out[k] = k.name
		case format == FormatGoTestJSON:
			out[k] = k.pkg + "." + k.name
		case len(byName[k.name]) == 1:
			out[k] = k.name
		default:
			out[k] = shortestQualifier(k, byName[k.name]) + "." + k.name
		}
	}
	return out
}

// shortestQualifier is the shortest trailing part of k.pkg (split at "/"
// or ".") that pkgMatches for k.pkg and for none of the others.
func shortestQualifier(k testKey, pkgs []string) string {
	for i := len(k.pkg) - 1; i > 0; i-- {
		if k.pkg[i-1] != '/' && k.pkg[i-1] != '.' {
			continue
		}
		q := k.pkg[i:]
		if !pkgMatches(q, k.pkg) {
			continue
		}
		if !slices.ContainsFunc(pkgs, func(p string) bool { return p != k.pkg && pkgMatches(q, p) }) {
			return q
		}
	}
	return k.pkg
}

var (
	// A "file.go:12: " prefix testing's log adds; the line is proposed
	// without it so moving the assertion does not break the harness.
	filePrefix = regexp.MustCompile(`^[\w.\-/]+\.\w+:\d+: `)
	// A line that is only a source position (a stack frame's file line).
	positionOnly = regexp.MustCompile(`^\S+\.\w+:\d+(:\d+)?:?( \+0x[0-9a-fA-F]+)?$`)
	// A stack frame's function line: main.(*T).f(...).
	frameCall = regexp.MustCompile(`^[\w./\-]+(\.\(\*?[\w\[\]]+\))?\.[\w\-\[\]]+\([^()]*\)$`)
	// Content that differs from run to run.
	volatile = []*regexp.Regexp{
		regexp.MustCompile(`0x[0-9a-fA-F]+`),
		regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`),
		regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}`),
		regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}\b`),
		regexp.MustCompile(`/tmp/|/var/folders/|\\Temp\\`),
		regexp.MustCompile(`(?i)goroutine \d+`),
	}
	markers = regexp.MustCompile(`(?i)got|want|expect|actual|!==|mismatch`)
	// A bare label whose value is on the next line, as assertion
	// libraries print them ("got:" / "  \"\"").
	label = regexp.MustCompile(`^\pL[\pL _-]{0,30}:$`)
	// A line of source an assertion library quotes (c.Assert(x, qt.Equals,
	// testCase.expected)): its words are code, not what went wrong.
	sourceLike = regexp.MustCompile(`^[\pL_][\w.]*\(.*\)[;,]?$`)
	// Go example functions: go test reports them like tests.
	goExample = regexp.MustCompile(`^Example($|[^a-z])`)
)

// labelPairs are patterns for a bare label with a got/want marker and
// the line after it ("got:\n  \"\"" as `got:\s*\n\s*""`), best first,
// each matching every base output and no reference output, the value
// line being neither framing nor volatile.
func labelPairs(base, ref []string) []Matcher {
	var out []Matcher
	seen := map[string]bool{}
	lines := strings.Split(base[0], "\n")
	for i := 0; i+1 < len(lines); i++ {
		l := strings.TrimSpace(filePrefix.ReplaceAllString(strings.TrimSpace(lines[i]), ""))
		if !label.MatchString(l) || !markers.MatchString(l) {
			continue
		}
		v := strings.TrimSpace(lines[i+1])
		if v == "" || len(v) > maxExpectedFailure || framing(v) || slices.ContainsFunc(volatile, func(re *regexp.Regexp) bool { return re.MatchString(v) }) {
			continue
		}
		m := Matcher{Regexp: regexp.QuoteMeta(l) + `[ \t]*\n\s*` + regexp.QuoteMeta(v)}
		if seen[m.Regexp] {
			continue
		}
		seen[m.Regexp] = true
		if slices.ContainsFunc(base, func(o string) bool { return !m.Match(o) }) || slices.ContainsFunc(ref, m.Match) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// framing says whether l is the runner's own framing rather than what the
// test said.
func framing(l string) bool {
	for _, p := range []string{"=== ", "--- ", "FAIL", "PASS", "ok ", "ok\t", "goroutine ", "created by ", "exit status ", "coverage:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return positionOnly.MatchString(l) || frameCall.MatchString(l)
}

// failureLines are the lines that could be a test's expected failure, best
// first: each appears in every base output (base) and in no reference
// output (ref), is not framing and has nothing volatile; lines with a
// got/want marker come first.
func failureLines(base, ref []string) []string {
	var marked, plain []string
	seen := map[string]bool{}
	for _, raw := range strings.Split(base[0], "\n") {
		l := strings.TrimSpace(raw)
		l = strings.TrimSpace(filePrefix.ReplaceAllString(l, ""))
		// A panic's message is a fine signature without the runtime's
		// note after it ("[recovered]", "[recovered, repanicked]").
		if before, _, ok := strings.Cut(l, " [recovered"); ok && strings.HasPrefix(l, "panic: ") {
			l = before
		}
		if len(l) > maxExpectedFailure {
			l = truncateUTF8(l, maxExpectedFailure)
		}
		if len(l) < 3 || seen[l] || framing(l) || label.MatchString(l) || !strings.ContainsFunc(l, func(r rune) bool { return r > ' ' && r != '-' && r != '=' }) {
			continue
		}
		seen[l] = true
		if slices.ContainsFunc(volatile, func(re *regexp.Regexp) bool { return re.MatchString(l) }) {
			continue
		}
		if slices.ContainsFunc(base, func(o string) bool { return !strings.Contains(o, l) }) ||
			slices.ContainsFunc(ref, func(o string) bool { return strings.Contains(o, l) }) {
			continue
		}
		if markers.MatchString(l) && !sourceLike.MatchString(l) {
			marked = append(marked, l)
		} else {
			plain = append(plain, l)
		}
	}
	return append(marked, plain...)
}

func truncateUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}
