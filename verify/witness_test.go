package verify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
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
		has, not  []string // substrings of the output
	}{
		{"plain", "package cart\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tt.Log(1)\n}\n", 1,
			[]string{"package cart; import W \"m/_w\"", "func TestA(t *testing.T) { defer W.Done(t, \"m/cart\");", "var _ = W.Done"}, nil},
		{"renamed import and unnamed parameter", "package cart\n\nimport tt \"testing\"\n\nfunc TestA(*tt.T) {}\n", 1,
			[]string{"func TestA(signoffwitness_t *tt.T) { defer W.Done(signoffwitness_t"}, nil},
		{"blank parameter", "package cart\n\nimport \"testing\"\n\nfunc TestA(_ *testing.T) {}\n", 1,
			[]string{"func TestA(signoffwitness_t *testing.T)"}, nil},
		{"dot import", "package cart\n\nimport . \"testing\"\n\nfunc TestA(t *T) {}\n", 1, []string{"defer W.Done(t,"}, nil},
		{"not tests: helpers, benchmarks, lower-case, methods, generics", "package cart\n\nimport \"testing\"\n\n" +
			"func Testify(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\nfunc helper(t *testing.T) {}\n" +
			"type s struct{}\nfunc (s) TestM(t *testing.T) {}\nfunc TestG[T any](t *testing.T) {}\nfunc TestMain(m *testing.M) {}\n", 0, nil, []string{"defer W.Done"}},
		{"external test package and a comment on the package line", "package cart_test // the API\n\nimport (\n\t\"testing\"\n)\n\nfunc Test(t *testing.T) {}\nfunc Test_x(t *testing.T) {}\n", 2,
			[]string{"package cart_test; import W \"m/_w\" // the API"}, nil},
		{"no testing import", "package cart\n\nfunc TestA(t *T) {}\n\ntype T struct{}\n", 0, nil, []string{"defer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, n, ok := instrument([]byte(tc.src), "W", "m/_w", "m/cart")
			if !ok {
				t.Fatal("did not parse")
			}
			if n != tc.want {
				t.Errorf("instrumented %d, want %d\n%s", n, tc.want, out)
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
	if _, _, ok := instrument([]byte("package"), "W", "m/_w", "m"); ok {
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
		out, _, ok := instrument(src, "W", "m/_w", "m")
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

// TestWitnessSourceIsWhatTheThiefLooksFor makes the key-stealing attack in
// attack_test.go a real one: its pattern recovers the key from the
// witness's source, so it is only the deletion of that source before any
// test binary starts that keeps the key from it.
func TestWitnessSourceIsWhatTheThiefLooksFor(t *testing.T) {
	t.Parallel()
	key := []byte{0, 1, 2, 250, 255, 17}
	m := regexp.MustCompile("var key = \\[\\.\\.\\.\\]byte\\{([0-9, ]+)\\}").FindSubmatch(witnessSource(key))
	if m == nil {
		t.Fatal("the thief's pattern does not match the witness source: the attack row would prove nothing")
	}
	var got []byte
	for _, f := range strings.Split(string(m[1]), ", ") {
		n, _ := strconv.Atoi(f)
		got = append(got, byte(n))
	}
	if string(got) != string(key) {
		t.Fatalf("recovered %v, want %v", got, key)
	}
}
