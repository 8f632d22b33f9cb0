package web_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestWebStore runs the web UI's storage (sessions, sign-in links, the
// desk's list) on both backends. PostgreSQL runs when pgtest finds a
// server, as in the conformance suite; its throwaway cluster stops with
// the test binary.
func TestWebStore(t *testing.T) {
	t.Parallel()
	open := map[string]func(t *testing.T, o sqlstore.Options) *sqlstore.DB{
		"sqlite": func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "web.db"), o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"postgres": func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
			s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, fn := range open {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, key, err := ed25519.GenerateKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			clock := &rigClock{t: time.Now().UTC().Truncate(time.Second)}
			s := fn(t, sqlstore.Options{Signer: key, Now: clock.Now})
			t.Cleanup(func() { s.Close() })
			testWebStore(t, s, clock)
		})
	}
}

func testWebStore(t *testing.T, s *sqlstore.DB, clock *rigClock) {
	ctx := context.Background()
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := s.CreateActor(ctx, owner, "vic", signoff.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	fixer, err := s.CreateActor(ctx, owner, "fixbot", signoff.RoleFixer)
	if err != nil {
		t.Fatal(err)
	}
	_, ownerTok, err := s.CreateToken(ctx, owner, owner.ID, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, fixerTok, err := s.CreateToken(ctx, owner, fixer.ID, "t", nil)
	if err != nil {
		t.Fatal(err)
	}

	// Sessions: a token opens one for a person, never for an agent.
	secret, sess, err := s.SignIn(ctx, ownerTok, time.Hour)
	if err != nil || sess.Actor.ID != owner.ID || sess.CSRF == "" || !sess.ExpiresAt.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("SignIn = %+v, %v", sess, err)
	}
	if _, _, err := s.SignIn(ctx, fixerTok, time.Hour); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("SignIn(agent) = %v", err)
	}
	got, err := s.WebSession(ctx, secret)
	if err != nil || got.Actor.ID != owner.ID || got.Actor.Role != signoff.RoleOwner || got.CSRF != sess.CSRF || got.Actor.WorkspaceID != ws.ID {
		t.Fatalf("WebSession = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "x", secret + "x", ownerTok} {
		if _, err := s.WebSession(ctx, bad); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
			t.Fatalf("WebSession(%q) = %v", bad, err)
		}
	}
	clock.Advance(time.Hour)
	if _, err := s.WebSession(ctx, secret); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("expired session = %v", err)
	}
	secret2, _, err := s.SignIn(ctx, ownerTok, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SignOut(ctx, secret2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WebSession(ctx, secret2); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("ended session = %v", err)
	}
	var rows int
	if err := s.SQL().QueryRowContext(ctx, `SELECT count(*) FROM web_sessions`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d session rows left (expired ones are swept), %v", rows, err)
	}

	// Sign-in links: once, before they expire.
	code, link, err := s.CreateLoginLink(ctx, viewer.ID, 15*time.Minute)
	if err != nil || link.Actor.ID != viewer.ID {
		t.Fatalf("CreateLoginLink = %+v, %v", link, err)
	}
	if _, _, err := s.CreateLoginLink(ctx, fixer.ID, time.Minute); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("link for an agent = %v", err)
	}
	if _, _, err := s.CreateLoginLink(ctx, signoff.NewID(signoff.PrefixActor), time.Minute); signoff.ErrorCode(err) != signoff.ENOTFOUND {
		t.Fatalf("link for nobody = %v", err)
	}
	if _, sess, err := s.SignInWithLink(ctx, code, time.Hour); err != nil || sess.Actor.ID != viewer.ID {
		t.Fatalf("SignInWithLink = %+v, %v", sess, err)
	}
	if _, _, err := s.SignInWithLink(ctx, code, time.Hour); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("second use = %v", err)
	}
	code2, _, err := s.CreateLoginLink(ctx, viewer.ID, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(15 * time.Minute)
	if _, _, err := s.SignInWithLink(ctx, code2, time.Hour); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("expired link = %v", err)
	}

	// The desk's list: filters, title search with LIKE's wildcards taken
	// literally, and staff only.
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Coupon applied twice", "100% discount breaks the total", "flag_x stuck"} {
		if _, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: proj.ID, Kind: signoff.KindBug, Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		f    sqlstore.DeskFilter
		want int
	}{
		{sqlstore.DeskFilter{}, 3},
		{sqlstore.DeskFilter{Query: "coupon"}, 1},
		{sqlstore.DeskFilter{Query: "100%"}, 1},
		{sqlstore.DeskFilter{Query: "%"}, 1},
		{sqlstore.DeskFilter{Query: "_"}, 1},
		{sqlstore.DeskFilter{Kind: signoff.KindChange}, 0},
		{sqlstore.DeskFilter{State: "received", Limit: 2}, 2},
	} {
		cs, err := s.DeskCases(ctx, owner, tc.f)
		if err != nil || len(cs) != tc.want {
			t.Errorf("DeskCases(%+v) = %d cases, %v; want %d", tc.f, len(cs), err, tc.want)
		}
	}
	if _, err := s.DeskCases(ctx, fixer, sqlstore.DeskFilter{}); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("DeskCases(agent) = %v", err)
	}
	if name, err := s.IntakeProject(ctx, proj.ID); err != nil || name != "shop" {
		t.Fatalf("IntakeProject = %q, %v", name, err)
	}
}
