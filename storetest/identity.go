package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

func testWorkspaces(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	got, err := s.GetWorkspace(ctx, tb.ws.ID)
	if err != nil || got.Name != "Acme" || !got.CreatedAt.Equal(tb.ws.CreatedAt) {
		t.Fatalf("GetWorkspace = %+v, %v; want %+v", got, err, tb.ws)
	}
	if tb.owner.Role != signoff.RoleOwner || tb.owner.WorkspaceID != tb.ws.ID {
		t.Fatalf("owner = %+v", tb.owner)
	}
	other, otherOwner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListWorkspaces(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListWorkspaces = %d, %v; want 2", len(list), err)
	}
	// Renaming someone else's workspace looks exactly like renaming nothing.
	_, err = s.RenameWorkspace(ctx, otherOwner, tb.ws.ID, "Hijacked")
	wantCode(t, err, signoff.ENOTFOUND)
	if w, err := s.RenameWorkspace(ctx, tb.owner, tb.ws.ID, "Acme Corp"); err != nil || w.Name != "Acme Corp" {
		t.Fatalf("RenameWorkspace = %+v, %v", w, err)
	}
	for _, bad := range []string{"", "   ", "a\x00b", strings.Repeat("x", 101), "\xff"} {
		_, _, err := s.CreateWorkspace(ctx, bad, "x")
		wantCode(t, err, signoff.EINVALID)
	}
	_, err = s.GetWorkspace(ctx, "ws_../../etc/passwd")
	wantCode(t, err, signoff.EINVALID)
	_, err = s.GetWorkspace(ctx, signoff.NewID(signoff.PrefixWorkspace))
	wantCode(t, err, signoff.ENOTFOUND)
	_ = other
	tb.verify(t)
}

