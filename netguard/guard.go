package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks names up; *net.Resolver is one. Tests give their own to
// answer as a hostile DNS server would.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ConfigLookupTimeout bounds the lookup CheckConfig makes.
const ConfigLookupTimeout = 3 * time.Second

// Guard applies a Policy to names as well: it resolves them and checks
// every address, and dials only an address it checked.
type Guard struct {
	Policy
	// Resolver looks names up (nil: net.DefaultResolver).
	Resolver Resolver
	// DialTimeout bounds one connection attempt (0: 10 s).
	DialTimeout time.Duration
}

func (g *Guard) resolver() Resolver {
	if g.Resolver == nil {
		return net.DefaultResolver
	}
	return g.Resolver
}

// Resolve checks host and returns the addresses to connect to: an IP
// address itself, or every address the name resolves to, each checked.
// One refused address refuses the host: a name that answers with a
// public and a private address is not trusted with either.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	name := NormalHost(host)
	for _, a := range addrs {
		if err := g.CheckAddr(name, a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// lookup checks host's form and resolves it. A lookup failure is a
// *net.DNSError or the resolver's own error, never an *Error.
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if err := g.CheckHost(host); err != nil {
		return nil, err
	}
	if ip, ok := ParseIP(host); ok {
		return []netip.Addr{ip.WithZone("")}, nil
	}
	name := NormalHost(host)
	if localName(name) {
		// Answered without DNS, as resolvers must (RFC 6761).
		return loopbackAddrs, nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: name, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.WithZone("").Unmap()
	}
	return out, nil
}

// CheckConfig checks a host an owner is configuring: its form, and every
// address it resolves to now. A name that does not resolve (no DNS where
// the server runs, a record not yet published) is accepted: the server
// cannot tell which, and every delivery resolves and checks it again
// before connecting.
func (g *Guard) CheckConfig(ctx context.Context, host string) error {
	ctx, cancel := context.WithTimeout(ctx, ConfigLookupTimeout)
	defer cancel()
	addrs, err := g.lookup(ctx, host)
	var refused *Error
	switch {
	case errors.As(err, &refused):
		return err
	case err != nil:
		return nil
	}
	name := NormalHost(host)
	for _, a := range addrs {
		if err := g.CheckAddr(name, a); err != nil {
			return err
		}
	}
	return nil
}

// DialContext connects to address (host:port) as net.Dialer does, but
// only to an address Resolve checked: the name is resolved once and the
// connection is made to the checked IP, which the dialer's Control
// confirms is the address actually connected to. It tries the addresses
// in order, as net.Dialer does.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("netguard: port %q: %w", portText, err)
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	timeout := g.DialTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var first error
	for _, a := range addrs {
		if network == "tcp4" && !a.Is4() || network == "tcp6" && !a.Is6() {
			continue
		}
		pinned := a
		d := net.Dialer{Timeout: timeout, Control: func(_, raddr string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(raddr)
			if err != nil || ap.Addr().WithZone("").Unmap() != pinned {
				return fmt.Errorf("netguard: connecting to %s, not the checked address %s", raddr, pinned)
			}
			return nil
		}}
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = fmt.Errorf("netguard: %s has no %s address", host, network)
	}
	return nil, first
}

// Transport returns an HTTP transport that dials through g and uses no
// proxy (a proxy would connect where the guard never looked).
func (g *Guard) Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = g.DialContext
	return tr
}
