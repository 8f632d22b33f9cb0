package changedesk

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/change"
)

// scriptedProber answers with results in turn (the last one repeats).
type scriptedProber struct {
	mu      sync.Mutex
	results []bool
	calls   int
}

func (p *scriptedProber) Probe(context.Context, change.HealthCheck) Probe {
	p.mu.Lock()
	defer p.mu.Unlock()
	ok := p.results[min(p.calls, len(p.results)-1)]
	p.calls++
	return Probe{OK: ok, Status: map[bool]int{true: 200, false: 503}[ok], Detail: fmt.Sprintf("probe %d", p.calls)}
}

// fakeSleep records the waits instead of waiting; err, when set, is
// returned from the wait numbered failAt (1-based).
type fakeSleep struct {
	waits  []time.Duration
	failAt int
}

func (s *fakeSleep) sleep(_ context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	if s.failAt == len(s.waits) {
		return context.Canceled
	}
	return nil
}

func TestRunHealthSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		window, interval int
		results          []bool
		failSleep        int
		passed           bool
		probes           int
		waits            int
		waitEach         time.Duration
	}{
		{name: "window 0 is one probe", window: 0, interval: 0, results: []bool{true}, passed: true, probes: 1},
		{name: "one probe per interval over the window", window: 10, interval: 5, results: []bool{true}, passed: true, probes: 3, waits: 2, waitEach: 5 * time.Second},
		{name: "an interval that does not divide the window", window: 10, interval: 3, results: []bool{true}, passed: true, probes: 4, waits: 3, waitEach: 3 * time.Second},
		{name: "interval equal to the window", window: 30, interval: 30, results: []bool{true}, passed: true, probes: 2, waits: 1, waitEach: 30 * time.Second},
		{name: "interval longer than the window", window: 5, interval: 10, results: []bool{true}, passed: true, probes: 1},
		{name: "the max window at one second", window: change.MaxHealthWindowSeconds, interval: 1, results: []bool{true}, passed: true,
			probes: change.MaxHealthWindowSeconds + 1, waits: change.MaxHealthWindowSeconds, waitEach: time.Second},
		{name: "first probe fails", window: 60, interval: 10, results: []bool{false}, passed: false, probes: 1},
		{name: "fails fast at the third probe", window: 60, interval: 10, results: []bool{true, true, false, true}, passed: false, probes: 3, waits: 2, waitEach: 10 * time.Second},
		{name: "last probe fails", window: 20, interval: 10, results: []bool{true, true, false}, passed: false, probes: 3, waits: 2, waitEach: 10 * time.Second},
		{name: "an interrupted wait fails the check", window: 60, interval: 10, results: []bool{true}, failSleep: 2, passed: false, probes: 3, waits: 2, waitEach: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &scriptedProber{results: tt.results}
			s := &fakeSleep{failAt: tt.failSleep}
			hc := change.HealthCheck{Kind: change.HealthHTTP, WindowSeconds: tt.window, IntervalSeconds: tt.interval}
			rep := RunHealth(context.Background(), hc, p, s.sleep)
			if rep.Passed != tt.passed || len(rep.Probes) != tt.probes || len(s.waits) != tt.waits {
				t.Fatalf("passed %t with %d probes and %d waits, want %t, %d, %d: %+v", rep.Passed, len(rep.Probes), len(s.waits), tt.passed, tt.probes, tt.waits, rep)
			}
			for _, w := range s.waits {
				if w != tt.waitEach {
					t.Fatalf("waited %v, want %v each time", w, tt.waitEach)
				}
			}
			for i, pr := range rep.Probes {
				if pr.At.IsZero() {
					t.Fatalf("probe %d has no time", i)
				}
				if last := i == len(rep.Probes)-1; pr.OK == (last && !tt.passed) {
					t.Fatalf("probe %d ok=%t: only the last probe of a failed check fails", i, pr.OK)
				}
			}
		})
	}
	// No prober at all is a failed check, not a pass.
	if rep := RunHealth(context.Background(), change.HealthCheck{Kind: change.HealthHTTP}, nil, nil); rep.Passed || len(rep.Probes) != 1 {
		t.Fatalf("nil prober: %+v", rep)
	}
}

func TestRunHealthRealSleepHonoursContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep := RunHealth(ctx, change.HealthCheck{WindowSeconds: 600, IntervalSeconds: 60}, &scriptedProber{results: []bool{true}}, nil)
	if rep.Passed || time.Since(start) > 5*time.Second {
		t.Fatalf("after %v: %+v", time.Since(start), rep)
	}
}

