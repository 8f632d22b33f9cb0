// Package netguard decides which network addresses the server may send a
// request to on someone else's behalf: the health probes of plans that
// agents draft, and the webhooks, chat servers and SMTP servers owners
// configure. It is the one place that classifies IP ranges and parses
// hosts, so the review of a plan, the storing of a channel and the dial of
// a delivery agree on what an address is.
//
// The classification and parsing are pure. Guard adds name resolution
// (through a Resolver, which tests replace) and a dialer that resolves a
// name once, checks every address it got, and connects to a checked
// address only, so a name that answers differently the second time (DNS
// rebinding) cannot move the connection.
package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Class is what kind of network an address belongs to.
type Class string

// Classes, from the most to the least specific: an address is reported
// under the first that holds.
const (
	Public      Class = "public"
	Metadata    Class = "cloud metadata"
	Loopback    Class = "loopback"
	Unspecified Class = "unspecified"
	Private     Class = "private"     // RFC 1918, IPv6 unique local (fc00::/7)
	LinkLocal   Class = "link-local"  // 169.254.0.0/16, fe80::/10
	SharedNAT   Class = "carrier NAT" // 100.64.0.0/10 (RFC 6598, CGNAT)
	Multicast   Class = "multicast"
	Reserved    Class = "reserved" // documentation, benchmarking, broadcast, tunnels and other non-global ranges
)

// metadata are cloud instance-metadata and platform endpoints: they hand
// out credentials to whoever asks from inside the machine. Some are in
// public space (Azure's wire server), so they are listed before anything
// else.
var metadata = prefixes(
	"169.254.169.254/32", // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
	"169.254.170.2/32",   // AWS ECS task metadata
	"169.254.169.123/32", // AWS time sync
	"169.254.169.253/32", // AWS DNS resolver
	"100.100.100.200/32", // Alibaba Cloud
	"168.63.129.16/32",   // Azure wire server
	"192.0.0.192/32",     // Oracle Cloud
	"fd00:ec2::254/128",  // AWS IMDS over IPv6
	"fd00:ec2::23/128",   // AWS ECS task metadata over IPv6
	"fd00:ec2::123/128",  // AWS time sync over IPv6
	"fd20:ce::254/128",   // GCP IMDS over IPv6
)

type rangeClass struct {
	p netip.Prefix
	c Class
}

var v4Ranges = classes(
	"0.0.0.0/32", Unspecified,
	"0.0.0.0/8", Reserved, // "this network": Linux dials 0.x as local
	"10.0.0.0/8", Private,
	"100.64.0.0/10", SharedNAT,
	"127.0.0.0/8", Loopback,
	"169.254.0.0/16", LinkLocal,
	"172.16.0.0/12", Private,
	"192.0.0.0/24", Reserved, // IETF protocol assignments
	"192.0.2.0/24", Reserved, // TEST-NET-1
	"192.88.99.0/24", Reserved, // 6to4 relay anycast
	"192.168.0.0/16", Private,
	"198.18.0.0/15", Reserved, // benchmarking
	"198.51.100.0/24", Reserved, // TEST-NET-2
	"203.0.113.0/24", Reserved, // TEST-NET-3
	"224.0.0.0/4", Multicast,
	"240.0.0.0/4", Reserved, // future use and the broadcast address
)

var v6Ranges = classes(
	"::/128", Unspecified,
	"::1/128", Loopback,
	"100::/64", Reserved, // discard-only
	"2001::/23", Reserved, // IETF protocol assignments, Teredo among them
	"2001:db8::/32", Reserved, // documentation
	"3fff::/20", Reserved, // documentation
	"5f00::/16", Reserved, // segment routing
	"fc00::/7", Private,
	"fe80::/10", LinkLocal,
	"fec0::/10", Reserved, // deprecated site-local
	"ff00::/8", Multicast,
)

// Classify reports the class of a. IPv4-mapped IPv6 addresses are
// classified as the IPv4 address they carry; so are the IPv6 forms that
// embed one and reach it (NAT64 64:ff9b::/96, 6to4 2002::/16, the
// deprecated IPv4-compatible ::/96), since a packet to them ends up there.
// Only an address in no special range is Public. The zero Addr is
// Reserved.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return Reserved
	}
	a = a.WithZone("").Unmap()
	for _, p := range metadata {
		if p.Contains(a) {
			return Metadata
		}
	}
	if a.Is4() {
		for _, r := range v4Ranges {
			if r.p.Contains(a) {
				return r.c
			}
		}
		return Public
	}
	if v4, ok := embeddedV4(a); ok {
		switch c := Classify(v4); {
		case c != Public:
			return c
		case nat64Prefix.Contains(a):
			return Public // NAT64 of a public address is an ordinary route to it
		}
		return Reserved // 6to4 and IPv4-compatible forms are tunnels
	}
	for _, r := range v6Ranges {
		if r.p.Contains(a) {
			return r.c
		}
	}
	// Only 2000::/3 is global unicast; everything else is unassigned.
	if !netip.MustParsePrefix("2000::/3").Contains(a) {
		return Reserved
	}
	return Public
}

