package tamper

import (
	"fmt"
	"go/ast"
	"go/token"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reproduction checks a proposed reproduction test's files (their content
// is in Cand; Base is the file on the base commit if it existed) for tests
// that check the code's bytes or surroundings instead of its behaviour.
// Everything it finds is a flag; only what is new relative to Base counts.
func Reproduction(files []File) []Finding {
	var out []Finding
	for _, f := range files {
		if !f.CandExists {
			continue
		}
		p := cleanPath(f.Path)
		switch {
		case strings.HasSuffix(p, ".go") && !hasDir(p, "testdata") && !hasDir(p, "vendor"):
			test := isGoTest(p)
			cand := parseGo(p, f.Cand)
			var base []occurrence
			if f.BaseExists {
				base = reproGo(parseGo(p, f.Base), test)
			}
			out = append(out, findings(f.Path, fresh(base, reproGo(cand, test)))...)
			if cand.err != nil {
				out = append(out, finding(RuleUnparsableGo, Flag, f.Path, cand.errLine,
					fmt.Sprintf("does not parse as Go (%s): a test that does not build reproduces nothing", cand.parseFailure())))
			}
		case isJS(p):
			out = append(out, lexical(f, jsRepro)...)
			out = append(out, noAssertionJS(f)...)
		case isPy(p):
			out = append(out, lexical(f, pyRepro)...)
			out = append(out, noAssertionPy(f)...)
		}
	}
	sortFindings(out)
	return out
}

const (
	whyReadsSources = "a test should check what the code does, not read its source"
	whyHashes       = "a test that hashes checks bytes, not behaviour"
	whyMachine      = "the result depends on the machine it runs on"
	whyClock        = "the result depends on when it runs"
	whyRandom       = "the result depends on the draw"
	whyNetwork      = "the result depends on the network"
	whyNoAssert     = "it passes whatever the code does"
	inRepro         = "in a reproduction test"
)

var (
	reproReads = map[string]bool{
		"os.ReadFile": true, "os.Open": true, "os.OpenFile": true, "os.Stat": true, "os.Lstat": true,
		"io/ioutil.ReadFile": true, "io/fs.ReadFile": true, "io/fs.Stat": true,
	}
	reproSurroundings = map[string]bool{
		"runtime.Caller": true, "runtime.Callers": true, "runtime/debug.ReadBuildInfo": true,
		"os.Executable": true, "go/parser.ParseFile": true, "go/parser.ParseDir": true,
		"go/build.Import": true, "go/build.ImportDir": true, "go/build.Default": true,
		"golang.org/x/tools/go/packages.Load": true,
	}
	reproEnv = map[string]bool{
		"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.Hostname": true,
		"os.Getwd": true, "os.Getpid": true, "os.Getppid": true, "os.Getuid": true,
		"os.UserHomeDir": true, "syscall.Getenv": true, "os/user.Current": true,
		"runtime.GOOS": true, "runtime.GOARCH": true, "runtime.NumCPU": true,
	}
	reproClock = map[string]bool{"time.Now": true, "time.Since": true, "time.Until": true}
	// randNeutral are math/rand members that draw nothing by themselves.
	randNeutral = map[string]bool{
		"New": true, "NewZipf": true, "Rand": true, "Source": true, "Source64": true,
		"Zipf": true, "PCG": true, "ChaCha8": true, "Seed": true,
	}
	randSeeders = map[string]bool{"NewSource": true, "NewPCG": true, "NewChaCha8": true}
	reproNet    = map[string]bool{"net": true, "net/http": true, "net/rpc": true, "net/smtp": true}
)

// reproGo returns the occurrences of the reproduction rules in one side
// of a Go file.
func reproGo(g *goSource, test bool) []occurrence {
	if g.file == nil {
		return nil
	}
	var out []occurrence
	add := func(rule string, line int, scope, what, msg string) {
		out = append(out, occurrence{rule: rule, severity: Flag, line: line, what: what, scope: scope, text: g.text(line), msg: msg})
	}
	imported := map[string]bool{}
	for _, imp := range g.imps {
		imported[imp.path] = true
	}
	consts := map[string]bool{}
	for _, d := range g.file.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
			for _, s := range gd.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}

	// A read or listing call is judged by the literals in its arguments;
	// those literals are then not judged again on their own.
	consumed := map[token.Pos]bool{}
	reads := false
	searches := map[string]string{} // a function's first search of bytes or text
	for _, r := range g.refs {
		if r.call != nil && (r.pkg == "bytes" || r.pkg == "strings") && searchFuncs[r.name] && searches[r.scope] == "" {
			searches[r.scope] = member(r.pkg, r.name)
		}
	}
	for _, r := range g.refs {
		key := r.pkg + "." + r.name
		listing := dirListings[key]
		if r.call == nil || !listing && !reproReads[key] {
			continue
		}
		reads = true
		// The call is reported once, for the first telling literal.
		var values []string
		for _, a := range r.call.Args {
			ast.Inspect(a, func(n ast.Node) bool {
				var b strings.Builder
				var parts []*ast.BasicLit
				if e, ok := n.(ast.Expr); !ok || !g.fold(e, &b, &parts) {
					return true
				}
				consumed[n.Pos()] = true
				for _, p := range parts {
					consumed[p.Pos()] = true
				}
				values = append(values, b.String())
				return false
			})
		}
		telling := false
		for _, v := range values {
			if namesGoSource(v) || listing && (v == "." || v == "./" || strings.HasPrefix(v, "..")) {
				add(RuleReadsSources, r.line, r.scope, member(r.pkg, r.name),
					fmt.Sprintf("calls %s(%s) %s: %s", member(r.pkg, r.name), quote(v), inRepro, whyReadsSources))
				telling = true
				break
			}
		}
		// Any other path but a constant under testdata/ or a temporary
		// file the test made: a source read by a name built at run time.
		if i := reproPathArg(key); !telling && i >= 0 && i < len(r.call.Args) && !writeOnly(r.call) &&
			!g.testPath(r.call.Args[i], g.assignsAt(r.pos), 0) {
			msg := fmt.Sprintf("calls %s(%s) %s with a path that is not a constant under testdata/: the test reads files instead of calling the code", member(r.pkg, r.name), g.snippet(r.call.Args[i]), inRepro)
			if s := searches[r.scope]; s != "" {
				msg += fmt.Sprintf(", and searches what it read (%s)", s)
			}
			add(RuleReadsSources, r.line, r.scope, member(r.pkg, r.name), msg)
		}
	}
	for _, l := range g.lits {
		switch {
		case consumed[l.pos]:
		case reads && namesGoSource(l.value):
			add(RuleReadsSources, l.line, l.scope, "go-file-literal", fmt.Sprintf("names the Go source %s in a reproduction test that reads files: %s", quote(l.value), whyReadsSources))
		case l.value == "/proc" || strings.HasPrefix(l.value, "/proc/"):
			add(RuleReadsSources, l.line, l.scope, "/proc", fmt.Sprintf("reads %s %s: %s", quote(l.value), inRepro, whyMachine))
		}
	}
	for _, d := range g.dirs {
		if d.name == "go:embed" && embedsSources(d.args) {
			add(RuleReadsSources, d.line, "", d.name, fmt.Sprintf("embeds Go sources (//go:embed %s) %s: %s", d.args, inRepro, whyReadsSources))
		}
	}

	for _, r := range g.refs {
		key := r.pkg + "." + r.name
		what := member(r.pkg, r.name)
		verb := "uses"
		if r.call != nil {
			verb = "calls"
		}
		switch {
		case reproSurroundings[key]:
			add(RuleReadsSources, r.line, r.scope, what, fmt.Sprintf("%s %s %s: %s", verb, what, inRepro, whyReadsSources))
		case reproEnv[key]:
			add(RuleEnvProbe, r.line, r.scope, what, fmt.Sprintf("%s %s %s: %s", verb, what, inRepro, whyMachine))
		case reproClock[key]:
			add(RuleClock, r.line, r.scope, what, fmt.Sprintf("%s %s %s: %s", verb, what, inRepro, whyClock))
		case r.pkg == "math/rand" || r.pkg == "math/rand/v2":
			switch {
			case randSeeders[r.name]:
				if r.call == nil || !constantArgs(r.call, consts) {
					add(RuleRandomness, r.line, r.scope, what, fmt.Sprintf("seeds %s from a value that changes %s: %s", what, inRepro, whyRandom))
				}
			case !randNeutral[r.name]:
				add(RuleRandomness, r.line, r.scope, what, fmt.Sprintf("%s %s, which draws from the unseeded global source, %s: %s", verb, what, inRepro, whyRandom))
			}
		}
	}

	for _, imp := range g.imps {
		p := imp.path
		switch {
		case p == "crypto/rand":
			add(RuleRandomness, imp.line, "", p, fmt.Sprintf("imports crypto/rand %s: %s", inRepro, whyRandom))
		case strings.HasPrefix(p, "crypto/") || p == "hash" || strings.HasPrefix(p, "hash/"):
			add(RuleHashesFiles, imp.line, "", p, fmt.Sprintf("imports %s %s: %s", p, inRepro, whyHashes))
		case reproNet[p] && !(p == "net/http" && imported["net/http/httptest"]):
			add(RuleNetwork, imp.line, "", p, fmt.Sprintf("imports %s %s: %s (net/http/httptest is fine)", p, inRepro, whyNetwork))
		}
	}

	if test {
		for _, d := range g.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil || !isTestName(fd.Name.Name) {
				continue
			}
			t, ok := testingParam(g, fd)
			if !ok || usesT(fd.Body, t) {
				continue
			}
			out = append(out, occurrence{
				rule: RuleNoAssertion, severity: Flag, line: g.line(fd.Pos()), what: fd.Name.Name, scope: fd.Name.Name,
				text: g.body(fd), exact: true,
				msg: fmt.Sprintf("%s never calls a method on its *testing.T or hands it to a helper: %s", fd.Name.Name, whyNoAssert),
			})
		}
	}
	return out
}

