package tamper_test

import (
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// TestCandidateTestMachinery: changes that reach the tests' machinery in
// more than one way get every rule they break, each refused.
func TestCandidateTestMachinery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []tamper.File
		want  []string
	}{
		// Red team 23's pytest candidate: importlib reaches _pytest's
		// reports from shop/cart.py and marks every failure passed.
		{"pytest reports rewritten from library code (red-team PoC)", []tamper.File{modified("shop/cart.py", pyBase, pyBase+pytestReportPatch)},
			[]string{tamper.RuleDynamicCode, tamper.RuleTestingInLibrary}},
		{"__import__ os", pyChange("    __import__('os')._exit(0)"), []string{tamper.RuleDynamicCode, tamper.RuleExitInLibrary}},
		{"module loader hooked to hand out a fake assert", jsAppend("src/cart.js", "const Module = require('node:module');\nconst load = Module._load;\nModule._load = function (r, ...a) { return r.endsWith('assert') ? new Proxy(load(r, ...a), {}) : load(r, ...a); };\nconst fake = require(['as', 'sert'].join(''));\n"),
			[]string{tamper.RuleDynamicCode, tamper.RuleTestingInLibrary}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(tt.files)
			checkWellFormed(t, got)
			if names := ruleNames(got); !slices.Equal(names, tt.want) {
				t.Errorf("rules = %v, want %v:%s", names, tt.want, dump(got))
			}
			for _, f := range got {
				if f.Severity != tamper.Refuse {
					t.Errorf("severity %s, want refuse: %s", f.Severity, f.Detail)
				}
			}
		})
	}
}

// TestCandidateAssertionBaseline: what base already did to an assertion
// module is not held against a fix; one more line of it is.
func TestCandidateAssertionBaseline(t *testing.T) {
	t.Parallel()
	base := jsBase + "const assert = require('assert');\nassert.legacy = assert.ok;\n"
	tests := []struct {
		name string
		cand string
		want int
	}{
		{"unchanged patch, changed code", base + "const x = 1;\n", 0},
		{"one more", base + "assert.equal = () => {};\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate([]tamper.File{modified("src/cart.js", base, tt.cand)})
			checkWellFormed(t, got)
			if n := countRule(got, tamper.RuleTestingInLibrary); n != tt.want {
				t.Errorf("testing-in-library findings = %d, want %d:%s", n, tt.want, dump(got))
			}
		})
	}
}

const pytestReportPatch = `

import importlib as _il

_reports = _il.import_module("_pytest.reports")
_made = _reports.TestReport.from_item_and_call.__func__


def _as_passed(cls, item, call):
    rep = _made(cls, item, call)
    if rep.failed:
        rep.outcome, rep.longrepr = "passed", None
    return rep


_reports.TestReport.from_item_and_call = classmethod(_as_passed)
`

// TestCandidateBuildScriptsNamePytest: setup.py and noxfile.py name pytest
// and exec a version file as a matter of course; they are build changes
// (py-config), which the harness's policy decides, and not refused.
func TestCandidateBuildScriptsNamePytest(t *testing.T) {
	t.Parallel()
	got := tamper.Candidate([]tamper.File{
		modified("setup.py", "from setuptools import setup\n\nsetup(name='shop')\n", "from setuptools import setup\n\nabout = {}\nexec(open('shop/__version__.py').read(), about)\nsetup(name='shop', version=about['__version__'], extras_require={'test': ['pytest']})\n"),
		added("noxfile.py", "import nox\n\n\n@nox.session\ndef tests(session):\n    session.install('pytest')\n    session.run('pytest')\n"),
	})
	checkWellFormed(t, got)
	if names := ruleNames(got); !slices.Equal(names, []string{tamper.RulePyConfig}) {
		t.Errorf("rules = %v, want only py-config:%s", names, dump(got))
	}
}
