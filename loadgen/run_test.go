package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeClock is virtual time: SleepUntil jumps to the instant at once, and
// nothing else moves it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Time
	// hook, if set, runs once on the first Now after SleepUntil(last).
	// Run reads the clock once after dealing with its last instant and
	// before waiting for the requests in flight, so the hook runs when
	// every send-or-drop decision has been made.
	last  time.Time
	armed bool
	hook  func()
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	now := c.now
	var f func()
	if c.armed && c.hook != nil {
		f, c.hook = c.hook, nil
	}
	c.mu.Unlock()
	if f != nil {
		f()
	}
	return now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, t)
	c.now = maxTime(c.now, t)
	if c.hook != nil && !t.Before(c.last) {
		c.armed = true
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func TestLoadPlanned(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rate float64
		d    time.Duration
		max  int64
		want int64
	}{
		{200, time.Second, 0, 200},
		{500, 20 * time.Second, 0, 10000},
		{0.5, time.Second, 0, 1}, // at least one
		{3, 1500 * time.Millisecond, 0, 4},
		{0.1, 10 * time.Second, 0, 1}, // 0.1*10 is 1, not 0.999…
		{7, 10 * time.Second, 0, 70},
		{1000, time.Second, 10, 10},
		{10, time.Second, 1000, 10},
		{MaxRate, MaxDuration, 0, MaxRate * 3600},
	} {
		if got := Planned(c.rate, c.d, c.max); got != c.want {
			t.Errorf("Planned(%v, %s, %d) = %d, want %d", c.rate, c.d, c.max, got, c.want)
		}
	}
}

func TestLoadOffset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rate float64
		i    int64
		want time.Duration
	}{
		{200, 0, 0},
		{200, 1, 5 * time.Millisecond},
		{200, 199, 995 * time.Millisecond},
		{3, 1, 333333333 * time.Nanosecond},
		{3, 2, 666666667 * time.Nanosecond},
		{3, 3, time.Second},
		{3, 3_000_000, 1_000_000 * time.Second}, // from i, not summed: no drift
		{MaxRate, MaxRate * 3600, time.Hour},
	} {
		if got := Offset(c.rate, c.i); got != c.want {
			t.Errorf("Offset(%v, %d) = %s, want %s", c.rate, c.i, got, c.want)
		}
	}
}

func TestLoadValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		want string // "" for valid
	}{
		{Config{Rate: 200, Duration: time.Second}, ""},
		{Config{Rate: 0, Duration: time.Second}, "rate"},
		{Config{Rate: -1, Duration: time.Second}, "rate"},
		{Config{Rate: MaxRate + 1, Duration: time.Second}, "rate"},
		{Config{Rate: 10, Duration: 0}, "duration"},
		{Config{Rate: 10, Duration: MaxDuration + time.Second}, "duration"},
		{Config{Rate: 10, Duration: time.Second, MaxRequests: -1}, "max requests"},
		{Config{Rate: 10, Duration: time.Second, MaxInFlight: MaxInFlightMax + 1}, "in-flight"},
		{Config{Rate: 10, Duration: time.Second, Timeout: -1}, "timeout"},
	} {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	for _, c := range []struct {
		rate float64
		want int
	}{{0.2, 1}, {1, 2}, {200, 400}, {500, 1000}, {511.5, 1023}, {600, MaxInFlightCap}, {MaxRate, MaxInFlightCap}} {
		if got := DefaultInFlight(c.rate); got != c.want {
			t.Errorf("DefaultInFlight(%v) = %d, want %d", c.rate, got, c.want)
		}
	}
}

