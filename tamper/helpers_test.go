package tamper_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// modified is a file present on both sides.
func modified(path, base, cand string) tamper.File {
	return tamper.File{Path: path, Base: []byte(base), BaseExists: true, Cand: []byte(cand), CandExists: true}
}

// added is a file the candidate creates.
func added(path, cand string) tamper.File {
	return tamper.File{Path: path, Cand: []byte(cand), CandExists: true}
}

// removed is a file the candidate deletes.
func removed(path, base string) tamper.File {
	return tamper.File{Path: path, Base: []byte(base), BaseExists: true}
}

// ruleNames returns the distinct rules of findings, sorted.
func ruleNames(fs []tamper.Finding) []string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Rule)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func dump(fs []tamper.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n\t" + f.Severity + " " + f.Rule + ": " + f.Detail)
	}
	return b.String()
}

// severityRank orders severities so a finding can be checked against the
// most its rule may weigh.
var severityRank = map[string]int{tamper.Flag: 1, tamper.BuildChange: 2, tamper.Refuse: 3}

// checkWellFormed holds for every finding of every check: its rule is
// listed, it weighs no more than the rule says, and its detail starts with
// its location.
func checkWellFormed(t *testing.T, fs []tamper.Finding) {
	t.Helper()
	listed := map[string]string{}
	for _, r := range tamper.Rules() {
		listed[r.Name] = r.Severity
	}
	for _, f := range fs {
		max, ok := listed[f.Rule]
		if !ok {
			t.Errorf("finding rule %q is not in Rules(): %s", f.Rule, f.Detail)
			continue
		}
		if severityRank[f.Severity] == 0 || severityRank[f.Severity] > severityRank[max] {
			t.Errorf("finding %q has severity %q, rule says at most %q", f.Detail, f.Severity, max)
		}
		if !strings.HasPrefix(f.Detail, f.Path) || f.Line < 0 {
			t.Errorf("finding detail %q does not start with its path %q", f.Detail, f.Path)
		}
	}
	if !slices.IsSortedFunc(fs, func(a, b tamper.Finding) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	}) {
		t.Errorf("findings are not sorted by path, line, rule:%s", dump(fs))
	}
}

// goBase is a package file most candidate rows change.
const goBase = `package cart

// Total adds the prices.
func Total(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
`
