package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The package promises it "never follows a redirect with [the token]",
// and WithHTTPClient is the documented way for a script to set its own
// TLS config, proxy or timeout. With any such client the promise is gone:
// the caller's http.Client follows a 307, and net/http keeps the
// Authorization header for the same host name on another port (or a
// downgrade from https to http), so a server (or anything answering on its
// address) sends the bearer token to a service the caller never named.
func TestAttack27WithHTTPClientFollowsRedirectWithToken(t *testing.T) {
	t.Parallel()
	var leaked atomic.Value
	leaked.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"act_x"}`))
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)

	// A script's own client, e.g. for a custom CA or a proxy.
	c, err := New(srv.URL, testToken, WithHTTPClient(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Me(context.Background())
	if got := leaked.Load().(string); strings.Contains(got, testToken) {
		t.Fatalf("the token was sent to %s after a redirect (err %v): WithHTTPClient drops the no-redirect guard", other.URL, err)
	}
	if err == nil {
		t.Fatal("a redirect was followed and its answer taken as the server's")
	}
}

// The reporter's tracking secret is a capability (it answers as the
// reporter: confirms a fix, gives the last word). The server logs route
// patterns, never that path, for that reason. Track and TrackDecision put
// it in the URL path, and the client's errors quote the path (or the whole
// URL, from net/http): any script that logs a failed call leaks it.
func TestAttack27TrackErrorCarriesReporterCapability(t *testing.T) {
	t.Parallel()
	const secret = "sotr_reporter-capability-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`not json`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	err = c.Do(context.Background(), http.MethodGet, Path("track", secret), nil, &out)
	if err == nil {
		t.Fatal("a broken answer was taken")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("a failed tracking call's error carries the reporter's capability: %v", err)
	}
	// And when the server cannot be reached at all.
	srv.Close()
	_, err = c.Track(context.Background(), secret)
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("an unreachable server's error carries the reporter's capability: %v", err)
	}
}
