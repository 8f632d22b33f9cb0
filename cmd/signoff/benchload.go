package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/loadgen"
)

// "signoff bench load" offers open-loop load to a running server at a fixed
// arrival rate and prints what came back. The pacing and the statistics are
// package loadgen's; this file builds the requests of each scenario.

const (
	defaultTrackTokens = 50
	maxTrackTokens     = 1000
	// maxLoadBody bounds how much of one answer is read (and counted).
	maxLoadBody = 1 << 20
)

func runBench(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "bench", args, "load", "idle")
	if err != nil {
		return err
	}
	switch verb {
	case "load":
		return runBenchLoad(ctx, e, rest)
	case "idle":
		return runBenchIdle(ctx, e, rest)
	}
	return errUsage
}

type benchLoadArgs struct {
	url, scenario, project, flagKey, flag string
	rate                                  float64
	duration, timeout                     time.Duration
	maxInFlight                           int
	maxRequests                           int64
	trackTokens                           int
	allowRemote, json                     bool
}

func runBenchLoad(ctx context.Context, e *env, args []string) error {
	var a benchLoadArgs
	fs := newFlags("bench load", "signoff bench load --rate R --duration D --scenario intake|track|ofrep [--url URL] [--project ID] [--flag-key SECRET --flag KEY] [--max-inflight N] [--max-requests N] [--allow-remote] [--json]")
	def := e.getenv("SIGNOFF_URL")
	if def == "" {
		def = client.DefaultURL
	}
	fs.StringVar(&a.url, "url", def, "base URL of the server under load (env SIGNOFF_URL); loopback only unless --allow-remote")
	fs.Float64Var(&a.rate, "rate", 0, "arrivals per second, open loop (required; at most 100000)")
	fs.DurationVar(&a.duration, "duration", 0, "how long to send, e.g. 20s (required; at most 1h)")
	fs.StringVar(&a.scenario, "scenario", "", "intake (POST reports), track (GET tracking pages) or ofrep (evaluate one flag) (required)")
	fs.StringVar(&a.project, "project", "", "the project reports are filed to (intake and track)")
	fs.StringVar(&a.flagKey, "flag-key", "", "the environment's OFREP flag key, sof_… (ofrep; default: env SIGNOFF_FLAG_KEY, which is better: flags show up in process listings)")
	fs.StringVar(&a.flag, "flag", "", "the flag to evaluate (ofrep)")
	fs.IntVar(&a.maxInFlight, "max-inflight", 0, fmt.Sprintf("requests in flight at most; a request due when the bound is reached is dropped and counted (default: 2 x rate, at most %d)", loadgen.MaxInFlightCap))
	fs.Int64Var(&a.maxRequests, "max-requests", 0, "schedule at most this many requests (default: rate x duration)")
	fs.DurationVar(&a.timeout, "timeout", loadgen.DefaultTimeout, "per-request timeout, counted as a timeout error")
	fs.IntVar(&a.trackTokens, "track-tokens", defaultTrackTokens, fmt.Sprintf("track: reports filed before the measured window for their tracking tokens (at most %d)", maxTrackTokens))
	fs.BoolVar(&a.allowRemote, "allow-remote", false, "allow a URL whose host is not a loopback address")
	fs.BoolVar(&a.json, "json", false, "print JSON for scripts")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if a.flagKey == "" {
		a.flagKey = strings.TrimSpace(e.getenv("SIGNOFF_FLAG_KEY"))
	}
	need := []string{"scenario", a.scenario}
	if a.rate == 0 {
		need = append(need, "rate", "")
	}
	if a.duration == 0 {
		need = append(need, "duration", "")
	}
	switch a.scenario {
	case "intake", "track":
		need = append(need, "project", a.project)
	case "ofrep":
		need = append(need, "flag-key", a.flagKey, "flag", a.flag)
	case "":
	default:
		fmt.Fprintf(e.stderr, "--scenario must be intake, track or ofrep, got %q\n", a.scenario)
		fs.Usage()
		return errUsage
	}
	if err := required(fs, e, need...); err != nil {
		return err
	}
	if strings.ContainsFunc(a.flagKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return signoff.Errorf(signoff.EINVALID, "the flag key contains whitespace or control characters")
	}
	if a.trackTokens < 1 || a.trackTokens > maxTrackTokens {
		return signoff.Errorf(signoff.EINVALID, "--track-tokens must be between 1 and %d", maxTrackTokens)
	}
	cfg := loadgen.Config{Rate: a.rate, Duration: a.duration, MaxRequests: a.maxRequests, MaxInFlight: a.maxInFlight, Timeout: a.timeout}
	if err := cfg.Validate(); err != nil {
		return signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	base, err := loadBase(a.url)
	if err != nil {
		return err
	}
	if !a.allowRemote {
		if err := loadgen.Guard(ctx, base, net.DefaultResolver); err != nil {
			return signoff.Errorf(signoff.EINVALID, "refusing to load %s: %v; load goes to this machine's loopback only unless --allow-remote", base, err)
		}
	}
	lc := newLoadClient(base, cfg.MaxInFlight, !a.allowRemote)
	defer lc.hc.CloseIdleConnections()

	out := benchLoadOutput{Scenario: a.scenario, URL: base}
	var do loadgen.DoFunc
	switch a.scenario {
	case "intake":
		run := runID()
		do = func(ctx context.Context, seq int64) loadgen.Result {
			return lc.do(ctx, http.MethodPost, lc.reportsPath(a.project), syntheticReport(run, seq), nil, nil)
		}
	case "track":
		tokens, note, err := lc.fileForTracking(ctx, a.project, a.trackTokens)
		if err != nil {
			return err
		}
		out.TrackingTokens, out.SetupNote = len(tokens), note
		do = func(ctx context.Context, seq int64) loadgen.Result {
			return lc.do(ctx, http.MethodGet, "/api/v1/track/"+url.PathEscape(tokens[seq%int64(len(tokens))]), nil, nil, nil)
		}
	case "ofrep":
		path := "/ofrep/v1/evaluate/flags/" + url.PathEscape(a.flag)
		hdr := http.Header{"X-Api-Key": {a.flagKey}}
		do = func(ctx context.Context, seq int64) loadgen.Result {
			body := []byte(fmt.Sprintf(`{"context":{"targetingKey":"signoff-bench-load-%d"}}`, seq))
			return lc.do(ctx, http.MethodPost, path, body, hdr, nil)
		}
	}
	if !a.json {
		fmt.Fprintf(e.stdout, "bench load: %s at %g/s for %s against %s (open loop: latency from each request's scheduled instant)\n",
			a.scenario, cfg.Rate, cfg.Duration, base)
		if out.SetupNote != "" {
			fmt.Fprintf(e.stdout, "setup      %s\n", out.SetupNote)
		}
	}
	s, runErr := loadgen.Run(ctx, cfg, do)
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return runErr
	}
	out.Summary = s
	if a.json {
		return printJSON(e, out)
	}
	if err := s.WriteText(e.stdout); err != nil {
		return err
	}
	if n := s.Counts[loadgen.Class429]; n > 0 {
		fmt.Fprintf(e.stdout, "note       %d answers were 429: %s\n", n, limitHint[a.scenario])
	}
	return nil
}

