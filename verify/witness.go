package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/sandbox"
)

// The witness is the part of the defence against counterfeit results that
// runs with the tests (docs/verification.md has the whole design). A
// candidate's code runs in the test process, before the tests and beside
// them, so it can print the framing lines of a passing run and leave. What
// it cannot print is a line that only the frozen tests' own completion
// produces:
//
//   - Every Test function of the frozen test tree is given, in a copy the
//     go command reads through -overlay (the checkout is not touched), a
//     first statement `defer w.Done(t, pkg)`. Done logs, through the
//     test's own t.Log, an HMAC of its package, name and outcome under a
//     key made for this run.
//   - The key is in the source of a package that exists only in the
//     overlay, under a name made for this run, in the run's private /tmp.
//     The go command compiles it before any test binary links; the -exec
//     wrapper deletes it before the first test binary starts, so no
//     candidate code runs while the key is on a path.
//   - A test the results say passed counts only if its own output holds
//     the HMAC of its pass. A run with a missing or wrong witness is
//     counterfeit: REJECTED.
//
// What it does not stop, and what the static checks of package tamper are
// for: code that finds the key inside its own test binary or the build
// cache, or reaches into the testing package's memory.

// Paths of the witness inside the sandbox. The key's sources are the only
// secret and live in the run's own /tmp; the instrumented test files, the
// overlay and the exec wrapper hold none and come read-only from a
// directory of the host's, so a repository with thousands of test files
// costs one mount, not a descriptor each.
const (
	witnessKeyDir  = "/tmp/.signoff-witness"
	witnessMount   = "/signoff/witness"
	witnessOverlay = witnessMount + "/overlay.json"
	witnessExec    = witnessMount + "/exec.sh"
	witnessMarker  = "signoff-witness "
	maxWitnessLogs = 16
)

// witness is one run's instrumentation.
type witness struct {
	key     []byte
	files   []sandbox.File
	mount   sandbox.Mount
	command []string
	// dirs are the witness packages' directories, made empty in the
	// checkout (vet runs in a package's directory; the file comes from
	// the overlay) and removed by cleanup.
	dirs []string
	// tests counts the instrumented Test functions.
	tests int
}

var (
	testFuncName = regexp.MustCompile(`^Test($|[^a-z])`)
	witnessLine  = regexp.MustCompile(`signoff-witness (pass|fail|skip) ([0-9a-f]{64})`)
)

