package verify_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

func TestMatcher(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule    string
		json    string
		out     string
		match   bool
		display string
	}{
		{"a string is a substring", `"want 9000"`, "got 8100, want 9000", true, `"want 9000"`},
		{"a substring is not a pattern", `"got \\d+"`, "got 8100", false, `"got \\d+"`},
		{"a regexp object is RE2", `{"regexp":"got [0-9]+, want 9000"}`, "x\ngot 8100, want 9000\n", true, "regexp /got [0-9]+, want 9000/"},
		{"a regexp that does not match", `{"regexp":"^got 7"}`, "got 8100", false, "regexp /^got 7/"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var m verify.Matcher
			if err := json.Unmarshal([]byte(tc.json), &m); err != nil {
				t.Fatal(err)
			}
			if m.Match(tc.out) != tc.match || m.String() != tc.display {
				t.Fatalf("%s: Match = %v, String = %s", tc.json, m.Match(tc.out), m)
			}
			b, err := json.Marshal(m)
			if err != nil || string(b) != tc.json {
				t.Fatalf("Marshal = %s, %v, want %s", b, err, tc.json)
			}
		})
	}
	// The zero matcher and a malformed one match nothing: an unset
	// expectation never reads as reproduced.
	for _, m := range []verify.Matcher{{}, {Regexp: "(unclosed"}} {
		if m.Match("") || m.Match("anything at all") {
			t.Errorf("%+v matched", m)
		}
	}
	for _, bad := range []string{`{}`, `{"regexp":""}`, `{"regexp":"("}`, `{"regexp":1}`, `{"regexp":"a","x":"b"}`, `null`, `[]`, `3`} {
		var m verify.Matcher
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) accepted: %+v", bad, m)
		}
	}
}

func TestMissingDependency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule, out, name string
	}{
		{"GOPROXY=off with a version", "a.go:3:8: github.com/pkg/errors@v0.9.1: module lookup disabled by GOPROXY=off", "github.com/pkg/errors"},
		{"go: downloading", "go: downloading golang.org/x/text v0.14.0\n", "golang.org/x/text"},
		{"missing go.sum entry", "a.go:2:8: missing go.sum entry for module providing package github.com/pkg/errors (imported by ex.com/m); to add:", "github.com/pkg/errors"},
		{"missing go.sum entry for go.mod", "go: github.com/x/y@v1.2.0: missing go.sum entry for go.mod file; to add it:", "github.com/x/y"},
		{"no required module", "a.go:3:8: no required module provides package golang.org/x/text; to add it:", "golang.org/x/text"},
		{"vendor mode", "a.go:3:8: cannot find module providing package golang.org/x/text: import lookup disabled by -mod=vendor", "golang.org/x/text"},
		{"read-only module cache", "go: writing go.mod cache: mkdir /gomodcache/cache/download/github.com/x/y/@v: read-only file system", "github.com/x/y"},
		{"node", "Error: Cannot find module 'left-pad'\nRequire stack:\n- /src/index.js", "left-pad"},
		{"node scoped", "Error: Cannot find module '@scope/pkg/sub'", "@scope/pkg/sub"},
		{"python", "E   ModuleNotFoundError: No module named 'yaml'", "yaml"},
		{"python submodule", "ModuleNotFoundError: No module named 'google.protobuf'", "google.protobuf"},
		{"a project file is not a dependency", "Error: Cannot find module './cart'", ""},
		{"a compile error is not", "cart/cart.go:12:2: undefined: Total", ""},
		{"nothing", "", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			name, ok := verify.MissingDependency(tc.out)
			if name != tc.name || ok != (tc.name != "") {
				t.Fatalf("MissingDependency = %q, %v, want %q", name, ok, tc.name)
			}
		})
	}
}

// The messages the real tools print, offline, for a dependency that was
// not fetched.
func TestMissingDependencyOfRealTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module ex.com/m\n\ngo 1.22\n\nrequire github.com/pkg/errors v0.9.1\n")
	write("a.go", "package m\n\nimport _ \"github.com/pkg/errors\"\n")
	write("t.py", "import yaml_not_installed_here\n")
	write("t.js", "require('left-pad-not-installed')\n")
	run := func(env []string, name string, args ...string) string {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed", name)
		}
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s %v succeeded: %s", name, args, out)
		}
		return string(out)
	}
	for _, tc := range []struct {
		out, want string
	}{
		{run([]string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOMODCACHE=" + filepath.Join(dir, "modcache")}, "go", "build", "./..."), "github.com/pkg/errors"},
		{run([]string{"GOPROXY=off", "GOFLAGS=", "GOMODCACHE=" + filepath.Join(dir, "modcache")}, "go", "vet", "./..."), "github.com/pkg/errors"},
		{run(nil, "python3", "t.py"), "yaml_not_installed_here"},
		{run(nil, "node", "t.js"), "left-pad-not-installed"},
	} {
		if name, ok := verify.MissingDependency(tc.out); !ok || name != tc.want {
			t.Errorf("MissingDependency(%q) = %q, %v, want %q", tc.out, name, ok, tc.want)
		}
	}
	if !strings.Contains(verify.MissingDependencyText("x"), "fetch it first") {
		t.Errorf("MissingDependencyText = %q", verify.MissingDependencyText("x"))
	}
}
