package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The base cache's key names the host programs a run may execute, as the
// sandbox's PATH finds them, by path, size and modification time: an
// interpreter upgrade keys base anew.
func TestHostToolsInBaseKey(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "mytool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := hostTools([]string{tool, "x"})
	if !strings.HasPrefix(before[0], tool+" ") {
		t.Fatalf("hostTools = %q: want %s first, by path, size and time", before, tool)
	}
	if err := os.Chtimes(tool, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if after := hostTools([]string{tool, "x"}); after[0] == before[0] {
		t.Errorf("an upgraded %s keeps its description %q", tool, after[0])
	}
	if got := hostTools([]string{"no-such-tool-signoff"}); got[0] != "no-such-tool-signoff" {
		t.Errorf("a missing tool is described as %q, want its name", got[0])
	}
}
