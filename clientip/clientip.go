// Package clientip names the client a request came from, for the rate
// limits of the routes anyone can call. The connection's peer is the
// client unless it is one of the operator's proxies (--trusted-proxies):
// then X-Forwarded-For is read from the right, past the trusted proxies,
// and the first address no trusted proxy vouches for is the client.
// Anything to its left was written by the client and means nothing.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/ratelimit"
)

// maxHops bounds how much of a forwarded chain is read: a client can send
// a header of any length, and the trusted proxies add one entry each.
const maxHops = 32

// Resolver finds the client address of a request. The zero Resolver
// trusts no proxy: the peer is the client.
type Resolver struct {
	proxies []netip.Prefix
}

// Parse reads a comma-separated list of addresses and CIDR prefixes
// ("10.0.0.0/8, 192.0.2.7, ::1"). An empty list trusts no proxy.
func Parse(list string) (Resolver, error) {
	var r Resolver
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := parsePrefix(f)
		if err != nil {
			return Resolver{}, fmt.Errorf("trusted proxy %q: %w", f, err)
		}
		r.proxies = append(r.proxies, p)
	}
	return r, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, fmt.Errorf("not an address or CIDR prefix")
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not an address or CIDR prefix")
		}
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("a zone is not allowed")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("a zone is not allowed")
	}
	if p.Addr().Is4In6() {
		// Peers are compared unmapped. An IPv4-mapped prefix covers IPv4
		// only from /96 on; a shorter one would silently trust every IPv4
		// client, so it is refused rather than guessed at.
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("an IPv4-mapped prefix needs /96 or longer; write IPv4 ranges as IPv4 (10.0.0.0/8)")
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	if p.Bits() == 0 {
		return netip.Prefix{}, fmt.Errorf("trusting every address would let any client choose its own")
	}
	return p.Masked(), nil
}

// Proxies returns the trusted prefixes, for the startup log.
func (r Resolver) Proxies() []string {
	out := make([]string, len(r.proxies))
	for i, p := range r.proxies {
		out[i] = p.String()
	}
	return out
}

func (r Resolver) trusted(a netip.Addr) bool {
	for _, p := range r.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Addr returns the client address of req: the peer, or, when the peer is
// a trusted proxy, the rightmost X-Forwarded-For entry that is not. When
// every entry is trusted, or an entry cannot be read, the last address
// that could be read stands: the client cannot be placed further out than
// the proxies vouch for. ok is false only when the peer itself is not an
// IP address (a unix socket, a test's fake): then the caller keys on the
// raw RemoteAddr.
func (r Resolver) Addr(req *http.Request) (a netip.Addr, ok bool) {
	peer, ok := peerAddr(req.RemoteAddr)
	if !ok {
		return netip.Addr{}, false
	}
	if len(r.proxies) == 0 || !r.trusted(peer) {
		return peer, true
	}
	hops := forwarded(req.Header.Values("X-Forwarded-For"))
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		h, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = h
		if !r.trusted(h) {
			break
		}
	}
	return client, true
}

// forwarded returns the rightmost entries of the X-Forwarded-For header
// lines, at most maxHops, in order. It reads from the right and stops
// there, so a header of any length costs no more than its last entries.
func forwarded(lines []string) []string {
	hops := make([]string, 0, 4)
	for i := len(lines) - 1; i >= 0 && len(hops) < maxHops; i-- {
		l := lines[i]
		for len(hops) < maxHops {
			j := strings.LastIndexByte(l, ',')
			hops = append(hops, strings.TrimSpace(l[j+1:]))
			if j < 0 {
				break
			}
			l = l[:j]
		}
	}
	slices.Reverse(hops)
	return hops
}

// parseHop reads one forwarded entry: an address, possibly with a port
// ("192.0.2.1:4711", "[2001:db8::1]:80"), never with a zone.
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func peerAddr(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// Key is what a per-address limit counts: the IPv4 address, or the /64
// an IPv6 address belongs to, since one subscriber is given a whole /64
// and could otherwise take a fresh budget with every address in it. An
// IPv6 address that carries an IPv4 client is keyed on that client, since
// the /64 would put a translator's or a relay's clients all in one: NAT64's
// well-known 64:ff9b::/96 and Teredo's 2001::/32 on the IPv4 address they
// embed, the local-use 64:ff9b:1::/48 (whose translation prefixes may be
// of any length, so the IPv4 address may sit anywhere) on the whole
// address, which a translator gives one IPv4 client.
func Key(a netip.Addr) string {
	if v4, ok := embeddedIPv4(a); ok {
		return v4.String()
	}
	if nat64L.Contains(a) {
		return a.String()
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	nat64L = netip.MustParsePrefix("64:ff9b:1::/48")
	teredo = netip.MustParsePrefix("2001::/32")
)

// embeddedIPv4 returns the IPv4 client an IPv6 address stands for, when
// it is a translated or tunnelled one.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() || a.Is4In6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case teredo.Contains(a):
		// The client's public address, obfuscated (RFC 4380).
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// Network is the wider network an address belongs to when one
// subscriber can hold all of it: the /48 of an IPv6 address (what a
// tunnel broker or a small ISP hands one customer), "" for IPv4 (and
// IPv6 that carries IPv4), whose neighbouring addresses belong to
// different people.
func Network(a netip.Addr) string {
	if _, ok := embeddedIPv4(a); ok || !a.Is6() || nat64L.Contains(a) {
		return ""
	}
	p, _ := a.Prefix(48)
	return p.String()
}

// ClientOf names req's client for the public budgets: its address key
// and network. A peer that is not an IP address is keyed on its
// RemoteAddr as given.
func (r Resolver) ClientOf(req *http.Request) ratelimit.Client {
	a, ok := r.Addr(req)
	if !ok {
		return ratelimit.Client{Addr: req.RemoteAddr}
	}
	return ratelimit.Client{Addr: Key(a), Net: Network(a)}
}
