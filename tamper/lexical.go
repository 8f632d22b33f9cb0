package tamper

import (
	"fmt"
	"regexp"
	"strings"
)

// JavaScript and Python are read line by line, not parsed: a rule is a
// pattern, and only lines new relative to base are looked at.

// lexRule is one pattern a rule watches for.
type lexRule struct {
	rule, severity string
	re             *regexp.Regexp
	unless         *regexp.Regexp          // a line this matches is not reported
	needs          *regexp.Regexp          // the whole file must match it too
	lineNeeds      *regexp.Regexp          // the same line must match it too
	unlessFile     *regexp.Regexp          // a file this matches is not reported
	find           func(line string) []int // when set, finds the match instead of re
	why            string
}

// lexLang is a language's rules and where they apply.
type lexLang struct {
	code  func(line string) string // the part of a trimmed line that is code
	where string                   // "in non-test code", "in a reproduction test"
	rules []lexRule
}

// jsCode drops JavaScript line comments. Lines in or after a block
// comment are read whole: without a real lexer, "* process.exit(0)" may
// continue a multiplication, and "/*" may sit in a regular expression, so
// a block comment is not trusted to hide anything.
func jsCode(line string) string {
	if strings.HasPrefix(line, "//") {
		return ""
	}
	return line
}

// pyCode drops Python comment lines.
func pyCode(line string) string {
	if strings.HasPrefix(line, "#") {
		return ""
	}
	return line
}

// numberedLine is a source line and its 1-based number.
type numberedLine struct {
	n    int
	text string
}

// newLines returns the candidate's lines base does not have, comparing
// trimmed lines as multisets: a line moved or kept is not new.
func newLines(base, cand []byte) []numberedLine {
	have := map[string]int{}
	for _, l := range strings.Split(string(base), "\n") {
		have[strings.TrimSpace(l)]++
	}
	var out []numberedLine
	for i, l := range strings.Split(string(cand), "\n") {
		t := strings.TrimSpace(l)
		if have[t] > 0 {
			have[t]--
			continue
		}
		if t != "" {
			out = append(out, numberedLine{i + 1, t})
		}
	}
	return out
}

// lexical applies a language's rules to a changed file's new lines.
func lexical(f File, lang lexLang) []Finding {
	if !changed(f) {
		return nil
	}
	var out []Finding
	file := fileMatcher(f.Cand)
	for _, l := range newLines(baseOf(f), f.Cand) {
		code := lang.code(l.text)
		if code == "" {
			continue
		}
		for _, r := range lang.rules {
			var loc []int
			if r.find != nil {
				loc = r.find(code)
			} else {
				loc = r.re.FindStringIndex(code)
			}
			if loc == nil || !r.applies(code, file) {
				continue
			}
			m := shorten(code[loc[0]:loc[1]])
			out = append(out, finding(r.rule, r.severity, f.Path, l.n, fmt.Sprintf("uses %s %s: %s", quote(m), lang.where, r.why)))
		}
	}
	return out
}

// fileMatcher matches patterns against a whole file, each pattern once
// however many lines ask.
func fileMatcher(src []byte) func(*regexp.Regexp) bool {
	seen := map[*regexp.Regexp]bool{}
	return func(re *regexp.Regexp) bool {
		m, ok := seen[re]
		if !ok {
			m = re.Match(src)
			seen[re] = m
		}
		return m
	}
}

// applies checks a matching line against the rule's other conditions.
func (r lexRule) applies(line string, file func(*regexp.Regexp) bool) bool {
	return (r.unless == nil || !r.unless.MatchString(line)) &&
		(r.lineNeeds == nil || r.lineNeeds.MatchString(line)) &&
		(r.needs == nil || file(r.needs)) &&
		(r.unlessFile == nil || !file(r.unlessFile))
}

// shorten collapses a match's whitespace, drops the separators a pattern
// needed around it, and closes a quote the match cut, for the card.
func shorten(m string) string {
	m = strings.Trim(strings.Join(strings.Fields(m), " "), " ([,;=")
	for _, q := range []string{"'", `"`, "`"} {
		if strings.Count(m, q)%2 == 1 {
			if strings.HasPrefix(m, q) {
				m = m[1:]
			} else {
				m += q
			}
		}
	}
	return m
}

