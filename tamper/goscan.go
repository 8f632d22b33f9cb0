package tamper

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// goSource is one side of a Go file, parsed once and reduced to what the
// rules look at: package-member references resolved through the file's
// imports, string literals, directives and declarations.
type goSource struct {
	src     []byte
	fset    *token.FileSet
	file    *ast.File // possibly partial when err is set; nil if empty
	err     error
	errLine int
	lines   [][]byte
	imports map[string]string // local name → import path
	dots    []string          // dot-imported paths
	funcs   map[string]bool   // top-level funcs without receiver
	refs    []goRef
	lits    []goLit
	dirs    []goDirective
	imps    []goImport
	cmps    []goCmp
	decls   map[ast.Decl]*declFacts

	// Constants, for folding expressions to the strings they make.
	consts     map[string]string // string constants declared once, by name
	constNames map[string]bool   // every constant's name
	nonConst   map[ast.Expr]bool // expressions found not to fold

	// Assignments, for following a variable to its value (reproductions).
	assigns map[ast.Decl]map[string][]ast.Expr
	pkgVars map[string][]ast.Expr
}

// declFacts is what one top-level declaration does, for judging init and
// the helpers it calls without rescanning the whole file each time.
type declFacts struct {
	refs  []goRef
	gos   []token.Pos // go statements
	calls []goLocalCall
	occ   []occurrence // filled in by byDecl
	first int          // line range
	last  int
}

// goRef is a use of a package member, e.g. os.Exit, called or not.
type goRef struct {
	pkg, name string
	call      *ast.CallExpr // the call when the reference is what is called
	pos       token.Pos
	line      int
	scope     string
}

type goLit struct {
	value string
	pos   token.Pos
	line  int
	scope string
}

type goDirective struct {
	name, args string // "go:linkname", "localname importpath.name"
	line       int
}

type goImport struct {
	path string
	line int
}

// goCmp is a comparison of something with a value that tells the
// verifier's sandbox apart (x == "/tmp", strings.HasPrefix(wd, "/src"),
// case "65534":).
type goCmp struct {
	value string
	pos   token.Pos
	line  int
	scope string
}

// goLocalCall is a call of a top-level function of the same package by
// plain name ("helper"), or of a method by its name (".helper"), for
// following init into helpers.
type goLocalCall struct {
	callee string
	pos    token.Pos
	scope  string
}

// parseGo parses src and indexes it. A file that does not parse keeps its
// error and whatever partial tree the parser produced.
func parseGo(name string, src []byte) *goSource {
	g := &goSource{
		src:     src,
		fset:    token.NewFileSet(),
		lines:   bytes.Split(src, []byte("\n")),
		imports: map[string]string{},
		funcs:   map[string]bool{},
		decls:   map[ast.Decl]*declFacts{},

		consts:     map[string]string{},
		constNames: map[string]bool{},
		nonConst:   map[ast.Expr]bool{},
		assigns:    map[ast.Decl]map[string][]ast.Expr{},
	}
	g.file, g.err = parser.ParseFile(g.fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if list, ok := errors.AsType[scanner.ErrorList](g.err); ok && len(list) > 0 {
		g.errLine = list[0].Pos.Line
	}
	if g.file == nil {
		return g
	}
	for _, spec := range g.file.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		g.imps = append(g.imps, goImport{p, g.line(spec.Pos())})
		switch {
		case spec.Name == nil:
			g.imports[importName(p)] = p
		case spec.Name.Name == ".":
			g.dots = append(g.dots, p)
		case spec.Name.Name != "_":
			g.imports[spec.Name.Name] = p
		}
	}
	for _, d := range g.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name != nil {
			g.funcs[fd.Name.Name] = true
		}
	}
	for _, cg := range g.file.Comments {
		for _, c := range cg.List {
			if name, args, ok := directive(c.Text); ok {
				g.dirs = append(g.dirs, goDirective{name, args, g.line(c.Pos())})
			}
		}
	}
	g.collectConsts()
	for _, d := range g.file.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			continue // import paths are not literals the code uses
		}
		g.index(d, declName(d))
	}
	return g
}

