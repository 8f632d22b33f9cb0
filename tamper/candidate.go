package tamper

import (
	"bytes"
	"cmp"
	"fmt"
	"go/token"
	"path"
	"slices"
	"strings"
)

// Candidate checks the files a candidate fix changed relative to base
// (every changed path, test files included, in any language). It returns
// every finding, sorted by path then line then rule; it never stops at the
// first.
func Candidate(files []File) []Finding {
	var out []Finding
	out = append(out, buildChanges(files)...)
	out = append(out, goCandidate(files)...)
	changedPaths := map[string]bool{}
	for _, f := range files {
		if f.CandExists && changed(f) {
			changedPaths[cleanPath(f.Path)] = true
		}
	}
	pyLibrary := pyLibraryFile()
	for _, f := range files {
		if !f.CandExists {
			continue
		}
		p := cleanPath(f.Path)
		if isCompiled(p) && changed(f) && !hasDir(p, "testdata") {
			out = append(out, finding(RuleAssembly, Refuse, f.Path, 0, fileVerb(f)+": "+whyCompiled+" (an interpreter or Node loads it as code)"))
		}
		if isJS(p) {
			out = append(out, jsUnreadRequires(f, changedPaths)...)
		}
		switch {
		case (path.Ext(p) == ".s" || path.Ext(p) == ".syso") && changed(f) &&
			!hasDir(p, "testdata") && !hasDir(p, "vendor") && !hasDir(p, "node_modules"):
			out = append(out, finding(RuleAssembly, Refuse, f.Path, 0, fileVerb(f)+": assembly and object files build into the package, and the checks cannot read them"))
		case isJSLibrary(p):
			if changed(f) {
				out = append(out, lexical(f, jsLibraryFile(f.Cand))...)
			}
		case isJS(p):
			if changed(f) {
				out = append(out, lexical(f, jsTestFileOf(f.Cand))...)
			}
		case isPyLibrary(p) && (path.Base(p) == "setup.py" || path.Base(p) == "noxfile.py"):
			out = append(out, lexical(f, pyBuildScript)...)
		case isPyLibrary(p):
			out = append(out, lexical(f, pyLibrary)...)
		case isPy(p):
			out = append(out, lexical(f, pyTestFile)...)
		}
	}
	sortFindings(out)
	return out
}

// occurrence is one use of something a rule watches, on one side of a
// change. Candidate reports the candidate's occurrences that base's do not
// account for.
type occurrence struct {
	rule     string
	severity string
	line     int
	what     string    // the construct, e.g. "os.Exit"
	scope    string    // the enclosing top-level declaration, "" outside one
	text     string    // the trimmed source line, or a normalized body when exact
	exact    bool      // only an identical text on base accounts for it
	msg      string    // what the reader is told, without the location
	pos      token.Pos // where in a Go file, for judging what init runs
	call     bool      // a call of what it names, not a mention
}

// fresh returns the candidate occurrences base does not account for. For
// most rules that is a count: a rule used as often in base as in the
// candidate adds nothing, and an extra use is pinned on the candidate
// occurrence least like anything in base (same construct, declaration and
// line first, then same construct and declaration, then same construct).
// Exact occurrences (an init's body) are new unless base has the same text.
func fresh(base, cand []occurrence) []occurrence {
	byRule := map[string][]occurrence{}
	for _, o := range base {
		byRule[o.rule] = append(byRule[o.rule], o)
	}
	var out []occurrence
	for _, group := range groupByRule(cand) {
		b := byRule[group[0].rule]
		if group[0].exact {
			have := map[string]int{}
			for _, o := range b {
				have[o.what+"\x00"+o.text]++
			}
			for _, o := range group {
				k := o.what + "\x00" + o.text
				if have[k] > 0 {
					have[k]--
					continue
				}
				out = append(out, o)
			}
			continue
		}
		if len(group) <= len(b) {
			continue
		}
		used := make([]bool, len(group))
		remaining := b
		for _, key := range matchKeys {
			counts := map[string]int{}
			for _, o := range remaining {
				counts[key(o)]++
			}
			matched := map[string]int{}
			for i, o := range group {
				if k := key(o); !used[i] && counts[k] > 0 {
					counts[k]--
					matched[k]++
					used[i] = true
				}
			}
			var rest []occurrence
			for _, o := range remaining {
				if k := key(o); matched[k] > 0 {
					matched[k]--
					continue
				}
				rest = append(rest, o)
			}
			remaining = rest
		}
		for i, o := range group {
			if !used[i] {
				out = append(out, o)
			}
		}
	}
	return out
}

