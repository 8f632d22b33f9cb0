package tamper_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// buildFinding is the part of a finding a build row pins down.
type buildFinding struct {
	Rule, Severity string
	Line           int
	Detail         string // a substring of the detail
}

func TestCandidateBuildChanges(t *testing.T) {
	t.Parallel()
	const mod = `module example.com/shop

go 1.25

require (
	example.com/money v1.2.0
	example.com/tax v0.3.0 // indirect
)

replace example.com/tax => example.com/tax v0.3.1
`
	tests := []struct {
		name  string
		files []tamper.File
		want  []buildFinding
	}{
		{"go.mod directives", []tamper.File{modified("go.mod", mod, `module example.com/shop

go 1.26 // newer

toolchain go1.26.8

require (
	example.com/money v1.3.0
	example.com/tax v0.3.0 // indirect
	example.com/fake v0.0.1
)

replace example.com/tax => ../tax

exclude example.com/money v1.2.1
retract [v0.1.0, v0.2.0]
ignore ./cart
`)}, []buildFinding{
			{tamper.RuleGoMod, tamper.BuildChange, 3, "changes go 1.25 to go 1.26"},
			{tamper.RuleGoMod, tamper.BuildChange, 5, "adds toolchain go1.26.8"},
			{tamper.RuleGoMod, tamper.BuildChange, 8, "changes require example.com/money v1.2.0 to require example.com/money v1.3.0"},
			{tamper.RuleGoMod, tamper.BuildChange, 10, "adds require example.com/fake v0.0.1"},
			{tamper.RuleGoMod, tamper.BuildChange, 13, "changes replace example.com/tax => example.com/tax v0.3.1 to replace example.com/tax => ../tax"},
			{tamper.RuleGoMod, tamper.BuildChange, 15, "adds exclude example.com/money v1.2.1"},
			{tamper.RuleGoMod, tamper.BuildChange, 16, "adds retract [v0.1.0, v0.2.0]"},
			{tamper.RuleGoMod, tamper.BuildChange, 17, "adds ignore ./cart"},
		}},
		{"go.mod require removed", []tamper.File{modified("go.mod", mod, strings.Replace(mod, "\texample.com/money v1.2.0\n", "", 1))},
			[]buildFinding{{tamper.RuleGoMod, tamper.BuildChange, 0, "removes require example.com/money v1.2.0"}}},
		{"go.mod comments only", []tamper.File{modified("go.mod", mod, "// The shop.\n"+strings.ReplaceAll(mod, "\t", "    "))},
			[]buildFinding{{tamper.RuleGoMod, tamper.BuildChange, 0, "only in comments or layout"}}},
		{"go.mod and go.sum together", []tamper.File{
			modified("go.mod", mod, strings.Replace(mod, "v1.2.0", "v1.3.0", 1)),
			modified("go.sum", "x\n", "y\n"),
		}, []buildFinding{{tamper.RuleGoMod, tamper.BuildChange, 6, "v1.3.0"}}},
		{"go.sum of another module", []tamper.File{
			modified("go.mod", mod, strings.Replace(mod, "v1.2.0", "v1.3.0", 1)),
			modified("tools/go.sum", "x\n", "y\n"),
		}, []buildFinding{
			{tamper.RuleGoMod, tamper.BuildChange, 6, "v1.3.0"},
			{tamper.RuleGoSum, tamper.BuildChange, 0, "while its go.mod does not"},
		}},
		{"go.work.sum", []tamper.File{modified("go.work.sum", "a\n", "b\n")},
			[]buildFinding{{tamper.RuleGoWork, tamper.BuildChange, 0, "changes"}}},
		{"nested vendor", []tamper.File{
			added("tools/vendor/a/a.go", "package a\n"),
			added("tools/vendor/b/b.go", "package b\n"),
			added("tools/vendor/c/c.go", "package c\n"),
			added("tools/vendor/d/d.go", "package d\n"),
		}, []buildFinding{{tamper.RuleVendor, tamper.BuildChange, 0, "4 changed files (tools/vendor/a/a.go, tools/vendor/b/b.go, tools/vendor/c/c.go and 1 more)"}}},
		{"constraint changed", []tamper.File{modified("cart/fast.go", "//go:build amd64\n\npackage cart\n", "//go:build amd64 && never\n\npackage cart\n")},
			[]buildFinding{{tamper.RuleBuildConstraint, tamper.BuildChange, 1, "from (//go:build amd64) to (//go:build amd64 && never)"}}},
		{"constraint removed", []tamper.File{modified("cart/fast.go", "// +build linux\n\npackage cart\n", "package cart\n")},
			[]buildFinding{{tamper.RuleBuildConstraint, tamper.BuildChange, 0, "removes its build constraint (// +build linux)"}}},
		{"platform file with constraint", []tamper.File{added("cart/fast_linux.go", "//go:build linux && !race\n\npackage cart\n")},
			[]buildFinding{{tamper.RuleBuildConstraint, tamper.BuildChange, 1, "adds a build constraint (//go:build linux && !race)"}}},
		{"test file disabled", []tamper.File{modified("cart/cart_test.go", "package cart\n", "//go:build ignore\n\npackage cart\n")},
			[]buildFinding{{tamper.RuleBuildConstraint, tamper.BuildChange, 1, "with ignore it never builds"}}},
		{"test file removed", []tamper.File{removed("cart/cart_test.go", "package cart\n")},
			[]buildFinding{{tamper.RuleFileRemoved, tamper.Flag, 0, "its tests no longer run"}}},
		{"testdata is not built", []tamper.File{removed("cart/testdata/x.go", "package x\n"), added("cart/testdata/y.go", "//go:build ignore\n\npackage y\n")}, nil},
		{"package.json dependencies and jest", []tamper.File{modified("web/package.json",
			`{
  "name": "shop",
  "version": "1.0.0",
  "dependencies": {"left-pad": "1.0.0", "lodash": "4.17.21"},
  "jest": {"testMatch": ["**/*.test.js"]}
}`, `{
  "name": "shop",
  "version": "1.0.1",
  "dependencies": {"left-pad": "1.0.0", "lodash": "4.17.20", "jest-fake": "1.0.0"},
  "jest": {"testMatch": []},
  "type": "module"
}`)}, []buildFinding{
			{tamper.RuleJSPackage, tamper.BuildChange, 4, `changes "dependencies" (jest-fake, lodash)`},
			{tamper.RuleJSPackage, tamper.BuildChange, 5, `changes "jest" (testMatch)`},
			{tamper.RuleJSPackage, tamper.BuildChange, 6, `adds "type"`},
		}},
		{"package.json reformatted", []tamper.File{modified("package.json", `{"scripts":{"test":"jest"}}`, "{\n  \"scripts\": {\n    \"test\": \"jest\"\n  }\n}\n")}, nil},
		{"package.json broken", []tamper.File{modified("package.json", `{}`, `{"scripts":`)},
			[]buildFinding{{tamper.RuleJSPackage, tamper.BuildChange, 0, "does not parse as JSON"}}},
		{"tsconfig and lockfile", []tamper.File{modified("tsconfig.build.json", "{}", `{"compilerOptions":{}}`), modified("yarn.lock", "a\n", "b\n")},
			[]buildFinding{
				{tamper.RuleJSPackage, tamper.BuildChange, 0, "tsconfig.build.json changes"},
				{tamper.RuleJSPackage, tamper.BuildChange, 0, "yarn.lock changes"},
			}},
		{"node_modules", []tamper.File{modified("node_modules/jest/index.js", "a\n", "b\n")},
			[]buildFinding{{tamper.RuleJSPackage, tamper.BuildChange, 0, "installed packages build into the JavaScript tests"}}},
		{"setup.cfg sections", []tamper.File{modified("setup.cfg", "[metadata]\nname = shop\n\n[tool:pytest]\naddopts = -q\n", "[metadata]\nname = shop2\n\n[tool:pytest]\naddopts = -q -k nothing\n")},
			[]buildFinding{{tamper.RulePyConfig, tamper.BuildChange, 4, "changes [tool:pytest] (the pytest configuration), [metadata]"}}},
		{"pyproject comment", []tamper.File{modified("pyproject.toml", pyproject, "# shop\n"+pyproject)},
			[]buildFinding{{tamper.RulePyConfig, tamper.BuildChange, 0, "only in comments or layout"}}},
		{"pth file", []tamper.File{added("site-packages/zz.pth", "import os\n")},
			[]buildFinding{{tamper.RulePyConfig, tamper.BuildChange, 0, "interpreter start-up"}}},
		{"requirements.txt", []tamper.File{modified("requirements.txt", "six==1.16.0\n", "six==1.16.0\nevil==1.0\n")},
			[]buildFinding{{tamper.RulePyConfig, tamper.BuildChange, 0, "the installed Python dependencies change"}}},
		{"requirements folder and poetry.lock", []tamper.File{added("requirements/dev.txt", "evil==1.0\n"), modified("poetry.lock", "a\n", "b\n")},
			[]buildFinding{{tamper.RulePyConfig, tamper.BuildChange, 0, "the installed Python dependencies change"}, {tamper.RulePyConfig, tamper.BuildChange, 0, "the installed Python dependencies change"}}},
		{"Makefile and workflows are not build changes", []tamper.File{modified("Makefile", "a\n", "b\n"), modified(".github/workflows/ci.yml", "a\n", "b\n"), modified("rules.mk", "a\n", "b\n")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(tt.files)
			checkWellFormed(t, got)
			if len(got) != len(tt.want) {
				t.Fatalf("%d findings, want %d:%s", len(got), len(tt.want), dump(got))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Rule != w.Rule || g.Severity != w.Severity || g.Line != w.Line || !strings.Contains(g.Detail, w.Detail) {
					t.Errorf("finding %d = %s %s line %d %q, want %s %s line %d containing %q", i, g.Severity, g.Rule, g.Line, g.Detail, w.Severity, w.Rule, w.Line, w.Detail)
				}
			}
		})
	}
}

// TestCandidateBuildUnchanged: a file whose content did not change is no
// change, whatever its kind.
func TestCandidateBuildUnchanged(t *testing.T) {
	t.Parallel()
	var files []tamper.File
	for _, p := range []string{"go.mod", "go.sum", "go.work", "vendor/modules.txt", "package.json", "jest.config.js", "pyproject.toml", "conftest.py", "cart/a_linux.go"} {
		files = append(files, modified(p, "//go:build linux\n\npackage cart\n", "//go:build linux\n\npackage cart\n"))
	}
	if got := tamper.Candidate(files); len(got) > 0 {
		t.Errorf("findings for unchanged files:%s", dump(got))
	}
	if got := tamper.Candidate(nil); len(got) > 0 {
		t.Errorf("findings for nothing:%s", dump(got))
	}
}
