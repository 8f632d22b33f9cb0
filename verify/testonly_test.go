package verify

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTestOnlyDirs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/lib\n\ngo 1.22\n",
		// The library itself, tested only by its own external tests.
		"lib.go":      "package lib\n\nfunc F() int { return 1 }\n",
		"lib_test.go": "package lib_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/lib\"\n\t\"example.com/lib/internal/testutil\"\n\t\"example.com/lib/server\"\n)\n\nfunc TestF(t *testing.T) { testutil.Is(t, lib.F() == 1); _ = server.New }\n",
		// A public package that only a test imports: still code to fix.
		"server/server.go": "package server\n\nfunc New() {}\n",
		// Test infrastructure, and what it uses.
		"internal/testutil/is.go":       "package testutil\n\nimport (\n\t\"testing\"\n\n\t\"example.com/lib/internal/testfixtures\"\n)\n\nfunc Is(t *testing.T, ok bool) { _ = testfixtures.Data; if !ok { t.Fail() } }\n",
		"internal/testfixtures/data.go": "package testfixtures\n\nvar Data = 1\n",
		// Named like infrastructure but used by the library: not frozen.
		"internal/mockclock/clock.go": "package mockclock\n\nfunc Now() int { return 0 }\n",
		"uses.go":                     "package lib\n\nimport \"example.com/lib/internal/mockclock\"\n\nvar _ = mockclock.Now\n",
		// Unused infrastructure decides nothing.
		"internal/testunused/x.go": "package testunused\n",
		// A command.
		"cmd/testtool/main.go": "package main\n\nfunc main() {}\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testOnlyDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"internal/testfixtures", "internal/testutil"}; !slices.Equal(got, want) {
		t.Fatalf("test-only = %v, want %v", got, want)
	}
}
