package outbox

import (
	"math/rand/v2"
	"regexp"
	"testing"
	"time"
)

func TestUUIDv5(t *testing.T) {
	t.Parallel()
	// RFC 9562 appendix A.4: the DNS namespace and "www.example.com".
	dns := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	if got, want := UUIDv5(dns, "www.example.com"), "2ed6657d-e927-568b-95e1-2665a8aea6a2"; got != want {
		t.Fatalf("UUIDv5 = %s, want %s", got, want)
	}
	at := time.Unix(1700000000, 123456000)
	a, b := MessageID(7, at), MessageID(7, at)
	if a != b {
		t.Fatal("message id is not stable")
	}
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, id := range []string{a, CardID(7, at)} {
		if !re.MatchString(id) {
			t.Errorf("%s is not a version 5 UUID", id)
		}
	}
	if MessageID(7, at.Add(time.Microsecond)) == a || MessageID(8, at) == a || CardID(7, at) == a {
		t.Error("distinct jobs share an id")
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	p := Retry{Base: time.Second, Max: time.Hour}
	tests := []struct {
		n        int
		min, max time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{5, 8 * time.Second, 16 * time.Second},
		{13, 30 * time.Minute, time.Hour},
		{40, 30 * time.Minute, time.Hour},
		{0, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		for range 100 {
			d := p.Delay(tt.n, r)
			if d < tt.min || d > tt.max {
				t.Fatalf("Delay(%d) = %s, want within [%s, %s]", tt.n, d, tt.min, tt.max)
			}
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns []string
		typ      string
		want     bool
	}{
		{DefaultEvents, "case.transitioned", true},
		{DefaultEvents, "decision.requested", true},
		{DefaultEvents, "agent.call", false},
		{DefaultEvents, "message.posted", false},
		{DefaultEvents, "approvals.voided", true},
		{DefaultEvents, "case.attention", true},
		{DefaultEvents, "approvals.superseded", false},
		{[]string{"*"}, "agent.call", true},
		{[]string{"case.*"}, "case", false},
		{nil, "case.created", false},
	}
	for _, tt := range tests {
		if got := Match(tt.patterns, tt.typ); got != tt.want {
			t.Errorf("Match(%v, %q) = %v, want %v", tt.patterns, tt.typ, got, tt.want)
		}
	}
	if CheckPatterns([]string{"case.["}) == nil || CheckPatterns([]string{""}) == nil || CheckPatterns(DefaultEvents) != nil {
		t.Error("CheckPatterns accepts a bad glob or refuses the defaults")
	}
}