// matchKeys are the ever looser likenesses fresh matches base occurrences
// by; the last matches anything, so exactly the excess is left over.
var matchKeys = []func(occurrence) string{
	func(o occurrence) string { return o.what + "\x00" + o.scope + "\x00" + o.text },
	func(o occurrence) string { return o.what + "\x00" + o.scope },
	func(o occurrence) string { return o.what },
	func(occurrence) string { return "" },
}

// groupByRule splits occurrences by rule, keeping source order within each
// group and the order rules first appear in.
func groupByRule(occ []occurrence) [][]occurrence {
	index := map[string]int{}
	var groups [][]occurrence
	for _, o := range occ {
		i, ok := index[o.rule]
		if !ok {
			i = len(groups)
			index[o.rule] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], o)
	}
	return groups
}

// findings turns occurrences in the file at p into findings.
func findings(p string, occ []occurrence) []Finding {
	out := make([]Finding, 0, len(occ))
	for _, o := range occ {
		out = append(out, finding(o.rule, o.severity, p, o.line, o.msg))
	}
	return out
}

// finding builds a Finding whose Detail starts with the location, so the
// sentence reads on its own on the card.
func finding(rule, severity, p string, line int, msg string) Finding {
	loc := p
	if line > 0 {
		loc = fmt.Sprintf("%s:%d", p, line)
	}
	return Finding{Rule: rule, Severity: severity, Path: p, Line: line, Detail: loc + " " + msg}
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Detail, b.Detail),
		)
	})
}

// baseOf is the file's base content, nil when it did not exist on base.
func baseOf(f File) []byte {
	if !f.BaseExists {
		return nil
	}
	return f.Base
}

// changed reports whether the file differs between base and candidate.
func changed(f File) bool {
	return f.BaseExists != f.CandExists || !bytes.Equal(f.Base, f.Cand)
}

// cleanPath puts a path in the slash-separated, repository-relative form
// the classifiers below expect.
func cleanPath(p string) string {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return strings.TrimPrefix(p, "/")
}

// hasDir reports whether one of p's directories is named dir.
func hasDir(p, dir string) bool {
	return slices.Contains(strings.Split(path.Dir(p), "/"), dir)
}

// isGoCode: a .go file the go tool compiles (testdata is never compiled;
// vendored code is judged as a vendor change instead).
func isGoCode(p string) bool {
	return strings.HasSuffix(p, ".go") && !hasDir(p, "testdata") && !hasDir(p, "vendor")
}

func isGoTest(p string) bool { return strings.HasSuffix(p, "_test.go") }

var jsExts = []string{".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts"}

func isJS(p string) bool { return slices.Contains(jsExts, path.Ext(p)) && !hasDir(p, "node_modules") }

func isJSTest(p string) bool {
	base := path.Base(p)
	for _, dir := range []string{"__tests__", "__mocks__", "test", "tests", "spec"} {
		if hasDir(p, dir) {
			return true
		}
	}
	return strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.Contains(base, "_test.") || strings.Contains(base, "-test.")
}

func isJSLibrary(p string) bool { return isJS(p) && !isJSTest(p) }

func isPy(p string) bool { return path.Ext(p) == ".py" }

func isPyTest(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		base == "conftest.py" || hasDir(p, "tests") || hasDir(p, "test")
}

func isPyLibrary(p string) bool { return isPy(p) && !isPyTest(p) }