func TestHTTPProber(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprint(w, `{"status":"ok","version":"1.3.0"}`)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "down")
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s", r.Method, b)
		case "/redirect":
			http.Redirect(w, r, "http://example.com/", http.StatusFound)
		case "/big":
			fmt.Fprint(w, strings.Repeat("x", 70<<10)+"needle")
		case "/slow":
			time.Sleep(2 * time.Second)
		}
	}))
	t.Cleanup(srv.Close) // after the parallel subtests
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	tests := []struct {
		name   string
		hc     change.HealthCheck
		prober HTTPProber
		ok     bool
		status int
		detail string
	}{
		{name: "status and body", hc: change.HealthCheck{Method: "GET", URL: srv.URL + "/healthz", ExpectStatus: 200, ExpectBody: `"version":"1.3.0"`}, ok: true, status: 200},
		{name: "method defaults to GET", hc: change.HealthCheck{URL: srv.URL + "/healthz", ExpectStatus: 200}, ok: true, status: 200},
		{name: "localhost by name", hc: change.HealthCheck{URL: "http://localhost:" + port + "/healthz", ExpectStatus: 200}, ok: true, status: 200},
		{name: "wrong status", hc: change.HealthCheck{URL: srv.URL + "/down", ExpectStatus: 200}, status: 503, detail: "status 503, want 200"},
		{name: "expected status of a failure", hc: change.HealthCheck{URL: srv.URL + "/down", ExpectStatus: 503}, ok: true, status: 503},
		{name: "body missing", hc: change.HealthCheck{URL: srv.URL + "/healthz", ExpectStatus: 200, ExpectBody: "1.4.0"}, status: 200, detail: "does not contain"},
		{name: "post with body", hc: change.HealthCheck{Method: "POST", URL: srv.URL + "/echo", Body: "ping", ExpectStatus: 200, ExpectBody: "POST ping"}, ok: true, status: 200},
		{name: "head", hc: change.HealthCheck{Method: "HEAD", URL: srv.URL + "/healthz", ExpectStatus: 200}, ok: true, status: 200},
		{name: "redirect not followed", hc: change.HealthCheck{URL: srv.URL + "/redirect", ExpectStatus: 200}, status: 302},
		{name: "only the first 64 KiB are searched", hc: change.HealthCheck{URL: srv.URL + "/big", ExpectStatus: 200, ExpectBody: "needle"}, status: 200},
		{name: "per-probe timeout", hc: change.HealthCheck{URL: srv.URL + "/slow", ExpectStatus: 200}, prober: HTTPProber{Timeout: 200 * time.Millisecond}, detail: "no answer within 200ms"},
		{name: "bad method", hc: change.HealthCheck{Method: "DELETE", URL: srv.URL + "/healthz", ExpectStatus: 200}, detail: "refused"},
		{name: "not http", hc: change.HealthCheck{URL: "file:///etc/passwd", ExpectStatus: 200}, detail: "refused"},
		{name: "nothing listening", hc: change.HealthCheck{URL: "http://127.0.0.1:1/", ExpectStatus: 200}, detail: "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pr := tt.prober.Probe(context.Background(), tt.hc)
			if pr.OK != tt.ok || pr.Status != tt.status || !strings.Contains(pr.Detail, tt.detail) || pr.At.IsZero() {
				t.Fatalf("probe %+v, want ok %t status %d detail ~%q", pr, tt.ok, tt.status, tt.detail)
			}
		})
	}
}

// TestHTTPProberSSRF: plans come from agents, so by default a probe
// reaches only loopback, and a refused host is never contacted.
func TestHTTPProberSSRF(t *testing.T) {
	t.Parallel()
	// A server standing in for another host: the probe must never reach
	// it through a name or an address that is not loopback.
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	// Checked once the parallel subtests are done (cleanups run last first).
	t.Cleanup(func() {
		if n := hits.Load(); n != 0 {
			t.Errorf("the server was reached %d times", n)
		}
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	refused := []string{
		"http://example.com/",
		"http://10.0.0.1:" + port + "/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00::1]/",
		"http://0.0.0.0:" + port + "/",
		"http://127.0.0.1.nip.io:" + port + "/",
		"http://0177.0.0.1:" + port + "/",
		"http://2130706433:" + port + "/",
		"https://metadata.google.internal/",
	}
	for _, u := range refused {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			pr := HTTPProber{}.Probe(context.Background(), change.HealthCheck{Kind: change.HealthHTTP, URL: u, ExpectStatus: 200})
			if pr.OK || pr.Status != 0 || !strings.Contains(pr.Detail, "refused") || !strings.Contains(pr.Detail, "loopback") {
				t.Fatalf("probe %+v, want a refusal naming the loopback rule", pr)
			}
			if time.Since(start) > time.Second {
				t.Fatalf("a refusal took %v: it tried to connect", time.Since(start))
			}
		})
	}
	for _, h := range []string{"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]"} {
		if !LoopbackHost(h) {
			t.Errorf("LoopbackHost(%q) = false", h)
		}
	}

	// The server's hosts add to loopback; they do not open the rest.
	listed := HTTPProber{Hosts: []string{"probe.test"}, Timeout: time.Second}
	pr := listed.Probe(context.Background(), change.HealthCheck{URL: "http://10.0.0.1:" + port + "/", ExpectStatus: 200})
	if pr.OK || !strings.Contains(pr.Detail, "refused") || !strings.Contains(pr.Detail, "hosts the server allows") {
		t.Fatalf("listed hosts: %+v", pr)
	}
}