// collectConsts records the file's constants (top-level and local) and
// the values of those that fold to a string, so "/pr" + suffix folds when
// suffix is a constant. A name declared twice is not folded.
func (g *goSource) collectConsts() {
	count := map[string]int{}
	var specs []*ast.ValueSpec
	ast.Inspect(g.file, func(n ast.Node) bool {
		gd, ok := n.(*ast.GenDecl)
		if !ok {
			return true
		}
		if gd.Tok == token.CONST {
			for _, s := range gd.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, name := range vs.Names {
						count[name.Name]++
						g.constNames[name.Name] = true
					}
					specs = append(specs, vs)
				}
			}
		}
		return false // a GenDecl holds no further declarations
	})
	// Constants may use constants declared after them: a few passes
	// resolve any realistic chain.
	for range 8 {
		progress := false
		for _, vs := range specs {
			for i, name := range vs.Names {
				if _, done := g.consts[name.Name]; done || i >= len(vs.Values) || count[name.Name] != 1 {
					continue
				}
				var b strings.Builder
				if g.fold(vs.Values[i], &b, nil) {
					g.consts[name.Name] = b.String()
					progress = true
				}
			}
		}
		clear(g.nonConst) // what did not fold may now
		if !progress {
			break
		}
	}
}

// index records the references, literals, comparisons, go statements and
// local calls in one top-level declaration.
func (g *goSource) index(d ast.Decl, scope string) {
	facts := &declFacts{first: g.line(d.Pos()), last: g.line(d.End())}
	g.decls[d] = facts
	ref := func(r goRef) {
		g.refs = append(g.refs, r)
		facts.refs = append(facts.refs, r)
	}
	// The outermost expression that folds to a string ("_te" + "st.go",
	// strings.Join([]string{"cart", "go"}, ".")) is judged as one literal,
	// not its parts: nothing before folded ends is recorded as a literal.
	var folded token.Pos
	ast.PreorderStack(d, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				if p, ok := g.imports[id.Name]; ok {
					ref(goRef{p, n.Sel.Name, callOf(n, stack), n.Pos(), g.line(n.Pos()), scope})
					break
				}
			}
			if callOf(n, stack) != nil {
				// A method call: followed by name, whichever type has it.
				facts.calls = append(facts.calls, goLocalCall{"." + n.Sel.Name, n.Pos(), scope})
			}
		case *ast.Ident:
			if len(stack) == 0 {
				break
			}
			if sel, ok := stack[len(stack)-1].(*ast.SelectorExpr); ok && sel.Sel == n {
				break
			}
			call := callOf(n, stack)
			if call != nil {
				// Maybe a function of the package declared in another file.
				facts.calls = append(facts.calls, goLocalCall{n.Name, n.Pos(), scope})
			}
			if g.funcs[n.Name] || g.imports[n.Name] != "" {
				break
			}
			if call != nil && (n.Name == "print" || n.Name == "println") {
				ref(goRef{"", n.Name, call, n.Pos(), g.line(n.Pos()), scope})
			}
			// A dot import makes a bare name a package member; which
			// package is unknown without type checking, so try each.
			for _, p := range g.dots {
				ref(goRef{p, n.Name, call, n.Pos(), g.line(n.Pos()), scope})
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && n.Pos() >= folded {
				g.lits = append(g.lits, goLit{unquote(n.Value), n.Pos(), g.line(n.Pos()), scope})
			}
		case *ast.BinaryExpr:
			if n.Pos() >= folded && n.Op == token.ADD {
				g.foldLit(n, &folded, scope)
			}
			if n.Op == token.EQL || n.Op == token.NEQ {
				g.compare(n, scope, n.X, n.Y)
			}
		case *ast.CallExpr:
			if n.Pos() >= folded {
				g.foldLit(n, &folded, scope)
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && cmpPkgs[g.imports[id.Name]] && cmpFuncs[sel.Sel.Name] {
					g.compare(n, scope, n.Args...)
				}
			}
		case *ast.CaseClause:
			g.compare(n, scope, n.List...)
		case *ast.GoStmt:
			facts.gos = append(facts.gos, n.Pos())
		}
		return true
	})
}

// foldLit records e as one literal if it folds to a string.
func (g *goSource) foldLit(e ast.Expr, folded *token.Pos, scope string) {
	var b strings.Builder
	if g.fold(e, &b, nil) {
		g.lits = append(g.lits, goLit{b.String(), e.Pos(), g.line(e.Pos()), scope})
		*folded = e.End()
	}
}

