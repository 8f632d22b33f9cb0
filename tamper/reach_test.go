package tamper_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// reachAttacks are red team 23 (a3)'s lexical bypasses: library lines that
// reach what the JavaScript and Python rules refuse by name through a
// name those rules did not read (a computed key, an alias, the
// interpreter's object graph, a run-time attribute name, a file the
// checks do not read). Each row failed before the rules in reach.go.
var reachAttacks = []attackRow{
	// JavaScript: the process and the global object by a computed key or an alias.
	{"process by computed key", jsChange("  const out = process['std' + 'out'];"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"globalThis by computed key", jsChange("  const host = globalThis['proc' + 'ess'];"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"global by computed key", jsChange("  const host = global[name];"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"window by optional computed key", jsChange("  const host = window?.[name];"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"self by computed key", jsChange("  const host = self['proc' + 'ess'];"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"global.process", jsChange("  const t = global.process.title;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"globalThis aliased", jsChange("  const g = globalThis;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process destructured from globalThis", jsChange("  const { process: p } = globalThis;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process through Reflect", jsChange("  const out = Reflect.get(process, key);"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"Function through constructor.constructor", jsChange("  const F = [].constructor.constructor;"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process module bound", jsChange("  const p = require('node:process');"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"process module imported", []tamper.File{added("src/run.mjs", "import p from 'process';\n")}, tamper.RuleTestingInLibrary, tamper.Refuse},
	{"with (process)", jsChange("  with (host) { run(); }"), tamper.RuleTestingInLibrary, tamper.Refuse},
	// A stream's write replaced or wrapped.
	{"write member assigned", jsChange("  out.write = function () { return true; };"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"_write member assigned", jsChange("  stream._write = wrap(stream._write);"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"write defined", jsChange("  Object.defineProperty(out, 'write', { value: forge });"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"write by computed literal", jsChange("  out['writeSync'] = forge;"), tamper.RuleStdoutWrite, tamper.Refuse},
	// Exit listeners, getBuiltinModule, descriptor writes.
	{"exit listener", jsChange("  host.on('exit', () => { reset(); });"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"beforeExit listener", jsChange("  process.once('beforeExit', reset);"), tamper.RuleExitInLibrary, tamper.Refuse},
	{"getBuiltinModule", jsChange("  const m = process.getBuiltinModule('module');"), tamper.RuleDynamicCode, tamper.Refuse},
	{"getBuiltinModule by a built name", jsChange("  const cp = process.getBuiltinModule(['child', 'process'].join('_'));"), tamper.RuleDynamicCode, tamper.Refuse},
	{"fs.write to fd 1", jsChange("  fs.write(1, 'ok 1\\n', () => {});"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"fs.writeSync to a computed fd", jsChange("  fs.writeSync(fd, 'ok 1\\n');"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"destructured writeSync", jsChange("  writeSync(fd, 'ok 1\\n');"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"createWriteStream of a variable", jsChange("  const s = fs.createWriteStream(target);"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"createWriteStream of an fd option", jsChange("  const s = fs.createWriteStream('x', { fd: 1 });"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"/dev/fd", jsChange("  fs.appendFileSync('/dev/fd/1', 'ok 1\\n');"), tamper.RuleStdoutWrite, tamper.Refuse},
	// JavaScript in a file the checks do not read.
	{"require of a .dat file", jsChange("  require('./rates.dat');"), tamper.RuleDynamicCode, tamper.Refuse},
	{"import of a .css file the candidate changed", []tamper.File{
		modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  require('./cart.css');\n  let sum = 0;\n", 1)),
		added("src/cart.css", "process.exitCode = 0;\n")}, tamper.RuleDynamicCode, tamper.Refuse},
	{"import of a .txt file", []tamper.File{added("src/run.mjs", "import x from '../lib/x.txt';\n")}, tamper.RuleDynamicCode, tamper.Refuse},
	{"require of an extensionless file the candidate added", []tamper.File{
		modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  require('./rates');\n  let sum = 0;\n", 1)),
		added("src/rates", "process.exitCode = 0;\n")}, tamper.RuleDynamicCode, tamper.Refuse},
	// Compiled code.
	{"native addon", []tamper.File{added("lib/fast.node", "\x7fELF")}, tamper.RuleAssembly, tamper.Refuse},
	{"sourceless pyc", []tamper.File{added("shop/_speedups.pyc", "\xa7\r\r\n")}, tamper.RuleAssembly, tamper.Refuse},
	{"__pycache__", []tamper.File{added("shop/__pycache__/calc.cpython-311.pyc", "\xa7\r\r\n")}, tamper.RuleAssembly, tamper.Refuse},
	{"extension module", []tamper.File{added("shop/_calc.cpython-311-x86_64-linux-gnu.so", "\x7fELF")}, tamper.RuleAssembly, tamper.Refuse},
	{"zip on the path", []tamper.File{added("shop/vendored.zip", "PK\x03\x04")}, tamper.RuleAssembly, tamper.Refuse},
	// Python: the interpreter's graph, frames and globals.
	{"import gc", pyChange("    import gc"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"from gc import", pyChange("    from gc import get_objects"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"__subclasses__", pyChange("    subs = object.__subclasses__()"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"builtins through a builtin's __self__", pyChange("    len.__self__.exec(code)"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"__globals__", pyChange("    g = total.__globals__"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"caller frame through a traceback", pyChange("    f = e.__traceback__.tb_frame.f_back"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"frame globals", pyChange("    g = frame.f_globals"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"generator frame", pyChange("    f = gen.gi_frame"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"import inspect", pyChange("    import inspect"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"globals()", pyChange("    g = globals()"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"vars()", pyChange("    d = vars(sys)"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"__dict__ by key", pyChange("    m = sys.__dict__['mod' + 'ules']"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"__dict__ written", pyChange("    cls.__dict__.update(patch)"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"a module's __dict__", pyChange("    d = sys.__dict__"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"ctypes", pyChange("    import ctypes"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"settrace", pyChange("    sys.settrace(hook)"), tamper.RuleTestingInLibrary, tamper.Refuse},
	{"sys aliased", pyChange("    import sys as s"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"star import of sys", pyChange("    from sys import *"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"os.write of a variable fd", pyChange("    os.write(fd, b'ok')"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"open of fd 1", pyChange("    out = open(1, 'w')"), tamper.RuleStdoutWrite, tamper.Refuse},
	{"os.fdopen", pyChange("    out = os.fdopen(fd, 'w')"), tamper.RuleStdoutWrite, tamper.Refuse},
	// Attributes named at run time.
	{"getattr of a concatenation", pyChange("    m = getattr(sys, 'mod' + 'ules')"), tamper.RuleDynamicCode, tamper.Refuse},
	{"getattr of a variable", pyChange("    m = getattr(sys, name)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"setattr of an f-string", pyChange("    setattr(cls, f'{kind}_report', fake)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"delattr of a variable", pyChange("    delattr(cls, name)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"getattr split over lines", pyChange("    m = getattr("), tamper.RuleDynamicCode, tamper.Refuse},
	{"attrgetter of a variable", pyChange("    get = operator.attrgetter(name)"), tamper.RuleDynamicCode, tamper.Refuse},
	{"object.__getattribute__ of a concatenation", pyChange("    m = object.__getattribute__(sys, 'mod' + 'ules')"), tamper.RuleDynamicCode, tamper.Refuse},
}

func TestCandidateReachAttacks(t *testing.T) {
	t.Parallel()
	runAttacks(t, reachAttacks, tamper.Candidate)
}

// TestCandidateReachPoCs: red team 23 (a3)'s proofs, whole, as they were
// handed in; each is refused.
func TestCandidateReachPoCs(t *testing.T) {
	t.Parallel()
	js := map[string]string{
		"builtin module loader, hook":   "const M = process.getBuiltinModule('module');\nconst load = M._load;\nM._load = function (r, p, m) { return load.call(this, r, p, m); };\n",
		"builtin module loader, vm":     "const code = 'globalThis.x = 1';\nprocess.getBuiltinModule('v' + 'm').runInThisContext(code);\n",
		"builtin module loader, spawn":  "const cp = process.getBuiltinModule(['child', 'process'].join('_'));\ncp.execFileSync('sh', ['-c', 'id']);\n",
		"builtin module loader, assert": "const a = process.getBuiltinModule('node:assert');\nObject.defineProperty(a, 'strictEqual', { value() {} });\n",
		"builtin module loader, v8":     "const v = process.getBuiltinModule('node:' + 'v8');\nv.setFlagsFromString('--allow-natives-syntax');\n",
		"stdout by computed key":        "const host = globalThis['proc' + 'ess'];\nconst out = host['std' + 'out'];\nout.write = function () { return true; };\n",
		"exit code by computed key":     "const host = globalThis['proc' + 'ess'];\nhost.on('exit', () => { host['ex' + 'itCode'] = 0; });\n",
		"exit by computed key":          "const host = globalThis['proc' + 'ess'];\nhost['reallyE' + 'xit'](0);\n",
		"fs write to fd 1 (async)":      "const fs = require('fs');\nfs.write(1, 'ok 1\\n', () => {});\n",
		"fs writeSync to a computed fd": "const fs = require('fs');\nconst fd = [1][0];\nfs.writeSync(fd, 'ok 1\\n');\n",
	}
	py := map[string]string{
		"reports through gc":                        "import gc\nfor o in gc.get_objects():\n    if isinstance(o, type) and o.__name__ == 'TestReport':\n        o.__init__ = lambda self, *a, **k: None\n",
		"reports through __subclasses__":            "def walk(c):\n    for s in c.__subclasses__():\n        yield s\n        yield from walk(s)\nfor c in walk(object):\n    if c.__name__ == 'TestReport':\n        c.passed = property(lambda self: True)\n",
		"caller frames via a traceback":             "try:\n    raise ValueError\nexcept ValueError as e:\n    f = e.__traceback__.tb_frame.f_back\nwhile f is not None:\n    g = f.f_globals\n    f = f.f_back\n",
		"builtins via a function's globals":         "b = total.__globals__['__buil' + 'tins__']\n",
		"exec via getattr":                          "run = getattr(total.__globals__['__buil' + 'tins__'], 'ex' + 'ec')\n",
		"import via importlib's loader through sys": "import sys\nm = getattr(sys, 'mod' + 'ules')['_py' + 'test.reports']\n",
	}
	check := func(lang, name, p, src string) {
		fs := tamper.Candidate([]tamper.File{added(p, src)})
		checkWellFormed(t, fs)
		for _, f := range fs {
			if f.Severity == tamper.Refuse {
				return
			}
		}
		t.Errorf("%s %s: not refused:%s\n%s", lang, name, dump(fs), src)
	}
	for name, src := range js {
		check("JS", name, "lib/patch.js", src)
	}
	// A directory whose package.json the candidate added points its main
	// at a file the checks do not read.
	fs := tamper.Candidate([]tamper.File{
		modified("src/cart.js", jsBase, strings.Replace(jsBase, "  let sum = 0;\n", "  require('./rates');\n  let sum = 0;\n", 1)),
		added("src/rates/package.json", `{"main": "main.dat"}`)})
	if !slices.ContainsFunc(fs, func(f tamper.Finding) bool { return f.Rule == tamper.RuleDynamicCode && f.Severity == tamper.Refuse }) {
		t.Errorf("require of a directory with a new package.json: not refused as dynamic code:%s", dump(fs))
	}
	for name, src := range py {
		check("Python", name, "shop/patch.py", src)
	}
}

// TestCandidateReachOrdinaryCode: what production code does every day is
// not refused by the rules above.
func TestCandidateReachOrdinaryCode(t *testing.T) {
	t.Parallel()
	js := []string{
		"  const util = require('./util');",
		"  const rates = require('../data/rates.json');",
		"  const { helper } = require('./lib/index.js');",
		"  const dir = require('..');",
		"  require('./cart.css');",
		"  stream.write(chunk);",
		"  fs.writeFileSync(target, data);",
		"  fs.createWriteStream('out.log');",
		"  const s = items[0];",
		"  const self = this; self[key] = value;",
		"  if (a.write === b.write) return;",
		"  emitter.on('data', onData);",
		"  const v = items.with(0, x);",
		"  const process = require('node:process');",
		"import process from 'node:process';",
		"  const isBrowser = typeof window !== 'undefined';",
	}
	for _, l := range js {
		for _, f := range tamper.Candidate(jsChange(l)) {
			if f.Severity == tamper.Refuse {
				t.Errorf("%q refused: %s", l, f.Detail)
			}
		}
	}
	py := []string{
		"    name = getattr(item, 'name')",
		"    price = getattr(item, \"price\", 0)",
		"    setattr(item, 'price', 0)",
		"    if hasattr(item, 'price'):",
		"    d = self.__dict__",
		"    return {k: v for k, v in self.__dict__.items()}",
		"    f = Path(p).read_text()",
		"    key = operator.attrgetter('price')",
		"    gcd = math.gcd(a, b)",
		"    frames = self.frame_count",
	}
	for _, l := range py {
		for _, f := range tamper.Candidate(pyChange(l)) {
			if f.Severity == tamper.Refuse {
				t.Errorf("%q refused: %s", l, f.Detail)
			}
		}
	}
	// A change to a file that already had the construct adds nothing new.
	base := "import gc\n\n\ndef collect():\n    gc.collect()\n"
	if fs := tamper.Candidate([]tamper.File{modified("shop/mem.py", base, base+"\n\ndef other():\n    return 1\n")}); len(fs) != 0 {
		t.Errorf("unchanged gc use reported:%s", dump(fs))
	}
	// Compiled files under testdata are data.
	if fs := tamper.Candidate([]tamper.File{added("shop/testdata/fixture.zip", "PK\x03\x04")}); len(fs) != 0 {
		t.Errorf("testdata zip reported:%s", dump(fs))
	}
}

// TestCandidateWheelIsCompiledAndPacked: a wheel outside testdata is both
// a packed package (a build change) and compiled code the checks cannot
// read (refused).
func TestCandidateWheelIsCompiledAndPacked(t *testing.T) {
	t.Parallel()
	fs := tamper.Candidate([]tamper.File{added("wheels/money-1.2.0-py3-none-any.whl", "PK\x03\x04")})
	checkWellFormed(t, fs)
	names := ruleNames(fs)
	if len(names) != 2 || names[0] != tamper.RuleAssembly || names[1] != tamper.RulePackedPackage {
		t.Errorf("rules = %v, want [assembly packed-package]:%s", names, dump(fs))
	}
}
