package sqlstore_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
)

type chartClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *chartClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *chartClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestCaseStateChanges runs on both backends: PostgreSQL when pgtest
// finds a server, as in the conformance suite.
func TestCaseStateChanges(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T, o sqlstore.Options) *sqlstore.DB{
		"sqlite": func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "charts.db"), o)
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
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, key, err := ed25519.GenerateKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			clock := &chartClock{t: time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)}
			s := open(t, sqlstore.Options{Signer: key, Now: clock.Now})
			t.Cleanup(func() { s.Close() })
			testCaseStateChanges(t, s, clock)
			testCrashWindow(t, s)
		})
	}
}

func testCaseStateChanges(t *testing.T, s *sqlstore.DB, clock *chartClock) {
	ctx := context.Background()
	t0 := clock.Now()
	_, owner, err := s.CreateWorkspace(ctx, "Acme", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	people := map[signoff.Role]signoff.Actor{signoff.RoleOwner: owner}
	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer, signoff.RoleReporter, signoff.RoleTriager} {
		if people[role], err = s.CreateActor(ctx, owner, string(role)+"-one", role); err != nil {
			t.Fatal(err)
		}
	}
	// Three bugs an hour apart, then one goes to triage a day later.
	var cases []signoff.Case
	for i := range 3 {
		clock.Set(t0.Add(time.Duration(i+1) * time.Hour))
		c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: proj.ID, Kind: signoff.KindBug, Title: fmt.Sprint("bug ", i)})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	clock.Set(t0.Add(25 * time.Hour))
	if _, _, err := s.TransitionCase(ctx, owner, cases[0].ID, signoff.TransitionInput{Command: "start_triage", Note: "looking"}); err != nil {
		t.Fatal(err)
	}
	// Another workspace's case is never counted.
	_, other, err := s.CreateWorkspace(ctx, "Other", "oscar")
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.CreateProject(ctx, other, signoff.ProjectInput{Name: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCase(ctx, other, signoff.CaseInput{ProjectID: op.ID, Kind: signoff.KindChange, Title: "not ours"}); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(48 * time.Hour))

	show := func(cs sqlstore.CaseStates) string {
		out := fmt.Sprint(cs.Now, " since ", cs.Since.Sub(t0), " truncated ", cs.Truncated, ":")
		for _, c := range cs.Changes {
			out += fmt.Sprintf(" %s %s>%s@%s", c.CaseID, c.From, c.To, c.Time.Sub(t0))
		}
		return out
	}
	created := func(i int) string { return fmt.Sprintf(" %s >received@%dh0m0s", cases[i].ID, i+1) }
	moved := fmt.Sprintf(" %s received>triaging@25h0m0s", cases[0].ID)
	now := "map[received:2 triaging:1]"
	for _, tt := range []struct {
		name  string
		by    signoff.Role
		since time.Time
		limit int
		want  string
	}{
		{"everything", signoff.RoleViewer, t0.Add(-1000 * time.Hour), 0, now + " since -1000h0m0s truncated false:" + created(0) + created(1) + created(2) + moved},
		{"from the start", signoff.RoleOperator, t0, 100, now + " since 0s truncated false:" + created(0) + created(1) + created(2) + moved},
		{"a window", signoff.RoleOwner, t0.Add(2 * time.Hour), 100, now + " since 2h0m0s truncated false:" + created(1) + created(2) + moved},
		{"a window from an event's time on", signoff.RoleOwner, t0.Add(3*time.Hour + time.Microsecond), 100, now + " since 3h0m0.000001s truncated false:" + moved},
		{"nothing since", signoff.RoleViewer, t0.Add(26 * time.Hour), 100, now + " since 26h0m0s truncated false:"},
		{"the limit keeps the newest", signoff.RoleViewer, t0, 2, now + " since 3h0m0s truncated true:" + created(2) + moved},
		{"exactly the limit", signoff.RoleViewer, t0, 4, now + " since 0s truncated false:" + created(0) + created(1) + created(2) + moved},
	} {
		got, err := s.CaseStateChanges(ctx, people[tt.by], tt.since, tt.limit)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if g := show(got); g != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, g, tt.want)
		}
	}
	if got, err := s.CaseStateChanges(ctx, owner, time.Time{}, 0); err != nil || len(got.Changes) != 4 || got.Truncated {
		t.Errorf("since the zero time: %v %+v", err, got)
	}
	for _, role := range []signoff.Role{signoff.RoleReporter, signoff.RoleTriager} {
		if _, err := s.CaseStateChanges(ctx, people[role], t0, 100); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("%s reads the state changes: %v", role, err)
		}
	}
	// The other workspace sees its own.
	got, err := s.CaseStateChanges(ctx, other, t0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Changes) != 1 || got.Changes[0].To != "requested" || fmt.Sprint(got.Now) != "map[requested:1]" {
		t.Fatalf("the other workspace: %s", show(got))
	}
}

// testCrashWindow: the window is the days before the newest event, newest
// first, cut at the limit with the cut counted, older events counted.
func testCrashWindow(t *testing.T, s *sqlstore.DB) {
	ctx := context.Background()
	_, owner, err := s.CreateWorkspace(ctx, "Crashes", "olga")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "game"})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := s.CrashWindow(ctx, owner, p.ID, 7, 100); err != nil || len(w.Events) != 0 || w.Older != 0 {
		t.Fatalf("empty log: %+v %v", w, err)
	}
	newest := time.Date(2026, 9, 20, 12, 0, 0, 0, time.UTC)
	var evs []triage.CrashEvent
	for i := range 30 { // one a day, the newest first
		evs = append(evs, triage.CrashEvent{Time: newest.Add(-time.Duration(i) * 24 * time.Hour), AppVersion: "1.0", Device: "d", OS: "o",
			Signature: []string{"NPE:A", "OOM:B"}[i%2], StackTop: "f", UserID: "u"})
	}
	if err := s.AddCrashes(ctx, owner, p.ID, evs); err != nil {
		t.Fatal(err)
	}
	w, err := s.CrashWindow(ctx, owner, p.ID, 7, 100)
	if err != nil || len(w.Events) != 8 || w.Older != 22 || w.Cut != 0 || !w.Events[0].Time.Equal(newest) || w.Events[0].Signature != "NPE:A" {
		t.Fatalf("7-day window: %d events, older %d, cut %d, first %+v, %v", len(w.Events), w.Older, w.Cut, w.Events, err)
	}
	if w, err = s.CrashWindow(ctx, owner, p.ID, 7, 3); err != nil || len(w.Events) != 3 || w.Cut != 5 || w.Older != 22 {
		t.Fatalf("cut window: %d events, cut %d, older %d, %v", len(w.Events), w.Cut, w.Older, err)
	}
	if _, err := s.CrashWindow(ctx, owner, p.ID, 7, sqlstore.MaxCrashWindow+1); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("over the limit: %v", err)
	}
	_, stranger, err := s.CreateWorkspace(ctx, "Strangers", "sam")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CrashWindow(ctx, stranger, p.ID, 7, 100); err == nil {
		t.Fatal("another workspace read the crash window")
	}
}
