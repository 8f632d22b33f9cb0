package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/sqlstore"
)

// benchTarget is a real API server on SQLite with a project, a flag and
// its environment's flag key.
type benchTarget struct {
	s       *sqlstore.DB
	ws      string
	project string
	flagKey string
	srv     *httptest.Server
}

func newBenchTarget(t *testing.T, opts ...httpapi.Option) *benchTarget {
	t.Helper()
	ctx := context.Background()
	s, w, owner, proj := seedStore(t, "shoplite")
	if _, err := s.CreateFlag(ctx, owner, proj.ID, "production", "checkout_v2", signoff.FlagBoolean, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	_, secret, err := s.CreateFlagKey(ctx, owner, proj.ID, "production", "bench")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(s, nil, opts...))
	t.Cleanup(srv.Close)
	return &benchTarget{s: s, ws: w.ID, project: proj.ID, flagKey: secret, srv: srv}
}

func noIntakeLimits() httpapi.Option {
	l := httpapi.Limit{Rate: 1e6, Burst: 1e6}
	return httpapi.WithIntakeLimits(l, l)
}

func benchLoad(t *testing.T, vars map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		getenv: func(k string) string { return vars[k] }}, append([]string{"bench", "load"}, args...))
	return out.String(), errOut.String(), code
}

type benchJSON struct {
	Scenario       string `json:"scenario"`
	TrackingTokens int    `json:"tracking_tokens"`
	SetupNote      string `json:"setup_note"`
	Summary        struct {
		Planned   int64            `json:"planned"`
		Sent      int64            `json:"sent"`
		Dropped   int64            `json:"dropped_client_saturated"`
		Completed int64            `json:"completed"`
		Errors    int64            `json:"errors"`
		ByClass   map[string]int64 `json:"by_class"`
		BytesRecv int64            `json:"bytes_received"`
		Latency   struct {
			Count uint64  `json:"count"`
			P50   float64 `json:"p50_ms"`
			Max   float64 `json:"max_ms"`
		} `json:"latency"`
	} `json:"summary"`
}

func decodeBench(t *testing.T, out string) benchJSON {
	t.Helper()
	var b benchJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return b
}