// newWitness instruments the Go test files of the checkout at dir (seen
// by the sandbox at src) for one run of command, writing what holds no
// secret under host (an empty directory of the caller's, mounted
// read-only). It returns nil and the reason when the command is not a
// plain `go test` it can instrument.
func newWitness(dir, src, host string, command []string) (*witness, string, error) {
	if len(command) < 2 || path.Base(command[0]) != "go" || command[1] != "test" {
		return nil, "the command is not `go test`", nil
	}
	for _, a := range command[2:] {
		name := strings.TrimLeft(a, "-")
		name, _, _ = strings.Cut(name, "=")
		if a != name && (name == "overlay" || name == "exec" || name == "c" || name == "o") {
			return nil, "the command sets -" + name + " itself", nil
		}
	}
	w := &witness{key: make([]byte, 32), mount: sandbox.Mount{Host: host, Target: witnessMount}}
	put := func(name string, b []byte, perm os.FileMode) (string, error) {
		full := filepath.Join(host, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		return witnessMount + "/" + name, os.WriteFile(full, b, perm)
	}
	if _, err := rand.Read(w.key); err != nil {
		return nil, "", err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, "", err
	}
	suffix := hex.EncodeToString(rnd[:])
	alias := "signoffwitness_" + suffix
	pkgDir := "_signoffwitness_" + suffix

	tests, err := goTestFiles(dir)
	if err != nil {
		return nil, "", err
	}
	if len(tests) == 0 {
		return nil, "the checkout has no Go test files", nil
	}
	overlay := map[string]string{}
	mods := map[string]string{} // module root (relative) -> witness import path
	roots := map[string]string{}
	for i, rel := range tests {
		root, modPath, err := moduleOf(dir, path.Dir(rel), roots)
		if err != nil {
			w.cleanup()
			return nil, "", err
		}
		if root == "" {
			w.cleanup()
			return nil, "no go.mod above " + rel, nil
		}
		wpath, ok := mods[root]
		if !ok {
			wpath = modPath + "/" + pkgDir
			mods[root] = wpath
			d := filepath.Join(dir, filepath.FromSlash(root), pkgDir)
			if err := os.Mkdir(d, 0o755); err != nil {
				w.cleanup()
				return nil, "", fmt.Errorf("witness directory: %w", err)
			}
			w.dirs = append(w.dirs, d)
			keyFile := fmt.Sprintf("%s/%d.go", witnessKeyDir, len(mods))
			overlay[path.Join(src, root, pkgDir, "witness.go")] = keyFile
			w.files = append(w.files, sandbox.File{Target: keyFile, Content: witnessSource(w.key), Perm: 0o644})
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			w.cleanup()
			return nil, "", err
		}
		pkg := modPath
		if sub := strings.TrimPrefix(strings.TrimPrefix(path.Dir(rel), root), "/"); sub != "" && sub != "." {
			pkg = modPath + "/" + sub
		}
		out, n, ok := instrument(b, alias, wpath, pkg)
		if !ok {
			continue // the go command will say why it does not compile
		}
		w.tests += n
		target, err := put(fmt.Sprintf("t/%d.go", i), out, 0o644)
		if err != nil {
			w.cleanup()
			return nil, "", err
		}
		overlay[path.Join(src, rel)] = target
	}
	ov, err := json.Marshal(struct{ Replace map[string]string }{overlay})
	if err != nil {
		w.cleanup()
		return nil, "", err
	}
	if _, err := put("overlay.json", ov, 0o644); err != nil {
		w.cleanup()
		return nil, "", err
	}
	// Every test binary links the witness package, so it is compiled
	// before the first one runs: its source can go then.
	// The test binary is made execute-only too: code in it that opens its
	// own executable to look for the key must first give itself back the
	// right to read it.
	if _, err := put("exec.sh", []byte("#!/bin/sh\nrm -rf "+witnessKeyDir+"\nchmod 0111 \"$1\" 2>/dev/null\nexec \"$@\"\n"), 0o755); err != nil {
		w.cleanup()
		return nil, "", err
	}
	w.command = slices.Concat(command[:2], []string{"-overlay=" + witnessOverlay, "-exec=" + witnessExec}, command[2:])
	return w, "", nil
}

// cleanup removes the witness directories from the checkout and the
// host directory of its files.
func (w *witness) cleanup() {
	for _, d := range w.dirs {
		os.Remove(d)
	}
	if w.mount.Host != "" {
		os.RemoveAll(w.mount.Host)
	}
}

// goTestFiles lists the Go test files of the checkout that the go command
// could build: not under testdata, vendor, or a directory whose name
// starts with . or _.
func goTestFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// moduleOf finds the module that holds directory rel of the checkout: the
// nearest go.mod at or above it, and its module path.
func moduleOf(dir, rel string, cache map[string]string) (root, modPath string, err error) {
	for d := rel; ; d = path.Dir(d) {
		if mp, ok := cache[d]; ok {
			if mp == "" {
				goto up
			}
			return d, mp, nil
		}
		{
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d), "go.mod"))
			if err == nil {
				mp := modulePath(b)
				cache[d] = mp
				if mp != "" {
					return d, mp, nil
				}
			} else {
				cache[d] = ""
			}
		}
	up:
		if d == "." || d == "/" || d == "" {
			return "", "", nil
		}
	}
}

// modulePath reads the module directive of a go.mod.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			if p, err := strconv.Unquote(f[1]); err == nil {
				return p
			}
			return f[1]
		}
	}
	return ""
}

