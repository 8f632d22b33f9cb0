package sqlstore_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestEventsCommitted: a waiter taken before a commit of ledger events is
// woken by it; one taken after waits for the next; a refused write wakes
// nobody. SQLite has no cross-process notification: the bus is in-process.
func TestEventsCommitted(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bus.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if s.EventsFromEverywhere() {
		t.Fatal("SQLite claims other processes' commits")
	}
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
	before := s.EventsCommitted()
	_, owner, err := s.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !woken(before) {
		t.Fatal("a commit did not wake a waiter taken before it")
	}
	after := s.EventsCommitted()
	if woken(after) {
		t.Fatal("a waiter taken after the commit was woken by it")
	}
	if _, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: ""}); err == nil {
		t.Fatal("a project without a name was created")
	}
	if woken(after) {
		t.Fatal("a refused write woke a waiter")
	}
	if _, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"}); err != nil {
		t.Fatal(err)
	}
	if !woken(after) {
		t.Fatal("the next commit did not wake the waiter")
	}
}
