package ratelimit

import (
	"testing"
	"time"
)

func TestPublicBudgets(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPublic(Budgets{})
	if p.Budgets() != DefaultBudgets() {
		t.Fatalf("zero budgets: %+v", p.Budgets())
	}
	// A person refreshing one link 200 times in a minute, from an address
	// they share, is never refused.
	for i := range 200 {
		at := t0.Add(time.Duration(i) * 300 * time.Millisecond)
		if w := p.Link("198.51.100.7", at); w != 0 {
			t.Fatalf("link request %d refused for %v", i, w)
		}
		if w := p.Read("trk_a", at); w != 0 {
			t.Fatalf("read %d refused for %v", i, w)
		}
	}
	// Ten failed lookups are answered, the eleventh waits; another
	// address is not affected.
	for i := range 10 {
		if w := p.Miss("198.51.100.7", t0); w != 0 {
			t.Fatalf("miss %d refused", i)
		}
	}
	if w := p.Miss("198.51.100.7", t0); w <= 0 || w > 6*time.Second {
		t.Fatalf("11th miss: wait %v", w)
	}
	if w := p.Miss("198.51.100.8", t0); w != 0 {
		t.Fatal("another address shares the miss bucket")
	}
	// Writes through one link: ten, then a wait; another link is fresh.
	for i := range 10 {
		if w := p.Write("trk_a", t0); w != 0 {
			t.Fatalf("write %d refused", i)
		}
	}
	if p.Write("trk_a", t0) == 0 || p.Write("trk_b", t0) != 0 {
		t.Fatal("writes per link not kept apart")
	}
}

// TestIntakeAllOrNothing: a report refused by one bucket takes nothing
// from the others, and the server's ceiling holds across projects.
func TestIntakeAllOrNothing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		b       Budgets
		reports []struct{ addr, project string }
		want    []bool // accepted
	}{
		{"per address", Budgets{IntakePerAddress: Limit{Rate: 1e-9, Burst: 2}},
			[]struct{ addr, project string }{{"a", "p"}, {"a", "q"}, {"a", "p"}, {"b", "p"}},
			[]bool{true, true, false, true}},
		{"per project", Budgets{IntakePerProject: Limit{Rate: 1e-9, Burst: 2}},
			[]struct{ addr, project string }{{"a", "p"}, {"b", "p"}, {"c", "p"}, {"c", "q"}},
			[]bool{true, true, false, true}},
		{"server ceiling across projects", Budgets{IntakeTotal: Limit{Rate: 1e-9, Burst: 3}},
			[]struct{ addr, project string }{{"a", "p"}, {"b", "q"}, {"c", "r"}, {"d", "s"}},
			[]bool{true, true, true, false}},
		// The project's bucket refuses the third; the address's bucket
		// (burst 3) was not spent by it, so a report elsewhere goes in.
		{"refusal spends nothing", Budgets{IntakePerAddress: Limit{Rate: 1e-9, Burst: 3}, IntakePerProject: Limit{Rate: 1e-9, Burst: 2}},
			[]struct{ addr, project string }{{"a", "p"}, {"a", "p"}, {"a", "p"}, {"a", "p"}, {"a", "q"}, {"a", "q"}},
			[]bool{true, true, false, false, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := NewPublic(tc.b)
			for i, r := range tc.reports {
				if w, _ := p.Intake(r.addr, r.project, t0); (w == 0) != tc.want[i] {
					got := w == 0
					t.Errorf("report %d (%s into %s): accepted %v, want %v", i, r.addr, r.project, got, tc.want[i])
				}
			}
		})
	}
}

func TestWaitSpendsNothing(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Rate: 1, Burst: 1})
	if l.Wait("k", t0) != 0 || l.Wait("k", t0) != 0 || l.Take("k", t0) != 0 {
		t.Fatal("Wait spent a token")
	}
	if w := l.Wait("k", t0.Add(250*time.Millisecond)); w != 750*time.Millisecond {
		t.Fatalf("wait %v", w)
	}
	// A clock read just before the bucket's last update adds nothing and
	// takes nothing.
	if l.Take("k", t0.Add(-time.Second)) == 0 {
		t.Fatal("an earlier clock refilled the bucket")
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait time.Duration
		want string
		secs int
	}{
		{time.Millisecond, "in 1 second", 1},
		{1500 * time.Millisecond, "in 2 seconds", 2},
		{40 * time.Second, "in 40 seconds", 40},
		{89 * time.Second, "in 89 seconds", 89},
		{3 * time.Minute, "in about 3 minutes", 180},
		{50 * time.Minute, "in about an hour", 3000},
		{5 * time.Hour, "in about 5 hours", 18000},
	} {
		if got := Words(tc.wait); got != tc.want || Retry(tc.wait) != tc.secs {
			t.Errorf("Words(%v) = %q, Retry %d; want %q, %d", tc.wait, got, Retry(tc.wait), tc.want, tc.secs)
		}
	}
}

func TestIntakeScope(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPublic(Budgets{IntakePerProject: Limit{Rate: 1e-9, Burst: 1}})
	p.Intake("a", "p", t0)
	if w, s := p.Intake("b", "p", t0); w == 0 || s != ScopeProject {
		t.Fatalf("wait %v scope %q", w, s)
	}
}
