package clientip

import (
	"bufio"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"
)

// Attack tests for the client address of the public rate limits. Tests
// formerly named TestAttackHole* demonstrated a weakness (fixed since);
// the others are defences that held, kept as regression tests.

// rawRequest parses a raw HTTP/1.1 request as the server does, so header
// casing and repeated lines are exactly what a client sent.
func rawRequest(t *testing.T, raw, remote string) *http.Request {
	t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = remote
	return req
}

// TestAttackForwardedForTricks: a client behind a trusted proxy (which
// appends the client's real address, 198.51.100.77) tries to choose its
// own key with the usual header tricks.
func TestAttackForwardedForTricks(t *testing.T) {
	t.Parallel()
	r, err := Parse("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	const real = "198.51.100.77"
	tests := []struct {
		name string
		raw  string
	}{
		{"lowercase line before the proxy's", "GET / HTTP/1.1\r\nHost: x\r\nx-forwarded-for: 1.1.1.1\r\nX-Forwarded-For: " + real + "\r\n\r\n"},
		{"shouting casing before the proxy's", "GET / HTTP/1.1\r\nHost: x\r\nX-FORWARDED-FOR: 1.1.1.1, 2.2.2.2\r\nX-Forwarded-For: " + real + "\r\n\r\n"},
		{"forged entries joined by the proxy", "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 1.1.1.1, 10.0.0.1, ::ffff:10.0.0.2, " + real + "\r\n\r\n"},
		{"forged trusted entries then the real one", "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.0.0.1,10.0.0.2 , " + real + "\r\n\r\n"},
		{"other forwarding headers are ignored", "GET / HTTP/1.1\r\nHost: x\r\nForwarded: for=1.1.1.1\r\nX-Real-IP: 1.1.1.1\r\nTrue-Client-IP: 1.1.1.1\r\nX-Forwarded-For: " + real + "\r\n\r\n"},
		{"a zone or brackets on the left are never reached", "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: fe80::1%eth0, [::1], " + real + "\r\n\r\n"},
		{"a mapped form of the real address", "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 1.1.1.1, ::ffff:" + real + "\r\n\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := rawRequest(t, tc.raw, "10.1.2.3:4000")
			if got := keyOf(r, req); got != real {
				t.Fatalf("key %q, want %q", got, real)
			}
		})
	}
	// Without a trusted peer, nothing in any header moves the key.
	req := rawRequest(t, "GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 1.1.1.1\r\nx-forwarded-for: 2.2.2.2\r\n\r\n", "203.0.113.5:1")
	if got := keyOf(r, req); got != "203.0.113.5" {
		t.Fatalf("untrusted peer keyed %q", got)
	}
}

// TestAttackVeryLongForwardedFor: a header of tens of thousands of
// entries (the server allows 64 KiB of headers) still names the entry the
// proxy appended, and a chain of only trusted addresses cannot be pushed
// past maxHops to reach a forged entry.
func TestAttackVeryLongForwardedFor(t *testing.T) {
	t.Parallel()
	r, _ := Parse("10.0.0.0/8")
	forged := strings.Repeat("1.1.1.1,", 7000)
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.1.2.3:1"
	req.Header.Set("X-Forwarded-For", forged+"198.51.100.9")
	if got := keyOf(r, req); got != "198.51.100.9" {
		t.Fatalf("long header keyed %q", got)
	}
	// 40 trusted hops after a forged entry: the walk stops after 32 and
	// settles on a trusted address, never on the forged one.
	req.Header.Set("X-Forwarded-For", "1.1.1.1,"+strings.Repeat("10.0.0.9,", 40)+"10.0.0.8")
	if got := keyOf(r, req); got == "1.1.1.1" {
		t.Fatal("forged entry reached past 40 trusted hops")
	}
	// Only commas.
	req.Header.Set("X-Forwarded-For", strings.Repeat(",", 60000))
	if got := keyOf(r, req); got != "10.1.2.3" {
		t.Fatalf("commas keyed %q", got)
	}
}