var re = regexp.MustCompile

// Exits are refused in test files too: a test file a candidate adds runs in
// the same process as the frozen tests (mocha, pytest), and exiting 0
// from it ends the run before they report.
var (
	jsExit = lexRule{rule: RuleExitInLibrary, severity: Refuse, why: whyExit,
		re: re(`\bprocess\s*\.\s*(exit|exitCode|reallyExit|abort)\b|\bprocess\s*\[\s*['"` + "`" + `](exit|exitCode|reallyExit|abort|kill)\b|\bprocess\s*\.\s*kill\s*\(\s*process\s*\.\s*pid\b|` +
			// The same reached another way: require('process').exit,
			// a destructured or imported exit, the object aliased.
			`\bprocess['"]\s*\)\s*\.\s*(exit|exitCode|reallyExit|abort|kill|stdout|stderr)\b|\{[^}]*\b(exit|exitCode|reallyExit|abort|kill|stdout|stderr|_rawDebug)\b[^}]*\}\s*(=\s*(globalThis\s*\.\s*)?process\b|from\s*['"](node:)?process['"])|[\w$]\s*=\s*(globalThis\s*\.\s*)?process\s*(;|$)`)}
	pyExit = lexRule{rule: RuleExitInLibrary, severity: Refuse, why: whyExit, unless: pyDef,
		re: re(`\bsys\s*\.\s*exit\b|\bpytest\s*\.\s*exit\s*\(|\bos\s*\.\s*(_exit|abort)\b|\._exit\s*\(|\bos\s*\.\s*kill\s*\(\s*os\s*\.\s*getpid\s*\(|\braise\s+SystemExit\b|\bSystemExit\s*\(|(^|[^\w.])(exit|quit)\s*\(|` +
			// from sys import exit as leave; leave(0)
			`^\s*from\s+(sys|os|builtins)\s+import\s+.*\b(exit|_exit|abort|kill|stdout|stderr|__stdout__|__stderr__)\b`)}
)

var jsTestFile = lexLang{code: jsCode, where: "in a test file", rules: []lexRule{jsExit}}

var pyTestFile = lexLang{code: pyCode, where: "in a test file", rules: []lexRule{pyExit}}

var jsCandidate = lexLang{
	code:  jsCode,
	where: "in non-test code",
	rules: []lexRule{
		jsExit,
		{rule: RuleStdoutWrite, severity: Refuse, why: whyStdout,
			re: re(`\bprocess\s*\.\s*(stdout|stderr|_rawDebug)\b|\bwriteSync\s*\(\s*[12]\s*[,)]|/dev/(stdout|stderr|fd)\b|/proc/self/fd`)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyTesting,
			re: re(`\bprocess\s*(\.\s*argv\b|\[\s*['"` + "`" + `]argv\b)|\btypeof\s+(jest|vi|describe|expect|beforeEach|afterEach|beforeAll|afterAll)\b|\b(globalThis|global|window)\s*(\.\s*|\[\s*['"` + "`" + `])(jest|vi|describe|expect|__vitest_\w*)\b|\bprocess\s*\.\s*(binding|_linkedBinding|report|mainModule|_getActiveHandles|_getActiveRequests)\b|` +
				`\b(require|import)\s*\(\s*['"` + "`" + `](node:)?(v8|inspector)['"` + "`" + `]|\bfrom\s*['"` + "`" + `](node:)?(v8|inspector)['"` + "`" + `]`)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyProc, unless: re(`/proc/self/fd`),
			re: re(procLex)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyTesting,
			re: re(`node:test\b|['"` + "`" + `]--test|\b(globalThis|global|window)\s*\.\s*(it|describe|test|expect|beforeEach|afterEach|beforeAll|afterAll)\s*=[^=]|\bNODE_TEST_CONTEXT\b|\bprocess\s*\.\s*execArgv\b|\bJEST_WORKER_ID\b|\bVITEST\b|\bNODE_ENV\b.*['"` + "`" + `]test['"` + "`" + `]`)},
		{rule: RuleReadsSources, severity: Refuse, why: whySources,
			re:    re(`['"` + "`" + `][^'"` + "`" + `]*(\.test\.|\.spec\.|__tests__|/tests?/)[^'"` + "`" + `]*['"` + "`" + `]`),
			needs: re(`\bfs\b|readFileSync|readFile\b|readdir|createReadStream|opendir|\bglob\b`)},
		jsModuleSystem,
		jsDynamic,
		{rule: RuleProcessSpawn, severity: Refuse, why: whySpawn,
			re: re(`\bchild_process\b|\bBun\s*\.\s*spawn|\bDeno\s*\.\s*(run|Command)\b`)},
		{rule: RuleConsoleOutput, severity: Flag, why: whyLog,
			re: re(`\bconsole\s*\.\s*(log|info|warn|error|debug|trace)\b`)},
		{rule: RuleEnvProbe, severity: Flag, why: whyProbe, unless: jsTestingEnv,
			re: re(`\bprocess\s*\.\s*(env|cwd|getuid|geteuid|getgid|pid|ppid)\b|\bos\s*\.\s*(hostname|homedir|userInfo|tmpdir)\s*\(`)},
		{rule: RuleEnvProbe, severity: Refuse, why: whySandbox, needs: jsProbes, re: jsCompare(sandboxLit, `|\b65534\b`)},
		{rule: RuleEnvProbe, severity: Refuse, why: whySandbox, needs: jsHostProbes, re: jsCompare(sandboxName, "")},
	},
}

