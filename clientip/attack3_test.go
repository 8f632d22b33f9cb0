package clientip

import (
	"net/http"
	"net/netip"
	"testing"
)

// Third-round attack tests for the client address (NAT64 and Teredo
// keyed on their IPv4 client). The one whose comment says "Was a hole"
// failed in review and was fixed; the others held.

// rfc6052 embeds v4 in prefix the way RFC 6052 section 2.2 says for the
// prefix's length (32, 40, 48, 56, 64 or 96): the octet at bits 64-71
// ("u") is always zero, and the IPv4 address goes around it.
func rfc6052(t *testing.T, prefix string, v4 string) netip.Addr {
	t.Helper()
	p := netip.MustParsePrefix(prefix)
	b := p.Addr().As16()
	v := netip.MustParseAddr(v4).As4()
	pos := map[int][]int{
		32: {4, 5, 6, 7},
		40: {5, 6, 7, 9},
		48: {6, 7, 9, 10},
		56: {7, 9, 10, 11},
		64: {9, 10, 11, 12},
		96: {12, 13, 14, 15},
	}[p.Bits()]
	if pos == nil {
		t.Fatalf("no RFC 6052 layout for /%d", p.Bits())
	}
	for i, j := range pos {
		b[j] = v[i]
	}
	return netip.AddrFrom16(b)
}

// TestAttack3LocalUsePrefixLayouts: Key reads the IPv4 client from
// the last 32 bits of any address in 64:ff9b:1::/48, which is right only
// for a /96 translation prefix. RFC 8215 reserves the /48 so that
// operators can carve translation prefixes of any RFC 6052 length out of
// it (the shortest seen in live networks, it says, is a /64). With a /64
// prefix the last 32 bits hold the client's last octet and three zero
// octets, so every IPv4 client ending in .1 is one address ("1.0.0.0"):
// 2^24 clients share one intake budget (5, then 10 a minute) and one
// miss budget, and any one of them refuses the rest. With the /48 itself
// as the prefix every client is "0.0.0.0". Decode only prefixes the
// operator names, with their length (RFC 6052 layout), or key the LUP
// (outside a named /96) as ordinary IPv6. Was a hole: the local-use
// prefix is keyed on the whole address, one per translated client.
func TestAttack3LocalUsePrefixLayouts(t *testing.T) {
	t.Parallel()
	clients := []string{"192.0.2.1", "198.51.100.1", "203.0.113.9"}
	for _, prefix := range []string{"64:ff9b:1:a::/64", "64:ff9b:1::/48", "64:ff9b:1:ab00::/56", "64:ff9b:1:abcd::/96"} {
		keys := map[string]string{}
		for _, c := range clients {
			a := rfc6052(t, prefix, c)
			k := Key(a)
			if other, ok := keys[k]; ok {
				t.Errorf("translation prefix %s: clients %s and %s (%s and %s) share the address key %q", prefix, other, c, rfc6052(t, prefix, other), a, k)
			}
			keys[k] = c
		}
	}
}

// TestAttack3TeredoKeyIsTheClientsNAT: a Teredo client's address embeds
// the public IPv4 address and port its NAT mapped it to (the relays and
// the Teredo server check that packets come from there), so the key is
// the NAT's address whatever Teredo server, flags or port the client
// picks: the same key as the same NAT speaking IPv4, no extra budget.
// Forging another client's mapped address needs the replies, which the
// relay sends to the embedded address, not to the forger: without a TCP
// handshake there is no HTTP request.
func TestAttack3TeredoKeyIsTheClientsNAT(t *testing.T) {
	t.Parallel()
	r, _ := Parse("")
	// Client 192.0.2.45 (obfuscated 3fff:fdd2), two servers, two ports,
	// cone flag on and off.
	v4, _ := clientOf(t, r, "192.0.2.45:5555")
	for _, a := range []string{
		"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:1",
		"[2001:0:5ef5:79fb:0:1234:3fff:fdd2]:1",
		"[2001:0:4136:e378:ffff:ffff:3fff:fdd2]:443",
	} {
		k, n := clientOf(t, r, a)
		if k != v4 || n != "" {
			t.Errorf("%s: key %q network %q, want %q and none", a, k, n, v4)
		}
	}
}

// TestAttack3EmbeddedPrefixBoundaries: only 2001:0::/32, 64:ff9b::/96
// and 64:ff9b:1::/48 are read as carrying IPv4. Their neighbours are
// ordinary IPv6 keyed per /64 with a /48 network: a client with a real
// /48 next to them gets nothing from the embedding.
func TestAttack3EmbeddedPrefixBoundaries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ addr, key, net string }{
		{"2001:1::c000:201", "2001:1::/64", "2001:1::/48"},
		{"2001:db8::c000:201", "2001:db8::/64", "2001:db8::/48"},
		{"2000:ffff:ffff:ffff::1", "2000:ffff:ffff:ffff::/64", "2000:ffff:ffff::/48"},
		{"64:ff9b::1:c000:201", "64:ff9b::/64", "64:ff9b::/48"},
		{"64:ff9b:2::c000:201", "64:ff9b:2::/64", "64:ff9b:2::/48"},
		{"64:ff9a:ffff::c000:201", "64:ff9a:ffff::/64", "64:ff9a:ffff::/48"},
		{"::ffff:192.0.2.1", "192.0.2.1", ""},
		{"64:ff9b::c000:201", "192.0.2.1", ""},
		{"2001::ffff:ffff:3fff:fdfe", "192.0.2.1", ""},
	} {
		a := netip.MustParseAddr(c.addr).Unmap()
		if k, n := Key(a), Network(a); k != c.key || n != c.net {
			t.Errorf("%s: key %q network %q, want %q %q", c.addr, k, n, c.key, c.net)
		}
	}
}

// TestAttack3EmbeddedFormsAreNotTrustedProxies: the proxy check compares
// the address as it arrived, never its embedded IPv4: a peer at
// 64:ff9b::<proxy> or a Teredo address embedding the proxy's IPv4 is not
// the proxy, and its X-Forwarded-For is ignored.
func TestAttack3EmbeddedFormsAreNotTrustedProxies(t *testing.T) {
	t.Parallel()
	r, err := Parse("192.0.2.7, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, peer := range []string{
		"[64:ff9b::c000:207]:1",                   // 192.0.2.7 via NAT64
		"[64:ff9b:1::a00:1]:1",                    // 10.0.0.1 via the LUP
		"[2001:0:4136:e378:0:0:3fff:fdf8]:1",      // Teredo client 192.0.2.7
		"[2001:0:c000:207:8000:63bf:f5ff:fffe]:1", // Teredo *server* 192.0.2.7, client 10.0.0.1
	} {
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = peer
		req.Header.Set("X-Forwarded-For", "203.0.113.99")
		if c := r.ClientOf(req); c.Addr == "203.0.113.99" {
			t.Errorf("peer %s was trusted as a proxy: client %q", peer, c.Addr)
		}
	}
}
