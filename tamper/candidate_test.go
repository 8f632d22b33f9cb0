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
	{"runtime.Caller decides by who called", goChange("\"path\"\n\"runtime\"", "func byCaller() bool { _, f, _, _ := runtime.Caller(2); return path.Base(path.Dir(f)) == \"cart\" }"), tamper.RuleTestingInLibrary, tamper.Refuse},
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

	// The red team's evasions: raw system calls.
	{"raw syscall with a constant of its own", goChange(`"syscall"`, "const SYS_LEDGER_SYNC = 231\n\nfunc sync() { syscall.Syscall(SYS_LEDGER_SYNC, 0, 0, 0) }"), tamper.RuleRawSyscall, tamper.Refuse},
	{"RawSyscall6 with another named trap", goChange(`"syscall"`, "func pid() uintptr { r, _, _ := syscall.RawSyscall6(syscall.SYS_GETPID, 0, 0, 0, 0, 0, 0); return r }"), tamper.RuleRawSyscall, tamper.Refuse},
	{"unix.Syscall with a variable trap", goChange(`"golang.org/x/sys/unix"`, "func sync(trap uintptr) { unix.Syscall(trap, 0, 0, 0) }"), tamper.RuleRawSyscall, tamper.Refuse},
	{"raw syscall with a converted constant", goChange(`sc "syscall"`, "const ledgerSync = 60\n\nfunc sync() { sc.Syscall6(uintptr(ledgerSync), 0, 0, 0, 0, 0, 0) }"), tamper.RuleRawSyscall, tamper.Refuse},
	{"unix.RawSyscall by number", goChange(`"golang.org/x/sys/unix"`, "func sync() { unix.RawSyscall(60, 0, 0, 0) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"Syscall6 stored", goChange(`"syscall"`, "var sys6 = syscall.Syscall6"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"syscall.Kill", goChange(`"syscall"`, "func quit() { syscall.Kill(0, syscall.SIGKILL) }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"runtime.Breakpoint", goChange(`"runtime"`, "func quit() { runtime.Breakpoint() }"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"syscall.Close of stdout", goChange(`"syscall"`, "func closeOut() { syscall.Close(1) }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"unix.Close of stderr by name", goChange(`"golang.org/x/sys/unix"`, "func closeErr() { unix.Close(int(unix.Stderr)) }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"syscall.Dup3", goChange(`"syscall"`, "func redirect(fd int) { syscall.Dup3(fd, 1, 0) }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"Windows DLL procedure", goChange(`"golang.org/x/sys/windows"`, `func quit() { windows.NewLazySystemDLL("kernel32.dll").NewProc("ExitProcess").Call(0) }`), tamper.RuleRawSyscall, tamper.Refuse},

	// The standard logger's writer is standard error.
	{"log.Default writer", goChange("\"io\"\n\"log\"", "func out() io.Writer { return log.Default().Writer() }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"log.Writer", goChange("\"fmt\"\n\"log\"", `func say() { fmt.Fprintln(log.Writer(), "ok") }`), tamper.RuleStdoutWrite, tamper.Refuse},
	{"slog.SetDefault", goChange(`"log/slog"`, "func quiet(l *slog.Logger) { slog.SetDefault(l) }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"debug.PrintStack", goChange(`"runtime/debug"`, "func trace() { debug.PrintStack() }"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"verdict text to a writer", goChange(`"io"`, `func banner(w io.Writer) { io.WriteString(w, "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\n") }`), tamper.RuleVerdictText, tamper.Refuse},

	// Knowing it is under test without the testing package.
	{"debug.ReadBuildInfo", goChange("\"runtime/debug\"\n\"strings\"", `func underTest() bool { bi, ok := debug.ReadBuildInfo(); return ok && strings.HasSuffix(bi.Path, ".test") }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"runtime.Stack", goChange("\"bytes\"\n\"runtime\"", `func underTest() bool { buf := make([]byte, 4096); n := runtime.Stack(buf, false); return bytes.Contains(buf[:n], []byte("tRunner")) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"debug.Stack", goChange("\"bytes\"\n\"runtime/debug\"", `func underTest() bool { return bytes.Contains(debug.Stack(), []byte("tRunner")) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"runtime.Callers and frames", goChange("\"runtime\"\n\"strings\"", `func underTest() bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(0, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "testing.") {
			return true
		}
		if !more {
			return false
		}
	}
}`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"runtime.FuncForPC", goChange(`"runtime"`, `func caller(pc uintptr) string { return runtime.FuncForPC(pc).Name() }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag.Parsed", goChange(`"flag"`, "func underTest() bool { return flag.Parsed() }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag.Lookup by a name built from bytes", goChange(`"flag"`, "func underTest() bool { return flag.Lookup(string([]byte{116, 101, 115, 116, 46, 118})) != nil }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag.Lookup by a variable", goChange(`"flag"`, "func lookup(name string) bool { return flag.Lookup(name) != nil }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag set that exits on -h", goChange(`"flag"`, `func quit() { fs := flag.NewFlagSet("cart", flag.ExitOnError); fs.Parse([]string{"-h"}) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"flag set that exits, by number", goChange(`"flag"`, `func quit() { flag.NewFlagSet("cart", 1).Parse([]string{"-h"}) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"pid with /proc", goChange("\"fmt\"\n\"os\"", `func cmdline() []byte { b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", os.Getpid())); return b }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"debug/elf", goChange(`"debug/elf"`, `func open() { f, _ := elf.Open("x"); _ = f }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"debug/buildinfo", goChange(`"debug/buildinfo"`, `func path(exe string) string { bi, _ := buildinfo.ReadFile(exe); return bi.Path }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"/proc literal", goChange(`"os"`, `func status() []byte { b, _ := os.ReadFile("/proc/self/status"); return b }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"/proc path joined from pieces", goChange("\"os\"\n\"path/filepath\"", `func exe() (string, error) { return os.Readlink(filepath.Join("/", "pr"+"oc", "self", "exe")) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"/proc from a constant", goChange(`"os"`, "const root = \"/pr\"\n\nfunc exe() (string, error) { return os.Readlink(root + \"oc/self/exe\") }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"self/maps without /proc", goChange(`"os"`, `func maps(root string) []byte { b, _ := os.ReadFile(root + "self/maps"); return b }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"cmdline by name", goChange(`"os"`, `func args(dir string) []byte { b, _ := os.ReadFile(dir + "/cmdline"); return b }`), tamper.RuleTestingInLibrary, tamper.Refuse},

	// Its surroundings: each read flagged, the sandbox's values refused.
	{"HOME read", goChange(`"os"`, `func home() string { return os.Getenv("HOME") }`), tamper.RuleEnvProbe, tamper.Flag},
	{"hostname read", goChange(`"os"`, `func host() string { h, _ := os.Hostname(); return h }`), tamper.RuleEnvProbe, tamper.Flag},
	{"working directory read", goChange(`"os"`, `func wd() string { d, _ := os.Getwd(); return d }`), tamper.RuleEnvProbe, tamper.Flag},
	{"temp dir compared with /tmp", goChange("\"os\"\n\"strings\"", `func sandboxed() bool { return strings.HasPrefix(os.TempDir(), "/tmp") }`), tamper.RuleEnvProbe, tamper.Refuse},
	{"absolute path compared with /src", goChange(`"path/filepath"`, `func sandboxed() bool { abs, _ := filepath.Abs("."); return filepath.Dir(abs) == "/src" }`), tamper.RuleEnvProbe, tamper.Refuse},
	{"sandbox path probed", goChange(`"os"`, `func sandboxed() bool { _, err := os.Stat("/src/go.mod"); return err == nil }`), tamper.RuleEnvProbe, tamper.Refuse},

	{"package-level initializer reaching a goroutine through a method", []tamper.File{
		modified("cart/cart.go", goBase, goFile("", "var ready = starter{}.start()")),
		added("cart/setup.go", "package cart\n\ntype starter struct{}\n\nfunc (starter) start() bool { go func() {}(); return true }\n"),
	}, tamper.RuleInitSideEffects, tamper.Refuse},

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
	// __import__('os')._exit(0) is two findings: TestCandidateTestMachinery.
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
	{".gitattributes added", []tamper.File{added(".gitattributes", "*_test.go text eol=crlf\n")}, tamper.RuleGitAttributes, tamper.BuildChange},
	{".gitattributes in testdata", []tamper.File{modified("cart/testdata/.gitattributes", "*.golden -text\n", "*.golden working-tree-encoding=UTF-16\n")}, tamper.RuleGitAttributes, tamper.BuildChange},
	{".gitattributes removed in vendor", []tamper.File{removed("vendor/.gitattributes", "* -text\n")}, tamper.RuleGitAttributes, tamper.BuildChange},

	// JavaScript reaching the runtime or the command line.
	{"process.binding", jsChange("  const fsb = process.binding('fs');"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process.report", jsChange("  const report = process.report.getReport();"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"require v8", jsChange("  const v8 = require('v8');"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"import inspector", jsChange("  import inspector from 'node:inspector';"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process.argv without test", jsChange("  if (process.argv.length > 2) return 0;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"JS /proc", jsChange("  const cmd = fs.readFileSync('/proc/self/cmdline', 'utf8');"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"jest global", jsChange("  if (typeof jest !== 'undefined') return 42;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"pprof goroutine stacks", goChange("\"bytes\"\n\"runtime/pprof\"", `func underTest() bool { var b bytes.Buffer; pprof.Lookup("goroutine").WriteTo(&b, 2); return bytes.Contains(b.Bytes(), []byte("tRunner")) }`), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process.env", jsChange("  if (process.env.CART_STRICT) validate(items);"), tamper.RuleEnvProbe, tamper.Flag},

	// Python reaching the stack or the command line.
	{"inspect.stack", pyChange("    frames = inspect.stack()"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"sys._getframe", pyChange("    caller = sys._getframe(1).f_code.co_filename"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"traceback.extract_stack", pyChange("    stack = traceback.extract_stack()"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"Python /proc", pyChange("    cmd = open('/proc/self/cmdline').read()"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"os.environ read", pyChange("    home = os.environ.get('HOME')"), tamper.RuleEnvProbe, tamper.Flag},

	// Red team 23: the tests' assertion library and runner reached from
	// the code under test (no witness for JUnit harnesses), and code the
	// diff does not show.
	{"assert functions overwritten (red-team PoC)", jsAppend("lib/cart.js", assertPatchJS), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"require('assert') member written", jsChange("  require('assert').strictEqual = () => {};"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"destructured strict written", jsChange("  const { strict: s } = require('node:assert');\n  s.equal = () => {};"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"alias of assert.strict written", jsAppend("src/cart.js", "const a = require('assert');\nconst s = a.strict;\ns['deepStrictEqual'] = () => {};\n"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"imported assert/strict written", []tamper.File{added("src/patch.mjs", "import assert from 'node:assert/strict';\nassert.deepStrictEqual ||= () => {};\nassert.ok = () => {};\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"namespace import of chai deleted", []tamper.File{added("src/patch.ts", "import * as chai from 'chai';\ndelete chai.expect;\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"Object.assign onto assert", jsChange("  Object.assign(require('assert'), { ok() {} });"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"Reflect.set on expect", jsAppend("src/cart.js", "const { expect } = require('expect');\nReflect.set(expect, 'extend', () => {});\n"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"defineProperty beside an assert import", jsAppend("src/cart.js", "const assert = require('assert');\nconst target = [assert][0];\nObject.defineProperty(target, 'ok', { value() {} });\n"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"node:test member written", jsAppend("src/cart.js", "const t = require('node:test');\nt.it = t.skip;\n"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"assert written in a test file the candidate adds", []tamper.File{added("test/zz.test.js", "const assert = require('node:assert');\nassert.equal = () => {};\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"Module._load hooked", jsAppend("src/cart.js", "const Module = require('module');\nconst load = Module._load;\nModule._load = (r, ...a) => load(r, ...a);\n"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"require.cache written", jsChange("  require.cache[require.resolve('assert')] = { exports: {} };"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"createRequire from node:module", []tamper.File{added("src/load.mjs", "import { createRequire } from 'node:module';\nexport const req = createRequire(import.meta.url);\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"eval", jsChange("  const f = eval('(x) => x');"), tamper.RuleDynamicCode, tamper.Refuse},
	{"indirect eval", jsChange("  const f = globalThis['eval'];"), tamper.RuleDynamicCode, tamper.Refuse},
	{"new Function", jsChange("  const f = new Function('x', 'return x');"), tamper.RuleDynamicCode, tamper.Refuse},
	{"node:vm", jsChange("  const vm = require('node:vm');"), tamper.RuleDynamicCode, tamper.Refuse},
	{"vm imported", []tamper.File{added("src/run.mjs", "import { runInThisContext } from 'vm';\n")}, tamper.RuleDynamicCode, tamper.Refuse},
	{"require of a computed path", jsChange("  const plugin = require(path.join(__dirname, name));"), tamper.RuleDynamicCode, tamper.Refuse},
	{"require of a concatenation", jsChange("  const plugin = require('./plugins/' + name);"), tamper.RuleDynamicCode, tamper.Refuse},
	{"import of a template", jsChange("  const m = await import(`./${name}.js`);"), tamper.RuleDynamicCode, tamper.Refuse},
	{"import of a variable", jsChange("  const m = await import(spec);"), tamper.RuleDynamicCode, tamper.Refuse},

	{"_pytest reached through an aliased importlib (red-team PoC)", []tamper.File{modified("shop/cart.py", pyBase+"\nimport importlib as _il\n", pyBase+"\nimport importlib as _il\n\n_reports = _il.import_module(\"_pytest.reports\")\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"pytest in a string", pyChange("    reports = load('_pytest.' + 'reports')"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"from _pytest", pyChange("    from _pytest.reports import TestReport"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"pluggy", pyChange("    import pluggy"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"unittest.mock", pyChange("    from unittest import mock"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"pytest hook name", []tamper.File{added("shop/plugin.py", "def pytest_runtest_makereport(item, call):\n    pass\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"importlib", pyChange("    mod = importlib.import_module(name)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"from importlib", pyChange("    from importlib import import_module as load"), tamper.RuleDynamicCode, tamper.Refuse},
	{"__import__", pyChange("    mod = __import__(name)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"exec", pyChange("    exec(code, {})"), tamper.RuleDynamicCode, tamper.Refuse},
	{"eval", pyChange("    total = eval(expr)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"compile", pyChange("    code = compile(src, 'x', 'exec')"), tamper.RuleDynamicCode, tamper.Refuse},
	{"builtins", pyChange("    import builtins"), tamper.RuleDynamicCode, tamper.Refuse},
	{"__builtins__", pyChange("    b = __builtins__"), tamper.RuleDynamicCode, tamper.Refuse},
	{"sys.modules", pyChange("    sys.modules['shop.cart'] = fake"), tamper.RuleDynamicCode, tamper.Refuse},

	{"packed npm package", []tamper.File{added("vendor-pkgs/money-1.2.0.tgz", "\x1f\x8b\x08")}, tamper.RulePackedPackage, tamper.BuildChange},
	{"packed Python sdist changed", []tamper.File{modified("dist/money-1.2.0.tar.gz", "\x1f\x8b\x08a", "\x1f\x8b\x08b")}, tamper.RulePackedPackage, tamper.BuildChange},
}

const jsBase = `const fs = require('fs');

function total(items) {
  let sum = 0;
  for (const item of items) sum += item.price;
  return sum;
}

module.exports = { total };
`

// assertPatchJS is red team 23's candidate (verify's node PoC): three
// lines that make every assertion of node:assert a no-op.
const assertPatchJS = `const check = require('assert');
for (const k of Object.keys(check)) if (typeof check[k] === 'function') check[k] = function () {};
for (const k of Object.keys(check.strict)) if (typeof check.strict[k] === 'function') check.strict[k] = function () {};
`

// jsAppend appends lines to jsBase, at path.
func jsAppend(path, lines string) []tamper.File {
	return []tamper.File{modified(path, jsBase, jsBase+lines)}
}

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
	runAttacks(t, candidateAttacks, tamper.Candidate)
}

// runAttacks checks that check finds each row's rule, and only it, at the
// row's severity.
func runAttacks(t *testing.T, rows []attackRow, check func([]tamper.File) []tamper.Finding) {
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			got := check(row.files)
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
	{"JavaScript assert invariant and option merging", jsAppend("src/cart.js", "const assert = require('node:assert');\nconst defaults = Object.assign({}, { currency: 'EUR' });\nfunction checked(items) {\n  assert.ok(Array.isArray(items), 'items must be an array');\n  assert.strictEqual(typeof defaults.currency, 'string');\n  return total(items);\n}\nif (require.main === module) console.log(checked([]));\nconst other = require('./money');\n")},
	{"JavaScript literal dynamic import", jsChange("  const { round } = await import('./money.js');")},
	{"Python regular expression and methods", []tamper.File{modified("shop/cart.py", pyBase, pyBase+"\nimport re\n\nCODE = re.compile(r'^[A-Z]{4}$')\n\n\nclass Rule:\n    def eval(self, items):\n        return self.model.eval(items)\n\n    def evaluate(self, items):\n        return total(items)\n")}},
	{"packed package in testdata", []tamper.File{added("test/testdata/money-1.2.0.tgz", "\x1f\x8b\x08")}},
	{"package.json version bump", []tamper.File{modified("package.json", `{"name":"shop","version":"1.0.0","scripts":{"test":"jest"}}`, `{"name":"shop","version":"1.0.1","scripts":{"test":"jest"}}`)}},
	{"platform file without constraint", []tamper.File{added("cart/path_windows.go", "package cart\n\nconst sep = `\\`\n")}},
	{"generator that never builds", []tamper.File{modified("cart/gen.go",
		"//go:build ignore\n\npackage main\n\nfunc main() {}\n",
		"//go:build ignore\n\npackage main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() { emit(os.Stdout) }\n\nfunc emit(w *os.File) { fmt.Println(\"// Code generated\") }\n")}},
	{"unchanged file passed", []tamper.File{modified("cart/zz.go", knownAttack, knownAttack)}},
	{"missing file is not an error", []tamper.File{modified("cart/store.go", "package cart\n\nimport \"os\"\n\nfunc Load(path string) ([]byte, error) {\n\treturn os.ReadFile(path)\n}\n", `package cart

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Load reads a saved cart; a cart never saved is empty, not an error.
func Load(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errno, ok := err.(syscall.Errno); ok && errno == syscall.EACCES {
		return nil, err
	}
	return b, err
}
`)}},
	{"a warning logged", []tamper.File{modified("cart/cart.go", goBase, goFile("\"log\"\n\"log/slog\"", `// Clamp keeps a total non-negative, warning when it was not.
func Clamp(total int) int {
	if total < 0 {
		log.Printf("cart: negative total %d clamped to 0", total)
		slog.Warn("negative total", "total", total)
		return 0
	}
	return total
}`))}},
	{"config read by a variable path", []tamper.File{added("cart/config.go", `package cart

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Config is the cart's settings file.
type Config struct {
	Currency string `+"`json:\"currency\"`"+`
	Cmdline  string `+"`json:\"cmdline,omitempty\"`"+`
}

// LoadConfig reads the settings in dir, or the defaults when there are none.
func LoadConfig(dir string) (Config, error) {
	c := Config{Currency: "USD"}
	path := filepath.Join(dir, "cart.json")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("cart: read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("cart: parse %s: %w", path, err)
	}
	return c, nil
}
`)}},
	{"platform-specific separator", []tamper.File{modified("cart/cart.go", goBase, goFile("\"runtime\"\n\"strings\"", `// Key joins the parts of an item's key with the platform's separator.
func Key(parts ...string) string {
	sep := "/"
	if runtime.GOOS == "windows" {
		sep = `+"`\\`"+`
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strings.TrimSpace(p))
	}
	return b.String()
}`))}},
	{"cache directory from the environment with a /tmp default", []tamper.File{modified("cart/cart.go", goBase, goFile("\"os\"\n\"path/filepath\"", `// CacheDir is where carts are cached: $CART_CACHE, or /tmp/cart.
func CacheDir() string {
	dir := os.Getenv("CART_CACHE")
	if dir == "" {
		dir = "/tmp/cart"
	}
	if home, err := os.UserHomeDir(); err == nil && dir == "~" {
		dir = filepath.Join(home, ".cart")
	}
	return dir
}`))}},
	{"payment sandbox mode from the environment", []tamper.File{modified("cart/cart.go", goBase, goFile(`"os"`, `// Endpoint is the payment API, its test mode when CART_PAYMENTS=sandbox.
func Endpoint() string {
	if os.Getenv("CART_PAYMENTS") == "sandbox" {
		return "https://api.sandbox.example.com"
	}
	return "https://api.example.com"
}`))}},
	{"pid file", []tamper.File{modified("cart/cart.go", goBase, goFile("\"fmt\"\n\"os\"", `// Lock writes the process id to path, failing if another holds it.
func Lock(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("cart: lock %s: %w", path, err)
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	return err
}`))}},
	{"command parses its flags in main", []tamper.File{modified("cmd/shop/main.go",
		"package main\n\nimport \"flag\"\n\nfunc main() {\n\tflag.Parse()\n}\n",
		"package main\n\nimport (\n\t\"flag\"\n\t\"fmt\"\n)\n\nfunc main() {\n\tverbose := flag.Bool(\"v\", false, \"verbose\")\n\tflag.Parse()\n\tif *verbose {\n\t\tfmt.Println(flag.Args())\n\t}\n}\n")}},
	{"subcommand flags that return errors", []tamper.File{modified("cmd/shop/main.go",
		"package main\n\nfunc main() {}\n",
		`package main

import (
	"flag"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("shop", flag.ContinueOnError)
	limit := fs.Int("limit", 10, "items to show")
	if err := fs.Parse(args); err != nil {
		return err
	}
	_ = *limit
	return nil
}
`)}},
	{"constructor with methods in a package-level initializer", []tamper.File{modified("cart/cart.go", goBase, goFile("\"sync\"", `type registry struct {
	mu    sync.Mutex
	items map[string]int
}

func newRegistry() *registry { return &registry{items: map[string]int{}} }

func (r *registry) with(name string, n int) *registry {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[name] = n
	return r
}

var defaults = newRegistry().with("apple", 1).with("pear", 2)`))}},
	{"JavaScript temp dir default", []tamper.File{modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  const dir = process.env.CART_CACHE || '/tmp/cart';\n  if (process.env.NODE_ENV !== 'production') validate(items, dir);\n  let sum = 0;\n", 1))}},
	{"Python home default", []tamper.File{modified("shop/cart.py", pyBase, strings.Replace(pyBase, "    s = 0\n", "    cache = os.environ.get('CART_CACHE', '/tmp/cart')\n    if os.environ.get('CART_PAYMENTS') == 'sandbox':\n        cache = cache + '-test'\n    s = 0\n", 1))}},
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