// The scheduler sleeps until exactly start + i/rate for every i, and sends
// every request when nothing is in the way.
func TestLoadRunSchedulesExactInstants(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: t0}
	var seen sync.Map
	s, err := Run(context.Background(), Config{Rate: 200, Duration: time.Second, Clock: clk}, func(_ context.Context, seq int64) Result {
		if _, dup := seen.LoadOrStore(seq, true); dup {
			t.Errorf("seq %d done twice", seq)
		}
		return Result{Status: 200, BytesSent: 10, BytesReceived: 100}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(clk.sleeps) != 200 {
		t.Fatalf("%d instants, want 200", len(clk.sleeps))
	}
	for i, at := range clk.sleeps {
		if want := t0.Add(time.Duration(i) * 5 * time.Millisecond); !at.Equal(want) {
			t.Fatalf("instant %d at %s, want %s", i, at.Sub(t0), want.Sub(t0))
		}
	}
	if s.Planned != 200 || s.Scheduled != 200 || s.Sent != 200 || s.Dropped != 0 || s.Completed != 200 ||
		s.Counts[Class2xx] != 200 || s.Errors() != 0 || s.BytesSent != 2000 || s.BytesReceived != 20000 || s.MaxInFlight != 400 {
		t.Errorf("summary %+v", s)
	}
	// The fake clock ends at the last instant: 995 ms of sending.
	if s.SentRate < 200 || s.SentRate > 202 {
		t.Errorf("sent rate %.2f, want 200/0.995s", s.SentRate)
	}
}

// A server that answers nothing until the end of the window: every
// request's latency runs from its own scheduled instant, so the first one
// waited 900 ms and the last none. A closed-loop client would have sent
// one request and seen one slow answer.
func TestLoadRunLatencyFromScheduledInstant(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	clk := &fakeClock{now: t0, last: t0.Add(900 * time.Millisecond), hook: func() { close(release) }}
	s, err := Run(context.Background(), Config{Rate: 10, Duration: time.Second, Clock: clk}, func(context.Context, int64) Result {
		<-release
		return Result{Status: 200}
	})
	if err != nil {
		t.Fatal(err)
	}
	l := s.Latency
	if l.Count != 10 || l.Min != 0 || l.Max != 900*time.Millisecond || l.Mean != 450*time.Millisecond || s.LatencyOK != l {
		t.Fatalf("latency %+v (2xx %+v)", l, s.LatencyOK)
	}
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"p50", l.P50, 400 * time.Millisecond}, {"p90", l.P90, 800 * time.Millisecond}, {"p99", l.P99, 900 * time.Millisecond}} {
		if c.got < c.want || c.got > c.want+c.want/128 {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if s.Elapsed != 900*time.Millisecond {
		t.Errorf("elapsed %s", s.Elapsed)
	}
}

// When the in-flight bound is reached, later instants are dropped and
// counted, not delayed.
func TestLoadRunDropsWhenSaturated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		inflight      int
		max           int64
		sent, dropped int64
	}{
		{5, 0, 5, 95},
		{1, 0, 1, 99},
		{100, 0, 100, 0},
		{150, 0, 100, 0},
		{5, 20, 5, 15},
	} {
		t.Run(fmt.Sprint(c.inflight, "/", c.max), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			n := Planned(100, time.Second, c.max)
			clk := &fakeClock{now: t0, last: t0.Add(Offset(100, n-1)), hook: func() { close(release) }}
			var calls atomic.Int64
			s, err := Run(context.Background(), Config{Rate: 100, Duration: time.Second, MaxRequests: c.max, MaxInFlight: c.inflight, Clock: clk},
				func(context.Context, int64) Result {
					calls.Add(1)
					<-release
					return Result{Status: 204}
				})
			if err != nil {
				t.Fatal(err)
			}
			if s.Sent != c.sent || s.Dropped != c.dropped || s.Scheduled != c.sent+c.dropped || calls.Load() != c.sent || s.Completed != c.sent {
				t.Errorf("sent %d dropped %d scheduled %d calls %d completed %d, want sent %d dropped %d",
					s.Sent, s.Dropped, s.Scheduled, calls.Load(), s.Completed, c.sent, c.dropped)
			}
		})
	}
}