// procLex names the process's own entries in /proc in a quoted string.
const procLex = `/proc\b|\bself/(exe|mem|maps|smaps|cmdline|comm|auxv|environ)\b|/cmdline\b`

// sandboxLit is a quoted string a comparison with tells the verifier's
// sandbox apart (see isSandboxValue).
const sandboxLit = `['"` + "`" + `]((/tmp|/src|/nonexistent)(/[^'"` + "`" + `]*)?|65534|nobody|nogroup)['"` + "`" + `]`

// sandboxName is a quoted string mentioning a sandbox: the verifier's
// host name, refused beside a host name read (it is also many payment
// providers' test mode).
const sandboxName = `['"` + "`" + `][^'"` + "`" + `]*[Ss]andbox[^'"` + "`" + `]*['"` + "`" + `]`

// jsCompare matches a comparison of something with a quoted value lit.
func jsCompare(lit, more string) *regexp.Regexp {
	return re(`(===?|!==?)\s*` + lit + `|` + lit + `\s*(===?|!==?)|\.\s*(startsWith|endsWith|includes|indexOf|lastIndexOf|match|search|localeCompare)\s*\(\s*` + lit + `|\bcase\s+` + lit + more)
}

// pyCompare matches a comparison of something with a quoted value lit.
func pyCompare(lit, more string) *regexp.Regexp {
	return re(`(==|!=)\s*` + lit + `|` + lit + `\s*(==|!=|in\b|not\s+in\b)|\.\s*(startswith|endswith|find|rfind|index|count|__contains__)\s*\(\s*\(?\s*` + lit + `|\bin\s*[(\[{]\s*` + lit + `|\bcase\s+` + lit + more)
}

var (
	jsHostProbes = re(`\bhostname\b|\bHOSTNAME\b|/etc/hostname`)
	pyHostProbes = re(`\bgethostname\b|\bplatform\s*\.\s*node\b|\buname\b|\bHOSTNAME\b|/etc/hostname`)
	jsTestingEnv = re(`\bNODE_TEST_CONTEXT\b|\bJEST_WORKER_ID\b|\bVITEST\b|\bNODE_ENV\b.*['"` + "`" + `]test['"` + "`" + `]`)
	jsProbes     = re(`\bprocess\s*\.\s*(env|cwd|getuid|geteuid|getgid)\b|\bos\s*\.\s*(hostname|homedir|userInfo|tmpdir)\b|\b(homedir|hostname|userInfo|tmpdir)\s*\(`)
	pyTestingEnv = re(`\bPYTEST_(CURRENT_TEST|VERSION|XDIST\w*)\b`)
	pyProbes     = re(`\bos\s*\.\s*(environ|getenv|getcwd|getuid|geteuid|getgid|uname)\b|\bgethostname\b|\bexpanduser\b|\bPath\s*\.\s*(home|cwd)\b|\bgetpass\b|\bgettempdir\b|\bpwd\s*\.\s*getpw`)
)

