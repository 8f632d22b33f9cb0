package tamper

import (
	"regexp"
	"slices"
	"strings"
)

// The tests' own machinery, reached from the code they test. A JUnit
// harness (node --test, mocha, pytest) has no witness: the frozen tests'
// assertions and the runner's reports are the verdict, and they share the
// process, the module cache and the interpreter with the candidate's code.
// Library code that rewrites an assertion function, hooks the module
// loader, or patches pytest's reports turns every failure into a pass
// without touching a frozen file (red-team findings, issue 23). Read line
// by line, the checks cannot follow a value through the program, so they
// refuse the names these attacks go through and every way of running code
// the diff does not show.

const (
	whyAssert  = "a fix never changes the assertion library or the test runner the frozen tests judge it with"
	whyModule  = "hooking the module system changes what the tests' own require and import return, and a fix never needs to"
	whyDynamic = "what it runs or loads cannot be read from the diff, so the checks cannot judge it"
	whyPyTest  = "library code never needs the test framework: reaching it (even by a name in a string, for importlib) is how a test report is rewritten from inside the code under test"
)

// q is a quote of any of JavaScript's three kinds.
const q = `['"` + "`" + `]`

// assertSpec is a quoted specifier of a module the tests assert with.
const assertSpec = q + `((node:)?assert(/strict)?|node:test|chai|expect)` + q

var (
	// jsImportsAssert: the file loads an assertion module.
	jsImportsAssert = re(`\b(require|import)\s*\(\s*` + assertSpec + `|\bfrom\s*` + assertSpec + `|\bimport\s*` + assertSpec)

	// Declarations that bind a name to an assertion module, or to part
	// of one (assert.strict, a destructured strict or expect).
	jsBindWhole   = re(`\b(?:const|let|var)\s+([\w$]+)\s*=\s*(?:await\s+)?(?:require|import)\s*\(\s*` + assertSpec + `|\bimport\s+([\w$]+)\s*(?:,[^;]*)?\bfrom\s*` + assertSpec + `|\bimport\s*\*\s*as\s+([\w$]+)\s+from\s*` + assertSpec + `|\bimport\s+([\w$]+)\s*=\s*require\s*\(\s*` + assertSpec)
	jsBindDestruc = re(`\{([^}]*)\}\s*=\s*(?:await\s+)?(?:require|import)\s*\(\s*` + assertSpec + `|\bimport\s+(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*` + assertSpec)
	// jsAlias: a name given another name's value (or a member of it).
	jsAlias = re(`^(?:(?:const|let|var)\s+)?([\w$]+)\s*=\s*([\w$]+)(?:\s*\.\s*[\w$]+)*\s*[;,]?$`)
	jsIdent = re(`^[\w$]+$`)
)

