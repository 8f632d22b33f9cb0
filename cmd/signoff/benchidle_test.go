package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestParseStraceCalls(t *testing.T) {
	t.Parallel()
	table := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 90.00    0.000152         152         3           fsync
 10.00    0.000010          10         2         1 fdatasync
------ ----------- ----------- --------- --------- ----------------
100.00    0.000162          32         5         1 total
`
	for _, tc := range []struct {
		name, in string
		want     int64
	}{
		{"fsync and fdatasync", table, 5},
		{"none seen (strace writes nothing)", "", 0},
		{"none seen, blank lines", "\n\n", 0},
		{"not a summary", "strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted\n", -1},
	} {
		if got := parseStraceCalls(tc.in, "fsync", "fdatasync"); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestProcCounters reads this test process's own counters: they exist
// and only grow.
func TestProcCounters(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	t0, w0, err := procCounters(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	_ = os.WriteFile(filepath.Join(t.TempDir(), "f"), []byte("x"), 0o600)
	t1, w1, err := procCounters(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if t1 < t0 || (w0 >= 0 && w1 <= w0) {
		t.Fatalf("counters went from %d ticks, %d writes to %d, %d", t0, w0, t1, w1)
	}
}

// TestBenchIdle runs the command end to end on a short window: it starts
// a real server and reports what it cost.
func TestBenchIdle(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "signoff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "bench", "idle", "--for", "2s", "--settle", "500ms", "--json")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "SIGNOFF_DB=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench idle: %v\n%s", err, out)
	}
	var res idleResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("bench idle printed %q: %v", out, err)
	}
	if res.Backend != "sqlite" || res.Window != 2 || res.Ticks < 0 || res.Fsyncs < -1 || res.Transactions != -1 {
		t.Fatalf("bench idle: %+v", res)
	}
}
