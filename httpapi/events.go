package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sse"
)

// GET /api/v1/events streams the ledger of the caller's workspace as
// Server-Sent Events, filtered by what the caller may see (the store's
// StreamEvents decides: staff everything, a reporter what happened to their
// own cases, an agent the cases it has a task on). Each event is
//
//	id: <seq>
//	event: <type>
//	data: {"seq":…,"type":…,"case_id":…,"actor_id":…,"time":…,"hash":…,"payload":…}
//
// The stream resumes after the Last-Event-ID header or, for scripts, after
// ?after=<seq> (the header wins when both are given, as when a browser
// reconnects to a URL that carries ?after); ?after=0 replays the ledger from
// the start. With neither it starts at the current head: only new events.
// ?once=1 answers the first batch (at most eventBatch events, possibly none)
// and ends, for scripts that poll. A malformed or negative resume point is
// a 422 problem before the stream starts.
//
// The store is polled, because several processes may share the database
// and any of them may append; each batch is flushed at once. A comment
// keeps idle connections open through proxies, and a connection lasts at
// most MaxAge: the client reconnects with Last-Event-ID and loses nothing.
// The credential is checked again every Recheck, so a revoked token or a
// disabled actor stops receiving events. The stream ends when the client
// goes away or the server shuts down.
const eventsPath = "/api/v1/events"

const (
	// eventBatch bounds the events read and written per poll; a full batch
	// is followed at once by the next, so a backlog drains quickly.
	eventBatch = 1000
	// eventWriteWindow is how long one write may take before the
	// connection is given up; the deadline moves before every write, so
	// the server's WriteTimeout does not cut the stream.
	eventWriteWindow = 30 * time.Second
)

// EventStream configures GET /api/v1/events. A zero field keeps its
// default.
type EventStream struct {
	Poll      time.Duration // how often the store is asked for new events (250 ms)
	Keepalive time.Duration // a ": keepalive" comment after this long without a write (15 s)
	Recheck   time.Duration // how often the credential is checked again (1 min)
	MaxAge    time.Duration // how long one connection lasts at most (1 h)
}

type eventOptions = EventStream

// withDefaults fills the zero fields.
func (e EventStream) withDefaults() EventStream {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&e.Poll, 250*time.Millisecond)
	def(&e.Keepalive, 15*time.Second)
	def(&e.Recheck, time.Minute)
	def(&e.MaxAge, time.Hour)
	return e
}

// WithEventPoll sets how often the event stream asks the store for new
// events (default 250 ms).
func WithEventPoll(d time.Duration) Option {
	return func(o *options) { o.events.Poll = d }
}

// WithEventStream sets the event stream's timings; zero fields are left
// as they are.
func WithEventStream(c EventStream) Option {
	return func(o *options) {
		for _, f := range []struct{ to, from *time.Duration }{
			{&o.events.Poll, &c.Poll}, {&o.events.Keepalive, &c.Keepalive},
			{&o.events.Recheck, &c.Recheck}, {&o.events.MaxAge, &c.MaxAge},
		} {
			if *f.from > 0 {
				*f.to = *f.from
			}
		}
	}
}

// isEventStream reports whether r asks for the stream, which the request
// timeout must not cut (withRequest).
func isEventStream(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == eventsPath
}

// streamEvent is the data line of one event.
type streamEvent struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	CaseID  string          `json:"case_id"`
	ActorID string          `json:"actor_id"`
	Time    time.Time       `json:"time"`
	Hash    string          `json:"hash"`
	Payload json.RawMessage `json:"payload"`
}