var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	v4Compatible = netip.MustParsePrefix("::/96")
)

// embeddedV4 returns the IPv4 address an IPv6 address carries and routes
// to, if it is of such a form.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a), v4Compatible.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64Local.Contains(a):
		// A local NAT64 prefix translates to whatever the operator routes:
		// treat it as the private address space it usually is.
		return netip.AddrFrom4([4]byte{10, 0, 0, 0}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// NormalHost returns host in the form every comparison uses: brackets,
// an IPv6 zone's trailing dots and case removed from names, and an IP
// address in any form a resolver accepts (see ParseIP) written in its
// canonical form, IPv4-mapped IPv6 as IPv4. It does not resolve.
func NormalHost(host string) string {
	if a, ok := ParseIP(host); ok {
		return a.String()
	}
	h := strings.TrimRight(host, ".")
	if a, ok := ParseIP(h); ok {
		return a.String()
	}
	return strings.ToLower(h)
}

// ParseIP parses host as an IP address in any of the forms a URL's host
// may take and some resolver accepts: dotted IPv4, the inet_aton forms
// (one to four parts, each decimal, octal with a leading 0, or hex with
// 0x: 2130706433, 0177.0.0.1, 0x7f.1), IPv6 with or without brackets and
// zone, and a trailing dot. An IPv4-mapped IPv6 address is returned as the
// IPv4 address. A name is not an IP address: ok is false.
func ParseIP(host string) (netip.Addr, bool) {
	h := host
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	h = strings.TrimSuffix(h, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseInetAton(h)
}

// legacyIPv4 reports whether host is an IPv4 address only in the
// inet_aton sense: not four plain decimal parts.
func legacyIPv4(host string) bool {
	if strings.Contains(host, ":") {
		return false
	}
	_, err := netip.ParseAddr(strings.TrimSuffix(host, "."))
	return err != nil
}

// parseInetAton parses the historical IPv4 forms of inet_aton(3), which
// getaddrinfo and browsers still accept.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		v, ok := parseNumber(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	// All but the last part are one byte each; the last fills the rest.
	var n uint64
	for _, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n = n<<8 | v
	}
	rest := uint(8 * (5 - len(vals)))
	last := vals[len(vals)-1]
	if last >= 1<<rest {
		return netip.Addr{}, false
	}
	n = n<<rest | last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// parseNumber parses one inet_aton part: 0x hex, 0 octal, or decimal.
func parseNumber(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true // "0x" alone is zero to inet_aton
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	case p == "":
		return 0, false
	}
	// ParseUint would accept underscores and signs in some forms: refuse
	// anything but digits of the base.
	for i := 0; i < len(p); i++ {
		if !isDigit(p[i], base) {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

func isDigit(c byte, base int) bool {
	switch base {
	case 8:
		return c >= '0' && c <= '7'
	case 10:
		return c >= '0' && c <= '9'
	}
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// numericName reports whether host's last label is a number: then host
// is meant as an IP address (browsers parse it as one), and one ParseIP
// refuses is malformed rather than a name to look up.
func numericName(host string) bool {
	h := strings.TrimRight(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) >= 2 && (last[:2] == "0x" || last[:2] == "0X") {
		last = last[2:]
		for i := 0; i < len(last); i++ {
			if !isDigit(last[i], 16) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(last); i++ {
		if !isDigit(last[i], 10) {
			return false
		}
	}
	return true
}

// localName reports whether name is localhost or under .localhost, which
// RFC 6761 reserves for loopback and resolvers answer without DNS.
func localName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// validName reports whether name (normalised) can be a DNS host name:
// letters, digits, '-', '_' and dots, labels of 1 to 63 bytes.
func validName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func classes(pairs ...any) []rangeClass {
	var out []rangeClass
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, rangeClass{netip.MustParsePrefix(pairs[i].(string)), pairs[i+1].(Class)})
	}
	return out
}

// Allowlist is the hosts an operator lets requests reach whatever their
// class: names (matched exactly, after NormalHost), IP addresses (any
// form ParseIP takes) and CIDR prefixes.
type Allowlist struct {
	names    []string
	prefixes []netip.Prefix
}

// ParseAllowlist reads entries, each one or more hosts separated by
// commas or spaces (the form of SIGNOFF_HEALTH_HOSTS and
// SIGNOFF_CHANNEL_HOSTS).
func ParseAllowlist(entries ...string) (Allowlist, error) {
	var a Allowlist
	for _, e := range entries {
		for _, f := range strings.Fields(strings.ReplaceAll(e, ",", " ")) {
			if strings.Contains(f, "/") {
				p, err := netip.ParsePrefix(f)
				if err != nil {
					return Allowlist{}, fmt.Errorf("allowlist: %q is not a CIDR prefix", f)
				}
				if p.Addr().Is4In6() && p.Bits() >= 96 {
					p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
				}
				a.prefixes = append(a.prefixes, p.Masked())
				continue
			}
			if ip, ok := ParseIP(f); ok {
				ip = ip.WithZone("")
				a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
				continue
			}
			n := NormalHost(f)
			if !validName(n) || numericName(n) {
				return Allowlist{}, fmt.Errorf("allowlist: %q is not a host name, IP address or CIDR prefix", f)
			}
			a.names = append(a.names, n)
		}
	}
	return a, nil
}

// MustAllowlist is ParseAllowlist for fixed entries; it panics on a bad one.
func MustAllowlist(entries ...string) Allowlist {
	a, err := ParseAllowlist(entries...)
	if err != nil {
		panic(err)
	}
	return a
}

// Name reports whether host, a name, is listed.
func (a Allowlist) Name(host string) bool {
	n := NormalHost(host)
	for _, m := range a.names {
		if m == n {
			return true
		}
	}
	return false
}

// Addr reports whether ip is listed or inside a listed prefix.
func (a Allowlist) Addr(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Empty reports whether nothing is listed.
func (a Allowlist) Empty() bool { return len(a.names) == 0 && len(a.prefixes) == 0 }

// Policy is a rule for the hosts requests may reach.
type Policy struct {
	// Allow lists what is reachable whatever its class. A listed name
	// reaches any address it resolves to except cloud metadata (that
	// takes the address itself listed).
	Allow Allowlist
	// Public admits every Public address and any name that resolves only
	// to such addresses (notification channels). Without it only the
	// allowlist is reachable (health probes).
	Public bool
}

// Error is a refused host or address.
type Error struct {
	Host  string     // the host as given
	Addr  netip.Addr // the address refused (invalid when the host itself was)
	Class Class      // the address's class, when there is one
	// Reason says why in words, when Class does not.
	Reason string
}

func (e *Error) Error() string {
	switch {
	case e.Reason != "":
		return fmt.Sprintf("host %s is refused: %s", e.Host, e.Reason)
	case e.Addr.IsValid() && e.Host != e.Addr.String():
		return fmt.Sprintf("host %s is refused: it resolves to %s, a %s address", e.Host, e.Addr, e.Class)
	case e.Class == Public:
		return fmt.Sprintf("host %s is refused: it is not in the allowlist", e.Host)
	}
	return fmt.Sprintf("host %s is refused: it is a %s address", e.Host, e.Class)
}

// CheckHost checks host without resolving it: an IP address in any form
// against the allowlist and its class, a name against the allowlist (and,
// with Public, only its syntax: its addresses are checked once resolved,
// by CheckAddr). localhost and *.localhost are loopback names.
func (p Policy) CheckHost(host string) error {
	if host == "" {
		return &Error{Host: host, Reason: "no host"}
	}
	if ip, ok := ParseIP(host); ok {
		if legacyIPv4(host) {
			// Resolvers disagree on these (getaddrinfo reads 0177.0.0.1 as
			// 127.0.0.1, Go's resolver as a name): a host that means
			// different things at different layers is refused.
			return &Error{Host: host, Addr: ip, Class: Classify(ip),
				Reason: fmt.Sprintf("it is %s (a %s address) in a legacy form; write an IPv4 address as four decimal parts", ip, Classify(ip))}
		}
		return p.CheckAddr("", ip)
	}
	n := NormalHost(host)
	switch {
	case numericName(n):
		return &Error{Host: host, Reason: "it is neither a valid IP address nor a name"}
	case !validName(n):
		return &Error{Host: host, Reason: "it is not a valid host name"}
	case p.Allow.Name(n):
		return nil
	case !p.Public:
		return &Error{Host: host, Reason: "it is not in the allowlist"}
	case localName(n):
		for _, ip := range loopbackAddrs {
			if err := p.CheckAddr(n, ip); err != nil {
				return err
			}
		}
	}
	return nil
}

var loopbackAddrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}

// CheckAddr checks ip, an address of host (a name, or "" when the host
// was the address itself): it passes if the allowlist lists it, if it is
// Public under a Public policy, or if the allowlist lists the name and
// the address is not cloud metadata.
func (p Policy) CheckAddr(host string, ip netip.Addr) error {
	ip = ip.WithZone("").Unmap()
	c := Classify(ip)
	switch {
	case p.Allow.Addr(ip):
		return nil
	case c == Public && p.Public:
		return nil
	case host != "" && c != Metadata && p.Allow.Name(host):
		return nil
	}
	shown := host
	if shown == "" {
		shown = ip.String()
	}
	return &Error{Host: shown, Addr: ip, Class: c}
}
