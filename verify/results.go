package verify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Test outcomes as the parsers report them.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Outcomes of looking a harness test up in the results, beyond the three
// above: Missing means the package ran but the test was not in it;
// NotRun means the test could not have run (its package, or some package
// when the name is bare, failed to build or start).
const (
	Missing = "missing"
	NotRun  = "not-run"
)

// maxTestOutput bounds the output kept per test; results are evidence, not
// a log archive, and the raw output is kept separately.
const maxTestOutput = 64 << 10

// TestResult is one test as the structured output reports it.
type TestResult struct {
	Package string `json:"package,omitempty"`
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Output  string `json:"output,omitempty"`
	// Witness holds the output lines that carry a witness mark, kept
	// whole however long the output is (verify's witness checks them).
	Witness []string `json:"witness,omitempty"`
	// Unfinished says the test started and never reported a result: its
	// binary died or the run was cut short (go-test-json only).
	Unfinished bool `json:"unfinished,omitempty"`
}

// PackageFailure is a package that failed without running any test: its
// build failed, or its test binary died before the first test started.
type PackageFailure struct {
	Package string `json:"package"`
	Build   bool   `json:"build"`
	Output  string `json:"output,omitempty"`
}

// Results are the parsed structured results of one run.
type Results struct {
	Tests    []TestResult     `json:"tests"`
	Failures []PackageFailure `json:"package_failures,omitempty"`
	// Skipped counts input lines that were not events (go-test-json only).
	Skipped int `json:"skipped_lines,omitempty"`
	// Keys are the witness keys the -exec wrapper printed, by package:
	// the first such line of each package's output, which the wrapper
	// writes before the test binary starts.
	Keys map[string]string `json:"-"`
	// Crashes are packages whose test binary died mid-run (go-test-json
	// only): a test started with no result, or the package's output shows
	// a panic or a fatal runtime error. Tests after the crash never ran.
	Crashes []Crash `json:"crashes,omitempty"`
	// Interrupted says why the run ended abnormally ("timed out after
	// 5m"), set by the caller from the sandbox's account; tests it cut
	// short have no result.
	Interrupted string `json:"interrupted,omitempty"`
	// JUnit says the results came from a JUnit report, whose only level
	// separator is " > " (a "/" is part of a name: "GET /users").
	JUnit bool `json:"-"`
}

// Crash is a test binary that died mid-run.
type Crash struct {
	Package string `json:"package"`
	// Test is the test running when it died, when known.
	Test string `json:"test,omitempty"`
	// FirstLines is the panic or fatal error line and the first frame of
	// the code under test.
	FirstLines string `json:"first_lines"`
}

// testEvent is one line of go test -json (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	FailedBuild string
}

