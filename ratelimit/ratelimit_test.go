package ratelimit

import (
	"testing"
	"time"
)

func TestTake(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		limit Limit
		takes []time.Duration // offsets of each take from t0
		want  []time.Duration // the wait each answers
	}{
		{"a burst, then the rate", Limit{Rate: 1, Burst: 2}, []time.Duration{0, 0, 0, time.Second}, []time.Duration{0, 0, time.Second, 0}},
		{"half a token refilled", Limit{Rate: 2, Burst: 1}, []time.Duration{0, 250 * time.Millisecond}, []time.Duration{0, 250 * time.Millisecond}},
		{"no rate never refills", Limit{Rate: 0, Burst: 1}, []time.Duration{0, time.Hour}, []time.Duration{0, time.Hour}},
		{"refill stops at the burst", Limit{Rate: 10, Burst: 1}, []time.Duration{0, time.Hour, time.Hour}, []time.Duration{0, 0, 100 * time.Millisecond}},
	}
	for _, tc := range cases {
		l := New(tc.limit)
		for i, at := range tc.takes {
			if got := l.Take("k", t0.Add(at)); got != tc.want[i] {
				t.Errorf("%s: take %d = %v, want %v", tc.name, i, got, tc.want[i])
			}
		}
	}
}

func TestKeysAreSeparateAndSwept(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Limit{Rate: 1, Burst: 1})
	if l.Take("a", t0) != 0 || l.Take("b", t0) != 0 || l.Take("a", t0) == 0 {
		t.Fatal("keys share a bucket")
	}
	l.Take("c", t0.Add(2*time.Minute)) // sweeps the full buckets
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after the sweep, want 1", len(l.buckets))
	}
}
