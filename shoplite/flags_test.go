package shoplite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/shoplite"
)

// testKey is the OFREP API key the fake flag service accepts.
const testKey = "sof_shoplite_test_key_0123456789"

// fakeOFREP is a flag service answering OFREP's single-flag evaluation in
// the shapes Signoff's does (httpapi/ofrep.go): the key as a bearer token,
// a JSON body {"context": {...}}, 200 with the evaluation, 401, 400 and
// 404 FLAG_NOT_FOUND in OFREP's error shape.
type fakeOFREP struct {
	*httptest.Server

	mu    sync.Mutex
	flags map[string]json.RawMessage
	calls []string // "<status> <path>" of every request
	hang  bool     // answer nothing until the client gives up
}

func newFakeOFREP(t *testing.T) *fakeOFREP {
	t.Helper()
	f := &fakeOFREP{flags: map[string]json.RawMessage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ofrep/v1/evaluate/flags/{key}", f.evaluate)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.record(http.StatusNotFound, r)
		http.NotFound(w, r)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOFREP) set(key string, value any) {
	data, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flags[key] = data
}

func (f *fakeOFREP) setHang(hang bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hang = hang
}

func (f *fakeOFREP) record(status int, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%d %s", status, r.URL.EscapedPath()))
}

// seen returns the requests answered so far.
func (f *fakeOFREP) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeOFREP) evaluate(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hang := f.hang
	f.mu.Unlock()
	if hang {
		// With the body read, the server notices the client hanging up.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		f.record(0, r)
		return
	}
	status, body := f.answer(r)
	f.record(status, r)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (f *fakeOFREP) answer(r *http.Request) (int, map[string]any) {
	key := r.PathValue("key")
	if r.Header.Get("Authorization") != "Bearer "+testKey {
		return http.StatusUnauthorized, map[string]any{"errorDetails": "the flag key is unknown or revoked"}
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return http.StatusBadRequest, map[string]any{"key": key, "errorCode": "PARSE_ERROR", "errorDetails": "Content-Type must be application/json"}
	}
	var in struct {
		Context json.RawMessage `json:"context"`
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &in); err != nil {
		return http.StatusBadRequest, map[string]any{"key": key, "errorCode": "PARSE_ERROR", "errorDetails": err.Error()}
	}
	if c := strings.TrimSpace(string(in.Context)); c != "" && c != "null" && c[0] != '{' {
		return http.StatusBadRequest, map[string]any{"key": key, "errorCode": "INVALID_CONTEXT", "errorDetails": "context must be a JSON object"}
	}
	f.mu.Lock()
	value, ok := f.flags[key]
	f.mu.Unlock()
	if !ok {
		return http.StatusNotFound, map[string]any{"key": key, "errorCode": "FLAG_NOT_FOUND",
			"errorDetails": fmt.Sprintf("flag %q is not defined in environment production", key)}
	}
	variant := string(value)
	switch variant {
	case "true":
		variant = "on"
	case "false":
		variant = "off"
	}
	return http.StatusOK, map[string]any{"key": key, "value": value, "reason": "STATIC", "variant": variant, "metadata": map[string]any{}}
}

// deadURL is the URL of a server that is no longer there.
func deadURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// checkoutResult is ShopLite's answer to one checkout.
type checkoutResult struct {
	status int
	body   string
	source string // X-Flag-Source
	flow   string // X-Payment-Flow
}

// checkout posts one 10000-cent lamp with SAVE10 (8100 on main: the
// coupon bug) to /checkout.
func checkout(t *testing.T, url string) checkoutResult {
	t.Helper()
	resp, err := http.Post(url+"/checkout", "application/json",
		strings.NewReader(`{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}],"coupon":"SAVE10"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return checkoutResult{status: resp.StatusCode, body: strings.TrimSpace(string(body)),
		source: resp.Header.Get("X-Flag-Source"), flow: resp.Header.Get("X-Payment-Flow")}
}

const (
	bodyBuggy  = `{"total_cents":8100}`
	bodyFixed  = `{"total_cents":9000}`
	bodyBroken = `{"error":"payment provider v2 unavailable"}`
	flagPath   = "/ofrep/v1/evaluate/flags/" + shoplite.CheckoutFlag
)

func (c checkoutResult) check(t *testing.T, status int, body, source, flow string) {
	t.Helper()
	if c.status != status || c.body != body || c.source != source || c.flow != flow {
		t.Errorf("POST /checkout = %d %s (X-Flag-Source %q, X-Payment-Flow %q); want %d %s (%q, %q)",
			c.status, c.body, c.source, c.flow, status, body, source, flow)
	}
}

// waitLog waits until the server's log holds want.
func waitLog(t *testing.T, logs *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Errorf("the server's log lacks %q:\n%s", want, logs)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shopBinary builds main's cmd/shoplite once for the test.
func shopBinary(t *testing.T) string {
	t.Helper()
	needTools(t, "git", "go")
	s, err := shoplite.BuildMain(context.Background(), filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	return goBuild(t, s.Dir, "-ldflags=-X main.commit="+s.Base)
}

// TestCheckoutFlag runs main's server against a flag service in every
// state that matters: the flag on breaks checkout, off leaves it as it is
// (the coupon bug included), and every failure to read it falls back to
// off, visibly (X-Flag-Source: default) and logged.
func TestCheckoutFlag(t *testing.T) {
	bin := shopBinary(t)
	type env = []string
	configured := func(url string) env {
		return env{shoplite.EnvOFREPURL + "=" + url, shoplite.EnvOFREPKey + "=" + testKey}
	}
	for _, tc := range []struct {
		name  string
		flags map[string]any            // the flag service's flags
		env   func(ofrepURL string) env // ShopLite's settings
		want  func(t *testing.T, c checkoutResult)
		calls []string // the flag service's answers, "" for none
		log   string   // in ShopLite's log
	}{
		{
			name: "flag true: the new payment flow fails", flags: map[string]any{shoplite.CheckoutFlag: true}, env: configured,
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 500, bodyBroken, "ofrep", "v2") },
			calls: []string{"200 " + flagPath}, log: "payment provider v2 unavailable",
		},
		{
			name: "flag false: checkout as before", flags: map[string]any{shoplite.CheckoutFlag: false}, env: configured,
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "ofrep", "v1") },
			calls: []string{"200 " + flagPath},
		},
		{
			name: "flag missing: default false", flags: map[string]any{"other_flag": true}, env: configured,
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "default", "v1") },
			calls: []string{"404 " + flagPath}, log: "FLAG_NOT_FOUND",
		},
		{
			name: "flag not a boolean: default false", flags: map[string]any{shoplite.CheckoutFlag: "on"}, env: configured,
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "default", "v1") },
			calls: []string{"200 " + flagPath}, log: "TYPE_MISMATCH",
		},
		{
			name: "flag service down: default false", flags: map[string]any{shoplite.CheckoutFlag: true},
			env:  func(string) env { return configured(deadURL(t)) },
			want: func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "default", "v1") },
			log:  "flag service unreachable",
		},
		{
			name: "wrong key: 401, default false", flags: map[string]any{shoplite.CheckoutFlag: true},
			env: func(url string) env {
				return env{shoplite.EnvOFREPURL + "=" + url, shoplite.EnvOFREPKey + "=sof_not_the_key"}
			},
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "default", "v1") },
			calls: []string{"401 " + flagPath}, log: "401 Unauthorized",
		},
		{
			name: "no key: 401, default false", flags: map[string]any{shoplite.CheckoutFlag: true},
			env:   func(url string) env { return env{shoplite.EnvOFREPURL + "=" + url} },
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "default", "v1") },
			calls: []string{"401 " + flagPath}, log: shoplite.EnvOFREPKey + " is not set",
		},
		{
			name: "another flag key", flags: map[string]any{shoplite.CheckoutFlag: false, "pay_v2": true},
			env:   func(url string) env { return append(configured(url), shoplite.EnvCheckoutFlag+"=pay_v2") },
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 500, bodyBroken, "ofrep", "v2") },
			calls: []string{"200 /ofrep/v1/evaluate/flags/pay_v2"},
		},
		{
			name: "the OFREP root as the URL", flags: map[string]any{shoplite.CheckoutFlag: true},
			env:   func(url string) env { return configured(url + "/ofrep/v1/") },
			want:  func(t *testing.T, c checkoutResult) { c.check(t, 500, bodyBroken, "ofrep", "v2") },
			calls: []string{"200 " + flagPath},
		},
		{
			name: "not configured: no flag read", flags: map[string]any{shoplite.CheckoutFlag: true},
			env:  func(string) env { return nil },
			want: func(t *testing.T, c checkoutResult) { c.check(t, 200, bodyBuggy, "", "") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOFREP(t)
			for k, v := range tc.flags {
				f.set(k, v)
			}
			url, logs := startWith(t, bin, tc.env(f.URL)...)
			tc.want(t, checkout(t, url))
			if got := f.seen(); strings.Join(got, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("the flag service answered %q, want %q", got, tc.calls)
			}
			if tc.log != "" {
				waitLog(t, logs, tc.log)
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("the API key is in the server's log:\n%s", logs)
			}
			// Requests that fail before pricing do not read the flag.
			resp, err := http.Post(url+"/checkout", "application/json", strings.NewReader(`{"items":"not a list"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("a bad checkout request: %s, want 400", resp.Status)
			}
		})
	}

	t.Run("bad URL: the server does not start", func(t *testing.T) {
		t.Parallel()
		out, err := runShop(bin, shoplite.EnvOFREPURL+"=not a url")
		if err == nil || !strings.Contains(out, shoplite.EnvOFREPURL) {
			t.Errorf("shoplite with a bad OFREP URL: %v\n%s", err, out)
		}
	})
}

