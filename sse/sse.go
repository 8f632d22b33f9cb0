// Package sse holds what the API's event stream and the web desk's live
// stream share: a per-person bound on open streams, the end of a stream
// when its server shuts down, and the wake-up on new ledger commits. Each
// writes its own events.
package sse

import (
	"context"
	"net/http"
	"sync"
)

// Streams counts open streams per actor in this process, up to Max each.
type Streams struct {
	Max int
	mu  sync.Mutex
	n   map[string]int
}

// Acquire takes a stream for actor, or reports false when it has Max.
func (c *Streams) Acquire(actor string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[actor] >= c.Max {
		return false
	}
	c.n[actor]++
	return true
}

// Release gives back a stream taken with Acquire.
func (c *Streams) Release(actor string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[actor]--; c.n[actor] <= 0 {
		delete(c.n, actor)
	}
}

// shutdowns maps each http.Server that has served a stream to a channel
// closed when it shuts down: Shutdown waits for handlers to return, and a
// stream would otherwise keep it waiting until its maximum age.
var shutdowns sync.Map // *http.Server → chan struct{}

// Shutdown returns a channel closed when the server serving ctx's request
// shuts down, or nil (never ready) when there is none.
func Shutdown(ctx context.Context) <-chan struct{} {
	srv, _ := ctx.Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return nil
	}
	ch := make(chan struct{})
	v, loaded := shutdowns.LoadOrStore(srv, ch)
	if !loaded {
		srv.RegisterOnShutdown(func() {
			shutdowns.Delete(srv)
			close(ch)
		})
	}
	return v.(chan struct{})
}

// Commits is the store's channel closed at the next commit of ledger
// events, or nil (a wait that only the poll ends) for a store without one.
// Take it before reading: a commit after the read still wakes the wait.
func Commits(store any) <-chan struct{} {
	if w, ok := store.(interface{ EventsCommitted() <-chan struct{} }); ok {
		return w.EventsCommitted()
	}
	return nil
}