func (s *server) streamEvents(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "after", "once")
	if err != nil {
		return err
	}
	after, given, err := resumePoint(r, q)
	if err != nil {
		return err
	}
	var once bool
	if v, ok := q["once"]; ok {
		if once, err = strconv.ParseBool(v); err != nil {
			return signoff.Errorf(signoff.EINVALID, "once must be 1 or 0")
		}
	}
	o := s.opts.events.withDefaults()
	if !once {
		// Each open stream polls the database; one actor holds a few.
		if !s.streams.Acquire(by.ID) {
			return signoff.Errorf(signoff.ERATELIMIT, "at most %d live event streams per actor", maxStreamsPerActor)
		}
		defer s.streams.Release(by.ID)
	}
	// The request has no deadline (withRequest): every database call gets
	// its own.
	ctx := r.Context()
	if !given {
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		after, err = s.store.HeadSeq(cctx, by.WorkspaceID)
		cancel()
		if err != nil {
			return err
		}
	}
	// poll reads the next batch and where the one after it starts: past
	// the last event read or, when the batch came back short, past the head
	// read just before it, whichever is later. Every event up to that head
	// was committed before the batch was read, so a short batch holds all
	// of them the caller may see; a filtered stream then never walks the
	// same stretch of other people's events twice.
	poll := func() ([]signoff.Event, int64, error) {
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		head, err := s.store.HeadSeq(cctx, by.WorkspaceID)
		if err != nil {
			return nil, 0, err
		}
		evs, err := s.store.StreamEvents(cctx, by, after, eventBatch)
		if err != nil {
			return nil, 0, err
		}
		next := after
		if len(evs) > 0 {
			next = evs[len(evs)-1].Seq
		}
		if len(evs) < eventBatch && head > next {
			next = head
		}
		return evs, next, nil
	}
	// The first batch is read before the stream starts, so that its errors
	// still answer as problems.
	// Taken before each read: a commit after the read still wakes the
	// wait below (EventsCommitted).
	wake := sse.Commits(s.store)
	evs, next, err := poll()
	if err != nil {
		return err
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	// The server's WriteTimeout counts from the request: each write moves
	// the deadline instead. (Its ReadTimeout does not apply: net/http
	// clears the read deadline when it starts watching for the client
	// going away.) A writer without a connection ignores both.
	rc := http.NewResponseController(w)
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(eventWriteWindow)) }
	extend()
	defer extend() // for the end of the response, written after we return
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil // the route also answers HEAD: headers only
	}
	if err := rc.Flush(); err != nil {
		return nil
	}

	var buf bytes.Buffer
	lastWrite := time.Now()
	send := func(b []byte) bool {
		extend()
		if _, err := w.Write(b); err != nil {
			return false
		}
		lastWrite = time.Now()
		return rc.Flush() == nil
	}
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	end := time.NewTimer(o.MaxAge)
	defer end.Stop()
	shutdown := sse.Shutdown(ctx)
	lastAuth := time.Now()
	for {
		if len(evs) > 0 {
			buf.Reset()
			for _, e := range evs {
				writeSSE(&buf, e)
			}
			if !send(buf.Bytes()) {
				return nil // the client went away
			}
		}
		after = next
		if once {
			return nil
		}
		if len(evs) < eventBatch {
			select {
			case <-ctx.Done():
				return nil
			case <-shutdown:
				return nil
			case <-end.C:
				return nil
			case <-tick.C:
			case <-wake:
			}
		} else {
			// A full batch: more are waiting, read on at once.
			select {
			case <-ctx.Done():
				return nil
			case <-shutdown:
				return nil
			case <-end.C:
				return nil
			default:
			}
		}
		if time.Since(lastAuth) >= o.Recheck {
			if !s.stillAuthenticated(r, by) {
				return nil
			}
			lastAuth = time.Now()
		}
		if time.Since(lastWrite) >= o.Keepalive && !send([]byte(": keepalive\n\n")) {
			return nil
		}
		wake = sse.Commits(s.store)
		if evs, next, err = poll(); err != nil {
			// Too late for a problem: the client reconnects with
			// Last-Event-ID and loses nothing.
			if ctx.Err() == nil {
				s.log.ErrorContext(ctx, "event stream", "err", err, "request_id", infoFrom(ctx).id)
			}
			return nil
		}
	}
}

// resumePoint reads where the stream starts: after the Last-Event-ID header
// or else ?after. given is false when neither is set (start at the head).
func resumePoint(r *http.Request, q map[string]string) (after int64, given bool, err error) {
	vals := r.Header.Values("Last-Event-ID")
	what, v := "", ""
	switch {
	case len(vals) > 1:
		return 0, false, signoff.Errorf(signoff.EINVALID, "Last-Event-ID given more than once")
	case len(vals) == 1 && vals[0] != "":
		what, v = "Last-Event-ID", vals[0]
	default:
		var ok bool
		if v, ok = q["after"]; !ok {
			return 0, false, nil
		}
		what = "after"
	}
	after, err = strconv.ParseInt(v, 10, 64)
	if err != nil || after < 0 {
		return 0, false, signoff.Errorf(signoff.EINVALID, "%s must be an event sequence number (an integer of at least 0)", what)
	}
	return after, true, nil
}

// stillAuthenticated checks the stream's credential again: it must still
// resolve to the same actor, in the same workspace, with the same role.
func (s *server) stillAuthenticated(r *http.Request, by signoff.Actor) bool {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	a, err := s.authenticate(r.WithContext(ctx))
	return err == nil && a.ID == by.ID && a.WorkspaceID == by.WorkspaceID && a.Role == by.Role
}

// writeSSE appends one event in the text/event-stream format. Fields are
// single lines: JSON escapes line breaks, and a type never has one (the
// store checks types), but one is dropped rather than trusted.
func writeSSE(b *bytes.Buffer, e signoff.Event) {
	data, err := json.Marshal(streamEvent{Seq: e.Seq, Type: e.Type, CaseID: e.CaseID, ActorID: e.ActorID, Time: e.Time, Hash: e.Hash, Payload: e.Payload})
	if err != nil {
		// Only a payload that is not JSON gets here; the ledger stores
		// canonical JSON, so this is a damaged row: show it without.
		data, _ = json.Marshal(streamEvent{Seq: e.Seq, Type: e.Type, CaseID: e.CaseID, ActorID: e.ActorID, Time: e.Time, Hash: e.Hash})
	}
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(strings.NewReplacer("\r", "", "\n", "").Replace(e.Type))
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

// maxStreamsPerActor bounds one actor's open event streams (in this
// process).
const maxStreamsPerActor = 8
