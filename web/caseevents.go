package web

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

// caseEventsPattern is the case page's live stream (Server-Sent Events):
// the case's new ledger events, each with the line the timeline would
// show for it, as the signed-in person may read them (ListEvents). It
// starts after ?after= (the last event the page showed) or after
// Last-Event-ID when the browser reconnects, so nothing between the
// page's render and the stream is lost.
const caseEventsPattern = "/cases/{id}/events"

// isCaseEventsPath reports whether p is a case page's live stream, which,
// like the desk's, lives longer than one request's deadline.
func isCaseEventsPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/cases/")
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(rest, "/events")
	return ok && id != "" && !strings.Contains(id, "/")
}

// caseStreamBatch bounds the events one poll reads.
const caseStreamBatch = 200

// caseStreamData is the data line of one event on the case stream. Every
// string is ledger text: the script sets it as text, never as markup.
type caseStreamData struct {
	Seq      int64     `json:"seq"`
	Type     string    `json:"type"`
	ActorID  string    `json:"actor_id"`
	Actor    string    `json:"actor"`
	Time     time.Time `json:"time"`
	Evidence string    `json:"evidence"`
	Summary  string    `json:"summary"`
	// Task is the agent task the event belongs to, if any: the script
	// adds it to that task's line.
	Task string `json:"task,omitempty"`
	// State is the case's new state on case.transitioned.
	State string `json:"state,omitempty"`
}

func writeCaseSSE(b *bytes.Buffer, e signoff.Event, names timelineActors) {
	d := caseStreamData{Seq: e.Seq, Type: e.Type, ActorID: e.ActorID, Actor: names.name(e.ActorID), Time: e.Time,
		Evidence: evidenceOf(e.Payload), Summary: summary(e, names)}
	d.Task, _ = taskEvent(e)
	name := "event"
	if e.Type == "case.transitioned" {
		name = "moved"
		d.State, _ = payloadOf(e)["to"].(string)
	}
	data, err := json.Marshal(d)
	if err != nil {
		return
	}
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

func (s *server) caseEvents(w http.ResponseWriter, r *http.Request) {
	sess, secret, ok := s.session(r)
	if !ok {
		s.fail(w, r, errNotSignedIn)
		return
	}
	by, caseID := sess.Actor, r.PathValue("id")
	var after int64
	from := r.URL.Query().Get("after")
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		from = v
	}
	if from != "" {
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, r, signoff.Errorf(signoff.EINVALID, "The stream starts after an event sequence number."))
			return
		}
		after = n
	}
	ctx := r.Context()
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, requestTimeout) }
	cctx, cancel := call()
	c, err := s.store.GetCase(cctx, by, caseID)
	cancel()
	if err != nil {
		s.fail(w, r, notFoundCase(err))
		return
	}
	// One bound for the desk's and the case pages' streams: a person's
	// tabs, whichever pages they show.
	if !s.streams.Acquire(by.ID) {
		s.fail(w, r, signoff.Errorf(signoff.ERATELIMIT, "Too many live pages open at once; close a tab."))
		return
	}
	defer s.streams.Release(by.ID)
	cctx, cancel = call()
	names := s.timelineActors(cctx, c.WorkspaceID)
	cancel()
	tried := map[string]bool{}
	poll := func() ([]signoff.Event, error) {
		cctx, cancel := call()
		defer cancel()
		return s.store.ListEvents(cctx, by, caseID, after, caseStreamBatch)
	}
	wake := sse.Commits(s.store)
	evs, err := poll()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, ok := s.openStream(w, r)
	defer p.close()
	if !ok {
		return
	}
	var buf bytes.Buffer
	lastAuth := time.Now()
	for {
		if len(evs) > 0 {
			buf.Reset()
			for _, e := range evs {
				if _, known := names[e.ActorID]; !known && !tried[e.ActorID] && !strings.HasPrefix(e.ActorID, "trk_") {
					// Someone new acted (an actor made since the stream
					// opened): read the names again, once per id, so
					// that events by an id that is no actor (the CLI)
					// do not each read the workspace's actors.
					tried[e.ActorID] = true
					cctx, cancel := call()
					names = s.timelineActors(cctx, c.WorkspaceID)
					cancel()
				}
				writeCaseSSE(&buf, e, names)
			}
			if !p.send(buf.Bytes()) {
				return
			}
			after = evs[len(evs)-1].Seq
		}
		if !p.wait(len(evs) >= caseStreamBatch, wake) {
			return
		}
		if time.Since(lastAuth) >= s.o.EventRecheck {
			// A session that ended, or a case this person may no longer
			// read, stops the stream.
			cctx, cancel := call()
			cur, err := s.store.WebSession(cctx, secret)
			if err == nil && cur.Actor.ID == by.ID && cur.Actor.Role == by.Role {
				by = cur.Actor
				_, err = s.store.GetCase(cctx, by, caseID)
			}
			cancel()
			if err != nil || cur.Actor.ID != sess.Actor.ID || cur.Actor.Role != sess.Actor.Role {
				return
			}
			lastAuth = time.Now()
		}
		if !p.keepalive() {
			return
		}
		wake = sse.Commits(s.store)
		if evs, err = poll(); err != nil {
			if ctx.Err() == nil {
				s.log.ErrorContext(ctx, "case event stream", "err", err)
			}
			return
		}
	}
}
