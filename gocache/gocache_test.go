package gocache

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listFiles returns every regular file under dir with its size.
func listFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	files := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			files[p] = fi.Size()
		}
		return nil
	})
	return files
}

// TestLayerOverTrusted builds a module with the real go command, once into
// a trusted cache as usual and once through this package, and checks that
// the trusted cache is not written and that the layered build finds the
// trusted entries, writing only a few of its own to its layer.
func TestLayerOverTrusted(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mod := filepath.Join(root, "mod")
	os.MkdirAll(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n\nimport \"strings\"\n\nfunc Up(s string) string { return strings.ToUpper(s) }\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestUp(t *testing.T) { if Up(\"a\") != \"A\" { t.Fatal(\"no\") } }\n"), 0o644)

	build := func(cache, prog string) {
		t.Helper()
		cmd := exec.Command(goBin, "test", "-count=1", "./...")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+cache, "GOCACHEPROG="+prog, "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test (GOCACHEPROG=%q): %v\n%s", prog, err, out)
		}
	}
	trusted := filepath.Join(root, "trusted")
	build(trusted, "")
	before := listFiles(t, trusted)
	if len(before) == 0 {
		t.Fatal("the trusted build cached nothing")
	}

	warm := filepath.Join(root, "warm-layer")
	prog, err := Command(exe, trusted, warm)
	if err != nil {
		t.Fatal(err)
	}
	build(filepath.Join(root, "gocache-warm"), prog)

	after := listFiles(t, trusted)
	if len(after) != len(before) {
		var added []string
		for p := range after {
			if _, ok := before[p]; !ok {
				added = append(added, p)
			}
		}
		sort.Strings(added)
		t.Fatalf("the trusted cache changed: %d files before, %d after; new: %s", len(before), len(after), strings.Join(added, ", "))
	}
	// The layered build stores only what differs from the trusted build
	// (the test's own run and link, not the standard library).
	nWarm := len(listFiles(t, warm))
	if nWarm == 0 {
		t.Fatal("the layer holds nothing: the go command did not use the cache program")
	}
	if nWarm*10 > len(before) {
		t.Fatalf("the layer holds %d files for a trusted cache of %d: the trusted entries were not found", nWarm, len(before))
	}
	t.Logf("trusted cache %d files; the layered build wrote %d", len(before), nWarm)
}

func TestCommandRefusesSpaces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ exe, trusted, layer string }{
		{"/a b", "/t", "/l"}, {"/a", "", "/l"}, {"/a", "/t", "/l'"},
	} {
		if _, err := Command(tc.exe, tc.trusted, tc.layer); err == nil {
			t.Errorf("Command(%q, %q, %q) = nil error", tc.exe, tc.trusted, tc.layer)
		}
	}
}

// FuzzServe: whatever the go command (or a process in its place) sends,
// the cache program answers or stops with an error; it never panics and
// never writes outside its layer.
func FuzzServe(f *testing.F) {
	id := strings.Repeat("A", 43) + "="
	for _, s := range []string{
		`{"ID":1,"Command":"get","ActionID":"` + id + `"}` + "\n" + `{"ID":2,"Command":"close"}`,
		`{"ID":1,"Command":"put","ActionID":"` + id + `","OutputID":"` + id + `","BodySize":3}` + "\n\"YWJj\"\n",
		`{"ID":1,"Command":"put","ActionID":"` + id + `","OutputID":"` + id + `","BodySize":9}` + "\n\"YWJj\"\n",
		`{"ID":1,"Command":"get","ActionID":"AA=="}`, `{"ID":1,"Command":"rm"}`, "{", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		root := t.TempDir()
		layer, trusted := filepath.Join(root, "layer"), filepath.Join(root, "trusted")
		os.MkdirAll(trusted, 0o755)
		var out strings.Builder
		Serve(strings.NewReader(string(in)), &out, trusted, layer)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasPrefix(p, layer+string(filepath.Separator)) {
				t.Fatalf("wrote %s outside the layer", p)
			}
			return nil
		})
	})
}
