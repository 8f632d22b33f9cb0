package verify

import (
	"fmt"
	"path"
	"strings"
)

// Verdicts.
const (
	Verified     = "VERIFIED"
	Rejected     = "REJECTED"
	Inconclusive = "INCONCLUSIVE"
)

// Stage names.
const (
	StageDiff      = "diff"
	StageBase      = "base"
	StageCandidate = "candidate"
	// StageBuild (build.go) is the build of a Go candidate's non-test
	// code, before its runs: failed is REJECTED.
	StageBuild = "build"
	// StageDeps (deps.go) fetches a checkout's dependencies outside the
	// offline runs; ok or not-executed (INCONCLUSIVE).
	StageDeps = "deps"
)

// Stage outcomes. Only OK, Restored, Reproduced and Passed count toward a
// VERIFIED verdict.
const (
	OK            = "ok"               // diff: nothing to object to
	Restored      = "harness-restored" // diff: the candidate edited harness test files; the edits are discarded
	Refused       = "rejected"         // diff: the candidate may not be run
	Reproduced    = "reproduced"       // base: every fail-to-pass test failed with the expected signature
	NotReproduced = "not-reproduced"   // base: the check did not detect the bug
	Passed        = "passed"           // candidate: every harness test passed
	Failed        = "failed"           // candidate: a harness test failed, was skipped or is missing
	Counterfeit   = "counterfeit"      // candidate: passes reported without the witness of the tests' own completion
	NotExecuted   = "not-executed"     // the run could not execute or produced no usable results
	Skipped       = "skipped"          // not run, because an earlier stage already decided
)

// Test kinds.
const (
	FailToPass = "fail_to_pass"
	PassToPass = "pass_to_pass"
)

// maxReportOutput bounds each test's output in the report; the raw output
// of the run is kept whole in the evidence bundle.
const maxReportOutput = 4 << 10

// TestOutcome is what one run said about one harness test.
type TestOutcome struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	// ExpectedSeen says whether expected_failure appeared in the output
	// (base runs, fail-to-pass tests only).
	ExpectedSeen *bool  `json:"expected_seen,omitempty"`
	Output       string `json:"output,omitempty"`
}

// JudgeBase decides a base run from its results: every fail-to-pass test
// must fail and its output must contain the expected failure. Pass-to-pass
// tests are recorded but do not count on base.
func JudgeBase(h Harness, res Results) (outcome, detail string, tests []TestOutcome) {
	outcome = Reproduced
	var problems, notRun []string
	for _, n := range h.FailToPass {
		m := res.Lookup(n)
		out := m.Output()
		seen := m.Outcome == Fail && strings.Contains(out, h.ExpectedFailure)
		tests = append(tests, TestOutcome{Name: n, Kind: FailToPass, Outcome: m.Outcome, ExpectedSeen: &seen, Output: tail(out)})
		switch {
		case m.Outcome == NotRun:
			notRun = append(notRun, n)
		case m.Outcome == Fail && !seen:
			problems = append(problems, fmt.Sprintf("%s failed without %q in its output", n, h.ExpectedFailure))
		case m.Outcome == Pass:
			problems = append(problems, n+" passed")
		case m.Outcome == Skip:
			problems = append(problems, n+" was skipped")
		case m.Outcome == Missing:
			problems = append(problems, n+" is missing from the results")
		}
	}
	for _, n := range h.PassToPass {
		m := res.Lookup(n)
		tests = append(tests, TestOutcome{Name: n, Kind: PassToPass, Outcome: m.Outcome, Output: tail(m.Output())})
	}
	switch {
	case len(notRun) > 0:
		return NotExecuted, "could not run " + strings.Join(notRun, ", ") + ": " + failureSummary(res), tests
	case len(problems) > 0:
		return NotReproduced, "the check never detected the bug: " + strings.Join(problems, "; "), tests
	}
	return outcome, fmt.Sprintf("fail-to-pass %d/%d failed with %q", len(h.FailToPass), len(h.FailToPass), h.ExpectedFailure), tests
}

// JudgeCandidate decides a candidate run: every fail-to-pass and
// pass-to-pass test must pass. Skipped and missing tests are failures; a
// test that could not run makes the run not executed.
func JudgeCandidate(h Harness, res Results) (outcome, detail string, tests []TestOutcome) {
	var failed, notRun []string
	count := map[string][2]int{}
	for _, list := range []struct {
		kind  string
		names []string
	}{{FailToPass, h.FailToPass}, {PassToPass, h.PassToPass}} {
		for _, n := range list.names {
			m := res.Lookup(n)
			tests = append(tests, TestOutcome{Name: n, Kind: list.kind, Outcome: m.Outcome, Output: tail(m.Output())})
			c := count[list.kind]
			c[1]++
			switch m.Outcome {
			case Pass:
				c[0]++
			case NotRun:
				notRun = append(notRun, n)
			case Fail:
				failed = append(failed, n+" failed"+firstLine(m.Output(), h.ExpectedFailure))
			default:
				failed = append(failed, n+" "+describeOutcome(m.Outcome))
			}
			count[list.kind] = c
		}
	}
	tally := fmt.Sprintf("fail-to-pass %d/%d passed, pass-to-pass %d/%d passed",
		count[FailToPass][0], count[FailToPass][1], count[PassToPass][0], count[PassToPass][1])
	switch {
	case len(failed) > 0:
		return Failed, strings.Join(failed, "; ") + " (" + tally + ")", tests
	case len(notRun) > 0:
		return NotExecuted, "could not run " + strings.Join(notRun, ", ") + ": " + failureSummary(res), tests
	}
	return Passed, tally, tests
}