// runShop runs the server binary to its end (it must fail to start).
func runShop(bin string, env ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(hostEnvWithoutFlags(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCheckoutFlagFlips flips the flag under one running server: every
// checkout reads it afresh, so each flip shows on the very next request,
// and a flag service that goes slow or away leaves checkout on the
// default.
func TestCheckoutFlagFlips(t *testing.T) {
	bin := shopBinary(t)
	f := newFakeOFREP(t)
	f.set(shoplite.CheckoutFlag, false)
	url, logs := startWith(t, bin, shoplite.EnvOFREPURL+"="+f.URL, shoplite.EnvOFREPKey+"="+testKey)

	checkout(t, url).check(t, 200, bodyBuggy, "ofrep", "v1")
	f.set(shoplite.CheckoutFlag, true)
	checkout(t, url).check(t, 500, bodyBroken, "ofrep", "v2")
	checkout(t, url).check(t, 500, bodyBroken, "ofrep", "v2")
	f.set(shoplite.CheckoutFlag, false)
	checkout(t, url).check(t, 200, bodyBuggy, "ofrep", "v1")
	f.set(shoplite.CheckoutFlag, true)

	// A flag service that does not answer: the evaluation gives up after
	// its timeout (2 s) and checkout goes on with the default.
	f.setHang(true)
	began := time.Now()
	checkout(t, url).check(t, 200, bodyBuggy, "default", "v1")
	if took := time.Since(began); took < time.Second || took > 15*time.Second {
		t.Errorf("a checkout with a silent flag service took %s, want about the 2 s timeout", took)
	} else {
		t.Logf("a checkout with a silent flag service took %s", took)
	}
	waitLog(t, logs, "using the default value false")
	f.setHang(false)
	checkout(t, url).check(t, 500, bodyBroken, "ofrep", "v2")

	f.Close()
	checkout(t, url).check(t, 200, bodyBuggy, "default", "v1")
	waitLog(t, logs, "flag service unreachable")
}
