package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/sse"
	"github.com/signoff-dev/signoff/workflow"
)

// deskLimit is how many cases the desk shows at once; older ones are a
// link away.
const deskLimit = 100

// deskRowView is one row of the desk's table.
type deskRowView struct {
	ID, Title, Kind, State, Severity, Owner, Age string
	Created                                      time.Time
	Version                                      int64
}

// deskView is the desk page.
type deskView struct {
	Rows        []deskRowView
	State, Kind string
	Query       string
	States      []string
	Kinds       []string
	Older       string // query string of the next page, if any
	Filtered    bool
}

// deskFilter reads the desk's filters from the query.
func deskFilter(q url.Values) sqlstore.DeskFilter {
	return sqlstore.DeskFilter{Kind: signoff.CaseKind(q.Get("kind")), State: q.Get("state"), Query: q.Get("q"), Before: q.Get("before")}
}

// caseStates lists every state of both machines once, bug states first.
func caseStates() []string {
	out := slices.Clone(workflow.Bug.States)
	for _, st := range workflow.Change.States {
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out
}

func (s *server) rowView(c sqlstore.DeskCase) deskRowView {
	return deskRowView{ID: c.ID, Title: c.Title, Kind: string(c.Kind), State: c.State, Severity: c.Severity, Owner: c.Owner,
		Age: age(s.o.Now(), c.CreatedAt), Created: c.CreatedAt, Version: c.Version}
}

func (s *server) desk(w http.ResponseWriter, r *http.Request, sess sqlstore.WebSession) error {
	q := r.URL.Query()
	f := deskFilter(q)
	f.Limit = deskLimit + 1
	cases, err := s.store.DeskCases(r.Context(), sess.Actor, f)
	if err != nil {
		return err
	}
	v := deskView{State: f.State, Kind: string(f.Kind), Query: f.Query, States: caseStates(), Kinds: []string{string(signoff.KindBug), string(signoff.KindChange)},
		Filtered: f.State != "" || f.Kind != "" || strings.TrimSpace(f.Query) != ""}
	if len(cases) > deskLimit {
		cases = cases[:deskLimit]
		next := url.Values{}
		for _, k := range []string{"state", "kind", "q"} {
			if q.Get(k) != "" {
				next.Set(k, q.Get(k))
			}
		}
		next.Set("before", cases[len(cases)-1].ID)
		v.Older = "/desk?" + next.Encode()
	}
	for _, c := range cases {
		v.Rows = append(v.Rows, s.rowView(c))
	}
	me := sess.Actor
	s.render(w, r, http.StatusOK, "desk", page{Title: "Desk", Me: &me, CSRF: sess.CSRF, Script: "desk.js", Body: v})
	return nil
}

// deskRow answers one case's row for the desk's script, or 204 when the
// case does not match the filters in the query (the desk the script runs
// on).
func (s *server) deskRow(w http.ResponseWriter, r *http.Request, sess sqlstore.WebSession) error {
	f := deskFilter(r.URL.Query())
	f.Before, f.ID, f.Limit = "", r.PathValue("id"), 1
	if err := signoff.CheckID("case", signoff.PrefixCase, f.ID); err != nil {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case.")
	}
	cases, err := s.store.DeskCases(r.Context(), sess.Actor, f)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		// Missing, another workspace's, or filtered out: the script
		// inserts nothing either way.
		if _, err := s.store.GetCase(r.Context(), sess.Actor, f.ID); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	var buf bytes.Buffer
	if err := s.pages["desk"].ExecuteTemplate(&buf, "row", s.rowView(cases[0])); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
	return nil
}

// eventsPath is the desk's live stream of ledger events (Server-Sent
// Events), for the signed-in person's session. It reuses the store's
// visibility filter (StreamEvents) as the person sees it, starts at the
// head (or after Last-Event-ID when the browser reconnects) and sends each
// event's ledger sequence as its id.
const eventsPath = "/desk/events"

const (
	eventBatch       = 1000
	eventWriteWindow = 30 * time.Second
	eventKeepalive   = 15 * time.Second
	// maxStreamsPerActor bounds one person's open streams in this
	// process (a few tabs).
	maxStreamsPerActor = 8
)

// streamData is the data line of an event. The desk's script needs the
// payload of case.created and case.transitioned only; other events go
// without it, as the "ledger" event, to keep the stream light.
type streamData struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	CaseID  string          `json:"case_id,omitempty"`
	ActorID string          `json:"actor_id"`
	Time    time.Time       `json:"time"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func writeSSE(b *bytes.Buffer, e signoff.Event) {
	d := streamData{Seq: e.Seq, Type: e.Type, CaseID: e.CaseID, ActorID: e.ActorID, Time: e.Time}
	name := "ledger"
	if e.Type == "case.created" || e.Type == "case.transitioned" {
		name, d.Payload = e.Type, e.Payload
	}
	data, err := json.Marshal(d)
	if err != nil {
		d.Payload = nil
		data, _ = json.Marshal(d)
	}
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

func (s *server) deskEvents(w http.ResponseWriter, r *http.Request) {
	sess, secret, ok := s.session(r)
	if !ok {
		s.fail(w, r, errNotSignedIn)
		return
	}
	by := sess.Actor
	var after int64
	resume := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, r, signoff.Errorf(signoff.EINVALID, "Last-Event-ID must be an event sequence number."))
			return
		}
		after, resume = n, true
	}
	if !s.streams.Acquire(by.ID) {
		s.fail(w, r, signoff.Errorf(signoff.ERATELIMIT, "Too many live desks open at once; close a tab."))
		return
	}
	defer s.streams.Release(by.ID)
	ctx := r.Context()
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, requestTimeout) }
	if !resume {
		cctx, cancel := call()
		head, err := s.store.HeadSeq(cctx, by.WorkspaceID)
		cancel()
		if err != nil {
			s.fail(w, r, err)
			return
		}
		after = head
	}
	// poll reads the next batch and where the one after it starts (see
	// httpapi's stream: past a short batch, the head read before it).
	poll := func() ([]signoff.Event, int64, error) {
		cctx, cancel := call()
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
	// Taken before each read: a commit after the read still wakes the
	// wait below (EventsCommitted).
	wake := sse.Commits(s.store)
	evs, next, err := poll()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(eventWriteWindow)) }
	extend()
	defer extend()
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return // the route answers HEAD too: headers only
	}
	// The retry hint and a comment make the browser open the stream (and
	// the desk mark itself live) before the first event.
	if _, err := w.Write([]byte("retry: 2000\n: live\n\n")); err != nil || rc.Flush() != nil {
		return
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
	tick := time.NewTicker(s.o.EventPoll)
	defer tick.Stop()
	end := time.NewTimer(s.o.EventMaxAge)
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
				return
			}
		}
		after = next
		if len(evs) < eventBatch {
			select {
			case <-ctx.Done():
				return
			case <-shutdown:
				return
			case <-end.C:
				return
			case <-tick.C:
			case <-wake:
			}
		} else {
			// A full batch: more are waiting, read on at once.
			select {
			case <-ctx.Done():
				return
			case <-shutdown:
				return
			case <-end.C:
				return
			default:
			}
		}
		if time.Since(lastAuth) >= s.o.EventRecheck {
			// A session that ended (signed out, expired, person disabled)
			// stops receiving events.
			cctx, cancel := call()
			cur, err := s.store.WebSession(cctx, secret)
			cancel()
			if err != nil || cur.Actor.ID != by.ID || cur.Actor.Role != by.Role {
				return
			}
			lastAuth = time.Now()
		}
		if time.Since(lastWrite) >= eventKeepalive && !send([]byte(": keepalive\n\n")) {
			return
		}
		wake = sse.Commits(s.store)
		if evs, next, err = poll(); err != nil {
			if ctx.Err() == nil {
				s.log.ErrorContext(ctx, "desk event stream", "err", err)
			}
			return
		}
	}
}
