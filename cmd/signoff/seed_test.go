package main

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// seedStore opens a store on a new SQLite file (closed at cleanup) with one
// workspace, its owner and a project: what the in-process command tests
// serve through a real API server.
func seedStore(t *testing.T, projectName string) (*sqlstore.DB, signoff.Workspace, signoff.Actor, signoff.Project) {
	t.Helper()
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(nil)
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "signoff.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w, owner, err := s.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: projectName})
	if err != nil {
		t.Fatal(err)
	}
	return s, w, owner, p
}
