package airlock

import (
	"strings"
	"testing"
	"time"
)

func timeSanitize(s string) time.Duration {
	t0 := time.Now()
	Sanitize(s)
	return time.Since(t0)
}

// A run of 'password is (' or 'password is [password]' is quadratic:
// 64 KB ~50-70 ms, 1 MB 13-21 s alone (x275-x290 for x16 input; 45-50 s
// under a loaded test run). The test times 64 KB against 512 KB (x8 input):
// linear code stays under x20 and under a second.
func TestAttack29bProseQuadratic(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, g := range []string{"password is (", "password is [password]"} {
		// The best of three, as TestRefLinear: one timing under a loaded
		// test run is noise (this failed at ec4eec1 and HEAD alike).
		small, big := time.Hour, time.Hour
		for range 3 {
			small = min(small, timeSanitize(strings.Repeat(g, (64<<10)/len(g))))
			big = min(big, timeSanitize(strings.Repeat(g, (512<<10)/len(g))))
		}
		// 200 ms of slack: the small run now takes about 2 ms, where a
		// scheduler pause alone breaks a bare ratio. The quadratic code
		// took seconds at 512 KB.
		if big > 20*small+200*time.Millisecond || big > time.Second {
			t.Errorf("Sanitize(%q x N): 64 KB %v, 512 KB %v", g, small, big)
		}
	}
}