var pyDef = re(`^\s*(async\s+)?def\s`)

var pyCandidate = lexLang{
	code:  pyCode,
	where: "in non-test code",
	rules: []lexRule{
		pyExit,
		{rule: RuleStdoutWrite, severity: Refuse, why: whyStdout,
			re: re(`\bsys\s*\.\s*(stdout|stderr)\s*\.\s*(write|writelines|buffer|fileno)\b|\bsys\s*\.\s*__(stdout|stderr)__|\bsys\s*\.\s*(stdout|stderr)\s*=[^=]|\bos\s*\.\s*write\s*\(\s*[12]\s*,|\bos\s*\.\s*dup2?\s*\(|/dev/(stdout|stderr|fd)\b|/proc/self/fd`)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyTesting,
			// pytest, _pytest and unittest by name are pyTestFramework's.
			re: re(`\bPYTEST_(CURRENT_TEST|VERSION|XDIST\w*)\b|\bsys\s*\.\s*argv\b`)},
		pyTestFramework,
		pyDynamic,
		{rule: RuleReadsSources, severity: Refuse, why: whySources,
			re:    re(`['"]([^'"]*[/\\*])?test_[^'"]*['"]|['"][^'"]*(conftest|_test\.py)[^'"]*['"]|['"]([^'"]*[/\\])?tests?[/\\][^'"]*['"]`),
			needs: re(`\bopen\s*\(|pathlib|\bPath\s*\(|\bglob\b|listdir|scandir|\bwalk\s*\(|read_text|read_bytes`)},
		{rule: RuleReadsSources, severity: Refuse, why: whySources,
			re: re(`\binspect\s*\.\s*(getsource|getsourcefile|getsourcelines|getfile)\b`)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyStack,
			re: re(`\binspect\s*\.\s*(stack|currentframe|getouterframes|getinnerframes|trace)\s*\(|\bsys\s*\.\s*(_getframe|_current_frames|orig_argv)\b|\btraceback\s*\.\s*(extract_stack|format_stack|print_stack|walk_stack)\b|` +
				`^\s*from\s+(inspect|sys|traceback)\s+import\s+.*\b(stack|currentframe|getouterframes|_getframe|_current_frames|argv|orig_argv|extract_stack|format_stack|print_stack|walk_stack)\b`)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyProc, unless: re(`/proc/self/fd`),
			re: re(procLex)},
		{rule: RuleProcessSpawn, severity: Refuse, why: whySpawn,
			re: re(`\bsubprocess\b|\bos\s*\.\s*(system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork)\s*\(|\bpty\s*\.\s*spawn\b`)},
		{rule: RuleConsoleOutput, severity: Flag, why: whyLog, unless: pyDef,
			re: re(`(^|[^\w.])print\s*\(`)},
		{rule: RuleEnvProbe, severity: Flag, why: whyProbe, unless: pyTestingEnv,
			re: re(`\bos\s*\.\s*(environ|getenv|getcwd|getuid|geteuid|getpid|getppid|uname)\b|\bsocket\s*\.\s*gethostname\b|\bplatform\s*\.\s*node\s*\(|\bexpanduser\s*\(|\bPath\s*\.\s*(home|cwd)\s*\(|\bgetpass\s*\.\s*getuser\b`)},
		{rule: RuleEnvProbe, severity: Refuse, why: whySandbox, needs: pyProbes, re: pyCompare(sandboxLit, `|\b65534\b`)},
		{rule: RuleEnvProbe, severity: Refuse, why: whySandbox, needs: pyHostProbes, re: pyCompare(sandboxName, "")},
	},
}
