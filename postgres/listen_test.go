package postgres_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlstore"
)

// twoProcesses opens two stores on one PostgreSQL database, as two server
// processes would, and waits until both listen for ledger commits.
func twoProcesses(t *testing.T) (a, b *sqlstore.DB) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, s := range []**sqlstore.DB{&a, &b} {
		if *s, err = postgres.Open(ctx, url, sqlstore.Options{Signer: key}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*s).Close() })
	}
	deadline := time.Now().Add(10 * time.Second)
	for !a.EventsFromEverywhere() || !b.EventsFromEverywhere() {
		if time.Now().After(deadline) {
			t.Fatal("the stores never listened for ledger commits")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return a, b
}

// TestEventsCommittedAcrossProcesses: a commit of ledger events through
// one store wakes the waiters of the other; a refused write does not.
func TestEventsCommittedAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	ctx := context.Background()
	wake := a.EventsCommitted()
	_, owner, err := b.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatal("a commit through one process did not wake the other")
	}
	// A refused write sends nothing.
	wake = a.EventsCommitted()
	if _, err := b.CreateProject(ctx, owner, signoff.ProjectInput{Name: strings.Repeat("x", 10000)}); err == nil {
		t.Fatal("an invalid project was created")
	}
	select {
	case <-wake:
		t.Fatal("a failed write woke the other process")
	case <-time.After(300 * time.Millisecond):
	}
}

// TestEventStreamAcrossInstances: an SSE client of one API instance sees
// an event committed through another instance at once, though its own
// instance polls the database only once an hour: PostgreSQL's
// notification carries the wake between processes.
func TestEventStreamAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	ctx := context.Background()
	_, owner, err := a.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := a.CreateToken(ctx, signoff.CLIActor(owner.WorkspaceID), owner.ID, "sse", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	head, err := a.HeadSeq(ctx, owner.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(a, slog.New(slog.DiscardHandler), httpapi.WithEventPoll(time.Hour)))
	t.Cleanup(srv.Close)
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(sctx, "GET", srv.URL+"/api/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(head, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %s", resp.Status)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The stream has read once at its start; give it a moment to wait.
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	c, err := b.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "through the other instance"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			if strings.HasPrefix(l, "data:") && strings.Contains(l, c.ID) {
				t.Logf("event from the other instance arrived after %v", time.Since(start).Round(time.Millisecond))
				return
			}
		case <-deadline:
			t.Fatal("the event committed through the other instance never arrived")
		}
	}
}
