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
	decls   map[ast.Decl]*declFacts
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

// goLocalCall is a call of a top-level function of the same package by
// plain name, for following init into helpers.
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
	for _, d := range g.file.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			continue // import paths are not literals the code uses
		}
		g.index(d, declName(d))
	}
	return g
}

// index records the references, literals, go statements and local calls
// in one top-level declaration.
func (g *goSource) index(d ast.Decl, scope string) {
	facts := &declFacts{first: g.line(d.Pos()), last: g.line(d.End())}
	g.decls[d] = facts
	nonConst := map[ast.Expr]bool{}
	ref := func(r goRef) {
		g.refs = append(g.refs, r)
		facts.refs = append(facts.refs, r)
	}
	ast.PreorderStack(d, nil, func(n ast.Node, stack []ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				if p, ok := g.imports[id.Name]; ok {
					ref(goRef{p, n.Sel.Name, callOf(n, stack), n.Pos(), g.line(n.Pos()), scope})
				}
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
			if n.Kind == token.STRING {
				g.lits = append(g.lits, goLit{unquote(n.Value), n.Pos(), g.line(n.Pos()), scope})
			}
		case *ast.BinaryExpr:
			// "_te" + "st.go" is the literal "_test.go": the outermost
			// concatenation of literals is judged as one, not its parts.
			var b strings.Builder
			if n.Op == token.ADD && foldString(n, &b, nil, nonConst) {
				g.lits = append(g.lits, goLit{b.String(), n.Pos(), g.line(n.Pos()), scope})
				return false
			}
		case *ast.GoStmt:
			facts.gos = append(facts.gos, n.Pos())
		}
		return true
	})
}

// foldString writes the value of a concatenation of string literals to b,
// and the literals to parts if it is not nil, reporting false if e is
// anything else. Expressions found not to fold are remembered in nonConst,
// so trying every level of a long a + b + c chain stays linear.
func foldString(e ast.Expr, b *strings.Builder, parts *[]*ast.BasicLit, nonConst map[ast.Expr]bool) bool {
	if nonConst[e] {
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
		ok = foldString(e.X, b, parts, nonConst)
	case *ast.BinaryExpr:
		ok = e.Op == token.ADD && foldString(e.X, b, parts, nonConst) && foldString(e.Y, b, parts, nonConst)
	}
	if !ok {
		nonConst[e] = true
	}
	return ok
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
