package web

import (
	"context"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff/sse"
)

// pageStream is what the desk's and a case page's live streams share:
// the headers and the retry hint, writes under a deadline, keepalives,
// and the wait between polls. The handlers keep their own reads and
// their own checks of who may still read.
type pageStream struct {
	ctx       context.Context
	w         http.ResponseWriter
	rc        *http.ResponseController
	lastWrite time.Time
	tick      *time.Ticker
	end       *time.Timer
	shutdown  <-chan struct{}
}

// openStream answers r as an event stream: 200, the headers, and the
// retry hint with a comment, so the browser opens the stream (and the
// page marks itself live) before the first event. ok is false when there
// is nothing more to write (HEAD, or the client is gone); close must be
// called either way.
func (s *server) openStream(w http.ResponseWriter, r *http.Request) (p *pageStream, ok bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	p = &pageStream{ctx: r.Context(), w: w, rc: http.NewResponseController(w), lastWrite: time.Now(),
		tick: time.NewTicker(s.o.EventPoll), end: time.NewTimer(s.o.EventMaxAge), shutdown: sse.Shutdown(r.Context())}
	p.extend()
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return p, false // the routes answer HEAD too: headers only
	}
	return p, p.send([]byte("retry: 2000\n: live\n\n"))
}

// extend moves the write deadline on: a stream lives longer than one
// request's, and a client that stops reading is dropped.
func (p *pageStream) extend() { _ = p.rc.SetWriteDeadline(time.Now().Add(eventWriteWindow)) }

// send writes b and flushes it; false when the client is gone.
func (p *pageStream) send(b []byte) bool {
	p.extend()
	if _, err := p.w.Write(b); err != nil {
		return false
	}
	p.lastWrite = time.Now()
	return p.rc.Flush() == nil
}

// keepalive writes a comment when nothing was written for a while; false
// when the client is gone.
func (p *pageStream) keepalive() bool {
	return time.Since(p.lastWrite) < eventKeepalive || p.send([]byte(": keepalive\n\n"))
}

// wait blocks until the next poll is due (the ticker, or wake: a commit)
// or, after a full batch (more are waiting), only checks that the stream
// should go on. It is false when the stream ends: the client left, the
// server shuts down, or the stream reached its maximum age.
func (p *pageStream) wait(full bool, wake <-chan struct{}) bool {
	if full {
		select {
		case <-p.ctx.Done():
			return false
		case <-p.shutdown:
			return false
		case <-p.end.C:
			return false
		default:
			return true
		}
	}
	select {
	case <-p.ctx.Done():
		return false
	case <-p.shutdown:
		return false
	case <-p.end.C:
		return false
	case <-p.tick.C:
	case <-wake:
	}
	return true
}

// close stops the timers and leaves the connection a last write window.
func (p *pageStream) close() {
	p.tick.Stop()
	p.end.Stop()
	p.extend()
}
