package verify

import (
	"slices"
	"testing"
)

func TestBuildCommand(t *testing.T) {
	const list, export, format = "list", "-export", "-f={{.ImportPath}}"
	for _, c := range []struct {
		cmd, want []string
	}{
		{[]string{"go", "test", "-json", "./..."}, []string{"go", list, export, format, "./..."}},
		{[]string{"go", "test", "-json"}, []string{"go", list, export, format, "."}},
		{[]string{"/usr/local/go/bin/go", "test", "-json", "-run", "TestX", "-count", "3", "-tags", "a,b", "-race", "./a", "./t"},
			[]string{"/usr/local/go/bin/go", list, export, format, "-tags", "a,b", "-race", "./a", "./t"}},
		{[]string{"go", "test", "-json", "-run=TestX", "-tags=x", "-coverprofile", "c.out", "-v", "-exec", "w", "./...", "-args", "-flag", "./b"},
			[]string{"go", list, export, format, "-tags=x", "./..."}},
		{[]string{"go", "test", "-C", "sub", "-json", "-test.run", "X", "./m"}, []string{"go", "-C", "sub", list, export, format, "./m"}},
		{[]string{"npx", "jest", "--json"}, nil},
		{[]string{"python", "-m", "pytest"}, nil},
		{[]string{"go", "vet", "./..."}, nil},
	} {
		if got := buildCommand(c.cmd); !slices.Equal(got, c.want) {
			t.Errorf("buildCommand(%q) = %q, want %q", c.cmd, got, c.want)
		}
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
