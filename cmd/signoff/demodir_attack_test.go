package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDemoDirAttackKeepsOthersFiles: `signoff demo --dir DIR` replaces an
// earlier demo's state in DIR, but DIR is the user's: a folder where a
// real server keeps signoff.db and signoff.key (or a project with a
// production/ or shoplite/ folder) must not lose them to a demo. Only a
// folder an earlier demo marked as its own is cleared; any other that
// holds one of the demo's names is refused, untouched.
func TestDemoDirAttackKeepsOthersFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	precious := map[string]string{"signoff.db": "the production database", "signoff.key": "the server's signing key", "production/index.html": "a site"}
	for name, body := range precious {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := clearDemoDir(dir); err == nil {
		t.Fatal("a folder no demo made was cleared without a word")
	}
	for name, body := range precious {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != body {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}

	// An empty folder, and one an earlier demo marked, are the demo's.
	empty := t.TempDir()
	if replaced, err := clearDemoDir(empty); err != nil || replaced {
		t.Fatalf("empty folder: %v %v", replaced, err)
	}
	if err := markDemoDir(empty); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "signoff.db"), []byte("demo"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(empty, "notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if replaced, err := clearDemoDir(empty); err != nil || !replaced {
		t.Fatalf("earlier demo's folder: %v %v", replaced, err)
	}
	if _, err := os.Stat(filepath.Join(empty, "signoff.db")); !os.IsNotExist(err) {
		t.Errorf("the earlier demo's database is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file not the demo's was removed: %v", err)
	}
}
