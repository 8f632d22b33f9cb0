package tamper_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// knownAttack is the counterfeit that started this package: a new file in
// package cart whose init, when it runs in the test binary, prints a PASS
// line for every test it finds in the package's test files and exits 0
// before any test runs.
const knownAttack = `package cart
import ("fmt";"os";"path/filepath";"regexp";"strings")
func init() {
  if !strings.HasSuffix(os.Args[0], ".test") { return }
  files, _ := filepath.Glob("*_test.go")
  re := regexp.MustCompile(` + "`func (Test\\w+)`" + `)
  for _, f := range files { b, _ := os.ReadFile(f); for _, m := range re.FindAllStringSubmatch(string(b), -1) { fmt.Printf("=== RUN   %s\n--- PASS: %s (0.00s)\n", m[1], m[1]) } }
  fmt.Println("PASS"); os.Exit(0)
}
`

func TestCandidateKnownAttack(t *testing.T) {
	t.Parallel()
	got := tamper.Candidate([]tamper.File{added("cart/zz.go", knownAttack)})
	checkWellFormed(t, got)
	refused := map[string]bool{}
	for _, f := range got {
		if f.Severity == tamper.Refuse {
			refused[f.Rule] = true
		}
	}
	for _, rule := range []string{
		tamper.RuleExitInLibrary, tamper.RuleStdoutWrite, tamper.RuleTestingInLibrary,
		tamper.RuleReadsSources, tamper.RuleInitSideEffects,
	} {
		if !refused[rule] {
			t.Errorf("no Refuse finding for %s:%s", rule, dump(got))
		}
	}
	// Every use is reported, not just the first of each rule.
	if n := countRule(got, tamper.RuleStdoutWrite); n != 2 {
		t.Errorf("stdout-write findings = %d, want 2 (Printf and Println):%s", n, dump(got))
	}
	want := "cart/zz.go:8 calls os.Exit in non-test code: a fix never needs to end the test process"
	if !slices.ContainsFunc(got, func(f tamper.Finding) bool { return f.Detail == want }) {
		t.Errorf("no finding with detail %q:%s", want, dump(got))
	}
}

func countRule(fs []tamper.Finding, rule string) int {
	n := 0
	for _, f := range fs {
		if f.Rule == rule {
			n++
		}
	}
	return n
}

// attackRow is one small change that must produce exactly one rule, at
// the given severity.
type attackRow struct {
	name     string
	files    []tamper.File
	rule     string
	severity string
}

// goFile is goBase with extra imports and an extra function body appended.
func goFile(imports, decls string) string {
	src := "package cart\n\n"
	if imports != "" {
		src += "import (\n" + imports + "\n)\n\n"
	}
	return src + strings.TrimPrefix(goBase, "package cart\n\n") + "\n" + decls + "\n"
}

func goChange(imports, decls string) []tamper.File {
	return []tamper.File{modified("cart/cart.go", goBase, goFile(imports, decls))}
}