// TestAttackIPv6Keys: every address of one /64 is one key, IPv4-mapped
// forms share the IPv4 key, and zones do not make new keys.
func TestAttackIPv6Keys(t *testing.T) {
	t.Parallel()
	r, _ := Parse("")
	key := func(remote string) string {
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = remote
		return keyOf(r, req)
	}
	same := [][2]string{
		{"[2001:db8:1:2::1]:1", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:2"},
		{"[2001:db8:1:2::1%eth0]:1", "[2001:db8:1:2::2%eth1]:1"},
		{"[::ffff:203.0.113.9]:1", "203.0.113.9:2"},
		{"[::ffff:cb00:7109]:1", "203.0.113.9:2"},
	}
	for _, p := range same {
		if a, b := key(p[0]), key(p[1]); a != b {
			t.Errorf("%s keyed %q, %s keyed %q: want one key", p[0], a, p[1], b)
		}
	}
}

// TestAttackOneSlash48IsOneNetwork: a free tunnel-broker /48 (or a cloud
// /56) holds 65,536 (256) /64s, each its own per-address key; they all
// share one network key, whose budgets (IntakePerNetwork, MissPerNetwork)
// bound the whole subscriber. (Found as a hole in review: the /64 alone
// was the key.)
func TestAttackOneSlash48IsOneNetwork(t *testing.T) {
	t.Parallel()
	r, _ := Parse("")
	nets, keys := map[string]bool{}, map[string]bool{}
	base := netip.MustParseAddr("2001:db8:42::1").As16()
	for i := range 256 {
		a := base
		a[6], a[7] = byte(i>>8), byte(i)
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = netip.AddrPortFrom(netip.AddrFrom16(a), 1).String()
		c := r.ClientOf(req)
		nets[c.Net], keys[c.Addr] = true, true
	}
	if len(nets) != 1 || !nets["2001:db8:42::/48"] || len(keys) != 256 {
		t.Fatalf("one /48: %d networks %v, %d address keys", len(nets), nets, len(keys))
	}
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "203.0.113.9:1"
	if c := r.ClientOf(req); c.Net != "" || c.Addr != "203.0.113.9" {
		t.Fatalf("IPv4 client %+v: no network bucket wanted", c)
	}
}

// TestAttackMappedPrefixTrustsEveryIPv4: an operator who writes an
// IPv4 proxy range in mapped form with IPv4 prefix bits
// ("::ffff:10.0.0.0/8", meaning 10/8) silently trusts every IPv4 peer
// (the prefix becomes 0.0.0.0/0), so any IPv4 client can set its own key
// with X-Forwarded-For. "::/8", the same IPv6 prefix, trusts no IPv4 peer
// at all. Was a hole (misconfiguration footgun): it is refused now.
func TestAttackMappedPrefixTrustsEveryIPv4(t *testing.T) {
	t.Parallel()
	r, err := Parse("::ffff:10.0.0.0/8")
	if err != nil {
		return // refused: the defence holds
	}
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "203.0.113.5:1" // an ordinary client, not a proxy
	req.Header.Set("X-Forwarded-For", "1.2.3.4")
	if got := keyOf(r, req); got != "203.0.113.5" {
		t.Fatalf(`--trusted-proxies "::ffff:10.0.0.0/8" became %v: the client 203.0.113.5 chose its key %q`, r.Proxies(), got)
	}
}

// TestAttackLongForwardedForAmplifies: the header is split in full
// before the last maxHops entries are kept, so one request with 64 KiB of
// commas (the server's header limit) through a trusted proxy costs about
// 6.5 MB of allocation and ~9 ms of CPU, before any budget is checked
// (KeyOf runs to find the bucket, so even 429s pay it). Was a hole: fails if
// the allocation is a multiple of the header's own size.
func TestAttackLongForwardedForAmplifies(t *testing.T) {
	r, _ := Parse("10.0.0.0/8")
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.1.2.3:1"
	req.Header.Set("X-Forwarded-For", strings.Repeat(",", 64<<10-100)+"198.51.100.9")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 5
	for range n {
		if got := keyOf(r, req); got != "198.51.100.9" {
			t.Fatalf("keyed %q", got)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	if per > 256<<10 {
		t.Fatalf("one 64 KiB X-Forwarded-For costs %d bytes of allocation (%.0fx the header); read it from the right, at most maxHops entries", per, float64(per)/float64(64<<10))
	}
}