// cancelClock cancels the run at its n-th instant, as Ctrl-C would.
type cancelClock struct {
	fakeClock
	n      int
	cancel context.CancelFunc
}

func (c *cancelClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	c.n--
	if c.n == 0 {
		c.cancel()
	}
	c.mu.Unlock()
	return c.fakeClock.SleepUntil(ctx, t)
}

func TestLoadRunInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	clk := &cancelClock{fakeClock: fakeClock{now: t0}, n: 11, cancel: cancel}
	s, err := Run(ctx, Config{Rate: 100, Duration: time.Second, Clock: clk}, func(context.Context, int64) Result {
		return Result{Status: 200}
	})
	if !errors.Is(err, context.Canceled) || !s.Interrupted || s.Planned != 100 || s.Scheduled != 10 || s.Sent != 10 || s.Completed != 10 {
		t.Errorf("err %v, summary %+v", err, s)
	}
	var b strings.Builder
	s.WriteText(&b)
	if !strings.Contains(b.String(), "interrupted") {
		t.Errorf("output:\n%s", b.String())
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestLoadClassify(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		r    Result
		want Class
	}{
		{Result{Status: 200}, Class2xx},
		{Result{Status: 201}, Class2xx},
		{Result{Status: 204}, Class2xx},
		{Result{Status: 302}, Class3xx},
		{Result{Status: 400}, Class4xx},
		{Result{Status: 404}, Class4xx},
		{Result{Status: 429}, Class429},
		{Result{Status: 500}, Class5xx},
		{Result{Status: 503}, Class5xx},
		{Result{Status: 101}, ClassOther},
		{Result{Status: 0}, ClassOther},
		{Result{Err: context.DeadlineExceeded}, ClassTimeout},
		{Result{Err: fmt.Errorf("Post: %w", context.DeadlineExceeded)}, ClassTimeout},
		{Result{Err: timeoutErr{}}, ClassTimeout},
		{Result{Status: 200, Err: timeoutErr{}}, ClassTimeout}, // a body that timed out
		{Result{Err: refused}, ClassConn},
		{Result{Err: syscall.ECONNRESET}, ClassConn},
		{Result{Status: 200, Err: io.ErrUnexpectedEOF}, ClassConn},
		{Result{Err: context.Canceled}, ClassOther},
		{Result{Err: errors.New("bad")}, ClassOther},
	} {
		if got := Classify(c.r); got != c.want {
			t.Errorf("Classify(%+v) = %s, want %s", c.r, got, c.want)
		}
	}
}

