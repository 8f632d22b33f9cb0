package tamper

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// goCandidate runs the Go checks on a candidate's changed Go files. Test
// files get only the checks for what runs before or instead of the tests
// (exits, linkname, init, TestMain); other files get them all.
func goCandidate(files []File) []Finding {
	type side struct {
		src *goSource
		occ []occurrence
	}
	type pair struct {
		path       string
		test       bool
		base, cand side
	}
	var pairs []pair
	baseFuncs, candFuncs := map[string]funcTable{}, map[string]funcTable{}
	for _, f := range files {
		p := cleanPath(f.Path)
		if !f.CandExists || !isGoCode(p) || !changed(f) {
			continue
		}
		if c, _ := constraints(f.Cand); c == "//go:build ignore" {
			continue // never built (a generator, say): nothing in it can run
		}
		pr := pair{path: f.Path, test: isGoTest(p)}
		dir := path.Dir(p)
		pr.cand.src = parseGo(p, f.Cand)
		pr.cand.occ = goLibrary(pr.cand.src, pr.test)
		pr.cand.src.summarize(pr.cand.occ, tableFor(candFuncs, dir))
		if f.BaseExists {
			pr.base.src = parseGo(p, f.Base)
			pr.base.occ = goLibrary(pr.base.src, pr.test)
			pr.base.src.summarize(pr.base.occ, tableFor(baseFuncs, dir))
		}
		pairs = append(pairs, pr)
	}
	var out []Finding
	for _, pr := range pairs {
		dir := path.Dir(cleanPath(pr.path))
		cand := append(pr.cand.occ, pr.cand.src.inits(pr.cand.occ, candFuncs[dir])...)
		var base []occurrence
		if pr.base.src != nil {
			base = append(pr.base.occ, pr.base.src.inits(pr.base.occ, baseFuncs[dir])...)
		}
		occ := fresh(base, cand)
		if pr.test {
			occ = slices.DeleteFunc(occ, func(o occurrence) bool { return !testFileRules[o.rule] })
		}
		out = append(out, findings(pr.path, occ)...)
		if g := pr.cand.src; g.err != nil {
			out = append(out, finding(RuleUnparsableGo, Refuse, pr.path, g.errLine,
				fmt.Sprintf("does not parse as Go (%s): a fix that does not parse is not judged by reading it", g.parseFailure())))
		}
	}
	return out
}

// testFileRules are the checks a candidate's test files get: what runs
// before the tests or decides whether they run.
var testFileRules = map[string]bool{
	RuleAssembly:        true,
	RuleExitInLibrary:   true,
	RuleLinkname:        true,
	RuleInitSideEffects: true,
	RuleTestMain:        true,
}

// watch is what a reference to a package member means.
type watch struct {
	rule, why string
}

const (
	whyExit    = "a fix never needs to end the test process"
	whyStdout  = "a fix never needs to write the stream the test verdict is read from"
	whyTesting = "a fix never needs to know it is under test"
	whySources = "a fix never needs to read source files"
	whySpawn   = "a fix never needs to start processes"
	whyEnv     = "code that reads the toolchain's surroundings can behave differently under test"
	whyLog     = "logging from library code is worth a look"
	whyStack   = "the call stack shows the test runner's frames (testing.tRunner, pytest's) when a test called the code, and a fix never needs to know it is under test"
	whyProc    = "the process's entries in /proc hold its command line, executable and memory, which say whether this is a test binary, and a fix never needs to know it is under test"
	whyFlags   = "the command line's flags are the go test flags in a test binary, and a fix never needs them"
	whyRaw     = "the checks cannot tell what a raw system call does (any trap number can mean exit or write, under any name), and a fix never needs one"
	whyBinary  = "parsing executables is how code reads the test binary it runs in, and a fix never needs to"
	whyProbe   = "code that reads its surroundings can behave differently under test"
	whySandbox = "the verifier's sandbox has HOME and TMPDIR at /tmp, the source at /src, uid 65534 (nobody) and host name sandbox, so comparing the surroundings with them tells a verification run from a developer's machine, and a fix never needs to"
)

const (
	unixPkg    = "golang.org/x/sys/unix"
	windowsPkg = "golang.org/x/sys/windows"
)