// ParseGoTestJSON reads the event stream of go test -json. Lines that are
// not events are counted and otherwise ignored; outcomes come only from
// events, never from the text of the output. A test that started but has
// no result (its binary crashed or timed out) counts as failed. A package
// that failed with no test events did not run at all and is reported in
// Failures.
func ParseGoTestJSON(r io.Reader) (Results, error) {
	type key struct{ pkg, test string }
	type testState struct {
		started, ended bool
		outcome        string
		out            strings.Builder
		witness        []string
	}
	type pkgState struct {
		sawOutput   bool
		tests       int
		outcome     string
		failedBuild string
		out         strings.Builder
		unfinished  []string
	}
	tests := map[key]*testState{}
	var order []key
	pkgs := map[string]*pkgState{}
	var pkgOrder []string
	build := map[string]*strings.Builder{}
	pkg := func(name string) *pkgState {
		p := pkgs[name]
		if p == nil {
			p = &pkgState{}
			pkgs[name] = p
			pkgOrder = append(pkgOrder, name)
		}
		return p
	}
	var res Results
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ev testEvent
			if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
				res.Skipped++
			} else {
				switch {
				case ev.Action == "build-output" || ev.Action == "build-fail":
					b := build[ev.ImportPath]
					if b == nil {
						b = &strings.Builder{}
						build[ev.ImportPath] = b
					}
					appendCapped(b, ev.Output)
				case ev.Test != "":
					k := key{ev.Package, ev.Test}
					t := tests[k]
					if t == nil {
						t = &testState{}
						tests[k] = t
						order = append(order, k)
						pkg(ev.Package).tests++
					}
					switch ev.Action {
					case "run":
						t.started = true
					case "output":
						appendCapped(&t.out, ev.Output)
						// The last lines are kept: the witness's own comes
						// last, so output that imitates it cannot crowd it out.
						if strings.Contains(ev.Output, witnessMarker) {
							if len(t.witness) == maxWitnessLogs {
								t.witness = t.witness[1:]
							}
							t.witness = append(t.witness, capString(ev.Output))
						}
					case "pass", "fail", "skip":
						// The first result stands: a later event for the
						// same name cannot turn a failure into a pass.
						if !t.ended {
							t.ended, t.outcome = true, ev.Action
						} else if ev.Action == Fail {
							t.outcome = Fail
						}
					}
				case ev.Package != "":
					p := pkg(ev.Package)
					switch ev.Action {
					case "output":
						appendCapped(&p.out, ev.Output)
						if !p.sawOutput {
							p.sawOutput = true
							if m := witnessKey.FindStringSubmatch(ev.Output); m != nil {
								if res.Keys == nil {
									res.Keys = map[string]string{}
								}
								res.Keys[ev.Package] = m[1]
							}
						}
					case "pass", "fail", "skip":
						p.outcome = ev.Action
						if ev.FailedBuild != "" {
							p.failedBuild = ev.FailedBuild
						}
					}
				}
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			return Results{}, fmt.Errorf("read go test -json: %w", err)
		}
	}
	for _, k := range order {
		t := tests[k]
		out := t.outcome
		if !t.ended && t.started {
			if p := pkgs[k.pkg]; p != nil {
				p.unfinished = append(p.unfinished, k.test)
			}
		}
		if !t.ended {
			out = Fail
			appendCapped(&t.out, "\n"+noResultNote+"\n")
		}
		res.Tests = append(res.Tests, TestResult{Package: k.pkg, Name: k.test, Outcome: out, Output: t.out.String(), Witness: t.witness, Unfinished: !t.ended})
	}
	for _, name := range pkgOrder {
		p := pkgs[name]
		if p.outcome == Fail && p.failedBuild == "" {
			if c, ok := goCrash(name, p.unfinished, res.Tests, p.out.String()); ok {
				res.Crashes = append(res.Crashes, c)
			}
		}
		if p.outcome != Fail || p.tests > 0 {
			continue
		}
		// Build output is keyed by what failed to build ("pkg [pkg.test]"),
		// which FailedBuild names.
		out := p.out.String()
		if b := build[p.failedBuild]; p.failedBuild != "" && b != nil {
			out = b.String() + out
		}
		res.Failures = append(res.Failures, PackageFailure{Package: name, Build: p.failedBuild != "", Output: capString(out)})
	}
	return res, nil
}

// goCrash finds how a failed package's test binary died: a test left
// without a result, or a panic or fatal runtime error at the start of a
// line of any of its output (t.Log output is indented, so logged text does
// not count). A package that passed did not crash.
func goCrash(pkg string, unfinished []string, tests []TestResult, pkgOut string) (Crash, bool) {
	c := Crash{Package: pkg}
	if len(unfinished) > 0 {
		c.Test = unfinished[0]
	}
	for _, t := range tests {
		if t.Package != pkg {
			continue
		}
		if lines, ok := crashLines(t.Output); ok {
			c.FirstLines = lines
			if c.Test == "" {
				c.Test = t.Name
			}
			return c, true
		}
	}
	if lines, ok := crashLines(pkgOut); ok {
		c.FirstLines = lines
		return c, true
	}
	if c.Test != "" {
		c.FirstLines = c.Test + " started but reported no result"
		return c, true
	}
	return Crash{}, false
}

// crashLines returns the first panic or fatal error line of a Go test
// binary's output and, for a panic, the first frame outside the runtime
// and testing packages.
func crashLines(out string) (string, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "runtime: goroutine stack exceeds"), strings.HasPrefix(l, "fatal error: "):
			return l, true
		case strings.HasPrefix(l, "panic: "):
			if f := firstFrame(lines[i+1:]); f != "" {
				return l + " [" + f + "]", true
			}
			return l, true
		}
	}
	return "", false
}

func firstFrame(lines []string) string {
	inStack := false
	for i, l := range lines {
		if strings.HasPrefix(l, "goroutine ") {
			inStack = true
			continue
		}
		if !inStack || l == "" || strings.HasPrefix(l, "\t") {
			continue
		}
		// The witness's Done re-panics from its deferred call: its frame
		// says nothing about where the test failed.
		if strings.HasPrefix(l, "panic(") || strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "testing.") || strings.Contains(l, ".signoffWitness") {
			continue
		}
		fn := l
		if j := strings.LastIndex(fn, "("); j > 0 {
			fn = fn[:j]
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			loc, _, _ := strings.Cut(strings.TrimSpace(lines[i+1]), " ")
			return fn + " at " + loc
		}
		return fn
	}
	return ""
}

// noResultNote marks the output of a test that started and never
// reported a result.
const noResultNote = "[signoff: the test started but reported no result]"

func appendCapped(b *strings.Builder, s string) {
	if room := maxTestOutput - b.Len(); room > 0 {
		if len(s) > room {
			s = s[:room]
		}
		b.WriteString(s)
	}
}

func capString(s string) string {
	if len(s) > maxTestOutput {
		return s[:maxTestOutput]
	}
	return s
}

