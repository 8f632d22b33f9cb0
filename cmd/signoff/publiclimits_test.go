package main

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestPublicBudgetsSharedByDoors: the served handler gives the web pages
// and the API one set of budgets, so a guesser cannot double its misses
// by switching doors, and the trusted proxy's X-Forwarded-For separates
// clients behind it.
func TestPublicBudgetsSharedByDoors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "signoff.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, owner, err := store.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	project, err := store.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	log := slog.New(slog.DiscardHandler)
	st, err := newStack(e, store, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxies, err := clientip.Parse("127.0.0.1, ::1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handlerWith(store, log, st, nil, false, serveConfig{proxies: proxies}))
	defer srv.Close()
	get := func(path, client string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const guesser = "198.51.100.66"
	bad := "trk_" + strings.Repeat("q", 26) + "_" + strings.Repeat("x", 32)
	// Five misses on each door: the shared budget (10) is spent.
	for i := range 10 {
		path := "/api/v1/track/" + bad
		if i%2 == 1 {
			path = "/t/" + bad
		}
		if got := get(path, guesser); got != http.StatusNotFound {
			t.Fatalf("miss %d on %s: %d", i, path, got)
		}
	}
	for _, path := range []string{"/api/v1/track/" + bad, "/t/" + bad} {
		if got := get(path, guesser); got != http.StatusTooManyRequests {
			t.Fatalf("11th miss on %s: %d, want 429", path, got)
		}
	}
	// Another client behind the same proxy has its own budget, and a
	// reporter's valid link reads from the guesser's own address too.
	if got := get("/t/"+bad, "198.51.100.67"); got != http.StatusNotFound {
		t.Fatalf("another client's miss: %d", got)
	}
	_, _, secret, err := store.SubmitReport(ctx, signoff.ReportInput{ProjectID: project.ID, Text: "checkout crashes"})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/v1/track/" + secret, "/t/" + secret} {
		if got := get(path, guesser); got != http.StatusOK {
			t.Fatalf("valid link %s from the guesser's address: %d", path, got)
		}
	}
}
