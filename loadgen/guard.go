package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// ErrNotLoopback is wrapped by Guard's refusals.
var ErrNotLoopback = fmt.Errorf("not a loopback address")

// Guard checks that rawURL is an http(s) URL whose host resolves only to
// loopback addresses (127.0.0.0/8, ::1): load is for a server on this
// machine unless the operator says otherwise. An IP literal is checked as
// it is; a name must resolve, and every address it resolves to must be
// loopback, so a name with one public address among loopback ones is
// refused. DialControl checks again at connect time, so a name that
// resolves differently later (DNS rebinding) gains nothing.
func Guard(ctx context.Context, rawURL string, r Resolver) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", rawURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL with a host", rawURL)
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !ip.Unmap().IsLoopback() {
			return fmt.Errorf("host %s: %w", host, ErrNotLoopback)
		}
		return nil
	}
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve: %v", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("host %s resolves to no address", host)
	}
	var public []string
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok || !ip.Unmap().IsLoopback() {
			public = append(public, a.IP.String())
		}
	}
	if len(public) > 0 {
		return fmt.Errorf("host %s resolves to %s: %w", host, strings.Join(public, ", "), ErrNotLoopback)
	}
	return nil
}

// DialControl is a net.Dialer Control function that refuses to connect to
// anything but a loopback address.
func DialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrNotLoopback)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("dial %s: %w", address, ErrNotLoopback)
	}
	return nil
}