type junitSuite struct {
	Name   string       `xml:"name,attr"`
	Suites []junitSuite `xml:"testsuite"`
	Cases  []junitCase  `xml:"testcase"`
}

type junitCase struct {
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr"`
	Failures  []junitMsg `xml:"failure"`
	Errors    []junitMsg `xml:"error"`
	Skipped   []junitMsg `xml:"skipped"`
	SystemOut []string   `xml:"system-out"`
	SystemErr []string   `xml:"system-err"`
}

type junitMsg struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// ParseJUnitXML reads a JUnit XML report whose root is <testsuites> or
// <testsuite>; suites may nest. A case with <failure> or <error> failed, a
// case with <skipped> was skipped, any other case passed. The package of a
// case is its classname, or the name of its suite when it has none.
func ParseJUnitXML(r io.Reader) (Results, error) {
	dec := xml.NewDecoder(io.LimitReader(r, 256<<20))
	var root junitSuite
	var start xml.StartElement
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Results{}, fmt.Errorf("junit xml: no root element")
			}
			return Results{}, fmt.Errorf("junit xml: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			start = se
			break
		}
	}
	if start.Name.Local != "testsuites" && start.Name.Local != "testsuite" {
		return Results{}, fmt.Errorf("junit xml: root element is <%s>, not <testsuites> or <testsuite>", start.Name.Local)
	}
	if err := dec.DecodeElement(&root, &start); err != nil {
		return Results{}, fmt.Errorf("junit xml: %w", err)
	}
	if start.Name.Local == "testsuite" {
		root = junitSuite{Suites: []junitSuite{root}}
	}
	res := Results{JUnit: true}
	// A case is named by the suites enclosing it and its own name, joined
	// by " > " as vitest names them: node's reporter writes classname
	// "test" for every case and nests describe blocks as suites, so the
	// bare name of a case used in several blocks targets none of them.
	var walk func(s junitSuite, suites []string)
	walk = func(s junitSuite, suites []string) {
		for _, c := range s.Cases {
			t := TestResult{Package: c.Classname, Name: strings.Join(append(slices.Clone(suites), c.Name), junitSep), Outcome: Pass}
			if t.Package == "" && len(suites) > 0 {
				t.Package = suites[0]
			}
			var out strings.Builder
			for _, m := range slices.Concat(c.Failures, c.Errors, c.Skipped) {
				appendCapped(&out, m.Message)
				if m.Message != "" {
					appendCapped(&out, "\n")
				}
				appendCapped(&out, m.Text)
			}
			for _, o := range slices.Concat(c.SystemOut, c.SystemErr) {
				appendCapped(&out, o)
			}
			switch {
			case len(c.Failures) > 0 || len(c.Errors) > 0:
				t.Outcome = Fail
			case len(c.Skipped) > 0:
				t.Outcome = Skip
			}
			t.Output = out.String()
			res.Tests = append(res.Tests, t)
		}
		for _, sub := range s.Suites {
			next := suites
			if sub.Name != "" {
				next = append(slices.Clone(suites), sub.Name)
			}
			walk(sub, next)
		}
	}
	walk(root, nil)
	return res, nil
}

// Parse reads results in the given format.
func Parse(format string, r io.Reader) (Results, error) {
	switch format {
	case FormatGoTestJSON:
		return ParseGoTestJSON(r)
	case FormatJUnitXML:
		return ParseJUnitXML(r)
	}
	return Results{}, fmt.Errorf("unknown result format %q", format)
}

// junitSep joins suite and case names in a JUnit test's Name.
const junitSep = " > "

// Match is what the results say about one harness test name.
type Match struct {
	Outcome string       // Pass, Fail, Skip, Missing or NotRun
	Tests   []TestResult // the results the name matched
	// Subtests are the tests below the matched ones: Go subtests
	// (TestX/case) and, for JUnit, the cases of a suite the name ends in.
	Subtests []TestResult
}

// Output joins the output of every matched test.
func (m Match) Output() string {
	var b strings.Builder
	for _, t := range m.Tests {
		b.WriteString(t.Output)
	}
	return b.String()
}

// TreeOutput joins the output of the matched tests and all their
// subtests: a Go parent's own output holds little more than its --- FAIL
// line, the assertion is in the subtest that failed.
func (m Match) TreeOutput() string {
	var b strings.Builder
	b.WriteString(m.Output())
	for _, t := range m.Subtests {
		if !slices.ContainsFunc(m.Tests, func(x TestResult) bool { return x.Package == t.Package && x.Name == t.Name }) {
			b.WriteString(t.Output)
		}
	}
	return b.String()
}

