package main_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestSoak runs mixed load at a fixed rate against one serve process on
// SQLite for SIGNOFF_SOAK (e.g. 30m; the test skips without it: make
// soak), one window a minute: reports, tracking reads and flag
// evaluations at once, through the real binary's bench load. Each window
// prints its p99 per scenario and the server's resident memory, and the
// end compares the last windows with the first: memory growth and latency
// drift are figures to read, not assertions.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SIGNOFF_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("soak: set SIGNOFF_SOAK=30m (make soak)")
	}
	rates := map[string]string{"intake": "20", "track": "100", "ofrep": "200"}
	db := filepath.Join(t.TempDir(), "signoff.db")
	e := newClusterEnv(t, db, func(ctx context.Context, key ed25519.PrivateKey) (*sqlstore.DB, error) {
		return sqlite.Open(ctx, db, sqlstore.Options{Signer: key})
	}, 1)
	ctx := context.Background()
	owner, err := e.store.ListActors(ctx, e.operator.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	var by signoff.Actor
	for _, a := range owner {
		if a.Role == signoff.RoleOwner {
			by = a
		}
	}
	_, flagKey, err := e.store.CreateFlagKey(ctx, by, e.project, "prod", "soak")
	if err != nil {
		t.Fatal(err)
	}
	s := e.serve("serve", "all")
	t.Cleanup(s.stop)
	waitReady(t, s.addr)
	type window struct {
		at   time.Duration
		p99  map[string]float64
		errs map[string]int64
		rss  int64
	}
	var windows []window
	start := time.Now()
	for time.Since(start) < d {
		w := window{at: time.Since(start), p99: map[string]float64{}, errs: map[string]int64{}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for sc, rate := range rates {
			wg.Go(func() {
				args := []string{"bench", "load", "--url", "http://" + s.addr, "--scenario", sc, "--rate", rate, "--duration", "60s", "--json", "--project", e.project}
				if sc == "ofrep" {
					args = append(args, "--flag", "flag_0")
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SIGNOFF_FLAG_KEY=" + flagKey}
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("bench load %s: %v\n%s", sc, err, out)
					return
				}
				var res struct {
					Summary struct {
						Counts  map[string]int64 `json:"by_class"`
						Latency struct {
							P99 float64 `json:"p99_ms"`
						} `json:"latency"`
					} `json:"summary"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					t.Errorf("bench load %s output: %v\n%s", sc, err, out)
					return
				}
				var bad int64
				for k, v := range res.Summary.Counts {
					if k != "2xx" {
						bad += v
					}
				}
				mu.Lock()
				w.p99[sc], w.errs[sc] = res.Summary.Latency.P99, bad
				mu.Unlock()
			})
		}
		wg.Wait()
		w.rss = rssKiB(s)
		windows = append(windows, w)
		// How far triage keeps up with intake: reports received, and
		// those moved on from received (triaged, or escalated to a person
		// when the workspace has no triager agent, as here).
		var received, triaged int
		_ = e.store.SQL().QueryRow(`SELECT count(*) FROM cases WHERE kind = 'bug'`).Scan(&received)
		_ = e.store.SQL().QueryRow(`SELECT count(*) FROM cases WHERE kind = 'bug' AND state <> 'received'`).Scan(&triaged)
		t.Logf("soak +%3.0fm: p99 intake %6.1f ms, track %6.1f ms, ofrep %6.1f ms; errors %v; server RSS %d MiB; %d of %d reports past received",
			w.at.Minutes(), w.p99["intake"], w.p99["track"], w.p99["ofrep"], w.errs, w.rss/1024, triaged, received)
	}
	if len(windows) < 2 {
		return
	}
	first, last := windows[0], windows[len(windows)-1]
	t.Logf("soak over %v: server RSS %d MiB → %d MiB (%+d MiB); p99 first → last minute: intake %.1f → %.1f ms, track %.1f → %.1f ms, ofrep %.1f → %.1f ms",
		time.Since(start).Round(time.Second), first.rss/1024, last.rss/1024, (last.rss-first.rss)/1024,
		first.p99["intake"], last.p99["intake"], first.p99["track"], last.p99["track"], first.p99["ofrep"], last.p99["ofrep"])
	out, code := signoffCmd(t, "ledger", "verify", "--db", db, "--key", e.key)
	if code != 0 {
		t.Fatalf("ledger verify after the soak: %s", out)
	}
	t.Logf("ledger verify: %s", firstLine(out))
}

// rssKiB is the resident memory of p's process, from /proc.
func rssKiB(p *proc) int64 {
	p.mu.Lock()
	pid := p.cmd.Process.Pid
	p.mu.Unlock()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// TestClusterScaling measures public intake through 1 and then 3 serve
// processes on one PostgreSQL (SIGNOFF_MEASURE=1; skipped otherwise): the
// real binary's bench load, one per instance, open loop at
// SIGNOFF_MEASURE_RATE reports a second in all (default 300) for 20 s.
// The figures are printed, not asserted.
func TestClusterScaling(t *testing.T) {
	if os.Getenv("SIGNOFF_MEASURE") == "" {
		t.Skip("set SIGNOFF_MEASURE=1 to measure intake scaling")
	}
	rate := 300.0
	if v, err := strconv.ParseFloat(os.Getenv("SIGNOFF_MEASURE_RATE"), 64); err == nil && v > 0 {
		rate = v
	}
	for _, n := range []int{1, 3} {
		url := pgtest.NewDatabase(t)
		e := newClusterEnv(t, url, func(ctx context.Context, key ed25519.PrivateKey) (*sqlstore.DB, error) {
			return postgres.Open(ctx, url, sqlstore.Options{Signer: key})
		}, 0)
		var serves []*proc
		for i := range n {
			p := e.serve(fmt.Sprintf("serve-%d", i+1), "none")
			serves = append(serves, p)
		}
		worker := e.worker("worker")
		for _, p := range serves {
			waitReady(t, p.addr)
		}
		var mu sync.Mutex
		var sent, ok int64
		var p99s []float64
		var wg sync.WaitGroup
		for _, p := range serves {
			wg.Go(func() {
				cmd := exec.Command(bin, "bench", "load", "--url", "http://"+p.addr, "--scenario", "intake", "--project", e.project,
					"--rate", strconv.FormatFloat(rate/float64(n), 'f', 1, 64), "--duration", "20s", "--json")
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("bench load: %v\n%s", err, out)
					return
				}
				var res struct {
					Summary struct {
						Sent    int64            `json:"sent"`
						Counts  map[string]int64 `json:"by_class"`
						Latency struct {
							P99 float64 `json:"p99_ms"`
						} `json:"latency"`
					} `json:"summary"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					t.Errorf("bench load output: %v", err)
					return
				}
				mu.Lock()
				sent += res.Summary.Sent
				ok += res.Summary.Counts["2xx"]
				p99s = append(p99s, res.Summary.Latency.P99)
				mu.Unlock()
			})
		}
		wg.Wait()
		t.Logf("%d serve instance(s), %.0f reports/s offered for 20 s: %d sent, %d accepted (%.1f/s), p99 per instance %v ms",
			n, rate, sent, ok, float64(ok)/20, p99s)
		for _, p := range append(serves, worker) {
			p.stop()
		}
	}
}