var (
	// cmpPkgs and cmpFuncs are the calls that compare or search strings.
	cmpPkgs  = map[string]bool{"strings": true, "bytes": true, "regexp": true, "path": true, "path/filepath": true, "slices": true}
	cmpFuncs = map[string]bool{
		"HasPrefix": true, "HasSuffix": true, "Contains": true, "ContainsAny": true, "EqualFold": true,
		"Index": true, "LastIndex": true, "Compare": true, "Cut": true, "CutPrefix": true, "CutSuffix": true,
		"TrimPrefix": true, "TrimSuffix": true, "Count": true, "Equal": true, "Match": true, "MatchString": true,
		"Compile": true, "MustCompile": true, "Rel": true,
	}
)

// compare records, at n, each operand that is a value telling the
// verifier's sandbox apart.
func (g *goSource) compare(n ast.Node, scope string, operands ...ast.Expr) {
	for _, e := range operands {
		if v, ok := g.sandboxValue(e); ok {
			g.cmps = append(g.cmps, goCmp{v, n.Pos(), g.line(n.Pos()), scope})
			return
		}
	}
}

// sandboxValue reports whether e is a constant that tells the verifier's
// sandbox from a developer's machine (see isSandboxValue), and which.
func (g *goSource) sandboxValue(e ast.Expr) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.CallExpr: // []byte("/tmp"), uint32(65534)
			if len(x.Args) == 1 {
				switch x.Fun.(type) {
				case *ast.ArrayType, *ast.Ident:
					if lit, ok := x.Args[0].(*ast.BasicLit); ok && lit.Kind == token.INT {
						e = lit
						continue
					}
					if _, ok := x.Fun.(*ast.ArrayType); ok {
						e = x.Args[0]
						continue
					}
				}
			}
		case *ast.BasicLit:
			if x.Kind == token.INT {
				if v, ok := intConst(x); ok && v == 65534 {
					return "65534", true
				}
				return "", false
			}
		}
		break
	}
	var b strings.Builder
	if !g.fold(e, &b, nil) {
		return "", false
	}
	v := b.String()
	return v, isSandboxValue(v) != notSandbox
}

// Kinds of value isSandboxValue tells.
const (
	notSandbox      = iota
	sandboxKnown    // HOME and TMPDIR /tmp, the source at /src, uid and gid 65534 (nobody, nogroup, home /nonexistent)
	sandboxHostOnly // a string mentioning a sandbox: the host's name, and many other things
)

func isSandboxValue(v string) int {
	for _, dir := range []string{"/tmp", "/src", "/nonexistent"} {
		if v == dir || strings.HasPrefix(v, dir+"/") {
			return sandboxKnown
		}
	}
	switch v {
	case "65534", "nobody", "nogroup":
		return sandboxKnown
	}
	if strings.Contains(strings.ToLower(v), "sandbox") {
		return sandboxHostOnly
	}
	return notSandbox
}

// maxFold bounds a folded string, so nested repeats cannot blow up.
const maxFold = 1 << 16

// fold writes the string e evaluates to when it is made of constants to
// b, and the literals it used to parts if that is not nil, reporting
// false if e is anything else. It understands literals, the file's string
// constants, +, string([]byte{...}) and string(rune), and strings.Join,
// Repeat, Replace, ReplaceAll, ToLower, ToUpper, TrimSpace, path.Join,
// filepath.Join, fmt.Sprint and fmt.Sprintf of constants. Expressions
// found not to fold are remembered, so trying every level of a long
// a + b + c chain stays linear.
func (g *goSource) fold(e ast.Expr, b *strings.Builder, parts *[]*ast.BasicLit) bool {
	if g.nonConst[e] {
		return false
	}
	ok := false
	switch e := e.(type) {
	case *ast.BasicLit:
		if ok = e.Kind == token.STRING; ok {
			b.WriteString(unquote(e.Value))
			if parts != nil {
				*parts = append(*parts, e)
			}
		}
	case *ast.ParenExpr:
		ok = g.fold(e.X, b, parts)
	case *ast.BinaryExpr:
		ok = e.Op == token.ADD && g.fold(e.X, b, parts) && g.fold(e.Y, b, parts)
	case *ast.Ident:
		var v string
		if v, ok = g.consts[e.Name]; ok {
			b.WriteString(v)
		}
	case *ast.CallExpr:
		ok = g.foldCall(e, b, parts)
	}
	if ok && b.Len() > maxFold {
		ok = false
	}
	if !ok {
		g.nonConst[e] = true
	}
	return ok
}

