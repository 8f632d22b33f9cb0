package ratelimit

import (
	"testing"
	"time"
)

func TestPublicBudgets(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPublic(Budgets{})
	if b := (Budgets{}).withDefaults(); b != DefaultBudgets() {
		t.Fatalf("zero budgets: %+v", b)
	}
	alice := Client{Addr: "198.51.100.7"}
	// A person refreshing one link 200 times in a minute, from an address
	// they share, is never refused.
	for i := range 200 {
		at := t0.Add(time.Duration(i) * 300 * time.Millisecond)
		if w, s := p.Found(alice, "trk_a", false, at); w != 0 {
			t.Fatalf("read %d refused for %v (%s)", i, w, s)
		}
	}
	// Ten failed lookups are answered, the eleventh waits; another
	// address is not affected, and the guesser's own address still reads
	// a link it holds.
	for i := range 10 {
		if w := p.Miss(alice, t0); w != 0 {
			t.Fatalf("miss %d refused", i)
		}
	}
	if w := p.Miss(alice, t0); w <= 0 || w > 6*time.Second {
		t.Fatalf("11th miss: wait %v", w)
	}
	if w := p.Miss(Client{Addr: "198.51.100.8"}, t0); w != 0 {
		t.Fatal("another address shares the miss bucket")
	}
	if w, _ := p.Found(alice, "trk_a", false, t0.Add(time.Minute)); w != 0 {
		t.Fatal("misses spent the address's reads of valid links")
	}
	// Writes through one link: ten, then a wait; another link is fresh.
	for i := range 10 {
		if w, _ := p.Found(alice, "trk_a", true, t0); w != 0 {
			t.Fatalf("write %d refused", i)
		}
	}
	if w, s := p.Found(alice, "trk_a", true, t0); w == 0 || s != ScopeLink {
		t.Fatalf("11th write: %v %s", w, s)
	}
	if w, _ := p.Found(alice, "trk_b", true, t0); w != 0 {
		t.Fatal("writes per link not kept apart")
	}
}

// TestNetworkBudgets: the addresses of one IPv6 /48 each have their own
// budget, and together the network's.
func TestNetworkBudgets(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPublic(Budgets{IntakePerAddress: Limit{Rate: 1e-9, Burst: 1}, IntakePerNetwork: Limit{Rate: 1e-9, Burst: 3},
		MissPerAddress: Limit{Rate: 1e-9, Burst: 1}, MissPerNetwork: Limit{Rate: 1e-9, Burst: 2}})
	net := "2001:db8:42::/48"
	filed, missed := 0, 0
	for i := range 10 {
		c := Client{Addr: "2001:db8:42:" + string(rune('a'+i)) + "::/64", Net: net}
		if w, _ := p.Intake(c, "p", t0); w == 0 {
			filed++
		}
		if p.Miss(c, t0) == 0 {
			missed++
		}
	}
	if filed != 3 || missed != 2 {
		t.Fatalf("one /48 filed %d and missed %d, want 3 and 2", filed, missed)
	}
	if w, _ := p.Intake(Client{Addr: "2001:db8:43:1::/64", Net: "2001:db8:43::/48"}, "p", t0); w != 0 {
		t.Fatal("another network refused")
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
				if w, _ := p.Intake(Client{Addr: r.addr}, r.project, t0); (w == 0) != tc.want[i] {
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
	p.Intake(Client{Addr: "a"}, "p", t0)
	if w, s := p.Intake(Client{Addr: "b"}, "p", t0); w == 0 || s != ScopeProject {
		t.Fatalf("wait %v scope %q", w, s)
	}
}

// TestSweepKeepsUnrefilledBuckets: a bucket that never refills (rate zero
// or next to it) is not swept, which would hand its key a fresh burst.
func TestSweepKeepsUnrefilledBuckets(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range []Limit{{Rate: 0, Burst: 10}, {Rate: 1e-9, Burst: 10}, {Rate: 1e-300, Burst: 1 << 30}} {
		lim := New(l)
		for range l.Burst {
			lim.Take("k", t0)
			if l.Burst > 100 {
				lim.buckets["k"].tokens = 0
				break
			}
		}
		if lim.Take("k", t0) == 0 {
			t.Fatalf("%+v: not empty", l)
		}
		if w := lim.Take("k", t0.Add(2*time.Hour)); w == 0 {
			t.Fatalf("%+v: the sweep handed the key a fresh burst", l)
		}
	}
}
