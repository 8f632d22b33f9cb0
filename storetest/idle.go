package storetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/signoff-dev/signoff/loadgen"
)

// BenchIdle builds signoff and runs `signoff bench idle` on db (a
// PostgreSQL URL, or "" for a fresh SQLite file): an idle server's CPU
// ticks, write system calls and fsyncs over 60 s, reported as metrics.
// It takes two minutes (a second window counts fsyncs under strace).
func BenchIdle(b *testing.B, db string) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	bin := filepath.Join(b.TempDir(), "signoff")
	build := exec.Command("go", "build", "-o", bin, "./cmd/signoff")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build signoff: %v\n%s", err, out)
	}
	var res loadgen.IdleResult
	for range b.N {
		args := []string{"bench", "idle", "--for", "60s", "--json"}
		if db != "" {
			args = append(args, "--db", db)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("bench idle: %v\n%s", err, out)
		}
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatalf("bench idle printed %q: %v", out, err)
		}
	}
	b.ReportMetric(float64(res.Ticks), "ticks/60s")
	b.ReportMetric(res.CorePercent, "%core")
	b.ReportMetric(float64(res.WriteCalls), "writes/60s")
	b.ReportMetric(float64(res.Fsyncs), "fsyncs/60s")
	if res.Transactions >= 0 {
		b.ReportMetric(float64(res.Transactions), "db-xacts/60s")
	}
	b.Logf("%s idle: %d ticks (%.2f%% of a core), %d write syscalls, %d fsyncs (-1: not counted), %d db transactions (-1: not counted) in 60 s",
		res.Backend, res.Ticks, res.CorePercent, res.WriteCalls, res.Fsyncs, res.Transactions)
}