// foldAll folds each expression on its own.
func (g *goSource) foldAll(es []ast.Expr, parts *[]*ast.BasicLit) ([]string, bool) {
	out := make([]string, 0, len(es))
	for _, e := range es {
		var b strings.Builder
		if !g.fold(e, &b, parts) {
			return nil, false
		}
		out = append(out, b.String())
	}
	return out, true
}

// foldCall folds the conversions and calls fold understands.
func (g *goSource) foldCall(c *ast.CallExpr, b *strings.Builder, parts *[]*ast.BasicLit) bool {
	if c.Ellipsis.IsValid() {
		return false
	}
	switch fun := c.Fun.(type) {
	case *ast.Ident:
		if fun.Name != "string" || len(c.Args) != 1 || g.funcs["string"] {
			return false
		}
		switch a := c.Args[0].(type) {
		case *ast.CompositeLit: // string([]byte{47, 'p', ...})
			at, ok := a.Type.(*ast.ArrayType)
			if !ok || at.Len != nil {
				return false
			}
			elt, ok := at.Elt.(*ast.Ident)
			if !ok {
				return false
			}
			bytewise := elt.Name == "byte" || elt.Name == "uint8"
			if !bytewise && elt.Name != "rune" && elt.Name != "int32" {
				return false
			}
			for _, x := range a.Elts {
				r, ok := intConst(x)
				if !ok {
					return false
				}
				if bytewise {
					b.WriteByte(byte(r))
				} else {
					b.WriteRune(rune(r))
				}
			}
			return true
		case *ast.BasicLit: // string('/'), string(rune(47)) is below
			if r, ok := intConst(a); ok {
				b.WriteRune(rune(r))
				return true
			}
		case *ast.CallExpr:
			if id, ok := a.Fun.(*ast.Ident); ok && (id.Name == "rune" || id.Name == "byte") && len(a.Args) == 1 {
				if r, ok := intConst(a.Args[0]); ok {
					b.WriteRune(rune(r))
					return true
				}
			}
		}
		return g.fold(c.Args[0], b, parts)
	case *ast.SelectorExpr:
		id, ok := fun.X.(*ast.Ident)
		if !ok {
			return false
		}
		name := fun.Sel.Name
		switch g.imports[id.Name] {
		case "strings":
			switch {
			case name == "Join" && len(c.Args) == 2:
				lit, ok := c.Args[0].(*ast.CompositeLit)
				if !ok {
					return false
				}
				elems, ok := g.foldAll(lit.Elts, parts)
				if !ok {
					return false
				}
				sep, ok := g.foldAll(c.Args[1:], parts)
				if !ok {
					return false
				}
				b.WriteString(strings.Join(elems, sep[0]))
				return true
			case (name == "ToLower" || name == "ToUpper" || name == "TrimSpace" || name == "Clone") && len(c.Args) == 1:
				v, ok := g.foldAll(c.Args, parts)
				if !ok {
					return false
				}
				switch name {
				case "ToLower":
					v[0] = strings.ToLower(v[0])
				case "ToUpper":
					v[0] = strings.ToUpper(v[0])
				case "TrimSpace":
					v[0] = strings.TrimSpace(v[0])
				}
				b.WriteString(v[0])
				return true
			case name == "ReplaceAll" && len(c.Args) == 3, name == "Replace" && len(c.Args) == 4:
				v, ok := g.foldAll(c.Args[:3], parts)
				if !ok {
					return false
				}
				n := int64(-1)
				if name == "Replace" {
					if n, ok = intConst(c.Args[3]); !ok {
						return false
					}
				}
				if len(v[2]) > len(v[1]) && len(v[0])*len(v[2]) > maxFold {
					return false
				}
				b.WriteString(strings.Replace(v[0], v[1], v[2], int(max(min(n, maxFold), -1))))
				return true
			case name == "Repeat" && len(c.Args) == 2:
				v, ok := g.foldAll(c.Args[:1], parts)
				n, nok := intConst(c.Args[1])
				if !ok || !nok || n < 0 || n > maxFold || int64(len(v[0]))*n > maxFold {
					return false
				}
				b.WriteString(strings.Repeat(v[0], int(n)))
				return true
			}
		case "path", "path/filepath":
			if name == "Join" {
				v, ok := g.foldAll(c.Args, parts)
				if !ok {
					return false
				}
				b.WriteString(path.Join(v...))
				return true
			}
		case "fmt":
			switch {
			case name == "Sprint":
				v, ok := g.foldAll(c.Args, parts)
				if !ok {
					return false
				}
				b.WriteString(strings.Join(v, ""))
				return true
			case name == "Sprintf" && len(c.Args) > 0:
				v, ok := g.foldAll(c.Args, parts)
				if !ok || !onlyStringVerbs(v[0]) {
					return false
				}
				args := make([]any, len(v)-1)
				for i, a := range v[1:] {
					args[i] = a
				}
				b.WriteString(fmt.Sprintf(v[0], args...))
				return true
			}
		}
	}
	return false
}

