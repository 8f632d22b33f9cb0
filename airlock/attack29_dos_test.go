package airlock

import (
	"strings"
	"testing"
	"time"
)

// Issue 29 attack: findProsePasswords reads, for every password keyword
// followed by a non-letter, the whole following run of non-space bytes
// (proseValue) before proseJudge rejects it for being longer than 128
// bytes; a text that is one long non-space run full of keywords costs
// O(keywords x run) = O(n^2). 32 KB of "[password" takes ~0.6 s in
// findProsePasswords alone, 64 KB 1.5 s, 1 MB 3 min 11 s in Sanitize.
func TestAttack29ProseKeywordRunQuadratic(t *testing.T) {
	if testing.Short() {
		t.Skip("slow by design of the hole")
	}
	// The first Sanitize builds the detector and the NFKC tables (0.2-0.6
	// s on a loaded machine): warm them up outside the timing.
	Sanitize("password: x")
	for _, p := range []string{"[password", "/password", "#password", "\"password", "senha/", "पासवर्ड/"} {
		s := strings.Repeat(p, (128<<10)/len(p))
		st := time.Now()
		Sanitize(s)
		if d := time.Since(st); d > 500*time.Millisecond {
			t.Errorf("Sanitize(%q x %d, 128 KB) took %v; 1 MB is ~64x that (quadratic)", p, len(s)/len(p), d)
		}
	}
}

// The same, measured as growth: 16x the size must not cost more than ~10x
// the time (it costs ~250x).
func TestAttack29ProseKeywordRunGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("slow by design of the hole")
	}
	p := "[password"
	small := strings.Repeat(p, (8<<10)/len(p))
	large := strings.Repeat(p, (128<<10)/len(p))
	Sanitize(small)
	// The best of three: one timing under a loaded test run is noise.
	ts, tl := time.Hour, time.Hour
	for range 3 {
		st := time.Now()
		Sanitize(small)
		ts = min(ts, time.Since(st))
		st = time.Now()
		Sanitize(large)
		tl = min(tl, time.Since(st))
	}
	if tl > 20*ts && tl > 50*time.Millisecond {
		t.Errorf("8 KB: %v, 128 KB: %v (%.0fx for 16x the size)", ts, tl, float64(tl)/float64(ts))
	}
}