func describeOutcome(o string) string {
	switch o {
	case Skip:
		return "was skipped"
	case Missing:
		return "is missing from the results"
	}
	return "has outcome " + o
}

// firstLine shows where the expected failure text appears in a failing
// test's output, or the output's first meaningful line, so the table says
// why (e.g. "got 8100, want 9000").
func firstLine(out, expected string) string {
	var pick string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if expected != "" && strings.Contains(l, expected) {
			pick = l
			break
		}
		if pick == "" {
			pick = l
		}
	}
	if pick == "" {
		return ""
	}
	if len(pick) > 120 {
		pick = pick[:120] + "..."
	}
	return " (" + pick + ")"
}

func failureSummary(res Results) string {
	var parts []string
	for _, f := range res.Failures {
		what := "failed before running tests"
		if f.Build {
			what = "failed to build"
		}
		parts = append(parts, f.Package+" "+what)
	}
	if len(parts) == 0 {
		return "no results"
	}
	return strings.Join(parts, ", ")
}

func tail(s string) string {
	if len(s) > maxReportOutput {
		return "..." + s[len(s)-maxReportOutput:]
	}
	return s
}

// Decide turns stage outcomes into the verdict, failing closed: a refused
// diff, a failed candidate run or a candidate that does not build without
// its tests is REJECTED; anything not executed or not
// reproduced, or a report without at least one reproducing base run and
// one passing candidate run, is INCONCLUSIVE; VERIFIED needs every stage to
// count toward it.
func Decide(stages []Stage) string {
	var base, cand int
	for _, s := range stages {
		if s.Name == StageDiff && s.Outcome == Refused {
			return Rejected
		}
	}
	for _, s := range stages {
		if s.Name == StageBase && s.Outcome != Reproduced {
			return Inconclusive
		}
	}
	for _, s := range stages {
		if (s.Name == StageCandidate || s.Name == StageBuild) && (s.Outcome == Failed || s.Outcome == Counterfeit) {
			return Rejected
		}
	}
	for _, s := range stages {
		switch {
		case s.Name == StageDiff && (s.Outcome == OK || s.Outcome == Restored):
		case s.Name == StageBase && s.Outcome == Reproduced:
			base++
		case s.Name == StageCandidate && s.Outcome == Passed:
			cand++
		case s.Name == StageBuild && s.Outcome == Passed:
		case s.Name == StageDeps && s.Outcome == OK:
		default:
			return Inconclusive
		}
	}
	if base == 0 || cand == 0 {
		return Inconclusive
	}
	return Verified
}

// CheckDiff applies the path policy to the files a candidate changed
// relative to base. Paths matching a protected glob, or (when an allowlist
// is given) matching no allowed glob, refuse the candidate before anything
// runs. Harness test files are exempt from the allowlist because they are
// restored from tests_from anyway; edited reports which of them the
// candidate changed (the caller has compared contents), so the report can
// say that those edits were discarded.
func CheckDiff(changed, edited, protected, allow []string) (outcome, detail string) {
	var bad []string
	for _, p := range changed {
		if g := firstMatch(protected, p); g != "" {
			bad = append(bad, fmt.Sprintf("%s is a protected harness path (%s)", p, g))
		}
	}
	if len(allow) > 0 {
		for _, p := range changed {
			if contains(edited, p) || firstMatch(protected, p) != "" {
				continue
			}
			if firstMatch(allow, p) == "" {
				bad = append(bad, fmt.Sprintf("%s is outside the allowlist", p))
			}
		}
	}
	if len(bad) > 0 {
		return Refused, "not run: " + strings.Join(bad, "; ")
	}
	n := fmt.Sprintf("%d files changed", len(changed))
	if len(changed) == 1 {
		n = "1 file changed"
	}
	if len(edited) > 0 {
		return Restored, n + "; the candidate's edits to harness files " + strings.Join(edited, ", ") + " are discarded"
	}
	if len(allow) > 0 {
		return OK, n + ", all inside the allowlist"
	}
	return OK, n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstMatch(globs []string, p string) string {
	for _, g := range globs {
		if MatchGlob(g, p) {
			return g
		}
	}
	return ""
}

// MatchGlob matches a slash-separated path against a glob in which ** is
// any number of whole path segments (including none) and every other
// segment is a path.Match pattern: internal/cart/** matches everything
// under internal/cart, **/*_test.go every test file. A malformed pattern
// matches nothing.
func MatchGlob(glob, p string) bool {
	return matchSegs(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func matchSegs(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for len(g) > 1 && g[1] == "**" {
				g = g[1:]
			}
			if len(g) == 1 {
				return true
			}
			for i := 0; i <= len(p); i++ {
				if matchSegs(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(g[0], p[0]); err != nil || !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}