// onlyStringVerbs reports whether a format's verbs are all %s, %v or %%.
func onlyStringVerbs(format string) bool {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i >= len(format) || !strings.ContainsRune("sv%", rune(format[i])) {
			return false
		}
	}
	return true
}

// intConst is the value of an integer or character literal, possibly
// negated.
func intConst(e ast.Expr) (int64, bool) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok {
		return 0, false
	}
	var v int64
	switch lit.Kind {
	case token.INT:
		n, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64)
		if err != nil {
			return 0, false
		}
		v = n
	case token.CHAR:
		c, err := strconv.Unquote(lit.Value)
		if err != nil {
			return 0, false
		}
		r, _ := utf8.DecodeRuneInString(c)
		v = int64(r)
	default:
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// callOf returns the call whose function n is, looking through parentheses.
func callOf(n ast.Node, stack []ast.Node) *ast.CallExpr {
	child := n
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			child = p
			continue
		case *ast.CallExpr:
			if p.Fun == child {
				return p
			}
		}
		return nil
	}
	return nil
}

func (g *goSource) line(pos token.Pos) int {
	if !pos.IsValid() {
		return 0
	}
	return g.fset.Position(pos).Line
}

// text is the trimmed source line, what fresh matches base lines by; a
// long line is cut, so a file on one line costs no more than it is long.
func (g *goSource) text(line int) string {
	if line < 1 || line > len(g.lines) {
		return ""
	}
	t := bytes.TrimSpace(g.lines[line-1])
	return string(t[:min(len(t), 200)])
}

// body returns the source of a node, normalized by normalizeGo.
func (g *goSource) body(n ast.Node) string {
	start, end := g.offset(n.Pos()), g.offset(n.End())
	if start < 0 || end < start || end > len(g.src) {
		return ""
	}
	return normalizeGo(g.src[start:end])
}

func (g *goSource) offset(pos token.Pos) int {
	if !pos.IsValid() {
		return -1
	}
	f := g.fset.File(pos)
	if f == nil {
		return -1
	}
	return f.Offset(pos)
}

// within reports whether pos lies inside n.
func within(pos token.Pos, n ast.Node) bool { return pos >= n.Pos() && pos < n.End() }

// normalizeGo joins a fragment's tokens with single spaces, so layout and
// comments do not make an init look changed.
func normalizeGo(src []byte) string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(src)), src, func(token.Position, string) {}, 0)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if lit != "" && tok != token.SEMICOLON {
			b.WriteString(lit)
		} else {
			b.WriteString(tok.String())
		}
	}
	return b.String()
}

// declName names a top-level declaration: "f", "T.m", "var x".
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return recvName(d.Recv.List[0].Type) + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				if len(s.Names) > 0 {
					return d.Tok.String() + " " + s.Names[0].Name
				}
			case *ast.TypeSpec:
				return "type " + s.Name.Name
			}
		}
		return d.Tok.String()
	}
	return ""
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// importName is the name an import is used by when the spec does not
// rename it: the last element, skipping a major-version suffix.
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		if dir := path.Dir(p); dir != "." {
			base = path.Base(dir)
		}
	}
	if i := strings.IndexAny(base, ".-"); i > 0 {
		base = base[:i]
	}
	return base
}

// directive splits a //go:name comment into its name and arguments.
func directive(text string) (name, args string, ok bool) {
	rest, ok := strings.CutPrefix(text, "//go:")
	if !ok || rest == "" {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	return "go:" + name, strings.TrimSpace(args), true
}

func unquote(lit string) string {
	if s, err := strconv.Unquote(lit); err == nil {
		return s
	}
	return strings.Trim(lit, "`\"")
}

// member is how findings name a package member: os.Exit, unix.Exit.
func member(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return importName(pkg) + "." + name
}

// parseFailure describes why a file did not parse, for the finding.
func (g *goSource) parseFailure() string {
	if list, ok := errors.AsType[scanner.ErrorList](g.err); ok && len(list) > 0 {
		return list[0].Msg
	}
	return fmt.Sprint(g.err)
}
