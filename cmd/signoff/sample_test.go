package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/shoplite"
)

func TestSampleShopLiteCommand(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(t.TempDir(), "shop")
	harness := filepath.Join(t.TempDir(), "harness.json")
	out, code := signoffCmd(t, "sample", "shoplite", "--out", dir, "--harness", harness)
	if code != 0 {
		t.Fatalf("sample shoplite: exit %d\n%s", code, out)
	}
	commits := map[string]string{}
	row := regexp.MustCompile(`(?m)^(\S+)\s+([0-9a-f]{40})\s`)
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		commits[m[1]] = m[2]
	}
	for _, b := range shoplite.Branches {
		id := commits[b.Name]
		if id == "" {
			t.Errorf("output lacks branch %s:\n%s", b.Name, out)
			continue
		}
		got, err := exec.Command("git", "-C", dir, "rev-parse", "refs/heads/"+b.Name).Output()
		if err != nil || strings.TrimSpace(string(got)) != id {
			t.Errorf("branch %s is %q in the repository, %s in the output (%v)", b.Name, got, id, err)
		}
	}
	var h shoplite.HarnessSpec
	data, err := os.ReadFile(harness)
	if err != nil || json.Unmarshal(data, &h) != nil {
		t.Fatalf("harness file: %v %s", err, data)
	}
	if h.Base != commits["main"] || h.TestsFrom != commits["repro/coupon"] || h.ExpectedFailure != "8100" {
		t.Errorf("harness %+v does not match the branches %v", h, commits)
	}

	// Same binary, same commits: the sample is reproducible.
	out2, code := signoffCmd(t, "sample", "shoplite", "--out", filepath.Join(t.TempDir(), "again"), "--json")
	var s shoplite.Sample
	if code != 0 || json.Unmarshal([]byte(out2), &s) != nil {
		t.Fatalf("sample --json: exit %d\n%s", code, out2)
	}
	for name, id := range commits {
		if s.Branches[name] != id {
			t.Errorf("second build: %s is %s, first %s", name, s.Branches[name], id)
		}
	}

	// A non-empty directory is refused and left alone.
	out, code = signoffCmd(t, "sample", "shoplite", "--out", dir)
	if code != 4 || !strings.Contains(out, "not empty") {
		t.Errorf("into a non-empty dir: exit %d, %s; want 4 (conflict)", code, out)
	}
	if _, code = signoffCmd(t, "sample", "shoplite"); code != 2 {
		t.Errorf("without --out: exit %d, want 2", code)
	}
	if _, code = signoffCmd(t, "sample", "nope"); code != 2 {
		t.Errorf("unknown sample: exit %d, want 2", code)
	}
	if out, code = signoffCmd(t, "sample", "shoplite", "--help"); code != 0 || !strings.Contains(out, "Usage") {
		t.Errorf("sample shoplite --help: exit %d %s", code, out)
	}
}
