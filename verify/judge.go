package verify

import (
	"fmt"
	"path"
	"slices"
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
	// ExpectedSeen says whether the test's expected failure (ExpectedFor)
	// matched the output of the test and its subtests (base runs,
	// fail-to-pass tests only).
	ExpectedSeen *bool  `json:"expected_seen,omitempty"`
	Output       string `json:"output,omitempty"`
}

// JudgeBase decides a base run from its results: every fail-to-pass test
// must fail and the output of the test and its subtests must show its
// expected failure (ExpectedFor). Pass-to-pass tests do not count on base,
// but naming one base does not have is a harness mistake: not executed
// (INCONCLUSIVE), never a candidate's fault. A run that crashed or was
// interrupted still counts for the tests that failed as expected before
// it ended; a fail-to-pass test the crash kept from running makes the run
// not executed.
func JudgeBase(h Harness, res Results) (outcome, detail string, tests []TestOutcome) {
	var problems, notRun, hidden, absent []string
	sameMatcher := true
	for _, n := range h.FailToPass {
		m := res.Lookup(n)
		exp := h.ExpectedFor(n)
		if exp != h.ExpectedFor(h.FailToPass[0]) {
			sameMatcher = false
		}
		seen := m.Outcome == Fail && exp.Match(m.TreeOutput())
		tests = append(tests, TestOutcome{Name: n, Kind: FailToPass, Outcome: m.Outcome, ExpectedSeen: &seen, Output: tail(m.TreeOutput())})
		switch {
		case seen:
		case m.Outcome == NotRun:
			notRun = append(notRun, n)
		case cutShort(res, n, m):
			hidden = append(hidden, n)
		case m.Outcome == Fail:
			problems = append(problems, fmt.Sprintf("%s failed without %s in its output", n, exp))
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
		if m.Outcome == Missing && !cutShort(res, n, m) {
			absent = append(absent, n)
		}
	}
	switch {
	case len(notRun) > 0:
		return NotExecuted, failureSummary(res) + "; could not run " + listNames(notRun), tests
	case len(problems) > 0:
		return NotReproduced, prefix(crashSummary(res)) + "the check never detected the bug: " + strings.Join(problems, "; "), tests
	case len(hidden) > 0:
		c, why := ending(res, hidden[0])
		if c != nil {
			return NotExecuted, "the base run crashed before " + listNames(hidden) + " ran: " + c.FirstLines + " (test binary of " + c.Package + ")", tests
		}
		return NotExecuted, "the base run was interrupted (" + why + ") before " + listNames(hidden) + " ran", tests
	case len(absent) > 0:
		return NotExecuted, "the harness names tests the base does not have: " + listNames(absent) +
			" (the harness is wrong, not the candidate: fix pass_to_pass)", tests
	}
	detail = fmt.Sprintf("fail-to-pass %d/%d failed as expected", len(h.FailToPass), len(h.FailToPass))
	if sameMatcher {
		detail = fmt.Sprintf("fail-to-pass %d/%d failed with %s", len(h.FailToPass), len(h.FailToPass), h.ExpectedFor(h.FailToPass[0]))
	}
	switch c, why := ending(res, ""); {
	case c != nil:
		detail += "; then the test binary of " + c.Package + " crashed: " + c.FirstLines
	case why != "":
		detail += "; then the run was interrupted: " + why
	}
	return Reproduced, detail, tests
}

// cutShort says whether a test without a result of its own may have
// been kept from running by the run's end: the run was interrupted, or the
// test binary of a package that could hold it crashed. A test left
// running when its binary died is cut short too: its failure is the
// crash's, not an assertion's.
func cutShort(res Results, name string, m Match) bool {
	ended := res.Interrupted != "" || len(res.Crashes) > 0
	switch {
	case !ended:
		return false
	case m.Outcome == Missing:
		if res.Interrupted != "" {
			return true
		}
		return slices.ContainsFunc(res.Crashes, func(c Crash) bool { return qualifierMatches(name, c.Package) })
	case m.Outcome == Fail:
		return slices.ContainsFunc(slices.Concat(m.Tests, m.Subtests), func(t TestResult) bool { return t.Unfinished })
	}
	return false
}

// ending says how a run ended early, preferring a crash of a package that
// could hold name: the crashed package and its first lines, or why it was
// interrupted. All empty when it ran to its end.
func ending(res Results, name string) (crashed *Crash, interrupted string) {
	for i, c := range res.Crashes {
		if crashed == nil || (name != "" && qualifierMatches(name, c.Package) && !qualifierMatches(name, crashed.Package)) {
			crashed = &res.Crashes[i]
		}
	}
	return crashed, res.Interrupted
}

// JudgeCandidate decides a candidate run: every fail-to-pass and
// pass-to-pass test must pass. Skipped and missing tests are failures; a
// test that could not run makes the run not executed. A crash never
// helps: the tests it cut short are failed or missing.
func JudgeCandidate(h Harness, res Results) (outcome, detail string, tests []TestOutcome) {
	var failed, missing, notRun []string
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
				hint := ""
				if list.kind == FailToPass {
					hint = h.ExpectedFor(n).hint()
				}
				failed = append(failed, n+" failed"+firstLine(m.TreeOutput(), hint))
			case Missing:
				missing = append(missing, n)
			default:
				failed = append(failed, n+" "+describeOutcome(m.Outcome))
			}
			count[list.kind] = c
		}
	}
	tally := fmt.Sprintf("fail-to-pass %d/%d passed, pass-to-pass %d/%d passed",
		count[FailToPass][0], count[FailToPass][1], count[PassToPass][0], count[PassToPass][1])
	if len(missing) > 0 {
		failed = append(failed, listNames(missing)+" missing from the results")
	}
	first := crashSummary(res)
	switch {
	case len(failed) > 0:
		return Failed, prefix(first) + strings.Join(failed, "; ") + " (" + tally + ")", tests
	case len(notRun) > 0:
		return NotExecuted, failureSummary(res) + "; could not run " + listNames(notRun), tests
	case res.Interrupted != "":
		// A run cut short is never a pass, whatever it reported first.
		return NotExecuted, "the run was interrupted (" + res.Interrupted + ") after " + tally, tests
	}
	return Passed, tally, tests
}