// Each scenario against the real API: every request answered 2xx.
func TestBenchLoadScenarios(t *testing.T) {
	t.Parallel()
	tg := newBenchTarget(t, noIntakeLimits())
	common := []string{"--url", tg.srv.URL, "--rate", "40", "--duration", "500ms", "--json"}

	out, errOut, code := benchLoad(t, nil, append(common, "--scenario", "intake", "--project", tg.project)...)
	b := decodeBench(t, out)
	if code != 0 || b.Scenario != "intake" || b.Summary.Sent != 20 || b.Summary.ByClass["2xx"] != 20 || b.Summary.Errors != 0 ||
		b.Summary.Latency.Count != 20 || b.Summary.BytesRecv == 0 {
		t.Fatalf("intake: exit %d, stderr %q\n%s", code, errOut, out)
	}
	page, err := tg.s.ListCases(context.Background(), tg.ws, signoff.CaseFilter{ProjectID: tg.project, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]bool{}
	for _, c := range page.Cases {
		if !strings.HasPrefix(c.Title, "[signoff bench load: synthetic load-test report") {
			t.Errorf("case title %q is not labelled as load-test text", c.Title)
		}
		titles[c.Title] = true
	}
	if len(page.Cases) != 20 || len(titles) != 20 {
		t.Errorf("%d cases with %d distinct titles, want 20 and 20", len(page.Cases), len(titles))
	}

	out, errOut, code = benchLoad(t, nil, append(common, "--scenario", "track", "--project", tg.project, "--track-tokens", "7")...)
	b = decodeBench(t, out)
	if code != 0 || b.TrackingTokens != 7 || b.Summary.Sent != 20 || b.Summary.ByClass["2xx"] != 20 || !strings.Contains(b.SetupNote, "filed 7 reports") {
		t.Fatalf("track: exit %d, stderr %q\n%s", code, errOut, out)
	}

	// The flag key from the environment; never printed.
	vars := map[string]string{"SIGNOFF_FLAG_KEY": tg.flagKey}
	out, errOut, code = benchLoad(t, vars, append(common, "--scenario", "ofrep", "--flag", "checkout_v2")...)
	b = decodeBench(t, out)
	if code != 0 || b.Summary.Sent != 20 || b.Summary.ByClass["2xx"] != 20 || strings.Contains(out+errOut, tg.flagKey) {
		t.Fatalf("ofrep: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// A wrong key is 401 for every request: counted, not fatal.
	out, _, code = benchLoad(t, nil, append(common, "--scenario", "ofrep", "--flag", "checkout_v2", "--flag-key", "sof_wrong")...)
	if b = decodeBench(t, out); code != 0 || b.Summary.ByClass["4xx"] != 20 || b.Summary.Errors != 20 {
		t.Fatalf("ofrep with a wrong key: exit %d\n%s", code, out)
	}
	// A missing flag is 404.
	out, _, _ = benchLoad(t, vars, append(common, "--scenario", "ofrep", "--flag", "nope")...)
	if b = decodeBench(t, out); b.Summary.ByClass["4xx"] != 20 {
		t.Fatalf("ofrep, unknown flag:\n%s", out)
	}

	// The text output.
	out, errOut, code = benchLoad(t, vars, "--url", tg.srv.URL, "--rate", "40", "--duration", "250ms", "--scenario", "ofrep", "--flag", "checkout_v2")
	for _, want := range []string{"bench load: ofrep at 40/s for 250ms against " + tg.srv.URL, "planned 10  scheduled 10  sent 10  dropped (client saturated) 0",
		"2xx 10  3xx 0  4xx 0  429 0  5xx 0", "timeouts 0  connection 0  other 0", "latency    from the scheduled instant", "p99.9", "bytes      sent "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("text output: exit %d, stderr %q, lacks %q:\n%s", code, errOut, want, out)
		}
	}
}

// With the server's default intake limits (bursts of 5 per address), the
// 429s are counted on their own and named in a note; the track setup goes
// on with the tokens it got, and reading them spends none of the intake's
// budget.
func TestBenchLoadCountsRateLimits(t *testing.T) {
	t.Parallel()
	tg := newBenchTarget(t)
	out, errOut, code := benchLoad(t, nil, "--url", tg.srv.URL, "--rate", "40", "--duration", "500ms", "--scenario", "intake", "--project", tg.project, "--json")
	b := decodeBench(t, out)
	if code != 0 || b.Summary.ByClass["2xx"] != 5 || b.Summary.ByClass["429"] != 15 || b.Summary.ByClass["4xx"] != 0 || b.Summary.Errors != 15 {
		t.Fatalf("intake under the limit: exit %d, stderr %q\n%s", code, errOut, out)
	}

	tg = newBenchTarget(t)
	out, errOut, code = benchLoad(t, nil, "--url", tg.srv.URL, "--rate", "40", "--duration", "250ms", "--scenario", "track", "--project", tg.project)
	if code != 0 || !strings.Contains(out, "the intake answered 429 after 5 of 50 reports") || !strings.Contains(out, "2xx 10 ") || !strings.Contains(out, "429 0 ") || strings.Contains(out, "note ") {
		t.Fatalf("track under the limit: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, errOut, code = benchLoad(t, nil, "--url", tg.srv.URL, "--rate", "40", "--duration", "250ms", "--scenario", "intake", "--project", tg.project)
	if code != 0 || !strings.Contains(out, "429 10 ") || !strings.Contains(out, "note       10 answers were 429: the server's intake limits (serve --intake-per-minute") {
		t.Fatalf("intake with the limit empty, text: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// The limit still empty: no token at all is an error.
	_, errOut, code = benchLoad(t, nil, "--url", tg.srv.URL, "--rate", "40", "--duration", "250ms", "--scenario", "track", "--project", tg.project)
	if code == 0 || !strings.Contains(errOut, "no tracking token") {
		t.Fatalf("track with the limit empty: exit %d, stderr %q", code, errOut)
	}
}

// Loopback only unless --allow-remote: refused before any request.
func TestBenchLoadRefusesRemote(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://93.184.216.34:8080", "http://[2001:db8::1]:80", "http://10.0.0.1"} {
		out, errOut, code := benchLoad(t, nil, "--url", u, "--rate", "10", "--duration", "1s", "--scenario", "intake", "--project", "prj_x")
		if code == 0 || !strings.Contains(errOut, "--allow-remote") || !strings.Contains(errOut, "not a loopback address") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", u, code, out, errOut)
		}
	}
	// With --allow-remote the guard is off: a reserved TEST-NET address is
	// tried (and fails or times out, counted) rather than refused.
	out, errOut, code := benchLoad(t, nil, "--url", "http://192.0.2.1:9", "--allow-remote", "--rate", "10", "--duration", "100ms",
		"--timeout", "300ms", "--scenario", "intake", "--project", "prj_x", "--json")
	if b := decodeBench(t, out); code != 0 || b.Summary.Sent != 1 || b.Summary.Errors != 1 || b.Summary.ByClass["2xx"] != 0 {
		t.Errorf("--allow-remote: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

func TestBenchLoadUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "Usage: signoff bench load"},
		{[]string{"--rate", "10", "--duration", "1s"}, 2, "flag --scenario is required"},
		{[]string{"--scenario", "intake", "--duration", "1s", "--project", "p"}, 2, "flag --rate is required"},
		{[]string{"--scenario", "intake", "--rate", "10", "--project", "p"}, 2, "flag --duration is required"},
		{[]string{"--scenario", "intake", "--rate", "10", "--duration", "1s"}, 2, "flag --project is required"},
		{[]string{"--scenario", "ofrep", "--rate", "10", "--duration", "1s", "--flag", "f"}, 2, "flag --flag-key is required"},
		{[]string{"--scenario", "ofrep", "--rate", "10", "--duration", "1s", "--flag-key", "sof_x"}, 2, "flag --flag is required"},
		{[]string{"--scenario", "soak", "--rate", "10", "--duration", "1s"}, 2, "intake, track or ofrep"},
		{[]string{"--scenario", "intake", "--project", "p", "--rate", "10", "--duration", "2h"}, 2, "at most 1h0m0s"},
		{[]string{"--scenario", "intake", "--project", "p", "--rate", "1e9", "--duration", "1s"}, 2, "rate must be"},
		{[]string{"--scenario", "intake", "--project", "p", "--rate", "10", "--duration", "1s", "--max-inflight", "100000"}, 2, "max in-flight"},
		{[]string{"--scenario", "intake", "--project", "p", "--rate", "10", "--duration", "1s", "--url", "ftp://127.0.0.1"}, 2, "--url must be"},
		{[]string{"--scenario", "track", "--project", "p", "--rate", "10", "--duration", "1s", "--track-tokens", "0"}, 2, "--track-tokens"},
	} {
		out, errOut, code := benchLoad(t, nil, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("bench load %v: exit %d (want %d), output %q %q, want %q", c.args, code, c.code, out, errOut, c.want)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}, []string{"bench", "soak"}); code != 2 {
		t.Errorf("bench soak: exit %d", code)
	}
}
