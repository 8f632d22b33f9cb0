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
	"syscall"

	"github.com/signoff-dev/signoff/sandbox"
)

// The witness is the part of the defence against counterfeit results that
// runs with the tests (docs/verification.md has the whole design). A
// candidate's code runs in the test process, before the tests and beside
// them, so it can print the framing lines of a passing run and leave. What
// it should not be able to print is a line that only the frozen tests' own
// completion produces:
//
//   - Every Test function of the frozen test tree is given, in a copy the
//     go command reads through -overlay (the checkout is not touched, line
//     numbers stay), a first statement `defer signoffWitnessDone_<tag>(t, pkg)`
//     (every witness name carries a tag derived from the run's secret).
//     The function lives in a file the overlay adds to each test package;
//     it logs, through the test's own t.Log, an HMAC of the package, the
//     test's name and its outcome.
//   - Its key is not in any source: the compiled test binary holds a fixed
//     placeholder, and the -exec wrapper (this program, run in the
//     sandbox) writes a fresh random key over it just before the binary
//     starts, prints the key as the package's first line of output, makes
//     the binary execute-only and executes it. No key exists anywhere
//     before the binary that holds it starts; the verifier reads each
//     package's key from its first line.
//   - A test the results say passed counts only if its own output holds
//     the HMAC of its pass under its package's key.
//
// What it does not stop, and what the static checks of package tamper are
// for: code in the test process that reads the key out of its own
// executable or memory (any secret in a process is within reach of code
// in it). The sources the checks refuse are the ones such code needs.

// Names of the witness in the sandbox and in the instrumented code.
const (
	witnessMount   = "/signoff/witness"
	witnessOverlay = witnessMount + "/overlay.json"
	// witnessPlaceholderFile holds the placeholder for the wrapper; a
	// shielded test binary cannot read the mount.
	witnessPlaceholderFile = witnessMount + "/placeholder"
	witnessMarker          = "signoff-witness "
	witnessKeyMarker       = "signoff-witness-key "
	witnessExecArg         = "__signoff_witness_exec"
	maxWitnessLogs         = 16
)

func init() {
	if len(os.Args) > 3 && os.Args[1] == witnessExecArg {
		if err := witnessExec(os.Args[2] == "shield", os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "signoff witness:", err)
			os.Exit(1)
		}
	}
}

// witnessExec is the -exec wrapper: it keys the test binary args[0] at
// the placeholder this run's witness files hold (read from the witness's
// mount, never from a command line another process could read), says the
// key on standard output, makes the binary execute-only, shields it when
// asked, and becomes it.
func witnessExec(shield bool, args []string) error {
	ph, err := os.ReadFile(witnessPlaceholderFile)
	if err != nil || len(ph) != 32 {
		return fmt.Errorf("the placeholder: %v (%d bytes)", err, len(ph))
	}
	bin := args[0]
	key, err := keyBinary(bin, ph)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(os.Stdout, "%s%x\n", witnessKeyMarker, key); err != nil {
		return err
	}
	if shield {
		if err := landlockRestrict(shieldRules(os.Getenv("GOROOT"), bin)); err != nil {
			return err
		}
	}
	return syscall.Exec(bin, args, os.Environ())
}

// keyBinary writes a fresh key over every copy of the placeholder in the
// binary and makes it execute-only: code in it that opens its own
// executable to look for the key must first give itself back the right to
// read it. The placeholder is made for the run, after the candidate's
// code was written, so no variable of the candidate's can hold it and be
// given the key.
func keyBinary(bin string, placeholder []byte) ([32]byte, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return key, err
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return key, err
	}
	f, err := os.OpenFile(bin, os.O_WRONLY, 0)
	if err != nil {
		return key, err
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], placeholder)
		if i < 0 {
			break
		}
		if _, err := f.WriteAt(key[:], int64(off+i)); err != nil {
			f.Close()
			return key, err
		}
		off += i + len(key)
	}
	if err := f.Close(); err != nil {
		return key, err
	}
	return key, os.Chmod(bin, 0o111)
}

