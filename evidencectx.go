package signoff

import (
	"context"
	"sync"
)

// SimulatedPersonHeader is the request header with which `signoff demo`'s
// walks say "the person making this request is the demo standing in for
// one". A server honours it only when it was started with that option
// (httpapi.WithSimulatedPeople, set by `signoff demo` alone); everywhere
// else it is ignored. Its only value is SimulatedPersonValue.
const (
	SimulatedPersonHeader = "Signoff-Simulated-Person"
	SimulatedPersonValue  = "demo"
)

type simulatedKey struct{}

// simulatedMark is a marked request's principal, learnt as the request
// goes through the layers. Until it is bound nothing is relabelled: the
// mark fails closed.
type simulatedMark struct {
	mu sync.Mutex
	// principal is the authenticated human whose events are relabelled.
	principal string
	// public is set on a route without a credential: the events of the
	// public intake and of a reporter's tracking link are relabelled.
	public bool
	// off is set when the caller is not a person (an agent, the server).
	off bool
}

// WithSimulatedPerson marks ctx as a request whose person is simulated.
// Nothing is relabelled until BindSimulatedPerson or
// BindSimulatedPublic says who the person is.
func WithSimulatedPerson(ctx context.Context) context.Context {
	return context.WithValue(ctx, simulatedKey{}, &simulatedMark{})
}

// BindSimulatedPerson names the authenticated caller of a marked request.
// Only a human's own events are relabelled: for an agent or the server the
// mark is switched off for good, so a hostile agent that sends the marker
// changes nothing.
func BindSimulatedPerson(ctx context.Context, by Actor) {
	m, ok := ctx.Value(simulatedKey{}).(*simulatedMark)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off || m.public || m.principal != "" || !by.Role.IsHuman() || by.ID == "" {
		m.off = true // bound twice, or not a person: fail closed
		m.principal = ""
		return
	}
	m.principal = by.ID
}

// BindSimulatedPublic says a marked request is on a public route (no
// credential): the person is the public intake's reporter or the holder of
// a tracking link.
func BindSimulatedPublic(ctx context.Context) {
	m, ok := ctx.Value(simulatedKey{}).(*simulatedMark)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off || m.principal != "" {
		m.off = true
		return
	}
	m.public = true
}

// SimulatedPrincipal reports what a marked request may relabel: the
// actor id of its authenticated person, or public for a route without a
// credential. ok is false for a request that is not marked, whose caller
// is not a person, or whose caller is not known yet.
func SimulatedPrincipal(ctx context.Context) (principal string, public, ok bool) {
	m, found := ctx.Value(simulatedKey{}).(*simulatedMark)
	if !found {
		return "", false, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off || (m.principal == "" && !m.public) {
		return "", false, false
	}
	return m.principal, m.public, true
}
