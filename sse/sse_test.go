package sse

import "testing"

func TestStreams(t *testing.T) {
	t.Parallel()
	s := &Streams{Max: 2}
	if !s.Acquire("a") || !s.Acquire("a") || s.Acquire("a") {
		t.Fatal("a third stream for one actor was allowed, or the first two refused")
	}
	if !s.Acquire("b") {
		t.Fatal("another actor shares the count")
	}
	s.Release("a")
	if !s.Acquire("a") {
		t.Fatal("a released stream was not given back")
	}
	s.Release("a")
	s.Release("a")
	s.Release("b")
	if len(s.n) != 0 {
		t.Fatalf("counts left behind: %v", s.n)
	}
}
