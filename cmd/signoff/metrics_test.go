package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/verify"
)

// lockedBuffer is a log sink the server and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// metricsDB is a database file with a ledger and an outbox to measure: a
// workspace whose ledger holds more than one tally batch of filler events,
// two gate refusals and four verdicts (one unreadable), and outbox rows in
// every state, the oldest pending one enqueued 90 s ago.
func metricsDB(t *testing.T) (path string, s *sqlstore.DB, ws string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path = filepath.Join(dir, "signoff.db")
	key, _, err := keys.LoadOrCreate(filepath.Join(dir, "signoff.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path, sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w, owner, err := s.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: proj.ID, Kind: signoff.KindBug, Title: "coupon applied twice"})
	if err != nil {
		t.Fatal(err)
	}
	var in []sqlstore.EventInput
	ev := func(typ string, payload any) sqlstore.EventInput {
		return sqlstore.EventInput{CaseID: c.ID, Type: typ, ActorID: owner.ID, Payload: payload}
	}
	in = append(in, ev("gate.refused", map[string]any{"check": "before_state"}))
	for i := range 5200 {
		in = append(in, ev("test.note", map[string]any{"i": i}))
	}
	in = append(in, ev("gate.refused", map[string]any{"check": "lock"}),
		ev("verification.completed", map[string]any{"verdict": verify.Verified}),
		ev("verification.completed", map[string]any{"verdict": verify.Rejected}),
		ev("verification.completed", map[string]any{"verdict": verify.Verified}),
		ev("verification.completed", map[string]any{"verdict": "maybe\n\"}"}))
	if err := s.InTx(ctx, func(tx *sql.Tx) error { _, err := s.AppendTx(ctx, tx, w.ID, in...); return err }); err != nil {
		t.Fatal(err)
	}
	// A disabled channel (so nothing is delivered) and its outbox rows,
	// without River jobs: they stay as they are.
	now := time.Now()
	db := s.SQL()
	if _, err := db.ExecContext(ctx, `INSERT INTO notify_channels (id, workspace_id, name, kind, events, settings, sealed, key_id, chat_approval, enabled, created_by, created_at, updated_at)
		VALUES ('ch_1', $1, 'hooks', 'webhook', '[]', '{}', '', '', '[]', 0, $2, 0, 0)`, w.ID, owner.ID); err != nil {
		t.Fatal(err)
	}
	for i, m := range []struct {
		state string
		age   time.Duration
	}{{"pending", 90 * time.Second}, {"pending", 10 * time.Second}, {"dead", time.Hour}, {"delivered", 2 * time.Hour}, {"skipped", time.Minute}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO outbox (message_id, job_id, workspace_id, channel_id, case_id, seq, event_type, card_id, state,
			attempts, budget_from, last_error, lease_token, lease_holder, lease_until, next_at, created_at)
			VALUES ($1, $2, $3, 'ch_1', $4, $5, 'gate.refused', '', $6, 0, 0, '', '', '', 0, 0, $7)`,
			fmt.Sprintf("msg_%d", i), 1_000_000+i, w.ID, c.ID, i+1, m.state, now.Add(-m.age).UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	return path, s, w.ID
}

// startServe runs signoff serve with args until the test ends and returns
// the URLs it logged: the API's and, with --metrics-addr, the metrics'.
func startServe(t *testing.T, args ...string) (api, metricsURL string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs lockedBuffer
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &logs, getenv: func(string) string { return "" }}
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, e, append([]string{"--log-format", "json"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			switch line.Msg {
			case "serving":
				api = line.URL
			case "serving metrics":
				metricsURL = line.URL
			}
		}
		if api != "" {
			return api, metricsURL
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start:\n%s", logs.String())
	return "", ""
}

func metricsGet(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// scrapeSamples reads the exposition's sample lines into name{labels} → value.
func scrapeSamples(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			t.Fatalf("bad line %q", l)
		}
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("bad value in %q", l)
		}
		out[l[:i]] = v
	}
	return out
}

// TestMetricsEndpoint serves /metrics on the main listener, without a
// credential: the job and outbox gauges, the ledger's counters, the
// process gauges and the API's request counters.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	db, s, ws := metricsDB(t)
	api, metricsURL := startServe(t, "--db", db, "--addr", "127.0.0.1:0")
	if metricsURL != "" {
		t.Fatalf("a metrics listener without --metrics-addr: %s", metricsURL)
	}
	if code, _, _ := metricsGet(t, api+"/healthz"); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	code, body, h := metricsGet(t, api+"/metrics")
	if code != 200 || h.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("metrics: %d %q\n%s", code, h.Get("Content-Type"), body)
	}
	got := scrapeSamples(t, body)
	for _, want := range []string{
		"# TYPE signoff_jobs gauge", "# TYPE signoff_outbox_lag_seconds gauge", "# TYPE signoff_outbox_messages gauge",
		"# TYPE signoff_gate_refusals_total counter", "# TYPE signoff_sandbox_runs_total counter",
		"# TYPE signoff_scrape_errors_total counter", "# TYPE process_start_time_seconds gauge", "# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("missing %q", want)
		}
	}
	want := map[string]float64{
		`signoff_outbox_messages{state="pending"}`:                                    2,
		`signoff_outbox_messages{state="dead"}`:                                       1,
		`signoff_gate_refusals_total`:                                                 2,
		`signoff_sandbox_runs_total{verdict="` + verify.Verified + `"}`:               2,
		`signoff_sandbox_runs_total{verdict="` + verify.Rejected + `"}`:               1,
		`signoff_sandbox_runs_total{verdict="` + verify.Inconclusive + `"}`:           0,
		`signoff_sandbox_runs_total{verdict="other"}`:                                 1,
		`signoff_http_requests_total{route="GET /healthz",method="GET",status="200"}`: 1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for _, q := range []string{"default", "notify"} {
		for _, st := range []string{"available", "running", "retryable", "scheduled", "completed", "discarded", "cancelled", "pending"} {
			if _, ok := got[`signoff_jobs{queue="`+q+`",state="`+st+`"}`]; !ok {
				t.Errorf("no signoff_jobs for %s %s", q, st)
			}
		}
	}
	if lag := got["signoff_outbox_lag_seconds"]; lag < 90 || lag > 600 {
		t.Errorf("outbox lag = %v, want about 90 s", lag)
	}
	if got["go_goroutines"] < 1 || got["process_start_time_seconds"] < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("process gauges: %v %v", got["go_goroutines"], got["process_start_time_seconds"])
	}
	if strings.Contains(body, `scrape_errors_total{`) {
		t.Errorf("scrape errors:\n%s", body)
	}

	// Counters move with the ledger: the next scrape reads only what was
	// appended since.
	ctx := context.Background()
	if err := s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := s.AppendTx(ctx, tx, ws, sqlstore.EventInput{Type: "gate.refused", Payload: map[string]any{}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, body, _ = metricsGet(t, api+"/metrics")
	if g := scrapeSamples(t, body)["signoff_gate_refusals_total"]; g != 3 {
		t.Errorf("gate refusals after one more = %v, want 3", g)
	}
}

// TestMetricsSeparateListener moves /metrics to --metrics-addr: the main
// listener then answers 404 for it.
func TestMetricsSeparateListener(t *testing.T) {
	t.Parallel()
	db, _, _ := metricsDB(t)
	api, metricsURL := startServe(t, "--db", db, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	if !strings.HasSuffix(metricsURL, "/metrics") {
		t.Fatalf("metrics url %q", metricsURL)
	}
	if code, body, _ := metricsGet(t, api+"/metrics"); code != 404 {
		t.Errorf("main listener /metrics: %d %s", code, body)
	}
	if code, _, _ := metricsGet(t, api+"/readyz"); code != 200 {
		t.Errorf("main listener readyz: %d", code)
	}
	code, body, _ := metricsGet(t, metricsURL)
	if code != 200 {
		t.Fatalf("metrics listener: %d %s", code, body)
	}
	got := scrapeSamples(t, body)
	for _, k := range []string{`signoff_jobs{queue="default",state="available"}`, `signoff_outbox_lag_seconds`, `signoff_outbox_messages{state="pending"}`} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s in\n%s", k, body)
		}
	}
	// The API's requests are still counted, on the metrics listener.
	if got[`signoff_http_requests_total{route="other",method="GET",status="404"}`] != 1 ||
		got[`signoff_http_requests_total{route="GET /readyz",method="GET",status="200"}`] != 1 {
		t.Errorf("request counters:\n%s", body)
	}
	if code, _, _ := metricsGet(t, strings.TrimSuffix(metricsURL, "/metrics")+"/healthz"); code != 404 {
		t.Errorf("the metrics listener serves more than /metrics: %d", code)
	}
}

// TestMetricsLedgerTallyCatchesUp reads a long ledger over several calls,
// reporting partial totals as not caught up; a failed call counts nothing
// twice.
func TestMetricsLedgerTallyCatchesUp(t *testing.T) {
	t.Parallel()
	_, s, ws := metricsDB(t)
	head, err := s.HeadSeq(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	tally := s.NewLedgerTally()
	tally.MaxRows = 2000
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tally.Tally(cancelled); err == nil {
		t.Fatal("a tally under a cancelled context did not fail")
	}
	calls := 0
	var c sqlstore.LedgerCounts
	for {
		var err error
		if c, err = tally.Tally(context.Background()); err != nil {
			t.Fatal(err)
		}
		calls++
		if c.CaughtUp || calls > 10 {
			break
		}
		if c.GateRefusals > 2 {
			t.Fatalf("partial tally counted %d refusals", c.GateRefusals)
		}
	}
	if want := int((head + 1999) / 2000); !c.CaughtUp || calls != want {
		t.Fatalf("caught up %v after %d calls, want %d for %d events", c.CaughtUp, calls, want, head)
	}
	want := map[string]int64{verify.Verified: 2, verify.Rejected: 1, "other": 1}
	if c.GateRefusals != 2 || len(c.Verdicts) != len(want) {
		t.Fatalf("counts %+v", c)
	}
	for k, v := range want {
		if c.Verdicts[k] != v {
			t.Errorf("verdict %s = %d, want %d", k, c.Verdicts[k], v)
		}
	}
	if again, err := tally.Tally(context.Background()); err != nil || !again.CaughtUp || again.GateRefusals != 2 {
		t.Errorf("a tally with nothing new: %+v %v", again, err)
	}
}