// limitHint names the serve flags whose limits a load from one address
// meets first.
var limitHint = map[string]string{
	"intake": "the server's intake limits (serve --intake-per-minute per address, --intake-project-per-second, --intake-total-per-second); raise them on the server for a load test from one address",
	"track":  "the server's tracking limits (serve --track-per-minute per address, --track-link-per-minute per link); raise them on the server for a load test from one address, or file more reports with --track-tokens",
	"ofrep":  "the server asked this client to slow down",
}

type benchLoadOutput struct {
	Scenario       string          `json:"scenario"`
	URL            string          `json:"url"`
	TrackingTokens int             `json:"tracking_tokens,omitempty"`
	SetupNote      string          `json:"setup_note,omitempty"`
	Summary        loadgen.Summary `json:"summary"`
}

// loadBase checks the --url and returns it without a trailing slash.
func loadBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", signoff.Errorf(signoff.EINVALID, "--url is not a URL")
	case u.User != nil:
		return "", signoff.Errorf(signoff.EINVALID, "--url must not carry credentials")
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", signoff.Errorf(signoff.EINVALID, "--url must be an http:// or https:// base URL such as %s, got %q", client.DefaultURL, raw)
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// loadClient sends the requests: no proxy, no redirects followed, no
// compression, and (unless remote targets are allowed) a dialer that
// connects to loopback addresses only, whatever a name resolves to later.
type loadClient struct {
	base string
	hc   *http.Client
}

func newLoadClient(base string, inflight int, loopbackOnly bool) *loadClient {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if loopbackOnly {
		d.Control = loadgen.DialControl
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        inflight,
		MaxIdleConnsPerHost: inflight,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second,
		DisableCompression:  true,
	}
	return &loadClient{base: base, hc: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (lc *loadClient) reportsPath(project string) string {
	return "/api/v1/projects/" + url.PathEscape(project) + "/reports"
}

// do sends one request and reads (and counts) up to maxLoadBody of the
// answer, decoding it into out when out is set.
func (lc *loadClient) do(ctx context.Context, method, path string, body []byte, hdr http.Header, out *[]byte) loadgen.Result {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, lc.base+path, rd)
	if err != nil {
		return loadgen.Result{Err: err}
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "signoff-bench-load/"+version)
	resp, err := lc.hc.Do(req)
	if err != nil {
		return loadgen.Result{BytesSent: int64(len(body)), Err: err}
	}
	defer resp.Body.Close()
	var n int64
	if out != nil {
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxLoadBody))
		*out, n, err = b, int64(len(b)), rerr
	} else {
		n, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxLoadBody))
	}
	return loadgen.Result{Status: resp.StatusCode, BytesSent: int64(len(body)), BytesReceived: n, Err: err}
}