// witness is one run's instrumentation.
type witness struct {
	// placeholder is what this run's witness files hold where the key goes.
	placeholder []byte
	mount       sandbox.Mount
	command     []string
	// tests counts the instrumented Test functions.
	tests int
}

var (
	testFuncName = regexp.MustCompile(`^Test($|[^a-z])`)
	// Fuzz targets run their seed corpus as subtests under plain go test
	// and report like tests: a harness names them (harness init derives
	// them as pass-to-pass), so they carry the witness too.
	fuzzFuncName = regexp.MustCompile(`^Fuzz($|[^a-z])`)
	witnessLine  = regexp.MustCompile(`signoff-witness (pass|fail|skip) ([0-9a-f]{64})`)
	witnessKey   = regexp.MustCompile(`^signoff-witness-key ([0-9a-f]{64})\n?$`)
)

// newWitness instruments the Go test files of the checkout at dir (seen
// by the sandbox at src) for one run of command, writing the instrumented
// copies, the witness files and the overlay under host (an empty
// directory of the caller's, mounted read-only); exe is this program as
// the sandbox sees it. It returns nil and the reason when the command is
// not a plain `go test` it can instrument.
func newWitness(dir, src, host, exe string, placeholder []byte, shield bool, command []string) (*witness, string, error) {
	if why := witnessCommand(command); why != "" {
		return nil, why, nil
	}
	if strings.ContainsAny(exe, " \t'\"\\") {
		return nil, "", fmt.Errorf("witness: executable path %q has a space or quote", exe)
	}
	if len(placeholder) != 32 {
		return nil, "", fmt.Errorf("witness: placeholder of %d bytes", len(placeholder))
	}
	w := &witness{placeholder: placeholder, mount: sandbox.Mount{Host: host, Target: witnessMount}}
	// The witness files' names derive from the placeholder, which no
	// candidate knows, so its tree cannot already hold them.
	// So do its identifiers: a candidate's own code compiled into the
	// test binary (a non-test file of the package) cannot name the key
	// or call the witness, since it cannot know what they are called.
	tag := sha256.Sum256(placeholder)
	fileTag := hex.EncodeToString(tag[:6])
	put := func(name string, b []byte) (string, error) {
		full := filepath.Join(host, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		return witnessMount + "/" + name, os.WriteFile(full, b, 0o644)
	}
	tests, err := goTestFiles(dir)
	if err != nil {
		return nil, "", err
	}
	if len(tests) == 0 {
		return nil, "the checkout has no Go test files", nil
	}
	overlay := map[string]string{}
	roots := map[string]string{}
	type pkgKey struct{ dir, name string }
	packages := map[pkgKey]bool{}
	for i, rel := range tests {
		pkg, ok, err := importPath(dir, path.Dir(rel), roots)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			// Fail closed: the tree decides this, and the candidate's
			// part of the tree is not to switch the witness off.
			return nil, "", fmt.Errorf("witness: no go.mod above %s", rel)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, "", err
		}
		out, n, name, ok := instrument(b, pkg, fileTag)
		if !ok {
			continue // the go command will say why it does not compile
		}
		packages[pkgKey{path.Dir(rel), name}] = true
		if n == 0 {
			continue
		}
		w.tests += n
		target, err := put(fmt.Sprintf("t/%d.go", i), out)
		if err != nil {
			return nil, "", err
		}
		overlay[path.Join(src, rel)] = target
	}
	// One witness file per test package (a directory may hold the
	// package's own tests and an external _test package).
	for k := range packages {
		file := path.Join(src, k.dir, "zz_signoffwitness_"+fileTag+"_"+k.name+"_test.go")
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(k.dir), path.Base(file))); err == nil {
			return nil, "", fmt.Errorf("witness: the checkout already has %s", path.Join(k.dir, path.Base(file)))
		}
		target, err := put(fmt.Sprintf("w/%s/%s.go", strings.ReplaceAll(k.dir, "/", "_"), k.name), witnessSource(k.name, fileTag, w.placeholder))
		if err != nil {
			return nil, "", err
		}
		overlay[file] = target
	}
	ov, err := json.Marshal(struct{ Replace map[string]string }{overlay})
	if err != nil {
		return nil, "", err
	}
	if _, err := put("overlay.json", ov); err != nil {
		return nil, "", err
	}
	if _, err := put(path.Base(witnessPlaceholderFile), placeholder); err != nil {
		return nil, "", err
	}
	mode := "open"
	if shield {
		mode = "shield"
	}
	w.command = slices.Concat(command[:2], []string{"-overlay=" + witnessOverlay, "-exec=" + exe + " " + witnessExecArg + " " + mode}, command[2:])
	return w, "", nil
}

