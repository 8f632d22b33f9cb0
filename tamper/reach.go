package tamper

import (
	"path"
	"slices"
	"strings"
)

// Red team 23 (a3): the names the rules refuse, reached another way. A
// JUnit harness has no witness, so what a library line can reach without
// naming it is refused too: the process and the global object by a
// computed key or an alias, a stream's write method replaced, exit
// listeners, Node's getBuiltinModule (every built-in, by any string),
// descriptor writes, modules in files the checks do not read, and in
// Python the interpreter's own graph (gc, __subclasses__, frames,
// globals) and attributes named at run time.

const (
	whyReach    = "a computed key or an alias of the process or the global object reaches by a name the checks cannot read what they refuse by name (its output streams, exit, the module system), and a fix never needs to"
	whyWrap     = "replacing a stream's write method rewrites what the test runner reports (node --test's child processes report over stdout), and a fix never needs to"
	whyExitHook = "an exit listener runs after the tests and can change the exit code they decided, and a fix never needs one"
	whyBuiltin  = "process.getBuiltinModule loads any built-in (child_process, vm, module, node:assert) by a string built at run time, so the checks cannot tell which"
	whyFd       = "a write to a descriptor (a number, or a value the checks cannot read) can be the test runner's stdout or stderr, and a fix never needs one"
	whyUnread   = "Node loads a required file of any extension as JavaScript (and .node as native code), and the checks read only JavaScript files, so what it runs cannot be read from the diff"
	whyGraph    = "walking the interpreter's objects, classes, frames or globals reaches the test framework's reports and the caller's frames without naming them, and a fix never needs to"
	whyAttrName = "an attribute named at run time (not one string literal) reaches what the checks refuse by name (sys.modules, builtins, exec), so what it touches cannot be read from the diff"
	whyCompiled = "compiled code: what it does cannot be read from the diff"
)

// jsGlobalObj is a name of the global object; jsHosts adds the process.
const (
	jsGlobalObj = `(globalThis|global|window)`
	jsHosts     = `(process|globalThis|global|window)`
)

// jsNamed: a line the exit and dynamic-code rules already refuse by name
// is not reported again as a reach.
var jsNamed = re(jsExit.re.String() + `|` + jsDynamic.re.String())

var jsReach = []lexRule{
	// process[...] and globalThis[...], and the process reached from the
	// global object or aliased.
	{rule: RuleTestingInLibrary, severity: Refuse, why: whyReach, unless: jsNamed,
		re: re(`\b` + jsHosts + `\s*(\?\.\s*)?\[[^\]]*\]?` +
			`|\b` + jsGlobalObj + `\s*(\?\.|\.)\s*process\b` +
			`|\bprocess\s*:\s*[\w$]+[^}]*\}\s*=\s*` + jsGlobalObj + `\b` +
			`|[\w$]\s*=\s*` + jsHosts + `\s*([;,)]|$)` +
			`|\b(Reflect|Object)\s*\.\s*\w+\s*\(\s*(process|globalThis|global|window|self)\s*[,)]` +
			`|\bconstructor\s*(\.\s*constructor\b|\[)|(^|[^\w$.])with\s*\(`)},
	// The process module bound to another name than process (import
	// process from 'node:process' keeps the rules reading it).
	{rule: RuleTestingInLibrary, severity: Refuse, why: whyReach,
		unless: re(`^(import\s+process\s+from\s*` + q + `(node:)?process` + q + `|(const|let|var)\s+process\s*=\s*require\s*\(\s*` + q + `(node:)?process` + q + `\s*\))\s*;?$|` + jsNamed.String()),
		re:     re(`\b(require|import)\s*\(\s*` + q + `(node:)?process` + q + `|\bfrom\s*` + q + `(node:)?process` + q)},
	// self is also a common name for this: self[...] only in a file
	// that does not declare it.
	{rule: RuleTestingInLibrary, severity: Refuse, why: whyReach, unlessFile: re(`\b(const|let|var)\s+self\b|[(,]\s*self\s*[,)=]`),
		re: re(`(^|[^\w$.])self\s*(\?\.\s*)?\[|(^|[^\w$.])self\s*\.\s*process\b`)},
	{rule: RuleStdoutWrite, severity: Refuse, why: whyWrap,
		re: re(`\.\s*(write|writeSync|_write|_writev|writev)\s*(=([^=>]|$)|\|\|=|\?\?=)` +
			`|\[\s*` + q + `(write|writeSync|_write|_writev|writev)` + q + `\s*\]\s*=([^=>]|$)` +
			`|\b(defineProperty|defineProperties|set|assign)\s*\([^,]*,\s*` + q + `(write|writeSync|_write|_writev|writev)` + q)},
	{rule: RuleExitInLibrary, severity: Refuse, why: whyExitHook,
		re: re(`\.\s*(on|once|addListener|prependListener|prependOnceListener)\s*\(\s*` + q + `(exit|beforeExit)` + q)},
	{rule: RuleDynamicCode, severity: Refuse, why: whyBuiltin, re: re(`\bgetBuiltinModule\b`)},
	{rule: RuleStdoutWrite, severity: Refuse, why: whyFd,
		re: re(`\bfs\s*\.\s*(write|writeSync|writev|writevSync)\s*\(` +
			`|\bfs\s*\.\s*createWriteStream\s*\(\s*([^'"` + "`" + `\s]|$)` +
			`|\bfs\s*\.\s*(writeFile|writeFileSync|appendFile|appendFileSync)\s*\(\s*\d` +
			`|(^|[^\w$.])(writeSync|writev|writevSync)\s*\(` +
			`|\{[^}]*\b(write|writeSync|writev|writevSync)\b[^}]*\}\s*(=\s*require\s*\(\s*|from\s*)` + q + `(node:)?fs` +
			`|\bfd\s*:\s*[\w$(]` +
			`|\bWriteStream\s*\(\s*\d` +
			`|/dev/(stdout|stderr|fd|tty)\b|/proc/self/fd|/proc/\d+/fd`)},
}