func testActors(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	for _, role := range signoff.AllRoles() {
		a := tb.actor(t, "actor-"+string(role), role)
		got, err := s.GetActor(ctx, tb.ws.ID, a.ID)
		if err != nil || got.Role != role || got.Name != a.Name {
			t.Fatalf("GetActor = %+v, %v", got, err)
		}
	}
	_, err := s.CreateActor(ctx, tb.owner, "actor-owner", signoff.RoleViewer)
	wantCode(t, err, signoff.ECONFLICT)
	for _, role := range []signoff.Role{signoff.RoleSystem, "admin", ""} {
		_, err := s.CreateActor(ctx, tb.owner, "x-"+string(role), role)
		wantCode(t, err, signoff.EINVALID)
	}
	list, err := s.ListActors(ctx, tb.ws.ID)
	if err != nil || len(list) != len(signoff.AllRoles())+1 {
		t.Fatalf("ListActors = %d, %v", len(list), err)
	}
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, err = s.GetActor(ctx, other.WorkspaceID, tb.owner.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	tb.verify(t)
}

func testTokens(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	op := tb.actor(t, "olga", signoff.RoleOperator)
	tok, secret, err := s.CreateToken(ctx, tb.owner, op.ID, "laptop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "so_") || tok.ActorID != op.ID {
		t.Fatalf("CreateToken = %+v, %q", tok, secret)
	}
	got, err := s.Authenticate(ctx, secret)
	if err != nil || got.ID != op.ID || got.Role != signoff.RoleOperator {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	// A single changed character, a truncated secret, garbage and another
	// token's id with this secret all fail the same way.
	last := byte('a')
	if secret[len(secret)-1] == 'a' {
		last = 'b'
	}
	tampered := secret[:len(secret)-1] + string(last)
	for _, bad := range []string{tampered, secret[:10], "", "Bearer x", "so_", "so_../../x_" + strings.Repeat("a", 32)} {
		_, err := s.Authenticate(ctx, bad)
		wantCode(t, err, signoff.EUNAUTHORIZED)
	}

	exp := tb.clock.Now().Add(time.Hour)
	_, expiring, err := s.CreateToken(ctx, tb.owner, op.ID, "short", &exp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, expiring); err != nil {
		t.Fatalf("Authenticate before expiry: %v", err)
	}
	tb.clock.Advance(time.Hour)
	_, err = s.Authenticate(ctx, expiring)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	past := tb.clock.Now().Add(-time.Second)
	_, _, err = s.CreateToken(ctx, tb.owner, op.ID, "past", &past)
	wantCode(t, err, signoff.EINVALID)

	if _, err := s.RevokeToken(ctx, tb.owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Authenticate(ctx, secret)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	_, err = s.RevokeToken(ctx, tb.owner, tok.ID)
	wantCode(t, err, signoff.ECONFLICT)

	toks, err := s.ListTokens(ctx, tb.ws.ID, op.ID)
	if err != nil || len(toks) != 2 || toks[0].RevokedAt == nil && toks[1].RevokedAt == nil {
		t.Fatalf("ListTokens = %+v, %v", toks, err)
	}
	// Another workspace can neither mint tokens for nor revoke ours.
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, _, err = s.CreateToken(ctx, other, op.ID, "steal", nil)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.RevokeToken(ctx, other, toks[1].ID)
	wantCode(t, err, signoff.ENOTFOUND)

	// The ledger records tokens, never their secrets: scan every event.
	rows, err := s.SQL().QueryContext(ctx, `SELECT type, payload FROM ledger_events WHERE workspace_id = $1`, tb.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for rows.Next() {
		var typ, payload string
		if err := rows.Scan(&typ, &payload); err != nil {
			t.Fatal(err)
		}
		if typ == "token.created" {
			created++
		}
		for _, sec := range []string{secret, expiring, secret[len(secret)-32:], expiring[len(expiring)-32:]} {
			if strings.Contains(payload, sec) {
				t.Fatalf("secret leaked into a %s event", typ)
			}
		}
	}
	rows.Close()
	if created != 2 {
		t.Fatalf("%d token.created events, want 2", created)
	}
	tb.verify(t)
}

func testProjects(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	_, err := s.CreateProject(ctx, tb.owner, signoff.ProjectInput{Name: "shoplite"})
	wantCode(t, err, signoff.ECONFLICT)
	for _, bad := range []signoff.ProjectInput{{Name: ""}, {Name: "x", RepoURL: "-uexploit"}, {Name: "x", RepoURL: "ext::sh -c touch /tmp/x"},
		{Name: "x", RepoURL: "https://user:pw@example.com/r.git"}, {Name: "x", RepoURL: "relative/path"}} {
		_, err = s.CreateProject(ctx, tb.owner, bad)
		wantCode(t, err, signoff.EINVALID)
	}
	p2, err := s.CreateProject(ctx, tb.owner, signoff.ProjectInput{Name: "orbit", Description: "mobile game"})
	if err != nil {
		t.Fatal(err)
	}
	tb.clock.Advance(time.Minute)
	str := func(s string) *string { return &s }
	up, err := s.UpdateProject(ctx, tb.owner, p2.ID, signoff.ProjectPatch{Name: str("orbit-run"), RepoURL: str("/srv/git/orbit")})
	if err != nil || up.Name != "orbit-run" || up.RepoURL != "/srv/git/orbit" || up.Description != "mobile game" || !up.UpdatedAt.After(up.CreatedAt) {
		t.Fatalf("UpdateProject = %+v, %v", up, err)
	}
	_, err = s.UpdateProject(ctx, tb.owner, p2.ID, signoff.ProjectPatch{Name: str("shoplite")})
	wantCode(t, err, signoff.ECONFLICT)
	_, err = s.UpdateProject(ctx, tb.owner, p2.ID, signoff.ProjectPatch{Name: str("")})
	wantCode(t, err, signoff.EINVALID)
	// Concurrent patches of different fields both land.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			patch := signoff.ProjectPatch{Description: str("described")}
			if i%2 == 0 {
				patch = signoff.ProjectPatch{RepoURL: str("/srv/git/orbit-2")}
			}
			if _, err := s.UpdateProject(ctx, tb.owner, p2.ID, patch); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, _ := s.GetProject(ctx, tb.ws.ID, p2.ID); got.Description != "described" || got.RepoURL != "/srv/git/orbit-2" || got.Name != "orbit-run" {
		t.Fatalf("after concurrent patches: %+v", got)
	}
	list, err := s.ListProjects(ctx, tb.ws.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListProjects = %d, %v", len(list), err)
	}
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, err = s.GetProject(ctx, other.WorkspaceID, p2.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.UpdateProject(ctx, other, p2.ID, signoff.ProjectPatch{Name: str("x")})
	wantCode(t, err, signoff.ENOTFOUND)
	tb.verify(t)
}
