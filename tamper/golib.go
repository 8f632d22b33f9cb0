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
	rawSyscalls = map[string]bool{
		"Syscall": true, "Syscall6": true, "Syscall9": true, "SyscallNoError": true,
		"RawSyscall": true, "RawSyscall6": true, "RawSyscallNoError": true,
	}
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
	envReads = map[string]bool{"os.Getenv": true, "os.LookupEnv": true, "syscall.Getenv": true}

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
	add := func(rule, severity string, line int, scope, what, msg string) {
		// A command's func main may exit and print; tests do not call it.
		if isMain && scope == "main" && severity == Refuse && rule != RuleLinkname && rule != RuleUnsafeNew {
			severity = Flag
			msg += " (only flagged: it is in func main of a command)"
		}
		out = append(out, occurrence{rule: rule, severity: severity, line: line, what: what, scope: scope, text: g.text(line), msg: msg})
	}

	// A directory listing is refused in a file that names Go sources; a
	// stack frame's file name, in a file that reads or lists files.
	namesSources, readsFiles := false, false
	for _, l := range g.lits {
		namesSources = namesSources || namesTests(l.value) || isGoFileName(l.value)
	}
	for _, d := range g.dirs {
		namesSources = namesSources || (d.name == "go:embed" && embedsSources(d.args))
	}
	for _, r := range g.refs {
		readsFiles = readsFiles || fileReads[r.pkg+"."+r.name] || dirListings[r.pkg+"."+r.name]
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
		if w, ok := goWatch[key]; ok && w.rule != "" {
			add(w.rule, ruleSeverity(w.rule), r.line, r.scope, what, fmt.Sprintf("%s %s %s: %s", verb, what, where, w.why))
		}
		switch {
		case (r.pkg == "syscall" || r.pkg == "golang.org/x/sys/unix") && rawSyscalls[r.name]:
			trap := trapName(r.call)
			switch {
			case writeTraps[trap]:
				add(RuleStdoutWrite, Refuse, r.line, r.scope, what, fmt.Sprintf("%s %s(%s) %s: %s", verb, what, trap, where, whyStdout))
			case exitTraps[trap] || !strings.HasPrefix(trap, "SYS_"):
				if trap == "" {
					trap = "a trap number it does not name"
				}
				add(RuleExitInLibrary, Refuse, r.line, r.scope, what, fmt.Sprintf("%s %s with %s %s: raw system calls can end the test process, and %s", verb, what, trap, where, whyExit))
			}
		case envReads[key]:
			if name, ok := firstStringArg(r.call); ok && (strings.HasPrefix(name, "GO") || strings.HasPrefix(name, "SIGNOFF")) {
				add(RuleEnvProbe, Flag, r.line, r.scope, what, fmt.Sprintf("reads $%s %s: %s", name, where, whyEnv))
			}
		case dirListings[key]:
			if namesSources {
				add(RuleReadsSources, Refuse, r.line, r.scope, what, fmt.Sprintf("%s %s %s, in a file that names Go sources or test data: %s", verb, what, where, whySources))
			} else {
				add(RuleReadsSources, Flag, r.line, r.scope, what, fmt.Sprintf("%s %s %s: listing files from library code is worth a look", verb, what, where))
			}
		case key == "runtime.Caller" || key == "runtime.Callers":
			if readsFiles {
				add(RuleReadsSources, Refuse, r.line, r.scope, what, fmt.Sprintf("%s %s %s, in a file that also reads files: that is how code finds its own sources; %s", verb, what, where, whySources))
			}
		}
	}

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
		for _, dev := range []string{"/dev/stdout", "/dev/stderr", "/proc/self/fd", "/dev/fd", "/dev/tty"} {
			if strings.Contains(l.value, dev) {
				add(RuleStdoutWrite, Refuse, l.line, l.scope, dev, fmt.Sprintf("names %s %s: %s", dev, where, whyStdout))
				break
			}
		}
		if strings.Contains(l.value, "/proc/self/exe") || strings.Contains(l.value, "/proc/self/cmdline") {
			add(RuleTestingInLibrary, Refuse, l.line, l.scope, q, fmt.Sprintf("names %s %s: %s", q, where, whyTesting))
		}
		if goTestFlagRe.MatchString(l.value) {
			add(RuleTestingInLibrary, Refuse, l.line, l.scope, q, fmt.Sprintf("names the go test flag %s %s: %s", q, where, whyTesting))
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

// trapName is the SYS_ constant a raw syscall is made with, "" if it is
// not a named constant (or the function is not called).
func trapName(call *ast.CallExpr) string {
	if call == nil || len(call.Args) == 0 {
		return ""
	}
	switch a := call.Args[0].(type) {
	case *ast.Ident:
		return a.Name
	case *ast.SelectorExpr:
		return a.Sel.Name
	}
	return ""
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
		if !ok || fd.Recv != nil || fd.Name.Name == "init" || fd.Name.Name == "_" || g.decls[d] == nil {
			continue
		}
		info := &funcInfo{reason: g.suspect(d, fd, helperBody)}
		for _, c := range g.decls[d].calls {
			info.callees = append(info.callees, c.callee)
		}
		t[fd.Name.Name] = info
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
		w := goWatch[r.pkg+"."+r.name]
		if mode == initBody && initPkgs[r.pkg] ||
			mode == initializer && (w.rule != "" && ruleSeverity(w.rule) == Refuse || rawSyscalls[r.name] && (r.pkg == "syscall" || r.pkg == "golang.org/x/sys/unix")) {
			rs = append(rs, reason{r.line, "calls", member(r.pkg, r.name)})
			called[member(r.pkg, r.name)] = true
		}
	}
	for _, pos := range facts.gos {
		if runs(pos) {
			rs = append(rs, reason{g.line(pos), "starts", "a goroutine"})
		}
	}
	if mode != initializer {
		first, last := g.line(n.Pos()), g.line(n.End())
		for _, o := range facts.occ {
			if o.severity == Refuse && o.line >= first && o.line <= last && !called[o.what] {
				rs = append(rs, reason{o.line, "uses", o.what})
			}
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
			if info.reason != "" {
				return via + name + "(), which " + info.reason
			}
			if r := walk(info.callees, via+name+"(), which calls "); r != "" {
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