func prefix(s string) string {
	if s == "" {
		return ""
	}
	return s + "; "
}

// crashSummary is the first lines of every crashed or failed package, for
// the front of a detail.
func crashSummary(res Results) string {
	var parts []string
	for _, c := range res.Crashes {
		parts = append(parts, "the test binary of "+c.Package+" crashed: "+c.FirstLines)
	}
	if len(res.Failures) > 0 {
		parts = append(parts, failureSummary(res))
	}
	return strings.Join(parts, "; ")
}

// listNames joins names, shortening a long list.
func listNames(names []string) string {
	const show = 5
	if len(names) > show {
		return strings.Join(names[:show], ", ") + fmt.Sprintf(" and %d more", len(names)-show)
	}
	return strings.Join(names, ", ")
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
		// The witness's own line is evidence for the verifier, not why
		// the test failed.
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") || strings.Contains(l, strings.TrimSpace(witnessMarker)) {
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

// failureSummary says what became of each package that ran no test, with
// its first lines: a missing dependency plainly, else the first compiler
// errors or the panic.
func failureSummary(res Results) string {
	var parts []string
	for _, f := range res.Failures {
		if dep, ok := MissingDependency(f.Output); ok {
			parts = append(parts, f.Package+": "+MissingDependencyText(dep))
			continue
		}
		what := "failed before running tests"
		if f.Build {
			what = "failed to build"
		}
		if lines := packageFirstLines(f); lines != "" {
			what += ": " + lines
		}
		parts = append(parts, f.Package+" "+what)
	}
	if len(parts) == 0 {
		if res.Interrupted != "" {
			return "the run was interrupted (" + res.Interrupted + ")"
		}
		return "no results"
	}
	return strings.Join(parts, "; ")
}

// packageFirstLines is the panic line of a package that died before its
// tests, or its first three compiler error lines.
func packageFirstLines(f PackageFailure) string {
	if l, ok := crashLines(f.Output); ok {
		return l
	}
	var keep []string
	for _, l := range strings.Split(f.Output, "\n") {
		t := strings.TrimSpace(l)
		// Headers ("# pkg"), the go tool's FAIL summary and blank lines
		// say nothing about why.
		if t == "" || strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "FAIL") || strings.HasPrefix(t, "ok ") {
			continue
		}
		if len(t) > 200 {
			t = t[:200] + "..."
		}
		keep = append(keep, t)
		if len(keep) == 3 {
			break
		}
	}
	return strings.Join(keep, " | ")
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
