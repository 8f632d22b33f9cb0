package tamper

// Rule names. A finding's Rule is always one of these; Rules lists them.
const (
	// Result counterfeiting in a candidate's code (and, for the first, a
	// file nobody can judge by reading it).
	RuleUnparsableGo     = "unparsable-go"
	RuleExitInLibrary    = "exit-in-library"
	RuleStdoutWrite      = "stdout-write"
	RuleLinkname         = "linkname"
	RuleUnsafeNew        = "unsafe-new"
	RuleCgo              = "cgo"
	RuleAssembly         = "assembly"
	RuleTestingInLibrary = "testing-in-library"
	RuleTestMain         = "test-main"
	RuleReadsSources     = "reads-sources"
	RuleInitSideEffects  = "init-side-effects"
	RuleProcessSpawn     = "process-spawn"
	RuleEnvProbe         = "env-probe"
	RuleConsoleOutput    = "console-output"
	RuleRawSyscall       = "raw-syscall"
	RuleVerdictText      = "verdict-text"
	RuleDynamicCode      = "dynamic-code"

	// Changes to which tests run or how they build.
	RuleGoMod           = "go-mod"
	RuleGoSum           = "go-sum"
	RuleGoWork          = "go-work"
	RuleVendor          = "vendor"
	RuleBuildConstraint = "build-constraint"
	RuleFileRemoved     = "file-removed"
	RuleJSPackage       = "js-package"
	RulePyConfig        = "py-config"
	RuleGitAttributes   = "git-attributes"
	RulePackedPackage   = "packed-package"

	// A reproduction test that checks the code's bytes or surroundings
	// instead of its behaviour (reads-sources and env-probe apply too).
	RuleHashesFiles = "hashes-files"
	RuleClock       = "clock"
	RuleRandomness  = "randomness"
	RuleNetwork     = "network"
	RuleNoAssertion = "no-assertion"
)

