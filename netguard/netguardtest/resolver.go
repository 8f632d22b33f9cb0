// Package netguardtest holds a resolver for tests of code that dials
// through netguard: it answers the way a hostile DNS server that rebinds a
// name does, so a test can show that a name is looked up once and the
// checked address is the one dialled.
package netguardtest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// Rebinding answers each name with its next answer, the last one
// repeating; an answer is one or more space-separated addresses. A name
// it does not know is not found. It counts the lookups of each name.
type Rebinding struct {
	mu    sync.Mutex
	by    map[string][][]netip.Addr
	calls map[string]int
}

// NewRebinding returns a resolver answering by[name] in turn. It panics
// on an address that does not parse: the table is the test's own.
func NewRebinding(by map[string][]string) *Rebinding {
	r := &Rebinding{by: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, seq := range by {
		for _, s := range seq {
			var as []netip.Addr
			for _, f := range strings.Fields(s) {
				as = append(as, netip.MustParseAddr(f))
			}
			r.by[name] = append(r.by[name], as)
		}
	}
	return r
}

// LookupNetIP implements the resolver netguard takes.
func (r *Rebinding) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.by[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host]++
	return seq[min(n, len(seq)-1)], nil
}

// Lookups returns how many times host was looked up.
func (r *Rebinding) Lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// Set makes name answer answers in turn from its next lookup on.
func (r *Rebinding) Set(name string, answers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.by[name], r.calls[name] = nil, 0
	for _, s := range answers {
		var as []netip.Addr
		for _, f := range strings.Fields(s) {
			as = append(as, netip.MustParseAddr(f))
		}
		r.by[name] = append(r.by[name], as)
	}
}