// jsAssertBindings returns the names src binds to an assertion module or a
// part of one, following plain aliases (const a = assert; const s = a.strict).
func jsAssertBindings(src []byte) []string {
	names := map[string]bool{}
	lines := strings.Split(string(src), "\n")
	for _, l := range lines {
		for _, m := range jsBindWhole.FindAllStringSubmatch(l, -1) {
			for _, n := range m[1:] {
				if jsIdent.MatchString(n) {
					names[n] = true
				}
			}
		}
		for _, m := range jsBindDestruc.FindAllStringSubmatch(l, -1) {
			for _, list := range m[1:] {
				for _, part := range strings.Split(list, ",") {
					// { strict: s }, { strict as s }, { ...rest }
					part = strings.TrimPrefix(strings.TrimSpace(part), "...")
					if i := strings.LastIndexAny(part, ": "); i >= 0 {
						part = strings.TrimSpace(part[i+1:])
					}
					if jsIdent.MatchString(part) {
						names[part] = true
					}
				}
			}
		}
	}
	for grew := len(names) > 0; grew; {
		grew = false
		for _, l := range lines {
			if m := jsAlias.FindStringSubmatch(strings.TrimSpace(l)); m != nil && names[m[2]] && !names[m[1]] {
				names[m[1]], grew = true, true
			}
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// jsAssertRules are the rules about the assertion modules for one file:
// writing a member of a name bound to one (or of a require of one), and,
// in a file that loads one, the reflective writes a binding-by-binding
// reading cannot follow.
func jsAssertRules(src []byte) []lexRule {
	const assign = `\s*(=([^=>]|$)|[-+*/%&|^]=|\?\?=|&&=|\|\|=|<<=|>>>?=)`
	const member = `(\s*(\.\s*[\w$]+|\[[^\]]*\]))+`
	target := `\b(require|import)\s*\(\s*` + assertSpec + `\s*\)`
	if names := jsAssertBindings(src); len(names) > 0 {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = regexp.QuoteMeta(n)
		}
		target = `(` + target + `|(^|[^\w$.])(` + strings.Join(quoted, "|") + `)\b)`
	}
	return []lexRule{
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyAssert,
			re: re(target + member + assign + `|\bdelete\b\s*` + target + member +
				`|\bObject\s*\.\s*(assign|defineProperty|defineProperties|setPrototypeOf)\s*\(\s*` + target +
				`|\bReflect\s*\.\s*(set|defineProperty|deleteProperty|setPrototypeOf)\s*\(\s*` + target)},
		{rule: RuleTestingInLibrary, severity: Refuse, why: whyAssert, needs: jsImportsAssert,
			re: re(`\bObject\s*\.\s*(defineProperty|defineProperties|setPrototypeOf)\s*\(|\bReflect\s*\.|\b__proto__\b|\b__defineGetter__\b|\b__defineSetter__\b`)},
	}
}

// jsModuleSystem and jsDynamic apply to library code: hooks into the
// module loader, and code or modules chosen at run time.
var (
	jsModuleSystem = lexRule{rule: RuleTestingInLibrary, severity: Refuse, why: whyModule,
		re: re(`\b(require|import)\s*\(\s*` + q + `(node:)?module` + q + `|\bfrom\s*` + q + `(node:)?module` + q +
			`|\bModule\s*\.\s*(_load|_resolveFilename|_extensions|_cache|_compile|_findPath|_nodeModulePaths|prototype|wrap|wrapper|syncBuiltinESMExports|register)\b` +
			`|\brequire\s*(\.\s*(cache|extensions)\b|\[\s*` + q + `(cache|extensions)` + q + `)|\bmodule\s*\.\s*(constructor|children|parent)\b|\bsyncBuiltinESMExports\b`)}
	jsDynamic = lexRule{rule: RuleDynamicCode, severity: Refuse, why: whyDynamic,
		re: re(`(^|[^\w$.])eval\s*\(|\b(globalThis|global|window|self)\s*(\.\s*eval\b|\[\s*` + q + `eval` + q + `)|(^|[^\w$.])(new\s+)?Function\s*\(` +
			`|\b(require|import)\s*\(\s*` + q + `(node:)?vm` + q + `|\bfrom\s*` + q + `(node:)?vm` + q +
			// require or import of something other than one literal: a
			// variable, an expression, a template with a substitution.
			`|(^|[^\w$.])(require|import)\s*\(\s*([^'"` + "`" + `\s)]|` + "`" + `[^` + "`" + `]*\$\{|$)` +
			`|(^|[^\w$.])(require|import)\s*\(\s*` + q + `[^'"` + "`" + `]*` + q + `\s*[+?:|&]`)}
)

// Python: the test framework by any name, and the ways of importing or
// running what the diff does not show.
var (
	pyTestFramework = lexRule{rule: RuleTestingInLibrary, severity: Refuse, why: whyPyTest,
		re: re(`\b_?pytest(\b|_)|\bpluggy\b|\bunittest\b`)}
	pyDynamic = lexRule{rule: RuleDynamicCode, severity: Refuse, why: whyDynamic, unless: re(`^\s*(async\s+)?def\s+(exec|eval|compile)\s*\(`),
		re: re(`\bimportlib\b|\b__import__\b|\bbuiltins\b|\b__builtins__\b|(^|[^\w.])(exec|eval|compile)\s*\(|\bsys\s*\.\s*modules\b|^\s*from\s+sys\s+import\s+.*\bmodules\b`)}
)

// jsLibraryFile is jsCandidate with the assertion rules of the file.
func jsLibraryFile(src []byte) lexLang {
	l := jsCandidate
	l.rules = slices.Concat(jsCandidate.rules, jsAssertRules(src), jsReach)
	return l
}

// jsTestFileOf is jsTestFile with the assertion rules of the file: a
// test file the candidate adds runs in the frozen tests' process under
// mocha and jest, and writing the assertion library there is the same
// attack. The module-system and dynamic-code rules stay with library
// code: tests reset require.cache and load fixtures by name.
func jsTestFileOf(src []byte) lexLang {
	l := jsTestFile
	l.rules = slices.Concat(jsTestFile.rules, jsAssertRules(src)[:1])
	return l
}

// pyBuildScript is pyCandidate for setup.py and noxfile.py: build scripts
// the tests never import, whose every change is already a build change
// (py-config), and which name pytest and exec a version file as a matter
// of course.
var pyBuildScript = lexLang{code: pyCode, where: pyCandidate.where, rules: slices.DeleteFunc(slices.Clone(pyCandidate.rules), func(r lexRule) bool {
	return r.re == pyTestFramework.re || r.re == pyDynamic.re
})}