// instrument inserts the witness into one test file, keeping every line
// where it was (failure messages name file:line): the import goes on the
// package clause's line, each Test function's defer right after its
// opening brace, the use of the import after the last line. It reports
// how many functions it instrumented, and false when the file does not
// parse.
func instrument(src []byte, alias, wpath, pkg string) ([]byte, int, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, false
	}
	testing := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "testing" {
			testing = "testing"
			if im.Name != nil {
				testing = im.Name.Name
			}
		}
	}
	type edit struct {
		at, end int
		text    string
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	edits := []edit{{at: off(f.Name.End()), end: off(f.Name.End()), text: "; import " + alias + " " + strconv.Quote(wpath)}}
	n := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || fn.Type.TypeParams != nil || !testFuncName.MatchString(fn.Name.Name) {
			continue
		}
		params := fn.Type.Params.List
		if len(params) != 1 || len(params[0].Names) > 1 || !isTestingT(params[0].Type, testing) || (fn.Type.Results != nil && len(fn.Type.Results.List) > 0) {
			continue
		}
		name := "signoffwitness_t"
		switch {
		case len(params[0].Names) == 0:
			edits = append(edits, edit{at: off(params[0].Type.Pos()), end: off(params[0].Type.Pos()), text: name + " "})
		case params[0].Names[0].Name == "_":
			id := params[0].Names[0]
			edits = append(edits, edit{at: off(id.Pos()), end: off(id.End()), text: name})
		default:
			name = params[0].Names[0].Name
		}
		at := off(fn.Body.Lbrace) + 1
		edits = append(edits, edit{at: at, end: at, text: " defer " + alias + ".Done(" + name + ", " + strconv.Quote(pkg) + ");"})
		n++
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.at], []byte(e.text), out[e.end:])
	}
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	out = append(out, []byte("\nvar _ = "+alias+".Done\n")...)
	return out, n, true
}

// isTestingT says whether e is *testing.T (or *T under a dot import).
func isTestingT(e ast.Expr, testing string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && testing != "" && testing != "." && id.Name == testing && x.Sel.Name == "T"
	case *ast.Ident:
		return testing == "." && x.Name == "T"
	}
	return false
}

// witnessSource is the witness package: Done logs the HMAC of the test's
// package, name and outcome under this run's key.
func witnessSource(key []byte) []byte {
	var lit strings.Builder
	for i, b := range key {
		if i > 0 {
			lit.WriteString(", ")
		}
		fmt.Fprintf(&lit, "%d", b)
	}
	return []byte(`// Code generated by signoff verify for one run. DO NOT EDIT.

package signoffwitness

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

var key = [...]byte{` + lit.String() + `}

// Done is deferred first by every frozen Test function. A test that is
// panicking has not failed yet in the testing package's eyes: recover
// tells, and the panic goes on.
func Done(t *testing.T, pkg string) {
	t.Helper()
	outcome := "pass"
	r := recover()
	switch {
	case r != nil || t.Failed():
		outcome = "fail"
	case t.Skipped():
		outcome = "skip"
	}
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte(pkg + "\x00" + t.Name() + "\x00" + outcome))
	t.Log("` + strings.TrimSpace(witnessMarker) + ` " + outcome + " " + hex.EncodeToString(m.Sum(nil)))
	if r != nil {
		panic(r)
	}
}
`)
}

// mac is what the witness of test name in package pkg logs for outcome.
func (w *witness) mac(pkg, name, outcome string) string {
	m := hmac.New(sha256.New, w.key)
	m.Write([]byte(pkg + "\x00" + name + "\x00" + outcome))
	return hex.EncodeToString(m.Sum(nil))
}

// witnessed says whether the results hold, in the output of the top-level
// test of name in pkg, the witness of its pass.
func (w *witness) witnessed(res Results, pkg, name string) bool {
	top, _, _ := strings.Cut(name, "/")
	want := w.mac(pkg, top, Pass)
	for _, t := range res.Tests {
		if t.Package != pkg || t.Name != top {
			continue
		}
		for _, l := range t.Witness {
			if m := witnessLine.FindStringSubmatch(l); m != nil && m[1] == Pass && hmac.Equal([]byte(m[2]), []byte(want)) {
				return true
			}
		}
	}
	return false
}