var pyReach = []lexRule{
	// sys under another name, everything of a module, a descriptor.
	{rule: RuleStdoutWrite, severity: Refuse, why: whyFd,
		re: re(`^\s*import\s+.*\b(sys|os|builtins|io)\s+as\b|^\s*from\s+(sys|os|builtins|io|gc|inspect)\s+import\s+\*` +
			`|\bos\s*\.\s*(write|writev|pwrite|pwritev|sendfile|fdopen)\s*\(|(^|[^\w.])(io\s*\.\s*)?open\s*\(\s*\d|\bFileIO\s*\(\s*\d`)},
	{rule: RuleTestingInLibrary, severity: Refuse, why: whyGraph,
		re: re(`^\s*import\s+.*\b(gc|inspect|ctypes|_ctypes|cffi)\b|^\s*from\s+(gc|inspect|ctypes|_ctypes|cffi)\b|\b(gc|inspect|ctypes)\s*\.` +
			`|\b__(subclasses|globals|traceback|closure|self)__\b|\b(tb_frame|f_back|f_globals|f_locals|f_builtins|f_code|gi_frame|cr_frame|ag_frame|gi_code|cr_code)\b` +
			`|\bsys\s*\.\s*(_getframe|settrace|setprofile|_current_exceptions|addaudithook)\b|\bthreading\s*\.\s*(settrace|setprofile)\b` +
			`|(^|[^\w.])(globals|vars)\s*\(`)},
	{rule: RuleTestingInLibrary, severity: Refuse, why: whyGraph, re: pyDictUse, find: pyDictReach},
}

// pyDictUse is any use of an object's __dict__; pyDictWrite a write or an
// index of it.
var (
	pyDictUse   = re(`__dict__`)
	pyDictOwn   = re(`\b(self|cls)\s*\.\s*$`)
	pyDictWrite = re(`^\s*(\[|=[^=]|\|=|\.\s*(update|setdefault|pop|popitem|clear|__setitem__)\b)`)
)

// pyDictReach finds a __dict__ that is written or indexed, or that is not
// the object's own (self.__dict__, cls.__dict__): a module's __dict__
// (sys.__dict__) holds what the checks refuse by name under a key they
// cannot read.
func pyDictReach(line string) []int {
	for _, m := range pyDictUse.FindAllStringIndex(line, -1) {
		if !pyDictOwn.MatchString(line[:m[0]]) || pyDictWrite.MatchString(line[m[1]:]) {
			return m
		}
	}
	return nil
}

// pyAttrCalls are the calls whose argument names an attribute, and which
// argument (0-based) does.
var pyAttrCalls = re(`(^|[^\w.])(getattr|setattr|delattr)\s*\(|\b(attrgetter|methodcaller)\s*\(|\bobject\s*\.\s*__(getattribute|setattr|delattr)__\s*\(`)