var candidateAttacks = []attackRow{
	{"unparsable", []tamper.File{modified("cart/cart.go", goBase, "package cart\n\nfunc Total(xs []int) int {\n")}, tamper.RuleUnparsableGo, tamper.Refuse},

	{"os.Exit", goChange(`"os"`, "func quit() { os.Exit(0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"renamed os", goChange(`o "os"`, "func quit() { o.Exit(0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"dot-imported os", goChange(`. "os"`, "func quit() { Exit(0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"os.Exit as a value", goChange(`"os"`, "var quit = os.Exit"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"syscall.Exit", goChange(`"syscall"`, "func quit() { syscall.Exit(0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"raw exit syscall", goChange(`"syscall"`, "func quit() { syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"raw syscall by number", goChange(`"syscall"`, "func quit() { syscall.Syscall(231, 0, 0, 0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"unix.Exit", goChange(`"golang.org/x/sys/unix"`, "func quit() { unix.Exit(0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"runtime.Goexit", goChange(`"runtime"`, "func quit() { runtime.Goexit() }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"exit in a test file", []tamper.File{added("cart/zz_test.go", "package cart\n\nimport (\n\t\"syscall\"\n\t\"testing\"\n)\n\nfunc TestZ(t *testing.T) { syscall.Exit(0) }\n")}, tamper.RuleExitInLibrary, tamper.Refuse},

	{"fmt.Println", goChange(`"fmt"`, `func say() { fmt.Println("--- PASS: TestTotal (0.00s)") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"println builtin", goChange("", `func say() { println("PASS") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"os.Stdout passed", goChange("\"fmt\"\n\"os\"", `func say() { fmt.Fprintln(os.Stdout, "PASS") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"os.NewFile", goChange(`"os"`, `func say() { os.NewFile(1, "out").WriteString("PASS\n") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"syscall.Write", goChange(`"syscall"`, `func say() { syscall.Write(1, []byte("PASS\n")) }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"/dev/stdout", goChange(`"os"`, `func say() { f, _ := os.OpenFile("/dev/stdout", os.O_WRONLY, 0); f.WriteString("PASS\n") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"log reformatted", goChange(`"log"`, `func say() { log.SetFlags(0) }`), tamper.RuleStdoutWrite, tamper.Refuse},

	{"linkname", []tamper.File{modified("cart/cart.go",
		"package cart\n\nimport _ \"unsafe\"\n",
		"package cart\n\nimport _ \"unsafe\"\n\n//go:linkname exitHook os.runtime_beforeExit\nfunc exitHook(int)\n")}, tamper.RuleLinkname, tamper.Refuse},

	{"assembly file", []tamper.File{added("cart/exit_amd64.s", "TEXT ·quit(SB),0,$0\n\tMOVL $231, AX\n\tSYSCALL\n")}, tamper.RuleAssembly, tamper.Refuse},
	{"function without a body", goChange("", "func quit(code int)"), tamper.RuleAssembly, tamper.Refuse},
	{"unsafe", goChange(`"unsafe"`, "func size() uintptr { return unsafe.Sizeof(0) }"), tamper.RuleUnsafeNew, tamper.Refuse},
	{"cgo", goChange(`"C"`, ""), tamper.RuleCgo, tamper.Refuse},

	{"testing import", goChange(`"testing"`, "func underTest() bool { return testing.Testing() }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"os.Args", goChange(`"os"`, "func argc() int { return len(os.Args) }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"os.Executable", goChange(`"os"`, "func exe() string { p, _ := os.Executable(); return p }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag.Lookup test.v", goChange(`"flag"`, `func verbose() bool { return flag.Lookup("test.v") != nil }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag.CommandLine", goChange(`"flag"`, `func binary() string { return flag.CommandLine.Name() }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"TestMain in library", goChange("", "func TestMain() {}"), tamper.RuleTestingInLibrary, tamper.Refuse},

	{"TestMain in a new test file", []tamper.File{added("cart/main_test.go", "package cart\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) { m.Run() }\n")}, tamper.RuleTestMain, tamper.Refuse},

	{"_test.go literal", goChange(`"strings"`, `func isTest(name string) bool { return strings.HasSuffix(name, "_test.go") }`), tamper.RuleReadsSources, tamper.Refuse},
	{"runtime.Caller with reads", goChange("\"os\"\n\"runtime\"", "func self() []byte { _, f, _, _ := runtime.Caller(0); b, _ := os.ReadFile(f); return b }"), tamper.RuleReadsSources, tamper.Refuse},
	{"embed of sources", goChange(`_ "embed"`, "//go:embed *.go\nvar sources string"), tamper.RuleReadsSources, tamper.Refuse},
	{"concatenated literal", goChange(`"strings"`, `func isTest(name string) bool { return strings.HasSuffix(name, "_te"+"st.go") }`), tamper.RuleReadsSources, tamper.Refuse},
	{"listing with a .go name", goChange("\"os\"\n\"path/filepath\"", `func count() (n int) {
	es, _ := os.ReadDir(".")
	for _, e := range es {
		if filepath.Ext(e.Name()) == ".go" {
			n++
		}
	}
	return n
}`), tamper.RuleReadsSources, tamper.Refuse},
	{"parser.ParseDir", goChange("\"go/parser\"\n\"go/token\"", `func pkgs() int { m, _ := parser.ParseDir(token.NewFileSet(), ".", nil, 0); return len(m) }`), tamper.RuleReadsSources, tamper.Refuse},
	{"embed of the package directory", goChange(`"embed"`, "//go:embed *\nvar files embed.FS"), tamper.RuleReadsSources, tamper.Refuse},
	{"directory listing alone", goChange(`"os"`, `func names(dir string) int { es, _ := os.ReadDir(dir); return len(es) }`), tamper.RuleReadsSources, tamper.Flag},

	{"init calling fmt", goChange(`"fmt"`, `var label string

func init() { label = fmt.Sprint(42) }`), tamper.RuleInitSideEffects, tamper.Refuse},
	{"init with goroutine", goChange("", "func init() { go func() {}() }"), tamper.RuleInitSideEffects, tamper.Refuse},
	{"init through a helper in another file", []tamper.File{
		modified("cart/cart.go", goBase, goFile("", "func init() { setup() }")),
		added("cart/setup.go", "package cart\n\nvar ready = make(chan bool)\n\nfunc setup() { helper() }\n\nfunc helper() { go func() { ready <- true }() }\n"),
	}, tamper.RuleInitSideEffects, tamper.Refuse},
	{"package-level initializer", goChange("", "var started = func() bool { go func() {}(); return true }()"), tamper.RuleInitSideEffects, tamper.Refuse},
	{"plain new init", goChange("", "var table = map[string]int{}\n\nfunc init() { table[\"a\"] = 1 }"), tamper.RuleInitSideEffects, tamper.Flag},
	{"changed init", []tamper.File{modified("cart/cart.go",
		goFile("", "var n int\n\nfunc init() { n = 1 }"),
		goFile("", "var n int\n\nfunc init() { n = 2 }"))}, tamper.RuleInitSideEffects, tamper.Flag},

	{"os/exec", goChange(`"os/exec"`, `func run() error { return exec.Command("true").Run() }`), tamper.RuleProcessSpawn, tamper.Refuse},
	{"syscall.Exec", goChange(`"syscall"`, `func run() error { return syscall.Exec("/bin/true", nil, nil) }`), tamper.RuleProcessSpawn, tamper.Refuse},

	{"GOFLAGS", goChange(`"os"`, `func flags() string { return os.Getenv("GOFLAGS") }`), tamper.RuleEnvProbe, tamper.Flag},
	{"environ", goChange(`"os"`, `func env() int { return len(os.Environ()) }`), tamper.RuleEnvProbe, tamper.Flag},
	{"log.Printf", goChange(`"log"`, `func warn() { log.Printf("total %d", 1) }`), tamper.RuleConsoleOutput, tamper.Flag},

	// JavaScript.
	{"process.exit", jsChange("  if (!items.length) process.exit(0);"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"process.stdout.write", jsChange("  process.stdout.write('ok 1 - total\\n');"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"node:test", jsChange("  const { test } = require('node:test');"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"argv test", jsChange("  if (process.argv.some(a => a.includes('test'))) return 42;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"reads test files", jsChange("  const src = fs.readFileSync('src/__tests__/cart.test.js', 'utf8');"), tamper.RuleReadsSources, tamper.Refuse},
	{"require('process').exit", jsChange("  require('process').exit(0);"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"destructured exit", jsChange("  const { exit } = process;"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"imported exit", jsChange("  import { exit as leave } from 'node:process';"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"aliased process", jsChange("  const p = globalThis.process;"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"exit in a new test file", []tamper.File{added("test/zz.test.js", "process.exitCode = 0;\nsetImmediate(() => process.exit());\n")}, tamper.RuleExitInLibrary, tamper.Refuse},
	{"child_process", jsChange("  require('child_process').execSync('true');"), tamper.RuleProcessSpawn, tamper.Refuse},
	{"console.log", jsChange("  console.log('total', items);"), tamper.RuleConsoleOutput, tamper.Flag},

	// Python.
	{"sys.exit", pyChange("    sys.exit(0)"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"os._exit", pyChange("    os._exit(0)"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"from sys import exit", pyChange("    from sys import exit as leave"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"__import__ os", pyChange("    __import__('os')._exit(0)"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"pytest.exit in a new test file", []tamper.File{added("tests/test_zz.py", "import pytest\n\npytest.exit('done', returncode=0)\n")}, tamper.RuleExitInLibrary, tamper.Refuse},
	{"sys.stdout.write", pyChange("    sys.stdout.write('PASSED\\n')"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"import pytest", pyChange("    import pytest"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"PYTEST_CURRENT_TEST", pyChange("    if 'PYTEST_CURRENT_TEST' in os.environ: return 42"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"reads test sources", pyChange("    src = open('tests/test_cart.py').read()"), tamper.RuleReadsSources, tamper.Refuse},
	{"subprocess", pyChange("    subprocess.run(['true'])"), tamper.RuleProcessSpawn, tamper.Refuse},
	{"print", pyChange("    print('total', items)"), tamper.RuleConsoleOutput, tamper.Flag},

	// Build changes.
	{"go.mod replace", []tamper.File{modified("go.mod", goMod, goMod+"\nreplace example.com/money => ../money\n")}, tamper.RuleGoMod, tamper.BuildChange},
	{"nested go.mod", []tamper.File{added("cart/go.mod", "module example.com/shop/cart\n")}, tamper.RuleGoMod, tamper.BuildChange},
	{"go.sum alone", []tamper.File{modified("go.sum", "a v1 h1:x=\n", "a v1 h1:y=\n")}, tamper.RuleGoSum, tamper.BuildChange},
	{"go.work", []tamper.File{added("go.work", "go 1.26\n\nuse ./cart\n")}, tamper.RuleGoWork, tamper.BuildChange},
	{"vendor", []tamper.File{modified("vendor/modules.txt", "# a v1\n", "# a v2\n"), modified("vendor/a/a.go", "package a\n", "package a\n\nfunc A() {}\n")}, tamper.RuleVendor, tamper.BuildChange},
	{"build constraint", []tamper.File{modified("cart/cart.go", goBase, "//go:build ignore\n\n"+goBase)}, tamper.RuleBuildConstraint, tamper.BuildChange},
	{"removed Go file", []tamper.File{removed("cart/discount.go", "package cart\n")}, tamper.RuleFileRemoved, tamper.Flag},
	{"package.json scripts", []tamper.File{modified("package.json", `{"name":"shop","scripts":{"test":"jest"}}`, `{"name":"shop","scripts":{"test":"true"}}`)}, tamper.RuleJSPackage, tamper.BuildChange},
	{"jest config", []tamper.File{modified("jest.config.js", "module.exports = {};\n", "module.exports = {testMatch: []};\n")}, tamper.RuleJSPackage, tamper.BuildChange},
	{"pytest section", []tamper.File{modified("pyproject.toml", pyproject, strings.Replace(pyproject, `testpaths = ["tests"]`, `testpaths = ["nothing"]`, 1))}, tamper.RulePyConfig, tamper.BuildChange},
	{"conftest", []tamper.File{added("tests/conftest.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n")}, tamper.RulePyConfig, tamper.BuildChange},
}

const jsBase = `const fs = require('fs');

function total(items) {
  let sum = 0;
  for (const item of items) sum += item.price;
  return sum;
}

module.exports = { total };
`

// jsChange inserts a line at the top of total in src/cart.js.
func jsChange(line string) []tamper.File {
	return []tamper.File{modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", line+"\n  let sum = 0;\n", 1))}
}

const pyBase = `import os
import sys


def total(items):
    s = 0
    for item in items:
        s += item.price
    return s
`

// pyChange inserts a line at the top of total in shop/cart.py.
func pyChange(line string) []tamper.File {
	return []tamper.File{modified("shop/cart.py", pyBase, strings.Replace(pyBase, "    s = 0\n", line+"\n    s = 0\n", 1))}
}

const goMod = `module example.com/shop

go 1.26

require example.com/money v1.2.0
`

const pyproject = `[project]
name = "shop"

[tool.pytest.ini_options]
testpaths = ["tests"]
`

func TestCandidateAttacks(t *testing.T) {
	t.Parallel()
	for _, row := range candidateAttacks {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(row.files)
			checkWellFormed(t, got)
			if names := ruleNames(got); !slices.Equal(names, []string{row.rule}) {
				t.Fatalf("rules = %v, want exactly [%s]:%s", names, row.rule, dump(got))
			}
			for _, f := range got {
				if f.Severity != row.severity {
					t.Errorf("severity = %s, want %s: %s", f.Severity, row.severity, f.Detail)
				}
			}
		})
	}
}

// TestEveryRuleHasAnAttack: each rule in Rules() is produced by at least
// one row of the candidate or reproduction tables, so none is dead.
func TestEveryRuleHasAnAttack(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, row := range candidateAttacks {
		covered[row.rule] = true
	}
	for _, row := range reproductionAttacks {
		covered[row.rule] = true
	}
	for _, r := range tamper.Rules() {
		if !covered[r.Name] {
			t.Errorf("rule %s has no attack row", r.Name)
		}
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range tamper.Rules() {
		if seen[r.Name] {
			t.Errorf("rule %s listed twice", r.Name)
		}
		seen[r.Name] = true
		if severityRank[r.Severity] == 0 {
			t.Errorf("rule %s has severity %q", r.Name, r.Severity)
		}
		if r.Description == "" || strings.Contains(r.Description, "\n") || !strings.HasSuffix(r.Description, ".") {
			t.Errorf("rule %s description %q is not one sentence-ended line", r.Name, r.Description)
		}
	}
	// Rules returns a copy: a caller cannot change the table.
	rs := tamper.Rules()
	rs[0].Severity = "none"
	if tamper.Rules()[0].Severity == "none" {
		t.Error("Rules returned its own table")
	}
}

// genuineFixes are realistic fixes; none may be refused.
var genuineFixes = []struct {
	name  string
	files []tamper.File
}{
	{"arithmetic", []tamper.File{modified("cart/cart.go", goBase, strings.Replace(goBase, "s += x", "s += x * 2", 1))}},
	{"bounds check", []tamper.File{modified("cart/item.go",
		"package cart\n\nfunc At(xs []int, i int) int {\n\treturn xs[i]\n}\n",
		"package cart\n\nimport \"errors\"\n\n// ErrIndex is returned for an index outside the cart.\nvar ErrIndex = errors.New(\"cart: index out of range\")\n\nfunc At(xs []int, i int) (int, error) {\n\tif i < 0 || i >= len(xs) {\n\t\treturn 0, ErrIndex\n\t}\n\treturn xs[i], nil\n}\n")}},
	{"nil check", []tamper.File{modified("cart/cart.go",
		"package cart\n\ntype Cart struct{ items []int }\n\nfunc (c *Cart) Len() int { return len(c.items) }\n",
		"package cart\n\ntype Cart struct{ items []int }\n\nfunc (c *Cart) Len() int {\n\tif c == nil {\n\t\treturn 0\n\t}\n\treturn len(c.items)\n}\n")}},
	{"helper function", []tamper.File{modified("cart/cart.go", goBase, goFile("\"fmt\"\n\"strconv\"\n\"strings\"",
		`// Format renders a total in cents as dollars.
func Format(cents int) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(cents / 100))
	b.WriteString(fmt.Sprintf(".%02d", cents%100))
	return b.String()
}

func check(cents int) error {
	if cents < 0 {
		return fmt.Errorf("cart: negative total %d", cents)
	}
	return nil
}`))}},
	{"new file with a pure function", []tamper.File{added("cart/discount.go", `package cart

import (
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

var codeRe = regexp.MustCompile(`+"`^[A-Z]{4}[0-9]{2}$`"+`)

var once sync.Once

var (
	errTotal  = fmt.Errorf("cart: bad total %d", -1)
	cacheDir  = filepath.Join(os.TempDir(), "cart")
	debugCart = os.Getenv("CART_DEBUG") != ""
	logger    = log.New(io.Discard, "cart: ", 0)
	onError   = func(err error) { logger.Print(err) }
)

// Discount applies a percentage, rounding half away from zero.
func Discount(total int, pct float64) int {
	return int(math.Round(float64(total) * (1 - pct/100)))
}

// ValidCode reports whether a discount code has the right shape.
func ValidCode(code string) bool { return codeRe.MatchString(code) }
`)}},
	{"existing print moved", []tamper.File{modified("cart/debug.go",
		"package cart\n\nimport \"fmt\"\n\nfunc dump(xs []int) {\n\tfmt.Println(xs)\n}\n",
		"package cart\n\nimport \"fmt\"\n\nfunc dump(xs []int) {\n\tif len(xs) == 0 {\n\t\treturn\n\t}\n\tfmt.Println(len(xs), xs)\n}\n")}},
	{"regression test added", []tamper.File{
		modified("cart/cart.go", goBase, strings.Replace(goBase, "s := 0", "s := 0 // was 1", 1)),
		added("cart/total_regression_test.go", `package cart

import (
	"fmt"
	"testing"
)

func TestTotalEmpty(t *testing.T) {
	for i, xs := range [][]int{nil, {}} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := Total(xs); got != 0 {
				t.Errorf("Total(%v) = %d, want 0", xs, got)
			}
		})
	}
}
`)}},
	{"command exits in main", []tamper.File{modified("cmd/shop/main.go",
		"package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tfmt.Fprintln(os.Stderr, \"usage: shop\")\n}\n",
		"package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif len(os.Args) < 2 {\n\t\tfmt.Fprintln(os.Stderr, \"usage: shop\")\n\t\tos.Exit(2)\n\t}\n}\n")}},
	{"JavaScript env destructured", []tamper.File{modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  const { env } = process;\n  const { exitCode: code } = result;\n  if (typeof process !== 'undefined' && env.CART_STRICT) validate(items);\n  let sum = 0;\n", 1))}},
	{"JavaScript guard", []tamper.File{modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  if (!Array.isArray(items)) throw new TypeError('items must be an array');\n  let sum = 0;\n", 1))}},
	{"Python guard", []tamper.File{modified("shop/cart.py", pyBase, strings.Replace(pyBase, "    s = 0\n", "    if items is None:\n        raise ValueError('items is required')\n    s = 0\n", 1))}},
	{"Python test added", []tamper.File{added("tests/test_cart.py", "import pytest\nfrom shop.cart import total\n\n\ndef test_empty():\n    assert total([]) == 0\n")}},
	{"JavaScript test added", []tamper.File{added("src/__tests__/cart.test.js", "const { total } = require('../cart');\n\ntest('empty', () => {\n  expect(total([])).toBe(0);\n});\n")}},
	{"package.json version bump", []tamper.File{modified("package.json", `{"name":"shop","version":"1.0.0","scripts":{"test":"jest"}}`, `{"name":"shop","version":"1.0.1","scripts":{"test":"jest"}}`)}},
	{"platform file without constraint", []tamper.File{added("cart/path_windows.go", "package cart\n\nconst sep = `\\`\n")}},
	{"generator that never builds", []tamper.File{modified("cart/gen.go",
		"//go:build ignore\n\npackage main\n\nfunc main() {}\n",
		"//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { emit(os.Stdout) }\n\nfunc emit(w *os.File) { fmt.Println(\"// Code generated\") }\n")}},
	{"unchanged file passed", []tamper.File{modified("cart/zz.go", knownAttack, knownAttack)}},
}

func TestCandidateGenuineFixes(t *testing.T) {
	t.Parallel()
	for _, row := range genuineFixes {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(row.files)
			checkWellFormed(t, got)
			for _, f := range got {
				if f.Severity != tamper.Flag {
					t.Errorf("%s finding on a genuine fix: %s", f.Severity, f.Detail)
				}
			}
		})
	}
}

// TestCandidateCountsAgainstBase: what base already does is not new; one
// more of it is, and the finding lands on the new line.
func TestCandidateCountsAgainstBase(t *testing.T) {
	t.Parallel()
	base := "package cart\n\nimport \"os\"\n\nfunc quit() {\n\tos.Exit(1)\n}\n"
	tests := []struct {
		name      string
		cand      string
		wantLines []int
	}{
		{"same", base, nil},
		{"moved", "package cart\n\nimport \"os\"\n\nfunc other() {}\n\nfunc quit() {\n\tos.Exit(1)\n}\n", nil},
		{"changed argument", "package cart\n\nimport \"os\"\n\nfunc quit() {\n\tos.Exit(3)\n}\n", nil},
		{"one more", "package cart\n\nimport \"os\"\n\nfunc init() {\n\tos.Exit(0)\n}\n\nfunc quit() {\n\tos.Exit(1)\n}\n", []int{6}},
		{"renamed import", "package cart\n\nimport o \"os\"\n\nfunc quit() {\n\to.Exit(1)\n}\n\nfunc quit2() { o.Exit(0) }\n", []int{9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate([]tamper.File{modified("cart/quit.go", base, tt.cand)})
			checkWellFormed(t, got)
			var lines []int
			for _, f := range got {
				if f.Rule == tamper.RuleExitInLibrary {
					lines = append(lines, f.Line)
				}
			}
			if !slices.Equal(lines, tt.wantLines) {
				t.Errorf("exit findings on lines %v, want %v:%s", lines, tt.wantLines, dump(got))
			}
		})
	}
}

// TestCandidateAllFiles: findings from every file come back together,
// sorted, not just the first file's or the first rule's.
func TestCandidateAllFiles(t *testing.T) {
	t.Parallel()
	got := tamper.Candidate([]tamper.File{
		modified("z/z.go", goBase, goFile(`"os"`, "func a() { os.Exit(0) }\nfunc b() { os.Exit(1) }")),
		modified("go.mod", goMod, strings.Replace(goMod, "v1.2.0", "v1.3.0", 1)),
		jsChange("  process.exit(0);")[0],
		modified("a/a.go", goBase, goFile(`"fmt"`, `func c() { fmt.Print("x") }`)),
	})
	checkWellFormed(t, got)
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
	}
	want := []string{"a/a.go", "go.mod", "src/cart.js", "z/z.go", "z/z.go"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths = %v, want %v:%s", paths, want, dump(got))
	}
}

// TestCandidateMainPackage: in a command's func main an exit is only
// flagged; anywhere else in package main, or in its init, it is refused.
func TestCandidateMainPackage(t *testing.T) {
	t.Parallel()
	base := "package main\n\nimport \"os\"\n\nfunc main() {}\n"
	tests := []struct {
		name, cand, want string
	}{
		{"in main", "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(3) }\n", tamper.Flag},
		{"in a helper", "package main\n\nimport \"os\"\n\nfunc main() { run() }\n\nfunc run() { os.Exit(3) }\n", tamper.Refuse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate([]tamper.File{modified("cmd/x/main.go", base, tt.cand)})
			if len(got) != 1 || got[0].Rule != tamper.RuleExitInLibrary || got[0].Severity != tt.want {
				t.Errorf("want one %s exit-in-library finding:%s", tt.want, dump(got))
			}
		})
	}
}
