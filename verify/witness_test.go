package verify

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lines returns the 1-based line of every Test function's name, so a test
// can check that instrumenting moved none.
func lines(t testing.TB, src []byte) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, src)
	}
	out := map[string]int{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			out[fn.Name.Name] = fset.Position(fn.Name.Pos()).Line
		}
	}
	return out
}

func TestInstrument(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      int      // instrumented functions
		pkg       string   // package clause
		has, not  []string // substrings of the output
	}{
		{"plain", "package cart\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tt.Log(1)\n}\n", 1, "cart",
			[]string{"func TestA(t *testing.T) { defer signoffWitnessDone_abc123(t, \"m/cart\");"}, nil},
		{"renamed import and unnamed parameter", "package cart\n\nimport tt \"testing\"\n\nfunc TestA(*tt.T) {}\n", 1, "cart",
			[]string{"func TestA(signoffWitnessT_abc123 *tt.T) { defer signoffWitnessDone_abc123(signoffWitnessT_abc123"}, nil},
		{"blank parameter", "package cart\n\nimport \"testing\"\n\nfunc TestA(_ *testing.T) {}\n", 1, "cart",
			[]string{"func TestA(signoffWitnessT_abc123 *testing.T)"}, nil},
		{"dot import", "package cart\n\nimport . \"testing\"\n\nfunc TestA(t *T) {}\n", 1, "cart", []string{"defer signoffWitnessDone_abc123(t,"}, nil},
		{"not tests: helpers, benchmarks, lower-case, methods, generics", "package cart\n\nimport \"testing\"\n\n" +
			"func Testify(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\nfunc helper(t *testing.T) {}\n" +
			"type s struct{}\nfunc (s) TestM(t *testing.T) {}\nfunc TestG[T any](t *testing.T) {}\nfunc TestMain(m *testing.M) {}\n", 0, "cart", nil, []string{"defer"}},
		{"external test package and a comment on the package line", "package cart_test // the API\n\nimport (\n\t\"testing\"\n)\n\nfunc Test(t *testing.T) {}\nfunc Test_x(t *testing.T) {}\n", 2, "cart_test",
			[]string{"package cart_test // the API\n"}, nil},
		{"fuzz targets carry it too; a fuzz-named test of *testing.T or a test of *testing.F does not", "package cart\n\nimport \"testing\"\n\n" +
			"func FuzzA(f *testing.F) {}\nfunc Fuzzy(f *testing.F) {}\nfunc FuzzT(t *testing.T) {}\nfunc TestF(f *testing.F) {}\n", 1, "cart",
			[]string{"func FuzzA(f *testing.F) { defer signoffWitnessDone_abc123(f, \"m/cart\");"}, []string{"FuzzT(t *testing.T) { defer", "TestF(f *testing.F) { defer"}},
		{"no testing import", "package cart\n\nfunc TestA(t *T) {}\n\ntype T struct{}\n", 0, "cart", nil, []string{"defer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, n, pkg, ok := instrument([]byte(tc.src), "m/cart", "abc123")
			if !ok {
				t.Fatal("did not parse")
			}
			if n != tc.want || pkg != tc.pkg {
				t.Errorf("instrumented %d in package %s, want %d in %s\n%s", n, pkg, tc.want, tc.pkg, out)
			}
			for _, h := range tc.has {
				if !strings.Contains(string(out), h) {
					t.Errorf("output lacks %q:\n%s", h, out)
				}
			}
			for _, h := range tc.not {
				if strings.Contains(string(out), h) {
					t.Errorf("output has %q:\n%s", h, out)
				}
			}
			before, after := lines(t, []byte(tc.src)), lines(t, out)
			for name, l := range before {
				if after[name] != l {
					t.Errorf("%s moved from line %d to %d", name, l, after[name])
				}
			}
		})
	}
	if _, _, _, ok := instrument([]byte("package"), "m", "abc123"); ok {
		t.Error("a file that does not parse was instrumented")
	}
}

// FuzzInstrument: instrumenting never panics, and a test file that parses
// still parses afterwards with every function on its line.
func FuzzInstrument(f *testing.F) {
	for _, s := range []string{
		"package cart\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tt.Log(1)\n}\n",
		"package cart_test // x\nimport tt \"testing\"\nfunc TestA(*tt.T) {}\nfunc TestB(_ *tt.T) { /* } */ }\n",
		"//go:build linux\n\npackage p\nimport . \"testing\"\nfunc TestX(t *T) {}",
		"package p\nimport \"testing\"\nfunc TestX(t, u *testing.T) {}\nfunc TestY(t *testing.T) int { return 0 }\n",
		"package p", "", "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fset := token.NewFileSet()
		if _, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution); err != nil {
			return
		}
		out, _, _, ok := instrument(src, "m", "abc123")
		if !ok {
			t.Fatalf("a file that parses was not instrumented:\n%s", src)
		}
		before, after := lines(t, src), lines(t, out)
		for name, l := range before {
			if after[name] != l {
				t.Fatalf("%s moved from line %d to %d:\n%s\n---\n%s", name, l, after[name], src, out)
			}
		}
	})
}

// TestKeyBinary: the wrapper writes the key over every copy of the
// placeholder and nothing else, and leaves the binary execute-only.
func TestKeyBinary(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "cart.test")
	placeholder := bytes.Repeat([]byte{7}, 32)
	content := append(append(append([]byte("head"), placeholder...), []byte("middle")...), placeholder...)
	if err := os.WriteFile(bin, append(content, "tail"...), 0o755); err != nil {
		t.Fatal(err)
	}
	key, err := keyBinary(bin, placeholder)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm() != 0o111 {
		t.Fatalf("mode %v, %v: want execute-only", fi.Mode(), err)
	}
	os.Chmod(bin, 0o644)
	got, _ := os.ReadFile(bin)
	want := append(append(append(append([]byte("head"), key[:]...), []byte("middle")...), key[:]...), "tail"...)
	if !bytes.Equal(got, want) || bytes.Equal(key[:], placeholder) {
		t.Fatalf("patched binary = %q", got)
	}
	// The witness source carries the placeholder, never a key.
	src := witnessSource("cart", "abc123", placeholder)
	if !bytes.Contains(src, []byte("7, 7, 7")) {
		t.Fatal("the witness source does not hold the placeholder")
	}
	// Every name it declares carries the run's tag: a candidate's code
	// in the same package cannot refer to the key or the witness.
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range f.Imports {
		if im.Name == nil || !strings.HasSuffix(im.Name.Name, "_abc123") {
			t.Errorf("import %s is not named with the tag", im.Path.Value)
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !strings.HasSuffix(d.Name.Name, "_abc123") {
				t.Errorf("func %s is not named with the tag", d.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok && !strings.HasSuffix(vs.Names[0].Name, "_abc123") {
					t.Errorf("var %s is not named with the tag", vs.Names[0].Name)
				}
			}
		}
	}
}