// witnessCommand says why the witness cannot instrument command, or "".
func witnessCommand(command []string) string {
	if len(command) < 2 || path.Base(command[0]) != "go" || command[1] != "test" {
		return "the command is not `go test`"
	}
	for _, a := range command[2:] {
		name := strings.TrimLeft(a, "-")
		name, _, _ = strings.Cut(name, "=")
		if a != name && (name == "overlay" || name == "exec" || name == "c" || name == "o") {
			return "the command sets -" + name + " itself"
		}
	}
	return ""
}

// cleanup removes the host directory of the witness's files.
func (w *witness) cleanup() {
	if w.mount.Host != "" {
		os.RemoveAll(w.mount.Host)
	}
}

// goFiles lists the Go files of the checkout that the go command could
// build (not under testdata, vendor, node_modules or a directory whose
// name starts with . or _), slash-separated and relative to dir, sorted.
func goFiles(dir string) ([]string, error) {
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
		if d.Type().IsRegular() && strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
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

// goTestFiles lists the Go test files among goFiles.
func goTestFiles(dir string) ([]string, error) {
	all, err := goFiles(dir)
	return slices.DeleteFunc(all, func(p string) bool { return !strings.HasSuffix(p, "_test.go") }), err
}

// moduleOf finds the module that holds directory rel of the checkout: the
// nearest go.mod at or above it, and its module path.
func moduleOf(dir, rel string, cache map[string]string) (root, modPath string, err error) {
	for d := rel; ; d = path.Dir(d) {
		mp, ok := cache[d]
		if !ok {
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d), "go.mod")); err == nil {
				mp = modulePath(b)
			}
			cache[d] = mp
		}
		if mp != "" {
			return d, mp, nil
		}
		if d == "." || d == "/" || d == "" {
			return "", "", nil
		}
	}
}

// importPath is the import path of the package in directory rel of the
// checkout at dir, and false when no module holds it.
func importPath(dir, rel string, cache map[string]string) (string, bool, error) {
	root, modPath, err := moduleOf(dir, rel, cache)
	if err != nil || root == "" {
		return "", false, err
	}
	if sub := strings.TrimPrefix(strings.TrimPrefix(rel, root), "/"); sub != "" && sub != "." {
		return modPath + "/" + sub, true, nil
	}
	return modPath, true, nil
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

// witnessIdent is the name of the witness's identifier what in a run
// whose tag is tag.
func witnessIdent(tag, what string) string { return "signoffWitness" + what + "_" + tag }

// instrument gives each Test function of one test file a first statement
// `defer <witness Done of tag>(t, pkg)`, keeping every line where it was
// (failure messages name file:line). It returns the file, how many
// functions it instrumented, the file's package name, and false when the
// file does not parse.
func instrument(src []byte, pkg, tag string) ([]byte, int, string, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, "", false
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
	var edits []edit
	n := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || fn.Type.TypeParams != nil {
			continue
		}
		want := ""
		switch {
		case testFuncName.MatchString(fn.Name.Name):
			want = "T"
		case fuzzFuncName.MatchString(fn.Name.Name):
			want = "F"
		default:
			continue
		}
		params := fn.Type.Params.List
		if len(params) != 1 || len(params[0].Names) > 1 || !isTesting(params[0].Type, testing, want) || (fn.Type.Results != nil && len(fn.Type.Results.List) > 0) {
			continue
		}
		name := witnessIdent(tag, "T")
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
		edits = append(edits, edit{at: at, end: at, text: " defer " + witnessIdent(tag, "Done") + "(" + name + ", " + strconv.Quote(pkg) + ");"})
		n++
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.at], []byte(e.text), out[e.end:])
	}
	return out, n, f.Name.Name, true
}

