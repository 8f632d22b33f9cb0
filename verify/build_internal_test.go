package verify

import (
	"slices"
	"testing"
)

func TestBuildCommand(t *testing.T) {
	const list, e, export, format = "list", "-e", "-export", "-json=" + listFields
	for _, c := range []struct {
		cmd, changed, want []string
		chdir              string
	}{
		{[]string{"go", "test", "-json", "./..."}, nil, []string{"go", list, e, export, format, "./..."}, ""},
		{[]string{"go", "test", "-json"}, nil, []string{"go", list, e, export, format, "."}, ""},
		{[]string{"/usr/local/go/bin/go", "test", "-json", "-run", "TestX", "-count", "3", "-tags", "a,b", "-race", "./a", "./t"}, nil,
			[]string{"/usr/local/go/bin/go", list, e, export, format, "-tags", "a,b", "-race", "./a", "./t"}, ""},
		{[]string{"go", "test", "-json", "-run=TestX", "-tags=x", "-coverprofile", "c.out", "-v", "-exec", "w", "./...", "-args", "-flag", "./b"}, nil,
			[]string{"go", list, e, export, format, "-tags=x", "./..."}, ""},
		{[]string{"go", "test", "-C", "sub", "-json", "-test.run", "X", "./m"}, nil, []string{"go", "-C", "sub", list, e, export, format, "./m"}, "sub"},
		// The folders of changed non-test Go files are built too (a fix
		// may change a package the harness does not test); tests, test
		// data, other files and files outside -C are not added.
		{[]string{"go", "test", "-json", "./cart"}, []string{"cart/cart.go", "other/x.go", "other/x_test.go", "cart/testdata/a.go", "main.go", "README.md"},
			[]string{"go", list, e, export, format, "./cart", "./other", "."}, ""},
		{[]string{"go", "test", "-C=sub", "-json", "./m"}, []string{"sub/m/m.go", "sub/n/n.go", "top/t.go", "sub/s.go"},
			[]string{"go", "-C=sub", list, e, export, format, "./m", "./n", "."}, "sub"},
		{[]string{"npx", "jest", "--json"}, nil, nil, ""},
		{[]string{"python", "-m", "pytest"}, nil, nil, ""},
		{[]string{"go", "vet", "./..."}, nil, nil, ""},
	} {
		if got, chdir := buildCommand(c.cmd, c.changed); !slices.Equal(got, c.want) || chdir != c.chdir {
			t.Errorf("buildCommand(%q, %q) = %q, %q; want %q, %q", c.cmd, c.changed, got, chdir, c.want, c.chdir)
		}
	}
}

// A changed non-test Go file no listed package compiled (a build
// constraint's twin, a file outside the module) is reported; one that was
// compiled is not, under -C too.
func TestUncompiled(t *testing.T) {
	t.Parallel()
	pkgs := []listedPackage{
		{ImportPath: "m/cart", Root: "/w/sub", Dir: "/w/sub/cart", GoFiles: []string{"cart.go", "cart_nocgo.go"}},
		{ImportPath: "m/c", Root: "/w/sub", Dir: "/w/sub/c", Error: &struct{ Err string }{"build constraints exclude all Go files"}},
	}
	got := uncompiled([]string{"sub/cart/cart.go", "sub/cart/cart_nocgo.go", "sub/cart/cart_cgo.go", "sub/c/c.go", "sub/cart/cart_test.go", "top/t.go"}, pkgs, "sub")
	if want := []string{"sub/cart/cart_cgo.go", "sub/c/c.go", "top/t.go"}; !slices.Equal(got, want) {
		t.Errorf("uncompiled = %q, want %q", got, want)
	}
	if f, order := failures(pkgs); len(order) != 0 || len(f) != 0 {
		t.Errorf("a package with nothing to compile counted as a failure: %v", f)
	}
}

func TestFirstCompilerLine(t *testing.T) {
	got := firstCompilerLine([]byte("# shoplite/cart\ncart/cart.go:52:10: undefined: discounted\ncart/cart.go:60:1: other\n"), []byte("shoplite/cmd/shoplite\n"))
	if want := `"cart/cart.go:52:10: undefined: discounted" in shoplite/cart`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := firstCompilerLine(nil, nil); got != "the build check failed with no output" {
		t.Errorf("got %s", got)
	}
}