// Lookup finds a harness test name in the results. A bare name (TestX)
// matches that test in any package; a qualified name matches when the
// qualifier is the package's import path or a trailing part of it
// (cart.TestX and example.com/shop/cart.TestX both match TestX in
// example.com/shop/cart). Subtests are matched by their full name
// (TestX/case). When several tests match, any failure makes the match a
// failure, then any skip a skip.
//
// When nothing matches and a package that could hold the test failed
// before running tests, the outcome is NotRun rather than Missing: the
// test may exist but could not execute.
func (r Results) Lookup(name string) Match {
	var m Match
	for _, t := range r.Tests {
		switch {
		case nameMatches(name, t.Package, t.Name):
			m.Tests = append(m.Tests, t)
		case underName(name, t.Package, t.Name, r.JUnit):
			m.Subtests = append(m.Subtests, t)
		}
	}
	// A JUnit name that is a suite, not a case, stands for its cases:
	// every one must pass, and there must be one. Go subtests never
	// stand in for their parent, whose own result is always reported.
	if len(m.Tests) == 0 {
		for _, t := range m.Subtests {
			if strings.Contains(t.Name, junitSep) {
				m.Tests = append(m.Tests, t)
			}
		}
		if len(m.Tests) != len(m.Subtests) {
			m.Tests = nil
		}
	}
	if len(m.Tests) == 0 {
		m.Outcome = Missing
		for _, f := range r.Failures {
			if qualifierMatches(name, f.Package) {
				m.Outcome = NotRun
			}
		}
		return m
	}
	m.Outcome = Pass
	for _, t := range m.Tests {
		switch {
		case t.Outcome == Fail:
			m.Outcome = Fail
		case t.Outcome == Skip && m.Outcome == Pass:
			m.Outcome = Skip
		case t.Outcome != Pass && t.Outcome != Skip:
			m.Outcome = Fail
		}
	}
	// The subtree counts too: a case named like a suite (which code under
	// test can register in node's runner) must not stand in for the
	// suite's own cases. A Go subtest may be skipped inside a passing
	// parent, so only a JUnit case's skip counts.
	for _, t := range m.Subtests {
		switch {
		case t.Outcome != Pass && t.Outcome != Skip:
			m.Outcome = Fail
		case t.Outcome == Skip && m.Outcome == Pass && strings.Contains(t.Name, junitSep):
			m.Outcome = Skip
		}
	}
	return m
}

func nameMatches(q, pkg, test string) bool {
	names := trailingNames(test)
	for i, n := range names {
		if q == n {
			return true
		}
		p, ok := strings.CutSuffix(q, "."+n)
		if !ok || p == "" {
			continue
		}
		// The qualifier is the package, or the suite just above the
		// trailing part (nested.test_inner for a case without classname).
		if pkgMatches(p, pkg) || (i > 0 && names[i-1] == p+junitSep+n) {
			return true
		}
	}
	return false
}

// underName says whether test is below the harness name q: a Go subtest
// (q/...) or a JUnit case inside the suite q names (q > ...), where q is
// matched as in nameMatches.
func underName(q, pkg, test string, junit bool) bool {
	// Go names never hold " > " (t.Run turns spaces into underscores); a
	// JUnit name's "/" is part of a suite or case name, not a level: a
	// node case "GET /users/:id" is not below "GET /users" (red-team
	// finding, issue 23).
	sep := "/"
	if junit || strings.Contains(test, junitSep) {
		sep = junitSep
	}
	for i := strings.Index(test, sep); i >= 0; {
		if nameMatches(q, pkg, test[:i]) {
			return true
		}
		j := strings.Index(test[i+len(sep):], sep)
		if j < 0 {
			break
		}
		i += len(sep) + j
	}
	return false
}

// trailingNames are the names a test answers to: its full name and, for a
// JUnit name with a suite path (a > b > c), every trailing part at the
// separators (b > c, c), so a harness naming the bare case, or a case
// under pytest's single "pytest" suite, still matches.
func trailingNames(test string) []string {
	names := []string{test}
	for rest := test; ; {
		_, after, ok := strings.Cut(rest, junitSep)
		if !ok {
			return names
		}
		names = append(names, after)
		rest = after
	}
}

func pkgMatches(q, pkg string) bool {
	return q == pkg || strings.HasSuffix(pkg, "/"+q) || strings.HasSuffix(pkg, "."+q)
}

// qualifierMatches says whether a test named q could live in pkg: always
// for a bare name, otherwise when some split of q into package and test
// names points at pkg. A name is qualified when a dot comes before its
// first slash (cart.TestX, example.com/shop/cart.TestX), so a subtest such
// as TestX/v1.2 stays bare.
func qualifierMatches(q, pkg string) bool {
	head, _, _ := strings.Cut(q, "/")
	if !strings.Contains(head, ".") {
		return true
	}
	for i := 0; i < len(q); i++ {
		if q[i] == '.' && pkgMatches(q[:i], pkg) {
			return true
		}
	}
	return false
}