// fileForTracking files up to k reports, one at a time and before the
// measured window, and returns their tracking tokens. The public intake is
// rate limited per client address: at the first 429 it stops and goes on
// with the tokens it has, saying so.
func (lc *loadClient) fileForTracking(ctx context.Context, project string, k int) ([]string, string, error) {
	run := runID()
	var tokens []string
	note := ""
	for i := range k {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var body []byte
		r := lc.do(ctx, http.MethodPost, lc.reportsPath(project), syntheticReport(run, int64(i)), nil, &body)
		cancel()
		if r.Err != nil {
			return nil, "", fmt.Errorf("filing a report for its tracking token: %w", r.Err)
		}
		if r.Status == http.StatusTooManyRequests {
			note = fmt.Sprintf("the intake answered 429 after %d of %d reports (its per-address limit); reading %d tracking tokens round-robin", len(tokens), k, len(tokens))
			break
		}
		if r.Status != http.StatusCreated {
			return nil, "", signoff.Errorf(signoff.EINVALID, "filing a report for its tracking token: status %d: %s", r.Status, firstN(strings.TrimSpace(string(body)), 300))
		}
		var created struct {
			Tracking struct {
				Token string `json:"token"`
			} `json:"tracking"`
		}
		if err := json.Unmarshal(body, &created); err != nil || created.Tracking.Token == "" {
			return nil, "", fmt.Errorf("filing a report for its tracking token: the answer has no tracking token")
		}
		tokens = append(tokens, created.Tracking.Token)
	}
	if len(tokens) == 0 {
		return nil, "", signoff.Errorf(signoff.ERATELIMIT, "no tracking token: the intake answered 429 to the first report; wait for its limit to refill")
	}
	if note == "" {
		note = fmt.Sprintf("filed %d reports for their tracking tokens (outside the measured window); reading them round-robin", len(tokens))
	}
	return tokens, note, nil
}

// runID tells one run's synthetic reports from another's.
func runID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Parts of synthetic report text: each report combines them differently,
// and carries its run and sequence number, so no two are alike.
var (
	loadScreens  = []string{"checkout", "cart", "login", "search", "settings", "profile", "order history", "payment", "onboarding", "wishlist", "notifications"}
	loadActions  = []string{"applying a coupon", "rotating the phone", "switching accounts", "going offline and back", "tapping back twice", "changing the language", "opening a push notification", "pasting an address", "updating the app", "scrolling fast"}
	loadSymptoms = []string{"the app freezes", "the total is wrong", "the button does nothing", "a blank page appears", "the app crashes", "the spinner never stops", "text overlaps the images", "the list shows duplicates", "the page scrolls to the top", "an error toast flashes"}
	loadDevices  = []string{"Pixel 8", "iPhone 15", "Galaxy S23", "iPad Air", "Moto G", "OnePlus 12", "Desktop Chrome"}
	loadOSes     = []string{"Android 14", "iOS 17.4", "Android 13", "iPadOS 17", "Windows 11", "macOS 14"}
)

// syntheticReport is the body of report seq of a run: load-test text,
// labelled as such, unique per request.
func syntheticReport(run string, seq int64) []byte {
	pick := func(list []string, salt int64) string { return list[(seq*salt+seq/int64(len(list)))%int64(len(list))] }
	in := signoff.ReportInput{
		Text: fmt.Sprintf("[signoff bench load: synthetic load-test report, not from a person; run %s, #%d] On the %s screen, %s after %s. It happened %d times out of %d tries.",
			run, seq, pick(loadScreens, 1), pick(loadSymptoms, 3), pick(loadActions, 7), seq%5+1, seq%7+5),
		Device:     pick(loadDevices, 5),
		OS:         pick(loadOSes, 11),
		AppVersion: fmt.Sprintf("%d.%d.%d", 4+seq%3, seq%10, seq%17),
		Steps:      fmt.Sprintf("1. open the %s screen 2. start %s 3. watch", pick(loadScreens, 13), pick(loadActions, 17)),
	}
	b, _ := json.Marshal(in)
	return b
}
