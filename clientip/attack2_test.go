package clientip

import (
	"net/http"
	"testing"
)

// Second-round attack tests for the client address. The ones whose
// comment says "Was a hole" failed in review and were fixed; the others
// held from the start.

func clientOf(t *testing.T, r Resolver, remote string, xff ...string) (string, string) {
	t.Helper()
	req, err := http.NewRequest("GET", "/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = remote
	for _, v := range xff {
		req.Header.Add("X-Forwarded-For", v)
	}
	c := r.ClientOf(req)
	return c.Addr, c.Net
}

// TestAttack2NAT64EmbedsIPv4: behind a stateless translator (SIIT-DC,
// RFC 7755: an IPv6-only server reached by IPv4 clients) or a proxy that
// reports translated sources, every IPv4 client arrives as
// 64:ff9b::a.b.c.d (the well-known prefix, RFC 6052; likewise the local
// 64:ff9b:1::/48). Key takes the /64 and Network the /48, so the whole
// IPv4 Internet becomes one address: one miss budget (10 a minute), one
// intake budget (5, then 10 a minute), one link budget. Teredo
// (2001::/32) puts the relay's address in the /64 the same way. The
// embedded IPv4 address is the client and should be the key.
func TestAttack2NAT64EmbedsIPv4(t *testing.T) {
	t.Parallel()
	r, _ := Parse("")
	pairs := [][2]string{
		{"[64:ff9b::c000:201]:1", "[64:ff9b::cb00:7109]:1"},                                   // 192.0.2.1 and 203.0.113.9
		{"[64:ff9b:1::c000:201]:1", "[64:ff9b:1::c633:6407]:1"},                               // local-use prefix
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:1", "[2001:0:4136:e378:8000:1234:3e00:1]:1"}, // two Teredo clients of one relay
	}
	for _, p := range pairs {
		a1, n1 := clientOf(t, r, p[0])
		a2, n2 := clientOf(t, r, p[1])
		if a1 == a2 {
			t.Errorf("%s and %s (different IPv4 clients) share the address key %q and network %q / %q", p[0], p[1], a1, n1, n2)
		}
	}
}

// TestAttack2SixToFourKeepsSubscribersApart: 6to4 (2002:V4ADDR::/48)
// gives each IPv4 address its own /48, so two 6to4 users never share a
// network bucket, and one user's /64s share one.
func TestAttack2SixToFourKeepsSubscribersApart(t *testing.T) {
	t.Parallel()
	r, _ := Parse("")
	_, n1 := clientOf(t, r, "[2002:c000:201::1]:1")
	_, n2 := clientOf(t, r, "[2002:cb00:7109::1]:1")
	_, n3 := clientOf(t, r, "[2002:c000:201:ff::1]:1")
	if n1 == n2 || n1 != n3 {
		t.Fatalf("6to4 networks %q %q %q", n1, n2, n3)
	}
}

// TestAttack2MappedAndCompatibleHops: mapped forms in X-Forwarded-For,
// bare or with a port, are the IPv4 client; a mapped hop inside a
// trusted IPv4 range is skipped like the plain one; a bracketed IPv6
// without a port, a zone, "unknown" or an obfuscated identifier stop
// the walk at the proxy that wrote them (they cannot name someone else).
func TestAttack2MappedAndCompatibleHops(t *testing.T) {
	t.Parallel()
	r, err := Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ xff, want string }{
		{"::ffff:203.0.113.9", "203.0.113.9"},
		{"[::ffff:203.0.113.9]:443", "203.0.113.9"},
		{"203.0.113.9, ::ffff:10.1.2.3", "203.0.113.9"},
		{"1.1.1.1, 203.0.113.9, [::ffff:10.0.0.9]:80", "203.0.113.9"},
		{"1.1.1.1, fe80::1%eth0", "10.0.0.1"},
		{"1.1.1.1, [2001:db8::1]", "10.0.0.1"},
		{"1.1.1.1, unknown", "10.0.0.1"},
		{"1.1.1.1, _hidden", "10.0.0.1"},
		{"1.1.1.1, 0300.0.2.1", "10.0.0.1"},
	} {
		if got, _ := clientOf(t, r, "10.0.0.1:5000", tc.xff); got != tc.want {
			t.Errorf("X-Forwarded-For %q: client %q, want %q", tc.xff, got, tc.want)
		}
	}
	// From an untrusted mapped peer nothing is believed.
	if got, _ := clientOf(t, r, "[::ffff:198.51.100.4]:1", "10.0.0.5"); got != "198.51.100.4" {
		t.Errorf("mapped untrusted peer: %q", got)
	}
	// A mapped peer inside the trusted range is trusted.
	if got, _ := clientOf(t, r, "[::ffff:10.0.0.1]:1", "198.51.100.4"); got != "198.51.100.4" {
		t.Errorf("mapped trusted peer: %q", got)
	}
}