func TestCommandProber(t *testing.T) {
	t.Parallel()
	r := testSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // after the parallel subtests
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	tests := []struct {
		name   string
		hc     change.HealthCheck
		ok     bool
		status int
	}{
		{name: "exit 0", hc: change.HealthCheck{Command: []string{"sh", "-c", "echo healthy"}}, ok: true},
		{name: "expected body", hc: change.HealthCheck{Command: []string{"sh", "-c", "echo status=healthy"}, ExpectBody: "status=healthy"}, ok: true},
		{name: "body missing", hc: change.HealthCheck{Command: []string{"sh", "-c", "echo status=degraded"}, ExpectBody: "status=healthy"}},
		{name: "non-zero exit", hc: change.HealthCheck{Command: []string{"sh", "-c", "exit 4"}}, status: 4},
		{name: "expected non-zero exit", hc: change.HealthCheck{Command: []string{"sh", "-c", "exit 4"}, ExpectStatus: 4}, ok: true, status: 4},
		{name: "no such command", hc: change.HealthCheck{Command: []string{"/nonexistent/probe"}}, status: 0},
		{name: "no network", hc: change.HealthCheck{Command: []string{"bash", "-c", "exec 3<>/dev/tcp/" + host + "/" + port + " && echo reached"}, ExpectBody: "reached"}, status: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.hc.Kind = change.HealthCommand
			pr := CommandProber{Runner: r, Timeout: 20 * time.Second}.Probe(context.Background(), tt.hc)
			if pr.OK != tt.ok || (tt.status != 0 && pr.Status != tt.status) || pr.Detail == "" {
				t.Fatalf("probe %+v, want ok %t status %d", pr, tt.ok, tt.status)
			}
		})
	}
	t.Cleanup(func() {
		if n := accepted.Load(); n != 0 {
			t.Errorf("a command probe reached the host's listener %d times", n)
		}
	})
}

func TestProbers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	ps := Probers{}
	if pr := ps.Probe(context.Background(), change.HealthCheck{Kind: change.HealthHTTP, URL: srv.URL, ExpectStatus: 200}); !pr.OK {
		t.Fatalf("http through the default prober: %+v", pr)
	}
	if pr := ps.Probe(context.Background(), change.HealthCheck{Kind: change.HealthCommand, Command: []string{"true"}}); pr.OK {
		t.Fatalf("command without a sandbox passed: %+v", pr)
	}
	if pr := ps.Probe(context.Background(), change.HealthCheck{Kind: "ping"}); pr.OK {
		t.Fatalf("unknown kind passed: %+v", pr)
	}
	fake := &scriptedProber{results: []bool{true}}
	ps.Command = fake
	if pr := ps.Probe(context.Background(), change.HealthCheck{Kind: change.HealthCommand}); !pr.OK || fake.calls != 1 {
		t.Fatalf("command prober not used: %+v", pr)
	}

	// End to end: a service that breaks after two probes fails the check
	// at the third, and no more probes are made.
	var n atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 2 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer flaky.Close()
	s := &fakeSleep{}
	rep := RunHealth(context.Background(), change.HealthCheck{Kind: change.HealthHTTP, URL: flaky.URL, ExpectStatus: 200, WindowSeconds: 60, IntervalSeconds: 5}, Probers{}, s.sleep)
	if rep.Passed || len(rep.Probes) != 3 || n.Load() != 3 || rep.Probes[2].Status != 500 {
		t.Fatalf("report %+v after %d requests", rep, n.Load())
	}
}