// Rule describes one rule for the docs and the approval card. Severity is
// the most a finding under the rule weighs; where some of its findings
// weigh less, Description says when.
type Rule struct {
	Name        string `json:"name"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
}

var rules = []Rule{
	{RuleUnparsableGo, Refuse, "A candidate's Go file does not parse, so it cannot be judged by reading it (a proposed test that does not parse is only flagged)."},
	{RuleExitInLibrary, Refuse, "Code ends or signals the process (os.Exit, syscall.Exit, syscall.Kill, runtime.Goexit, runtime.Breakpoint, raw exit syscalls or ones by number, process.exit, sys.exit, pytest.exit, an exit or beforeExit listener in JavaScript), in non-test code or in a test file the candidate changed; only flagged inside func main of package main."},
	{RuleStdoutWrite, Refuse, "Non-test code writes the process's standard output or error directly, or reaches or reconfigures the standard logger (fmt.Print*, print builtins, os.Stdout, os.NewFile, syscall.Write, Dup2 and Close of descriptors 0-2, log.SetOutput, log.Default, log.Writer, debug.PrintStack, /dev/stdout, /dev/fd, process.stdout, sys.stdout, replacing or wrapping a stream's write method, fs.write and fs.writeSync), which is where the test runner reports verdicts."},
	{RuleLinkname, Refuse, "A //go:linkname directive, in any Go file, reaches into another package's unexported symbols, such as the testing runtime's."},
	{RuleUnsafeNew, Refuse, "A Go file imports unsafe that did not import it on base."},
	{RuleCgo, Refuse, "A Go file imports \"C\" that did not on base: code the checks cannot read."},
	{RuleAssembly, Refuse, "A .s or .syso file changes, or a Go function without a body is added, or a compiled file (.pyc, .pyo, __pycache__/, .so, .pyd, .dylib, .dll, .egg, .whl, .zip, .node) outside testdata is added or changed: compiled code the checks cannot read."},
	{RuleTestingInLibrary, Refuse, "Non-test code detects or reaches into the test framework (testing import, testing.Testing, TestMain, os.Args, os.Executable, the flag package's command line, flag.ExitOnError, go test flags, stack traces, callers' names and pprof's goroutine profile, debug.ReadBuildInfo, executable parsers in debug/*, /proc and its self/exe, cmdline and maps, a process id with /proc, node:test, jest's globals, process.argv, process.binding, v8, inspector, pytest, sys.argv, inspect.stack, sys._getframe); in JavaScript also writing a member of an assertion module (node:assert, assert/strict, chai, expect, node:test) or, in a file that loads one, Object.defineProperty, Object.setPrototypeOf and Reflect, and hooking the module system (node:module, Module._load, require.cache); a computed key on or an alias of process or the global object; in Python any mention of pytest, _pytest, pluggy or unittest, string literals included, and gc, inspect, ctypes, __subclasses__, __globals__, frames and tracebacks, globals(), vars(), a __dict__ other than self's or cls's, and __dict__ indexing or writes."},
	{RuleDynamicCode, Refuse, "Non-test code runs or loads what the diff does not show: eval, new Function, node:vm, a require or import of anything but one string literal, or of a relative path the checks do not read as JavaScript (another extension, or an extensionless path where the candidate changed such a file); process.getBuiltinModule; importlib, __import__, builtins, exec, eval, compile, sys.modules, and getattr, setattr or delattr of anything but one string literal in Python."},
	{RuleTestMain, Refuse, "A test file gains a TestMain, which decides whether the tests run at all."},
	{RuleReadsSources, Refuse, "Code reads the tests' or its own sources (\"_test.go\" or \"*.go\" patterns, testdata, runtime.Caller with file reads, go/parser.ParseDir, //go:embed of .go files); a directory listing without such a pattern, a bare Go file name, runtime.Caller alone, and any finding in a reproduction test (which includes reading any file but a constant under testdata/) are only flagged."},
	{RuleInitSideEffects, Refuse, "A new or changed init calls into os, syscall, fmt, io, log, runtime, reflect, unsafe, net or os/exec, starts a goroutine, or reaches a refused use directly or through the package's functions and methods (as does a new package-level initializer); any other new or changed init is only flagged."},
	{RuleProcessSpawn, Refuse, "Non-test code starts processes (os/exec, os.StartProcess, syscall.Exec, child_process, subprocess)."},
	{RuleRawSyscall, Refuse, "Non-test code makes a raw system call whose trap is a name other than a known exit or write (syscall.Syscall*, RawSyscall*, unix.Syscall*, a Windows DLL's procedures): the checks cannot tell what it does, whatever the constant is called."},
	{RuleVerdictText, Refuse, "Non-test Go code has a string that reads as the test runner's own output (a line starting --- PASS:, --- FAIL:, === RUN, or PASS): a fix never writes verdicts."},
	{RuleEnvProbe, Refuse, "Code reads its surroundings (any environment variable, the whole environment, host name, working directory, home, user or process id in a candidate; also the platform in a reproduction test), which is only flagged; non-test code that compares them with the verifier's sandbox (/tmp, /src, sandbox, 65534, nobody) is refused."},
	{RuleConsoleOutput, Flag, "Non-test code logs to the console (console.log, print, the standard log and slog packages)."},
	{RuleGoMod, BuildChange, "A go.mod is added, removed or changed; the detail names each require, replace, exclude, retract, go, toolchain, module, godebug, tool or ignore directive that changed."},
	{RuleGoSum, BuildChange, "A go.sum changes while its go.mod does not."},
	{RuleGoWork, BuildChange, "A go.work or go.work.sum is added, changed or removed."},
	{RuleVendor, BuildChange, "Files under a vendor/ directory change."},
	{RuleBuildConstraint, BuildChange, "A Go file's //go:build (or // +build) line is added, changed or removed, which changes where it builds."},
	{RuleFileRemoved, Flag, "A candidate deletes a Go file."},
	{RuleJSPackage, BuildChange, "package.json changes scripts, test-runner settings, module settings or dependencies; a JavaScript test, build or TypeScript config, .npmrc, lockfile or node_modules changes."},
	{RulePyConfig, BuildChange, "A Python test or packaging config changes (pytest.ini, tox.ini, setup.cfg, pyproject.toml, setup.py, noxfile.py, conftest.py, sitecustomize.py, usercustomize.py, *.pth); the detail names the sections that changed, pytest's first."},
	{RulePackedPackage, BuildChange, "A packed package (.tgz, .tar.gz, .whl) outside testdata is added or changed: what it installs cannot be read from the diff."},
	{RuleGitAttributes, BuildChange, "A .gitattributes file is added, changed or removed anywhere: its filters, encodings and line endings decide what the frozen tests and their data are when they are checked out."},
	{RuleHashesFiles, Flag, "A reproduction test hashes (crypto/*, hash/*, hashlib, createHash): it checks bytes, not behaviour."},
	{RuleClock, Flag, "A reproduction test reads the clock (time.Now, time.Since, Date.now, time.time): its result depends on when it runs."},
	{RuleRandomness, Flag, "A reproduction test uses unseeded or cryptographic randomness: its result depends on the draw."},
	{RuleNetwork, Flag, "A reproduction test reaches the network (net, net/http outside httptest, fetch, requests, sockets)."},
	{RuleNoAssertion, Flag, "A reproduction test function asserts nothing: no call on its *testing.T and no helper given it (no expect/assert in JavaScript, no assert in Python)."},
}

// Rules lists every rule with its severity and a one-line description, in
// a fixed order: counterfeiting, build changes, reproduction.
func Rules() []Rule {
	return append([]Rule(nil), rules...)
}