func TestLoadSummaryOutput(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{now: t0}
	s, err := Run(context.Background(), Config{Rate: 10, Duration: time.Second, Clock: clk}, func(_ context.Context, seq int64) Result {
		switch seq % 5 {
		case 0:
			return Result{Status: 429}
		case 1:
			return Result{Err: timeoutErr{}}
		}
		return Result{Status: 201, BytesReceived: 7}
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"planned 10  scheduled 10  sent 10  dropped (client saturated) 0",
		"completed 8:  2xx 6  3xx 0  4xx 0  429 2  5xx 0", "errors     4 not 2xx;  timeouts 2  connection 0  other 0",
		"first timeout error: i/o timeout", "bytes      sent 0  received 42"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, b.String())
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sent    int64            `json:"sent"`
		Errors  int64            `json:"errors"`
		ByClass map[string]int64 `json:"by_class"`
		Latency struct {
			Count uint64  `json:"count"`
			P999  float64 `json:"p99_9_ms"`
		} `json:"latency"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Sent != 10 || got.Errors != 4 || got.ByClass["429"] != 2 ||
		got.ByClass["timeout"] != 2 || got.ByClass["2xx"] != 6 || got.Latency.Count != 10 {
		t.Errorf("JSON %v: %s", err, raw)
	}
}

// ---- Against a real HTTP server ----

func httpDo(client *http.Client, url string) DoFunc {
	return func(ctx context.Context, _ int64) Result {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return Result{Err: err}
		}
		resp, err := client.Do(req)
		if err != nil {
			return Result{Err: err}
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		return Result{Status: resp.StatusCode, BytesReceived: n, Err: err}
	}
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestLoadRunHTTPRate(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	s, err := Run(context.Background(), Config{Rate: 200, Duration: time.Second}, httpDo(newClient(t), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != 200 || s.Completed != 200 || s.Counts[Class2xx] != 200 || s.Dropped != 0 || hits.Load() != 200 || s.BytesReceived != 400 {
		t.Fatalf("summary %+v, server saw %d", s, hits.Load())
	}
	// The last request is due at 995 ms.
	if s.Elapsed < 995*time.Millisecond || s.Elapsed > 3*time.Second {
		t.Errorf("elapsed %s", s.Elapsed)
	}
	if s.SentRate < 150 || s.SentRate > 202 {
		t.Errorf("sent rate %.1f/s, want about 200", s.SentRate)
	}
}

// A server that stalls for its first second: requests due during the stall
// carry the stall in their latency, from their scheduled instants.
func TestLoadRunHTTPStallShowsAsLatency(t *testing.T) {
	t.Parallel()
	open := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-open
	}))
	defer srv.Close()
	time.AfterFunc(time.Second, func() { close(open) })
	// 50/s for 2 s: 50 requests due during the stall (waiting 1000, 980,
	// …, 20 ms), 50 after it.
	s, err := Run(context.Background(), Config{Rate: 50, Duration: 2 * time.Second}, httpDo(newClient(t), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != 100 || s.Dropped != 0 {
		t.Fatalf("summary %+v", s)
	}
	if s.Latency.Max < 900*time.Millisecond || s.Latency.P90 < 700*time.Millisecond {
		t.Errorf("latency %+v: the stall does not show", s.Latency)
	}
}

// A server slower than the window: with 5 in flight, the 6th instant on
// finds no slot and is dropped.
func TestLoadRunHTTPSaturatedDrops(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	s, err := Run(context.Background(), Config{Rate: 100, Duration: 500 * time.Millisecond, MaxInFlight: 5}, httpDo(newClient(t), srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != 5 || s.Dropped != 45 || s.Completed != 5 || s.Latency.Min < 1400*time.Millisecond {
		t.Errorf("sent %d dropped %d completed %d min latency %s, want 5, 45, 5, >= 1.4s", s.Sent, s.Dropped, s.Completed, s.Latency.Min)
	}
	var b strings.Builder
	s.WriteText(&b)
	if !strings.Contains(b.String(), "dropped (client saturated) 45") || !strings.Contains(b.String(), "lower bounds") {
		t.Errorf("output:\n%s", b.String())
	}
}

func TestLoadRunHTTPErrorClasses(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/limited":
			w.Header().Set("Retry-After", "6")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	client := newClient(t)
	for _, c := range []struct {
		url  string
		want Class
	}{
		{srv.URL + "/limited", Class429},
		{srv.URL + "/broken", Class5xx},
		{srv.URL + "/missing", Class4xx},
		{srv.URL + "/slow", ClassTimeout},
		{closed, ClassConn},
	} {
		s, err := Run(context.Background(), Config{Rate: 20, Duration: 500 * time.Millisecond, Timeout: 200 * time.Millisecond}, httpDo(client, c.url))
		if err != nil {
			t.Fatal(err)
		}
		if s.Sent != 10 || s.Counts[c.want] != 10 || s.Errors() != 10 {
			t.Errorf("%s: counts %v, want 10 %s", c.url, s.Counts, c.want)
		}
		if c.want == ClassTimeout && s.Latency.Min < 200*time.Millisecond {
			t.Errorf("timeouts took %s, less than the timeout", s.Latency.Min)
		}
	}
}