// searchFuncs search bytes or text: on a file's content, they check the
// code's spelling instead of its behaviour.
var searchFuncs = map[string]bool{
	"Count": true, "Contains": true, "ContainsAny": true, "Index": true, "LastIndex": true,
	"HasPrefix": true, "HasSuffix": true, "EqualFold": true, "Equal": true, "Compare": true,
}

// reproPathArg is the index of the path argument of a call that reads or
// lists files by path, -1 for one that reads through a file system value
// (io/fs), whose paths are judged by how the value was made.
func reproPathArg(key string) int {
	if strings.HasPrefix(key, "io/fs.") || !reproReads[key] && !dirListings[key] {
		return -1
	}
	return 0
}

// writeOnly reports whether an os.OpenFile call opens for writing only.
func writeOnly(call *ast.CallExpr) bool {
	if len(call.Args) < 2 {
		return false
	}
	found := false
	ast.Inspect(call.Args[1], func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "O_WRONLY" {
			found = true
		}
		return !found
	})
	return found
}

// testPath reports whether a path expression is one a behavioural test
// may read: a constant under testdata/ (or built on one, as
// filepath.Join("testdata", tc.name) is), os.DevNull, or a temporary
// directory or file the test made. A variable is followed to what it is
// assigned in the function, or at package level.
func (g *goSource) testPath(e ast.Expr, assigns map[string][]ast.Expr, depth int) bool {
	if depth > 8 {
		return false
	}
	var b strings.Builder
	if g.fold(e, &b, nil) {
		v := strings.TrimPrefix(path.Clean(strings.ReplaceAll(b.String(), `\`, "/")), "./")
		return v == "testdata" || strings.HasPrefix(v, "testdata/") || strings.Contains(v, "/testdata/") || strings.HasSuffix(v, "/testdata")
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return g.testPath(x.X, assigns, depth+1)
	case *ast.BinaryExpr:
		return x.Op == token.ADD && g.testPath(x.X, assigns, depth+1)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && g.imports[id.Name] == "os" && x.Sel.Name == "DevNull" {
			return true
		}
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if id, ok := sel.X.(*ast.Ident); ok && g.imports[id.Name] != "" {
			switch g.imports[id.Name] + "." + sel.Sel.Name {
			case "path/filepath.Join", "path.Join":
				return len(x.Args) > 0 && g.testPath(x.Args[0], assigns, depth+1)
			case "path/filepath.Clean", "path.Clean", "path/filepath.FromSlash", "path/filepath.ToSlash", "path/filepath.Dir", "path.Dir":
				return len(x.Args) == 1 && g.testPath(x.Args[0], assigns, depth+1)
			case "os.TempDir", "os.MkdirTemp", "os.CreateTemp", "io/ioutil.TempDir", "io/ioutil.TempFile":
				return true
			}
			return false
		}
		switch sel.Sel.Name {
		case "TempDir": // t.TempDir(), b.TempDir()
			return true
		case "Name": // f.Name() of a file from os.CreateTemp
			return g.testPath(sel.X, assigns, depth+1)
		}
	case *ast.Ident:
		rhs, ok := assigns[x.Name]
		if !ok {
			rhs, ok = g.pkgAssigns()[x.Name]
		}
		if !ok || len(rhs) == 0 {
			return false
		}
		for _, r := range rhs {
			if r == nil || !g.testPath(r, assigns, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// assignsAt maps each variable of the top-level declaration at pos to the
// expressions assigned to it there (nil for one whose value is unknown: a
// range variable, a declaration without a value).
func (g *goSource) assignsAt(pos token.Pos) map[string][]ast.Expr {
	i, found := slices.BinarySearchFunc(g.file.Decls, pos, func(d ast.Decl, pos token.Pos) int {
		switch {
		case d.End() <= pos:
			return -1
		case d.Pos() > pos:
			return 1
		}
		return 0
	})
	if !found {
		return nil
	}
	d := g.file.Decls[i]
	if m, ok := g.assigns[d]; ok {
		return m
	}
	m := assignments(d, true)
	g.assigns[d] = m
	return m
}

// pkgAssigns maps package-level variables to their initializers.
func (g *goSource) pkgAssigns() map[string][]ast.Expr {
	if g.pkgVars == nil {
		g.pkgVars = map[string][]ast.Expr{}
		for _, d := range g.file.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				maps.Copy(g.pkgVars, assignments(gd, false))
			}
		}
	}
	return g.pkgVars
}

// assignments maps the variables n assigns (descending into function
// bodies when deep) to the expressions assigned to them.
func assignments(n ast.Node, deep bool) map[string][]ast.Expr {
	m := map[string][]ast.Expr{}
	set := func(lhs []ast.Expr, rhs []ast.Expr) {
		for i, l := range lhs {
			id, ok := l.(*ast.Ident)
			if !ok || id.Name == "_" {
				continue
			}
			switch {
			case len(rhs) == len(lhs):
				m[id.Name] = append(m[id.Name], rhs[i])
			case len(rhs) == 1: // dir, err := os.MkdirTemp(...)
				m[id.Name] = append(m[id.Name], rhs[0])
			default:
				m[id.Name] = append(m[id.Name], nil)
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			return deep
		case *ast.FuncLit:
			return deep
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE || n.Tok == token.ASSIGN {
				set(n.Lhs, n.Rhs)
			} else {
				set(n.Lhs, nil) // x += y
			}
		case *ast.ValueSpec:
			names := make([]ast.Expr, len(n.Names))
			for i, name := range n.Names {
				names[i] = name
			}
			set(names, n.Values)
		case *ast.RangeStmt:
			set([]ast.Expr{n.Key, n.Value}, nil)
		case *ast.IncDecStmt:
			set([]ast.Expr{n.X}, nil)
		}
		return true
	})
	return m
}

// snippet is the source of an expression, shortened for a finding.
func (g *goSource) snippet(e ast.Expr) string {
	start, end := g.offset(e.Pos()), g.offset(e.End())
	if start < 0 || end < start || end > len(g.src) {
		return "..."
	}
	s := strings.Join(strings.Fields(string(g.src[start:end])), " ")
	if len(s) > 40 {
		cut := 37
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// namesGoSource reports whether a string names Go source files.
func namesGoSource(s string) bool {
	return strings.Contains(s, "_test.go") || isGoGlob(s) || isGoFileName(s)
}

// constantArgs reports whether every argument of a call is a literal or a
// constant of the file, so a seed cannot change between runs.
func constantArgs(call *ast.CallExpr, consts map[string]bool) bool {
	ok := true
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr, *ast.SelectorExpr:
				ok = false
			case *ast.Ident:
				if !consts[n.Name] && n.Name != "true" && n.Name != "false" && n.Name != "byte" && n.Name != "uint64" && n.Name != "int64" {
					ok = false
				}
			}
			return ok
		})
	}
	return ok
}

// isTestName reports whether go test runs a function of this name:
// Test followed by nothing or by a character that is not lower case.
func isTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// testingParam returns the name of a test function's *testing.T
// parameter ("" when it is unnamed or _), and whether it has the shape of
// a test at all.
func testingParam(g *goSource, fd *ast.FuncDecl) (string, bool) {
	params := fd.Type.Params
	if params == nil || len(params.List) != 1 || len(params.List[0].Names) > 1 {
		return "", false
	}
	star, ok := params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return "", false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "T" {
		return "", false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || g.imports[id.Name] != "testing" {
		return "", false
	}
	if len(params.List[0].Names) == 0 || params.List[0].Names[0].Name == "_" {
		return "", true
	}
	return params.List[0].Names[0].Name, true
}

// usesT reports whether a body calls a method on t or passes t to a call.
func usesT(body *ast.BlockStmt, t string) bool {
	if t == "" {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, t) {
			found = true
		}
		for _, a := range call.Args {
			if isIdent(a, t) {
				found = true
			}
		}
		return !found
	})
	return found
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

var (
	jsSourceLit = re(`['"` + "`" + `][^'"` + "`" + `]*\.(m|c)?[jt]sx?['"` + "`" + `]`)
	pySourceLit = re(`['"][^'"]*\.py['"]|\b__file__\b`)
)

var jsRepro = lexLang{
	code:  jsCode,
	where: inRepro,
	rules: []lexRule{
		{rule: RuleReadsSources, severity: Flag, why: whyReadsSources, lineNeeds: jsSourceLit,
			re: re(`\b(readFileSync|readFile|createReadStream|readdirSync|readdir|opendir|globSync|glob)\s*\(`)},
		{rule: RuleReadsSources, severity: Flag, why: whyReadsSources,
			re: re(`\bFunction\s*\.\s*prototype\s*\.\s*toString\b|\.toString\s*\(\s*\)\s*\.\s*(includes|match|indexOf|search)\s*\(`)},
		{rule: RuleHashesFiles, severity: Flag, why: whyHashes,
			re: re(`\brequire\s*\(\s*['"](node:)?crypto['"]|\bfrom\s+['"](node:)?crypto['"]|\bcreateHash\s*\(|\bsubtle\s*\.\s*digest\b`)},
		{rule: RuleEnvProbe, severity: Flag, why: whyMachine,
			re: re(`\bprocess\s*\.\s*(env|cwd|pid|platform|arch)\b|\bos\s*\.\s*(hostname|platform|arch|cpus|userInfo|homedir)\s*\(`)},
		{rule: RuleClock, severity: Flag, why: whyClock,
			re: re(`\bDate\s*\.\s*now\s*\(|\bnew\s+Date\s*\(\s*\)|\bperformance\s*\.\s*now\s*\(`)},
		{rule: RuleRandomness, severity: Flag, why: whyRandom,
			re: re(`\bMath\s*\.\s*random\s*\(|\b(randomUUID|getRandomValues|randomBytes|randomInt)\s*\(`)},
		{rule: RuleNetwork, severity: Flag, why: whyNetwork,
			re: re(`\bfetch\s*\(|\brequire\s*\(\s*['"](node:)?(http|https|net|dgram|tls)['"]|\bfrom\s+['"](node:)?(http|https|net|dgram|tls)['"]|\baxios\b|\bXMLHttpRequest\b|\bnew\s+WebSocket\s*\(`)},
	},
}

var pyRepro = lexLang{
	code:  pyCode,
	where: inRepro,
	rules: []lexRule{
		{rule: RuleReadsSources, severity: Flag, why: whyReadsSources, lineNeeds: pySourceLit,
			re: re(`\bopen\s*\(|\bread_(text|bytes)\s*\(|\bPath\s*\(|\bglob\s*\(|\blistdir\s*\(`)},
		{rule: RuleReadsSources, severity: Flag, why: whyReadsSources,
			re: re(`\binspect\s*\.\s*(getsource\w*|getfile)\b|\bdis\s*\.\s*(dis|get_instructions)\b|\.__code__\b`)},
		{rule: RuleHashesFiles, severity: Flag, why: whyHashes,
			re: re(`^\s*(import|from)\s+(hashlib|hmac)\b|\bhashlib\s*\.|\bzlib\s*\.\s*(crc32|adler32)\b`)},
		{rule: RuleEnvProbe, severity: Flag, why: whyMachine,
			re: re(`\bos\s*\.\s*(environ|getenv|getcwd|getpid|uname)\b|\bsocket\s*\.\s*gethostname\b|\bsys\s*\.\s*platform\b|\bplatform\s*\.\s*\w+\s*\(|\bgetpass\s*\.\s*getuser\b`)},
		{rule: RuleClock, severity: Flag, why: whyClock,
			re: re(`\btime\s*\.\s*(time|time_ns|monotonic|perf_counter)\s*\(|\b(datetime|date)\s*\.\s*(now|utcnow|today)\s*\(`)},
		{rule: RuleRandomness, severity: Flag, why: whyRandom, unlessFile: re(`\brandom\s*\.\s*seed\s*\(\s*\d+\s*\)`),
			re: re(`\brandom\s*\.\s*(random|randint|randrange|choice|choices|shuffle|sample|uniform|getrandbits)\s*\(`)},
		{rule: RuleRandomness, severity: Flag, why: whyRandom,
			re: re(`\buuid\s*\.\s*uuid[14]\s*\(|\bos\s*\.\s*urandom\s*\(|\bsecrets\s*\.`)},
		{rule: RuleNetwork, severity: Flag, why: whyNetwork,
			re: re(`^\s*(import|from)\s+(requests|httpx|aiohttp|socket|urllib\.request|http\.client)\b|\brequests\s*\.\s*(get|post|put|delete|head|patch|request|Session)\b|\burlopen\s*\(|\bsocket\s*\.\s*(socket|create_connection)\s*\(`)},
	},
}

var (
	jsTestStart = re(`^\s*(it|test)(\s*\.\s*(only|skip|concurrent|failing))?\s*\(`)
	jsAssertion = re(`\bexpect\s*\(|\bassert\b|\.should\b|\bshould\s*\(|\bt\s*\.\s*(is|not|deepEqual|notDeepEqual|true|false|truthy|falsy|throws|throwsAsync|notThrows|assert|equal|ok|fail|snapshot|like|regex|plan|same|match)\b|\b(strictEqual|deepStrictEqual|notStrictEqual)\s*\(|\b(expect|assert|check|verify)\w*\s*\(`)
	pyTestStart = re(`^(\s*)(async\s+)?def\s+(test\w*)\s*\(`)
	pyAssertion = re(`\bassert\b|\.assert\w*\s*\(|\bpytest\s*\.\s*(raises|fail|warns|approx|skip|xfail)\b|\bself\s*\.\s*fail\w*\s*\(|\braise\b|\b(check|verify|expect|ensure)\w*\s*\(`)
)

// newLineSet is the set of line numbers newLines reports.
func newLineSet(f File) map[int]bool {
	set := map[int]bool{}
	for _, l := range newLines(baseOf(f), f.Cand) {
		set[l.n] = true
	}
	return set
}

// noAssertionJS flags new or changed it()/test() blocks with no
// expect/assert in them. It works on lines: a block is from its it( line
// to the line of its closing parenthesis.
func noAssertionJS(f File) []Finding {
	fresh := newLineSet(f)
	src := string(f.Cand)
	lines := strings.Split(src, "\n")
	// Running counts of new lines and asserting lines, so each block is
	// judged in constant time however blocks nest.
	offsets := make([]int, len(lines)+1)
	freshUpTo := make([]int, len(lines)+1)
	assertsUpTo := make([]int, len(lines)+1)
	for i, l := range lines {
		offsets[i+1] = offsets[i] + len(l) + 1
		freshUpTo[i+1] = freshUpTo[i]
		if fresh[i+1] {
			freshUpTo[i+1]++
		}
		assertsUpTo[i+1] = assertsUpTo[i]
		if jsAssertion.MatchString(l) {
			assertsUpTo[i+1]++
		}
	}
	closing := matchParens(src)
	var out []Finding
	for i, l := range lines {
		loc := jsTestStart.FindStringIndex(l)
		if loc == nil {
			continue
		}
		end, ok := closing[offsets[i]+loc[1]-1]
		if !ok {
			end = len(src)
		}
		last, _ := slices.BinarySearch(offsets, end+1) // lines[:last] hold the block
		last = max(min(last, len(lines)), i+1)
		if freshUpTo[last] > freshUpTo[i] && assertsUpTo[last] == assertsUpTo[i] {
			out = append(out, finding(RuleNoAssertion, Flag, f.Path, i+1, "has a test with no expect or assert in it: "+whyNoAssert))
		}
	}
	return out
}

// matchParens maps the offset of each opening parenthesis in JavaScript
// source to that of its closing one, skipping strings and comments.
func matchParens(src string) map[int]int {
	closing := map[int]int{}
	var open []int
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '(':
			open = append(open, i)
		case ')':
			if n := len(open); n > 0 {
				closing[open[n-1]] = i
				open = open[:n-1]
			}
		case '"', '\'', '`':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if strings.HasPrefix(src[i:], "//") {
				j := strings.IndexByte(src[i:], '\n')
				if j < 0 {
					return closing
				}
				i += j
			} else if strings.HasPrefix(src[i:], "/*") {
				j := strings.Index(src[i+2:], "*/")
				if j < 0 {
					return closing
				}
				i += j + 3
			}
		}
	}
	return closing
}

// noAssertionPy flags new or changed def test_… functions with no assert
// in their body (the lines after the def indented deeper than it).
func noAssertionPy(f File) []Finding {
	fresh := newLineSet(f)
	lines := strings.Split(string(f.Cand), "\n")
	// Per-line facts and running counts, so nested defs cost no rescans.
	indent := make([]int, len(lines))
	blank := make([]bool, len(lines))
	freshUpTo := make([]int, len(lines)+1)
	assertsUpTo := make([]int, len(lines)+1)
	for i, l := range lines {
		t := strings.TrimSpace(l)
		blank[i] = t == ""
		indent[i] = len(l) - len(strings.TrimLeft(l, " \t"))
		freshUpTo[i+1] = freshUpTo[i]
		if fresh[i+1] {
			freshUpTo[i+1]++
		}
		assertsUpTo[i+1] = assertsUpTo[i]
		if !strings.HasPrefix(t, "#") && pyAssertion.MatchString(t) {
			assertsUpTo[i+1]++
		}
	}
	var out []Finding
	for i, l := range lines {
		m := pyTestStart.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		end := i + 1 // lines[i+1:end] are the body
		for end < len(lines) && (blank[end] || indent[end] > len(m[1])) {
			end++
		}
		if freshUpTo[end] > freshUpTo[i] && assertsUpTo[end] == assertsUpTo[i+1] {
			out = append(out, finding(RuleNoAssertion, Flag, f.Path, i+1, fmt.Sprintf("has %s with no assert in it: %s", m[3], whyNoAssert)))
		}
	}
	return out
}