// pyAttrNamed finds a getattr, setattr, delattr (and attrgetter,
// methodcaller, object.__getattribute__) whose attribute is not one
// string literal on the same line.
func pyAttrNamed(line string) []int {
	for _, m := range pyAttrCalls.FindAllStringSubmatchIndex(line, -1) {
		arg := 1
		if m[6] >= 0 { // attrgetter, methodcaller: the first
			arg = 0
		}
		if !literalArg(line[m[1]:], arg) {
			return []int{m[0], m[1]}
		}
	}
	return nil
}

// literalArg reports whether the argument list s (after the open paren)
// has, as argument n, one plain string literal (no f-string, no
// concatenation), read on this line.
func literalArg(s string, n int) bool {
	i, depth := 0, 0
	for n > 0 {
		if i >= len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				return false
			}
			depth--
		case c == ',' && depth == 0:
			n--
		}
		i++
	}
	s = strings.TrimLeft(s[i:], " \t")
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return false
	}
	j := strings.IndexByte(s[1:], s[0])
	if j < 0 {
		return false
	}
	rest := strings.TrimLeft(s[j+2:], " \t")
	return rest != "" && (rest[0] == ',' || rest[0] == ')')
}

var pyAttrRule = lexRule{rule: RuleDynamicCode, severity: Refuse, why: whyAttrName, find: pyAttrNamed, re: pyAttrCalls}

// jsLibraryReach and pyLibraryFile are the library rules with these.
func pyLibraryFile() lexLang {
	l := pyCandidate
	l.rules = slices.Concat(pyCandidate.rules, pyReach, []lexRule{pyAttrRule})
	return l
}

// jsLoadable are the extensions a relative require or import may name.
var jsLoadable = []string{".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json"}

// jsAssets are extensions front-end code imports for a bundler or a
// test runner's module mapper (jest's moduleNameMapper stubs them): one
// is let through when the candidate did not change the file, whose
// content is then base's.
var jsAssets = []string{".css", ".scss", ".sass", ".less", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff", ".woff2"}

// jsRelSpec is a literal relative specifier in a require or import.
var jsRelSpec = re(`(?:\b(?:require|import)\s*\(\s*|\bfrom\s*|\bimport\s*)['"` + "`" + `](\.\.?/[^'"` + "`" + `]*|\.\.?)['"` + "`" + `]`)

// jsUnreadRequires refuses new relative requires and imports of a file
// the checks do not read: an extension Node loads as JavaScript or native
// code that is not a JavaScript one, or no extension where the candidate
// changed a file at that exact path or a package.json in a directory
// there (a file unchanged since base is base's code).
func jsUnreadRequires(f File, changedPaths map[string]bool) []Finding {
	if !changed(f) {
		return nil
	}
	var out []Finding
	dir := path.Dir(cleanPath(f.Path))
	for _, l := range newLines(baseOf(f), f.Cand) {
		code := jsCode(l.text)
		for _, m := range jsRelSpec.FindAllStringSubmatch(code, -1) {
			spec := m[1]
			target := path.Join(dir, spec)
			ext := ""
			if b := path.Base(spec); b != "." && b != ".." && !strings.HasSuffix(spec, "/") {
				ext = path.Ext(b)
			}
			bad := ""
			switch {
			case ext != "" && !slices.Contains(jsLoadable, ext) && (!slices.Contains(jsAssets, ext) || changedPaths[target]):
				bad = "a file ending " + ext
			case ext == "" && (changedPaths[target] || changedPaths[target+".node"] || changedPaths[path.Join(target, "package.json")] || changedPaths[path.Join(target, "index.node")]):
				bad = "a path whose file the candidate changed and the checks do not read as JavaScript"
			}
			if bad != "" {
				out = append(out, finding(RuleDynamicCode, Refuse, f.Path, l.n, "loads "+quote(spec)+", "+bad+", in non-test code: "+whyUnread))
			}
		}
	}
	return out
}

// isCompiled: a file of compiled or packed code an interpreter loads.
func isCompiled(p string) bool {
	base := path.Base(p)
	switch path.Ext(p) {
	case ".pyc", ".pyo", ".so", ".pyd", ".dylib", ".dll", ".egg", ".whl", ".zip", ".node":
		return true
	}
	return hasDir(p, "__pycache__") || strings.Contains(base, ".so.")
}