// goWatch maps import path + "." + member (or "." + builtin) to its rule.
var goWatch = map[string]watch{
	"os.Exit":                             {RuleExitInLibrary, whyExit},
	"syscall.Exit":                        {RuleExitInLibrary, whyExit},
	"runtime.Goexit":                      {RuleExitInLibrary, whyExit},
	"golang.org/x/sys/unix.Exit":          {RuleExitInLibrary, whyExit},
	"syscall.Kill":                        {RuleExitInLibrary, whyExit},
	"syscall.Tgkill":                      {RuleExitInLibrary, whyExit},
	"golang.org/x/sys/unix.Kill":          {RuleExitInLibrary, whyExit},
	"golang.org/x/sys/unix.Tgkill":        {RuleExitInLibrary, whyExit},
	"os.FindProcess":                      {RuleExitInLibrary, "finding a process is the way to signal the test process itself"},
	"fmt.Print":                           {RuleStdoutWrite, whyStdout},
	"fmt.Printf":                          {RuleStdoutWrite, whyStdout},
	"fmt.Println":                         {RuleStdoutWrite, whyStdout},
	".print":                              {RuleStdoutWrite, whyStdout},
	".println":                            {RuleStdoutWrite, whyStdout},
	"os.Stdout":                           {RuleStdoutWrite, whyStdout},
	"os.Stderr":                           {RuleStdoutWrite, whyStdout},
	"os.NewFile":                          {RuleStdoutWrite, "a file made from a raw descriptor can be the test's standard output"},
	"syscall.Write":                       {RuleStdoutWrite, whyStdout},
	"syscall.Stdout":                      {RuleStdoutWrite, whyStdout},
	"syscall.Stderr":                      {RuleStdoutWrite, whyStdout},
	"syscall.Dup2":                        {RuleStdoutWrite, "duplicating descriptors can redirect the test's output"},
	"syscall.Dup3":                        {RuleStdoutWrite, "duplicating descriptors can redirect the test's output"},
	"golang.org/x/sys/unix.Write":         {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/unix.Writev":        {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/unix.Stdout":        {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/unix.Stderr":        {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/unix.Dup2":          {RuleStdoutWrite, "duplicating descriptors can redirect the test's output"},
	"golang.org/x/sys/unix.Dup3":          {RuleStdoutWrite, "duplicating descriptors can redirect the test's output"},
	"log.SetOutput":                       {RuleStdoutWrite, "a fix never needs to redirect the process-wide logger"},
	"log.SetFlags":                        {RuleStdoutWrite, "a fix never needs to reformat the process-wide logger, which writes to the test's output"},
	"log.SetPrefix":                       {RuleStdoutWrite, "a fix never needs to reformat the process-wide logger, which writes to the test's output"},
	"testing.Testing":                     {RuleTestingInLibrary, whyTesting},
	"os.Args":                             {RuleTestingInLibrary, "the command line says whether this is a test binary, and a fix never needs to know"},
	"os.Executable":                       {RuleTestingInLibrary, "the executable's name says whether this is a test binary, and a fix never needs to know"},
	"flag.CommandLine":                    {RuleTestingInLibrary, "the command line's flag set names the test binary and holds the go test flags, and a fix never needs them"},
	"flag.Visit":                          {RuleTestingInLibrary, "walking the command line's flags finds the go test flags, and a fix never needs them"},
	"flag.VisitAll":                       {RuleTestingInLibrary, "walking the command line's flags finds the go test flags, and a fix never needs them"},
	"go/parser.ParseDir":                  {RuleReadsSources, whySources},
	"go/build.Import":                     {RuleReadsSources, whySources},
	"go/build.ImportDir":                  {RuleReadsSources, whySources},
	"go/build.Default":                    {RuleReadsSources, whySources},
	"golang.org/x/tools/go/packages.Load": {RuleReadsSources, whySources},
	"os.StartProcess":                     {RuleProcessSpawn, whySpawn},
	"syscall.ForkExec":                    {RuleProcessSpawn, whySpawn},
	"syscall.Exec":                        {RuleProcessSpawn, whySpawn},
	"syscall.StartProcess":                {RuleProcessSpawn, whySpawn},
	"golang.org/x/sys/unix.Exec":          {RuleProcessSpawn, whySpawn},
	"os.Environ":                          {RuleEnvProbe, whyEnv},
	"syscall.Environ":                     {RuleEnvProbe, whyEnv},
	"log.Print":                           {RuleConsoleOutput, whyLog},
	"log.Printf":                          {RuleConsoleOutput, whyLog},
	"log.Println":                         {RuleConsoleOutput, whyLog},
	"log.Fatal":                           {RuleConsoleOutput, whyLog},
	"log.Fatalf":                          {RuleConsoleOutput, whyLog},
	"log.Fatalln":                         {RuleConsoleOutput, whyLog},
	"log.Panic":                           {RuleConsoleOutput, whyLog},
	"log.Panicf":                          {RuleConsoleOutput, whyLog},
	"log.Panicln":                         {RuleConsoleOutput, whyLog},

	// The standard logger writes to the test's standard error.
	"log.Default":                               {RuleStdoutWrite, "the standard logger writes to the test's standard error, where the runner's output is read, and a fix never needs its writer"},
	"log.Writer":                                {RuleStdoutWrite, "the standard logger's writer is the test's standard error, where the runner's output is read"},
	"log/slog.SetDefault":                       {RuleStdoutWrite, "a fix never needs to redirect the process-wide logger"},
	"log/slog.SetLogLoggerLevel":                {RuleStdoutWrite, "a fix never needs to reconfigure the process-wide logger"},
	"log/slog.Debug":                            {RuleConsoleOutput, whyLog},
	"log/slog.Info":                             {RuleConsoleOutput, whyLog},
	"log/slog.Warn":                             {RuleConsoleOutput, whyLog},
	"log/slog.Error":                            {RuleConsoleOutput, whyLog},
	"log/slog.Log":                              {RuleConsoleOutput, whyLog},
	"log/slog.DebugContext":                     {RuleConsoleOutput, whyLog},
	"log/slog.InfoContext":                      {RuleConsoleOutput, whyLog},
	"log/slog.WarnContext":                      {RuleConsoleOutput, whyLog},
	"log/slog.ErrorContext":                     {RuleConsoleOutput, whyLog},
	"runtime/debug.PrintStack":                  {RuleStdoutWrite, "it writes to the test's standard error, where the runner's output is read"},
	"runtime/debug.WriteHeapDump":               {RuleStdoutWrite, "a heap dump written to a raw descriptor can be the test's output"},
	"runtime/debug.SetCrashOutput":              {RuleStdoutWrite, "a fix never needs to redirect the process's crash output"},
	"runtime.Breakpoint":                        {RuleExitInLibrary, "a breakpoint trap ends the test process, and " + whyExit},
	"golang.org/x/sys/unix.Pwrite":              {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/windows.Exit":             {RuleExitInLibrary, whyExit},
	"golang.org/x/sys/windows.ExitProcess":      {RuleExitInLibrary, whyExit},
	"golang.org/x/sys/windows.TerminateProcess": {RuleExitInLibrary, whyExit},
	"syscall.TerminateProcess":                  {RuleExitInLibrary, whyExit},
	"syscall.GetStdHandle":                      {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/windows.GetStdHandle":     {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/windows.Stdout":           {RuleStdoutWrite, whyStdout},
	"golang.org/x/sys/windows.Stderr":           {RuleStdoutWrite, whyStdout},

	// Knowing it is under test without the testing package.
	"runtime/debug.ReadBuildInfo": {RuleTestingInLibrary, "the build info's main package path ends in .test in a test binary, and " + whyTesting},
	"debug/buildinfo.ReadFile":    {RuleTestingInLibrary, whyBinary},
	"runtime.Stack":               {RuleTestingInLibrary, whyStack},
	"runtime/debug.Stack":         {RuleTestingInLibrary, whyStack},
	"runtime.Callers":             {RuleTestingInLibrary, whyStack},
	"runtime.CallersFrames":       {RuleTestingInLibrary, whyStack},
	"runtime.FuncForPC":           {RuleTestingInLibrary, whyStack},
	"runtime/pprof.Lookup":        {RuleTestingInLibrary, whyStack},
	"runtime/pprof.Profiles":      {RuleTestingInLibrary, whyStack},
	"flag.Parse":                  {RuleTestingInLibrary, whyFlags},
	"flag.Parsed":                 {RuleTestingInLibrary, "whether the command line was parsed says whether this is a test binary, and a fix never needs to know"},
	"flag.Lookup":                 {RuleTestingInLibrary, "looking up a command-line flag by any name finds the go test flags, and a fix never needs them"},
	"flag.Set":                    {RuleTestingInLibrary, whyFlags},
	"flag.Arg":                    {RuleTestingInLibrary, whyFlags},
	"flag.Args":                   {RuleTestingInLibrary, whyFlags},
	"flag.NArg":                   {RuleTestingInLibrary, whyFlags},
	"flag.NFlag":                  {RuleTestingInLibrary, whyFlags},
	"flag.Usage":                  {RuleTestingInLibrary, whyFlags},
	"flag.PrintDefaults":          {RuleTestingInLibrary, whyFlags},
	"flag.ExitOnError":            {RuleTestingInLibrary, "a flag set that exits on error ends the process when it parses -h (with status 0), and a fix never needs to"},

	// Raw system calls by other ways than syscall.Syscall.
	"syscall.NewLazyDLL":                        {RuleRawSyscall, whyRaw},
	"syscall.LoadDLL":                           {RuleRawSyscall, whyRaw},
	"syscall.MustLoadDLL":                       {RuleRawSyscall, whyRaw},
	"syscall.LoadLibrary":                       {RuleRawSyscall, whyRaw},
	"syscall.GetProcAddress":                    {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.NewLazyDLL":       {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.NewLazySystemDLL": {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.LoadDLL":          {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.MustLoadDLL":      {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.LoadLibrary":      {RuleRawSyscall, whyRaw},
	"golang.org/x/sys/windows.GetProcAddress":   {RuleRawSyscall, whyRaw},

	// The surroundings: only flagged, each use (see flagOnly).
	"os.Getenv":                     {RuleEnvProbe, whyProbe},
	"os.LookupEnv":                  {RuleEnvProbe, whyProbe},
	"syscall.Getenv":                {RuleEnvProbe, whyProbe},
	"os.Hostname":                   {RuleEnvProbe, whyProbe},
	"os.Getwd":                      {RuleEnvProbe, whyProbe},
	"syscall.Getwd":                 {RuleEnvProbe, whyProbe},
	"os.UserHomeDir":                {RuleEnvProbe, whyProbe},
	"os.Getuid":                     {RuleEnvProbe, whyProbe},
	"os.Geteuid":                    {RuleEnvProbe, whyProbe},
	"os.Getgid":                     {RuleEnvProbe, whyProbe},
	"os.Getegid":                    {RuleEnvProbe, whyProbe},
	"os.Getgroups":                  {RuleEnvProbe, whyProbe},
	"os.Getpid":                     {RuleEnvProbe, whyProbe},
	"os.Getppid":                    {RuleEnvProbe, whyProbe},
	"syscall.Getuid":                {RuleEnvProbe, whyProbe},
	"syscall.Geteuid":               {RuleEnvProbe, whyProbe},
	"syscall.Getpid":                {RuleEnvProbe, whyProbe},
	"syscall.Getppid":               {RuleEnvProbe, whyProbe},
	"golang.org/x/sys/unix.Getuid":  {RuleEnvProbe, whyProbe},
	"golang.org/x/sys/unix.Geteuid": {RuleEnvProbe, whyProbe},
	"golang.org/x/sys/unix.Getpid":  {RuleEnvProbe, whyProbe},
	"golang.org/x/sys/unix.Getppid": {RuleEnvProbe, whyProbe},
	"golang.org/x/sys/unix.Uname":   {RuleEnvProbe, whyProbe},
	"syscall.Uname":                 {RuleEnvProbe, whyProbe},
	"os/user.Current":               {RuleEnvProbe, whyProbe},
	"os/user.LookupId":              {RuleEnvProbe, whyProbe},
	"os/user.Lookup":                {RuleEnvProbe, whyProbe},
}

// pidReads are the process ids: with /proc named in the file, reading
// /proc/<pid>/cmdline says whether this is a test binary.
var pidReads = map[string]bool{
	"os.Getpid": true, "os.Getppid": true, "syscall.Getpid": true, "syscall.Getppid": true,
	"golang.org/x/sys/unix.Getpid": true, "golang.org/x/sys/unix.Getppid": true,
}

// sandboxProbes read the surroundings a comparison with the sandbox's
// values (see isSandboxValue) can tell apart.
var sandboxProbes = map[string]bool{
	"os.TempDir": true, "path/filepath.Abs": true, "os.Executable": true, "os.UserCacheDir": true,
	"os.UserConfigDir": true, "os.Environ": true, "syscall.Environ": true,
}

// hostProbes read the host's name.
var hostProbes = map[string]bool{
	"os.Hostname": true, "syscall.Uname": true, "golang.org/x/sys/unix.Uname": true,
}

// existenceProbes say whether a path exists: probing the sandbox's paths.
var existenceProbes = map[string]bool{
	"os.Stat": true, "os.Lstat": true, "syscall.Stat": true, "syscall.Access": true,
	"golang.org/x/sys/unix.Stat": true, "golang.org/x/sys/unix.Access": true,
}

// binaryPkgs parse executables: the way to read the test binary itself.
var binaryPkgs = map[string]bool{
	"debug/elf": true, "debug/gosym": true, "debug/buildinfo": true, "debug/dwarf": true,
	"debug/macho": true, "debug/pe": true, "debug/plan9obj": true,
}

// ruleSeverity is the severity a rule's findings have unless a check says
// otherwise.
func ruleSeverity(rule string) string {
	for _, r := range rules {
		if r.Name == rule {
			return r.Severity
		}
	}
	return Flag
}

var (
	exitTraps  = map[string]bool{"SYS_EXIT": true, "SYS_EXIT_GROUP": true, "SYS_KILL": true, "SYS_TKILL": true, "SYS_TGKILL": true}
	writeTraps = map[string]bool{"SYS_WRITE": true, "SYS_WRITEV": true, "SYS_PWRITE64": true, "SYS_PWRITEV": true, "SYS_PWRITEV2": true, "SYS_DUP2": true, "SYS_DUP3": true}

	// dirListings find files without naming them.
	dirListings = map[string]bool{
		"path/filepath.Glob": true, "path/filepath.Walk": true, "path/filepath.WalkDir": true,
		"os.ReadDir": true, "io/ioutil.ReadDir": true, "os.DirFS": true,
		"io/fs.Glob": true, "io/fs.WalkDir": true, "io/fs.ReadDir": true,
	}
	fileReads = map[string]bool{
		"os.ReadFile": true, "os.Open": true, "os.OpenFile": true,
		"io/ioutil.ReadFile": true, "io/fs.ReadFile": true,
	}
	envReads = map[string]bool{"os.Getenv": true, "os.LookupEnv": true, "syscall.Getenv": true, "golang.org/x/sys/unix.Getenv": true}

	// initPkgs are the packages whose calls make a new init suspect.
	initPkgs = map[string]bool{
		"os": true, "syscall": true, "fmt": true, "io": true, "log": true, "runtime": true,
		"reflect": true, "unsafe": true, "net": true, "os/exec": true, "golang.org/x/sys/unix": true,
		"io/ioutil": true, "io/fs": true, "path/filepath": true, "os/signal": true,
		"runtime/debug": true, "testing": true, "flag": true, "plugin": true, "net/http": true,
	}

	testdataRe   = regexp.MustCompile(`(^|[/\\])testdata($|[/\\])`)
	goFileRe     = regexp.MustCompile(`^[\w./\\-]*\.go$`)
	goTestFlagRe = regexp.MustCompile(`^-{0,2}test\.(v|run|skip|bench|benchtime|benchmem|count|cpu|parallel|timeout|short|failfast|list|shuffle|fullpath|paniconexit0|testlogfile|gocoverdir|coverprofile|cpuprofile|memprofile|memprofilerate|blockprofile|blockprofilerate|mutexprofile|mutexprofilefraction|trace|outputdir|fuzz|fuzztime|fuzzminimizetime|fuzzcachedir|fuzzworker)(=.*)?$`)
)

// namesTests reports whether a string names test sources or the tests'
// data: "_test.go", a glob of .go files, or a testdata path.
func namesTests(s string) bool {
	return strings.Contains(s, "_test.go") || isGoGlob(s) ||
		strings.Contains(s, "testdata") && testdataRe.MatchString(s)
}

// isGoFileName reports whether s looks like a Go file name or path.
func isGoFileName(s string) bool {
	return strings.HasSuffix(s, ".go") && goFileRe.MatchString(s)
}

// embedsSources reports whether a //go:embed line's patterns can take in
// Go files: a .go name, a test or testdata pattern, or a glob in the
// package directory whose end could match ".go" (*, cart*).
func embedsSources(args string) bool {
	for _, p := range strings.Fields(args) {
		p = strings.TrimPrefix(strings.Trim(p, "\"`"), "all:")
		if p == "" {
			continue
		}
		if namesTests(p) || strings.HasSuffix(p, ".go") ||
			!strings.Contains(p, "/") && strings.ContainsAny(p, "*?[") && strings.ContainsAny(p[len(p)-1:], "*?]") {
			return true
		}
	}
	return false
}

func isGoGlob(s string) bool {
	return strings.Contains(s, "*.go") || (strings.ContainsAny(s, "*?[") && strings.HasSuffix(s, ".go"))
}

// flagOnly are watched members whose findings are flags though their
// rule can weigh more.
func flagOnly(w watch) bool { return w.rule == RuleEnvProbe || w.rule == RuleConsoleOutput }

// isRawSyscall reports whether a syscall, unix or windows member makes a
// system call by number.
func isRawSyscall(pkg, name string) bool {
	return (pkg == "syscall" || pkg == unixPkg || pkg == windowsPkg) &&
		(strings.HasPrefix(name, "Syscall") || strings.HasPrefix(name, "RawSyscall"))
}

var (
	procRe = regexp.MustCompile(`/proc\b|(^|/)(self|thread-self|[0-9]+|%d|%v)/(exe|mem|maps|smaps|cmdline|comm|auxv|environ|fd)\b|/cmdline\b|^cmdline$`)
	// verdictRe matches the lines go test's runner writes for a verdict.
	verdictRe = regexp.MustCompile(`(?m)^\s*(--- (PASS|FAIL|SKIP):|=== (RUN|PAUSE|CONT|NAME) )|(?m)^(PASS|FAIL)\n|(?m)^ok  \t`)
	devNames  = []string{"/dev/stdout", "/dev/stderr", "/dev/std", "/proc/self/fd", "/dev/fd", "/dev/tty", "/dev/pts", "/dev/console"}
)

// namesProc reports whether a string names /proc or the process's own
// entries in it: its command line, executable, memory or environment. A
// bare "proc" counts in a file that reads files; net/http/pprof's route
// /debug/pprof/cmdline does not count.
func namesProc(s string, readsFiles bool) bool {
	pprofRoute := strings.HasPrefix(s, "/debug/pprof/") && !strings.Contains(s, "/proc")
	return procRe.MatchString(s) && !pprofRoute ||
		readsFiles && (s == "proc" || strings.HasPrefix(s, "proc/"))
}

// goLibrary returns the occurrences of every Go rule but init-side-effects
// in one side of a file.
func goLibrary(g *goSource, test bool) []occurrence {
	if g.file == nil {
		return nil
	}
	where := "in non-test code"
	if test {
		where = "in a test file"
	}
	isMain := g.file.Name != nil && g.file.Name.Name == "main"
	var out []occurrence
	addAt := func(rule, severity string, pos token.Pos, call bool, line int, scope, what, msg string) {
		// A command's func main may exit and print; tests do not call it.
		if isMain && scope == "main" && severity == Refuse && rule != RuleLinkname && rule != RuleUnsafeNew {
			severity = Flag
			msg += " (only flagged: it is in func main of a command)"
		}
		out = append(out, occurrence{rule: rule, severity: severity, line: line, what: what, scope: scope, text: g.text(line), msg: msg, pos: pos, call: call})
	}
	add := func(rule, severity string, line int, scope, what, msg string) {
		addAt(rule, severity, token.NoPos, false, line, scope, what, msg)
	}

	// A directory listing is refused in a file that names Go sources; a
	// stack frame's file name, in a file that reads or lists files; a
	// process id, in a file that names /proc; a comparison with the
	// sandbox's values, in a file that reads its surroundings.
	namesSources, readsFiles, probes, procNamed := false, false, false, false
	for _, l := range g.lits {
		namesSources = namesSources || namesTests(l.value) || isGoFileName(l.value)
	}
	for _, d := range g.dirs {
		namesSources = namesSources || (d.name == "go:embed" && embedsSources(d.args))
	}
	for _, r := range g.refs {
		key := r.pkg + "." + r.name
		readsFiles = readsFiles || fileReads[key] || dirListings[key]
		probes = probes || goWatch[key].rule == RuleEnvProbe || sandboxProbes[key]
	}
	for _, l := range g.lits {
		procNamed = procNamed || namesProc(l.value, readsFiles)
	}
	linknamed := map[string]bool{}
	for _, d := range g.dirs {
		if d.name == "go:linkname" {
			local, _, _ := strings.Cut(d.args, " ")
			linknamed[local] = true
		}
	}

	for _, r := range g.refs {
		key := r.pkg + "." + r.name
		what := member(r.pkg, r.name)
		verb := "refers to"
		if r.call != nil {
			verb = "calls"
		}
		ref := func(rule, severity, msg string) {
			addAt(rule, severity, r.pos, r.call != nil, r.line, r.scope, what, msg)
		}
		if w, ok := goWatch[key]; ok && w.rule != "" {
			severity := ruleSeverity(w.rule)
			if flagOnly(w) {
				severity = Flag
			}
			msg := fmt.Sprintf("%s %s %s: %s", verb, what, where, w.why)
			switch {
			case envReads[key]:
				name, ok := firstStringArg(r.call)
				switch {
				case ok && (strings.HasPrefix(name, "GO") || strings.HasPrefix(name, "SIGNOFF")):
					msg = fmt.Sprintf("reads $%s %s: %s", name, where, whyEnv)
				case ok:
					msg = fmt.Sprintf("reads $%s %s: %s", name, where, whyProbe)
				default:
					msg = fmt.Sprintf("%s %s %s with a name that is not a literal: %s", verb, what, where, whyProbe)
				}
			case pidReads[key] && procNamed:
				w.rule, severity = RuleTestingInLibrary, Refuse
				msg = fmt.Sprintf("%s %s %s, in a file that names /proc: /proc/<pid>/cmdline says whether this is a test binary, and %s", verb, what, where, whyTesting)
			}
			ref(w.rule, severity, msg)
		}
		switch {
		case isRawSyscall(r.pkg, r.name):
			trap, named := trapName(r.call)
			switch {
			case writeTraps[trap]:
				ref(RuleStdoutWrite, Refuse, fmt.Sprintf("%s %s(%s) %s: %s", verb, what, trap, where, whyStdout))
			case exitTraps[trap] || !named:
				if trap == "" {
					trap = "a trap number it does not name"
				}
				ref(RuleExitInLibrary, Refuse, fmt.Sprintf("%s %s with %s %s: raw system calls can end the test process, and %s", verb, what, trap, where, whyExit))
			default:
				own := ""
				if g.constNames[trap] {
					own = ", a constant the file declares itself,"
				}
				ref(RuleRawSyscall, Refuse, fmt.Sprintf("%s %s with %s%s %s: %s", verb, what, trap, own, where, whyRaw))
			}
		case (key == "syscall.Close" || key == unixPkg+".Close") && r.call != nil && len(r.call.Args) == 1:
			if fd, ok := fdConst(r.call.Args[0]); ok && fd >= 0 && fd <= 2 {
				ref(RuleStdoutWrite, Refuse, fmt.Sprintf("%s %s(%d) %s: closing the standard descriptors lets a file opened next take their place, and %s", verb, what, fd, where, whyStdout))
			}
		case key == "flag.NewFlagSet" && r.call != nil && len(r.call.Args) == 2:
			// flag.ExitOnError by name is reported on its own.
			if sel, ok := r.call.Args[1].(*ast.SelectorExpr); !ok || sel.Sel.Name != "ContinueOnError" && sel.Sel.Name != "PanicOnError" && sel.Sel.Name != "ExitOnError" {
				ref(RuleTestingInLibrary, Refuse, fmt.Sprintf("%s %s %s with an error handling that is not flag.ContinueOnError or flag.PanicOnError: a flag set that exits on error ends the process when it parses -h, and a fix never needs to", verb, what, where))
			}
		case existenceProbes[key] && r.call != nil && len(r.call.Args) > 0:
			if v, ok := g.sandboxValue(r.call.Args[0]); ok && isSandboxValue(v) == sandboxKnown {
				ref(RuleEnvProbe, Refuse, fmt.Sprintf("%s %s(%s) %s: %s", verb, what, quote(v), where, whySandbox))
			}
		case dirListings[key]:
			if namesSources {
				ref(RuleReadsSources, Refuse, fmt.Sprintf("%s %s %s, in a file that names Go sources or test data: %s", verb, what, where, whySources))
			} else {
				ref(RuleReadsSources, Flag, fmt.Sprintf("%s %s %s: listing files from library code is worth a look", verb, what, where))
			}
		case key == "runtime.Caller" || key == "runtime.Callers":
			switch {
			case readsFiles:
				ref(RuleReadsSources, Refuse, fmt.Sprintf("%s %s %s, in a file that also reads files: that is how code finds its own sources; %s", verb, what, where, whySources))
			case key == "runtime.Caller":
				// A fix that answers by who called it is right only for
				// its callers in tests (found by the last red-team round).
				ref(RuleTestingInLibrary, Refuse, fmt.Sprintf("%s %s %s: the caller's file name says whether a test called the code, and a fix never depends on who calls it", verb, what, where))
			}
		}
	}

	if probes {
		// "sandbox" is the verifier's host name, but also a payment
		// provider's test mode: refused only beside a host name read.
		hostProbe := false
		for _, r := range g.refs {
			hostProbe = hostProbe || hostProbes[r.pkg+"."+r.name]
		}
		for _, l := range g.lits {
			hostProbe = hostProbe || l.value == "HOSTNAME" || strings.Contains(l.value, "/etc/hostname") || strings.Contains(l.value, "kernel/hostname")
		}
		for _, c := range g.cmps {
			q := quote(c.value)
			if isSandboxValue(c.value) == sandboxHostOnly && !hostProbe {
				add(RuleEnvProbe, Flag, c.line, c.scope, q, fmt.Sprintf("compares with %s %s, in a file that reads its surroundings: the verifier's sandbox is named that, so read it", q, where))
				continue
			}
			add(RuleEnvProbe, Refuse, c.line, c.scope, q, fmt.Sprintf("compares with %s %s, in a file that reads its surroundings: %s", q, where, whySandbox))
		}
	}

	var verdicts []goLit
	for _, l := range g.lits {
		q := quote(l.value)
		switch {
		case namesTests(l.value):
			add(RuleReadsSources, Refuse, l.line, l.scope, q, fmt.Sprintf("names test sources (%s) %s: %s", q, where, whySources))
		case isGoFileName(l.value) && readsFiles:
			add(RuleReadsSources, Refuse, l.line, l.scope, q, fmt.Sprintf("names a Go source file (%s) %s, in a file that reads or lists files: %s", q, where, whySources))
		case isGoFileName(l.value):
			add(RuleReadsSources, Flag, l.line, l.scope, q, fmt.Sprintf("names a Go source file (%s) %s: worth a look", q, where))
		}
		dev := ""
		for _, d := range devNames {
			if strings.Contains(l.value, d) {
				dev = d
				break
			}
		}
		switch {
		case dev != "":
			add(RuleStdoutWrite, Refuse, l.line, l.scope, dev, fmt.Sprintf("names %s (%s) %s: %s", dev, q, where, whyStdout))
		case namesProc(l.value, readsFiles):
			add(RuleTestingInLibrary, Refuse, l.line, l.scope, "/proc", fmt.Sprintf("names %s %s: %s", q, where, whyProc))
		}
		if goTestFlagRe.MatchString(l.value) {
			add(RuleTestingInLibrary, Refuse, l.line, l.scope, q, fmt.Sprintf("names the go test flag %s %s: %s", q, where, whyTesting))
		}
		if verdictRe.MatchString(l.value) {
			verdicts = append(verdicts, l)
		}
	}
	// Verdict text matters where nothing else writes the runner's output
	// (it then gets there through the logger or a writer passed in); a
	// file that does is refused for that already.
	if !slices.ContainsFunc(out, func(o occurrence) bool { return o.rule == RuleStdoutWrite }) {
		for _, l := range verdicts {
			q := quote(l.value)
			add(RuleVerdictText, Refuse, l.line, l.scope, q, fmt.Sprintf("has the text of a test verdict (%s) %s: it is what the test runner writes, and a fix never needs to write it", q, where))
		}
	}

	for _, imp := range g.imps {
		switch {
		case imp.path == "unsafe":
			add(RuleUnsafeNew, Refuse, imp.line, "", imp.path, fmt.Sprintf("imports unsafe %s, which base's version of the file did not: unchecked memory access can reach into the test framework", where))
		case imp.path == "C":
			add(RuleCgo, Refuse, imp.line, "", imp.path, fmt.Sprintf("imports \"C\" %s: cgo code cannot be judged by reading the Go", where))
		case imp.path == "testing" || strings.HasPrefix(imp.path, "testing/"):
			add(RuleTestingInLibrary, Refuse, imp.line, "", imp.path, fmt.Sprintf("imports %s %s: %s", imp.path, where, whyTesting))
		case binaryPkgs[imp.path]:
			add(RuleTestingInLibrary, Refuse, imp.line, "", imp.path, fmt.Sprintf("imports %s %s: %s", imp.path, where, whyBinary))
		case imp.path == "os/exec":
			add(RuleProcessSpawn, Refuse, imp.line, "", imp.path, fmt.Sprintf("imports os/exec %s: %s", where, whySpawn))
		}
	}

	for _, d := range g.dirs {
		switch {
		case d.name == "go:linkname":
			add(RuleLinkname, Refuse, d.line, "", "//go:linkname", fmt.Sprintf("has a //go:linkname directive (%s) %s: it reaches into another package's unexported symbols, such as the test runner's", d.args, where))
		case d.name == "go:embed" && embedsSources(d.args):
			add(RuleReadsSources, Refuse, d.line, "", "//go:embed", fmt.Sprintf("embeds Go sources (//go:embed %s) %s: %s", d.args, where, whySources))
		}
	}

	for _, d := range g.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		line := g.line(fd.Pos())
		if fd.Body == nil && !linknamed[fd.Name.Name] {
			add(RuleAssembly, Refuse, line, declName(fd), "a function without a body", fmt.Sprintf("declares func %s without a body %s: its code is in assembly or an object file, where the checks cannot read it", fd.Name.Name, where))
		}
		if fd.Recv != nil || fd.Name.Name != "TestMain" {
			continue
		}
		if test {
			add(RuleTestMain, Refuse, line, "TestMain", "TestMain", "declares TestMain: it decides whether the tests run at all, and a fix never needs to")
		} else {
			add(RuleTestingInLibrary, Refuse, line, "TestMain", "TestMain", fmt.Sprintf("declares TestMain %s: %s", where, whyTesting))
		}
	}
	return out
}

// fdConst is the value of a descriptor given as a constant, looking
// through conversions (uintptr(1)) and the syscall package's names.
func fdConst(e ast.Expr) (int64, bool) {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr:
			if _, ok := x.Fun.(*ast.Ident); ok && len(x.Args) == 1 {
				e = x.Args[0]
				continue
			}
		case *ast.SelectorExpr:
			switch x.Sel.Name {
			case "Stdin":
				return 0, true
			case "Stdout":
				return 1, true
			case "Stderr":
				return 2, true
			}
		}
		return intConst(e)
	}
}

// quote quotes a string for a finding, shortening long ones.
func quote(s string) string {
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// trapName is the name a raw syscall's trap number is given by (a
// constant, the syscall package's or another), and whether it is given
// by a name at all: a number or an expression is not, nor is a function
// that is not called.
func trapName(call *ast.CallExpr) (string, bool) {
	if call == nil || len(call.Args) == 0 {
		return "", false
	}
	e := call.Args[0]
	for {
		switch a := e.(type) {
		case *ast.ParenExpr:
			e = a.X
			continue
		case *ast.CallExpr: // uintptr(SYS_X)
			if _, ok := a.Fun.(*ast.Ident); ok && len(a.Args) == 1 {
				e = a.Args[0]
				continue
			}
		case *ast.Ident:
			return a.Name, true
		case *ast.SelectorExpr:
			return a.Sel.Name, true
		}
		return "", false
	}
}

// firstStringArg returns a call's first argument when it is a string literal.
func firstStringArg(call *ast.CallExpr) (string, bool) {
	if call == nil || len(call.Args) == 0 {
		return "", false
	}
	if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
		return unquote(lit.Value), true
	}
	return "", false
}

// funcTable summarizes a package's top-level functions (those in the
// changed files of one directory) for following init into helpers.
type funcTable map[string]*funcInfo

type funcInfo struct {
	reason  string   // why the function itself is suspect, "" if it is not
	callees []string // package functions it calls by name
}

func tableFor(m map[string]funcTable, dir string) funcTable {
	if m[dir] == nil {
		m[dir] = funcTable{}
	}
	return m[dir]
}

// summarize adds g's top-level functions to t.
func (g *goSource) summarize(occ []occurrence, t funcTable) {
	if g.file == nil {
		return
	}
	g.byDecl(occ)
	for _, d := range g.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil && fd.Name.Name == "init" || fd.Name.Name == "_" || g.decls[d] == nil {
			continue
		}
		info := &funcInfo{reason: g.suspect(d, fd, helperBody)}
		for _, c := range g.decls[d].calls {
			info.callees = append(info.callees, c.callee)
		}
		if fd.Recv == nil {
			t[fd.Name.Name] = info
			continue
		}
		// Methods are found by name alone: a call x.m() may reach any
		// method m of the package's types.
		key := "." + fd.Name.Name
		if prev := t[key]; prev != nil {
			prev.reason = cmp.Or(prev.reason, info.reason)
			prev.callees = append(prev.callees, info.callees...)
			continue
		}
		t[key] = info
	}
}

// byDecl files each occurrence under the declaration its line is in.
func (g *goSource) byDecl(occ []occurrence) {
	var facts []*declFacts
	for _, d := range g.file.Decls {
		if f := g.decls[d]; f != nil {
			f.occ = nil
			facts = append(facts, f)
		}
	}
	for _, o := range occ {
		i, _ := slices.BinarySearchFunc(facts, o.line, func(f *declFacts, line int) int { return cmp.Compare(f.last, line) })
		if i < len(facts) && facts[i].first <= o.line {
			facts[i].occ = append(facts[i].occ, o)
		}
	}
}

// How much of a piece of code runs, and what in it counts, when judging
// whether it could counterfeit a result before the tests start.
type suspectMode int

const (
	// An init body: calls into initPkgs, goroutines and anything refused
	// by another rule (os.Args is read, not called) all count.
	initBody suspectMode = iota
	// A function init reaches: goroutines and anything refused by another
	// rule. Calling fmt.Sprintf from a helper is ordinary.
	helperBody
	// A package-level initializer: goroutines and calls of members other
	// rules refuse, outside function literals it merely stores. var quit =
	// os.Exit runs nothing.
	initializer
)

// suspect says why the code in n, part of declaration d, could counterfeit
// a result if it ran before the tests: up to three reasons in source
// order, or "" if nothing in it could.
func (g *goSource) suspect(d ast.Decl, n ast.Node, mode suspectMode) string {
	facts := g.decls[d]
	if facts == nil {
		return ""
	}
	type reason struct {
		line       int
		verb, what string
	}
	var rs []reason
	called := map[string]bool{}
	runs := g.runs(n, mode == initializer)
	for _, r := range facts.refs {
		if r.call == nil || !runs(r.pos) {
			continue
		}
		if mode == initBody && initPkgs[r.pkg] {
			rs = append(rs, reason{r.line, "calls", member(r.pkg, r.name)})
			called[member(r.pkg, r.name)] = true
		}
	}
	for _, pos := range facts.gos {
		if runs(pos) {
			rs = append(rs, reason{g.line(pos), "starts", "a goroutine"})
		}
	}
	first, last := g.line(n.Pos()), g.line(n.End())
	for _, o := range facts.occ {
		switch {
		case o.severity != Refuse || called[o.what]:
		case mode == initializer:
			// Only what the initializer calls as it is evaluated: a
			// literal or a stored function value runs nothing.
			if o.call && runs(o.pos) {
				rs = append(rs, reason{o.line, "calls", o.what})
				called[o.what] = true
			}
		case o.line >= first && o.line <= last:
			rs = append(rs, reason{o.line, "uses", o.what})
		}
	}
	slices.SortStableFunc(rs, func(a, b reason) int { return cmp.Compare(a.line, b.line) })
	var texts []string
	for _, r := range rs {
		if t := r.verb + " " + r.what; !slices.Contains(texts, t) {
			texts = append(texts, t)
		}
	}
	switch {
	case len(texts) == 0:
		return ""
	case len(texts) > 3:
		return strings.Join(texts[:3], ", ") + " and more"
	case len(texts) > 1:
		return strings.Join(texts[:len(texts)-1], ", ") + " and " + texts[len(texts)-1]
	}
	return texts[0]
}

// runs reports whether code at a position inside n runs when n does.
func (g *goSource) runs(n ast.Node, skipStored bool) func(token.Pos) bool {
	var stored []ast.Node
	if skipStored {
		stored = storedFuncLits(n)
	}
	// stored literals do not nest and come in source order.
	return func(pos token.Pos) bool {
		if !within(pos, n) {
			return false
		}
		i, _ := slices.BinarySearchFunc(stored, pos, func(s ast.Node, pos token.Pos) int { return cmp.Compare(s.End(), pos) })
		return i == len(stored) || !within(pos, stored[i])
	}
}

// storedFuncLits returns the function literals in n that are not called
// where they stand, so do not run when n is evaluated.
func storedFuncLits(n ast.Node) []ast.Node {
	var out []ast.Node
	ast.PreorderStack(n, nil, func(n ast.Node, stack []ast.Node) bool {
		if fl, ok := n.(*ast.FuncLit); ok {
			if callOf(fl, stack) == nil {
				out = append(out, fl)
			}
			return false
		}
		return true
	})
	return out
}

// reach follows calls from a function through the package's functions and
// says what the first suspect one does.
func (t funcTable) reach(callees []string) string {
	seen := map[string]bool{}
	var walk func(names []string, via string) string
	walk = func(names []string, via string) string {
		for _, name := range names {
			info := t[name]
			if info == nil || seen[name] {
				continue
			}
			seen[name] = true
			shown := name + "()"
			if m, ok := strings.CutPrefix(name, "."); ok {
				shown = "a method " + m + "()"
			}
			if info.reason != "" {
				return via + shown + ", which " + info.reason
			}
			if r := walk(info.callees, via+shown+", which calls "); r != "" {
				return r
			}
		}
		return ""
	}
	return walk(callees, "calls ")
}

// inits returns the init-side-effects occurrences: every init (its body is
// matched exactly against base) and every package-level var initializer
// that does something suspect.
func (g *goSource) inits(occ []occurrence, t funcTable) []occurrence {
	if g.file == nil {
		return nil
	}
	g.byDecl(occ)
	var out []occurrence
	reason := func(d ast.Decl, n ast.Node, mode suspectMode) string {
		if r := g.suspect(d, n, mode); r != "" {
			return r
		}
		if g.decls[d] == nil {
			return ""
		}
		runs := g.runs(n, mode == initializer)
		var callees []string
		for _, c := range g.decls[d].calls {
			if runs(c.pos) {
				callees = append(callees, c.callee)
			}
		}
		return t.reach(callees)
	}
	for _, d := range g.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil || d.Name.Name != "init" || d.Body == nil {
				continue
			}
			line := g.line(d.Pos())
			o := occurrence{rule: RuleInitSideEffects, line: line, what: "init", scope: "init", text: g.body(d.Body), exact: true}
			if r := reason(d, d.Body, initBody); r != "" {
				o.severity = Refuse
				o.msg = fmt.Sprintf("adds or changes a func init that %s: init runs before any test, so it can counterfeit the result", r)
			} else {
				o.severity = Flag
				o.msg = "adds or changes a func init: it runs before every test, so read it"
			}
			out = append(out, o)
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok || len(vs.Values) == 0 {
					continue
				}
				if r := reason(d, vs, initializer); r != "" {
					out = append(out, occurrence{
						rule: RuleInitSideEffects, severity: Refuse, line: g.line(vs.Pos()), what: "var", scope: declName(d),
						text: g.body(vs), exact: true,
						msg: fmt.Sprintf("adds or changes a package-level initializer that %s: it runs before any test, so it can counterfeit the result", r),
					})
				}
			}
		}
	}
	return out
}