// isTesting says whether e is *testing.<typ> (or *<typ> under a dot
// import): T for a test, F for a fuzz target.
func isTesting(e ast.Expr, testing, typ string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := star.X.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && testing != "" && testing != "." && id.Name == testing && x.Sel.Name == typ
	case *ast.Ident:
		return testing == "." && x.Name == typ
	}
	return false
}

// witnessSource is the witness file of test package name in the run
// whose tag is tag: its Done logs the HMAC of the test's package, name
// and outcome under the key the -exec wrapper wrote over the placeholder.
// Every identifier it declares (imports share a scope with the package's
// declarations) carries the tag, so no package declares it and no
// candidate can refer to it.
func witnessSource(name, tag string, placeholder []byte) []byte {
	var lit strings.Builder
	for i, b := range placeholder {
		if i > 0 {
			lit.WriteString(", ")
		}
		fmt.Fprintf(&lit, "%d", b)
	}
	id := func(what string) string { return witnessIdent(tag, what) }
	return []byte(`// Code generated by signoff verify. DO NOT EDIT.

package ` + name + `

import (
	` + id("HMAC") + ` "crypto/hmac"
	` + id("SHA256") + ` "crypto/sha256"
	` + id("Hex") + ` "encoding/hex"
	` + id("Testing") + ` "testing"
)

// The key holds a placeholder until the -exec wrapper writes this run's
// key over it.
var ` + id("Key") + ` = [...]byte{` + lit.String() + `}

// Done is deferred first by every frozen Test function and fuzz target.
// A test that is panicking has not failed yet in the testing package's
// eyes: recover tells, and the panic goes on.
func ` + id("Done") + `(t ` + id("Testing") + `.TB, pkg string) {
	t.Helper()
	outcome := "pass"
	r := recover()
	switch {
	case r != nil || t.Failed():
		outcome = "fail"
	case t.Skipped():
		outcome = "skip"
	}
	m := ` + id("HMAC") + `.New(` + id("SHA256") + `.New, ` + id("Key") + `[:])
	m.Write([]byte(pkg + "\x00" + t.Name() + "\x00" + outcome))
	t.Log("` + strings.TrimSpace(witnessMarker) + ` " + outcome + " " + ` + id("Hex") + `.EncodeToString(m.Sum(nil)))
	if r != nil {
		panic(r)
	}
}
`)
}

// witnessMAC is what the witness of test name in package pkg logs for
// outcome under key.
func witnessMAC(key []byte, pkg, name, outcome string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(pkg + "\x00" + name + "\x00" + outcome))
	return hex.EncodeToString(m.Sum(nil))
}

// witnessed says whether the results hold, in the output of the top-level
// test of name in pkg, the witness of its pass under the key the wrapper
// gave that package's binary.
func witnessed(res Results, pkg, name string) bool {
	key, err := hex.DecodeString(res.Keys[pkg])
	if err != nil || len(key) != 32 {
		return false
	}
	top, _, _ := strings.Cut(name, "/")
	want := witnessMAC(key, pkg, top, Pass)
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
