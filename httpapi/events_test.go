package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/sqlstore"
)

// sseFrame is one event of a stream, or one comment line.
type sseFrame struct {
	id, event, data, comment string
}

// sseData is the data line of an event.
type sseData struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	CaseID  string          `json:"case_id"`
	ActorID string          `json:"actor_id"`
	Time    time.Time       `json:"time"`
	Hash    string          `json:"hash"`
	Payload json.RawMessage `json:"payload"`
}

// eventStream is an open GET /api/v1/events read by a goroutine.
type eventStream struct {
	resp   *http.Response
	frames chan sseFrame // closed at the end of the stream
	cancel context.CancelFunc
}

// openEvents opens the stream (rawQuery starts with "?" or is empty) and
// fails unless it answers 200 as an event stream.
func openEvents(t *testing.T, srv *httptest.Server, token, rawQuery string, header map[string]string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/events"+rawQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /api/v1/events%s: %v", rawQuery, err)
	}
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("GET /api/v1/events%s: status %d (%s)", rawQuery, resp.StatusCode, b.String())
	}
	st := &eventStream{resp: resp, frames: make(chan sseFrame), cancel: cancel}
	t.Cleanup(st.close)
	go func() {
		defer close(st.frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		emit := func(f sseFrame) bool {
			select {
			case st.frames <- f:
				return true
			case <-ctx.Done():
				return false
			}
		}
		var f sseFrame
		has := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if has && !emit(f) {
					return
				}
				f, has = sseFrame{}, false
			case strings.HasPrefix(line, ":"):
				if !emit(sseFrame{comment: strings.TrimSpace(line[1:])}) {
					return
				}
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					f.id = v
				case "event":
					f.event = v
				case "data":
					f.data = v
				default:
					t.Errorf("unexpected field line %q", line)
				}
				has = true
			}
		}
	}()
	return st
}

func (st *eventStream) close() {
	st.cancel()
	st.resp.Body.Close()
}

// next returns the next event, skipping comments; ok is false at the end
// of the stream. It fails after d without one.
func (st *eventStream) next(t *testing.T, d time.Duration) (sseData, bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case f, ok := <-st.frames:
			if !ok {
				return sseData{}, false
			}
			if f.comment != "" {
				continue
			}
			var e sseData
			if err := json.Unmarshal([]byte(f.data), &e); err != nil {
				t.Fatalf("data %q: %v", f.data, err)
			}
			if f.id != strconv.FormatInt(e.Seq, 10) || f.event != e.Type {
				t.Fatalf("frame id %q event %q, data says seq %d type %q", f.id, f.event, e.Seq, e.Type)
			}
			return e, true
		case <-timeout:
			t.Fatalf("no event within %v", d)
		}
	}
}

// take reads n events.
func (st *eventStream) take(t *testing.T, n int) []sseData {
	t.Helper()
	out := make([]sseData, 0, n)
	for len(out) < n {
		e, ok := st.next(t, 10*time.Second)
		if !ok {
			t.Fatalf("stream ended after %d of %d events", len(out), n)
		}
		out = append(out, e)
	}
	return out
}

// quiet fails if an event arrives within d.
func (st *eventStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case f, ok := <-st.frames:
			if !ok {
				return
			}
			if f.comment == "" {
				t.Fatalf("unexpected event: id %s %s %s", f.id, f.event, f.data)
			}
		case <-timeout:
			return
		}
	}
}

// ended waits for the server to end the stream, failing after d.
func (st *eventStream) ended(t *testing.T, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case _, ok := <-st.frames:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("stream still open after %v", d)
		}
	}
}

// once reads a ?once=1 answer through do: all its events.
func onceEvents(t *testing.T, srv *httptest.Server, token, rawQuery string) []sseData {
	t.Helper()
	got := do(t, srv, request{method: "GET", path: "/api/v1/events" + rawQuery, token: token})
	if got.status != http.StatusOK {
		t.Fatalf("status %d (%s)", got.status, got.body)
	}
	if ct := got.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	var out []sseData
	for _, block := range strings.Split(string(got.body), "\n\n") {
		var f sseFrame
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "id":
				f.id = v
			case "event":
				f.event = v
			case "data":
				f.data = v
			}
		}
		if f.data == "" {
			continue
		}
		var e sseData
		if err := json.Unmarshal([]byte(f.data), &e); err != nil {
			t.Fatalf("data %q: %v", f.data, err)
		}
		if f.id != strconv.FormatInt(e.Seq, 10) || f.event != e.Type {
			t.Fatalf("frame id %q event %q, data %+v", f.id, f.event, e)
		}
		out = append(out, e)
	}
	return out
}

// ledger reads every event of w's workspace straight from the store, and
// checks the sequence is whole.
func ledger(t *testing.T, w *workspace) []signoff.Event {
	t.Helper()
	var all []signoff.Event
	for {
		evs, err := w.store.StreamEvents(context.Background(), w.owner, int64(len(all)), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		all = append(all, evs...)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.WorkspaceID != w.ws.ID {
			t.Fatalf("event %d: seq %d of %s", i, e.Seq, e.WorkspaceID)
		}
	}
	if head := w.head(t); int64(len(all)) != head {
		t.Fatalf("%d events, head %d", len(all), head)
	}
	return all
}

// sameEvents fails unless got is exactly want, in order.
func sameEvents(t *testing.T, got []sseData, want []signoff.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i, g := range got {
		e := want[i]
		if g.Seq != e.Seq || g.Type != e.Type || g.CaseID != e.CaseID || g.ActorID != e.ActorID || g.Hash != e.Hash ||
			!g.Time.Equal(e.Time) || !bytes.Equal(g.Payload, e.Payload) {
			t.Fatalf("event %d = %+v, want %+v", i, g, e)
		}
	}
}

// appendEvents adds n events of type typ on caseID (empty: none).
func appendEvents(t *testing.T, w *workspace, caseID, typ string, n int) []signoff.Event {
	t.Helper()
	in := make([]sqlstore.EventInput, n)
	for i := range in {
		in[i] = sqlstore.EventInput{CaseID: caseID, Type: typ, ActorID: w.owner.ID, Payload: map[string]any{"n": i, "detail": "internal " + typ}}
	}
	evs, err := w.store.Append(context.Background(), w.ws.ID, in...)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func fastEvents() httpapi.Option { return httpapi.WithEventPoll(10 * time.Millisecond) }

// TestEventStreamLive: the owner's stream starts at the head and delivers
// what is appended after it connected, in order, with ids; a reconnect with
// Last-Event-ID gets exactly what was missed.
func TestEventStreamLive(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, unlimited(), fastEvents())
	head := w.head(t)

	st := openEvents(t, srv, w.ownerToken, "", nil)
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := st.resp.Header.Get(k); got != v {
			t.Fatalf("%s = %q, want %q", k, got, v)
		}
	}
	st.quiet(t, 100*time.Millisecond) // the past is not replayed
	w.move(t, w.bug, "start_triage", "request_info")
	appendEvents(t, w, "", "workspace.noted", 3)
	got := st.take(t, 5)
	all := ledger(t, w)
	sameEvents(t, got, all[head:])
	if got[0].Type != "case.transitioned" || got[0].CaseID != w.bug.ID || got[4].Type != "workspace.noted" {
		t.Fatalf("events = %+v", got)
	}
	st.close()

	// Missed while away: a reconnect with the last id gets exactly those.
	last := got[len(got)-1].Seq
	w.move(t, w.bug, "provide_info")
	appendEvents(t, w, w.bug.ID, "evidence.noted", 4)
	st = openEvents(t, srv, w.ownerToken, "", map[string]string{"Last-Event-ID": strconv.FormatInt(last, 10)})
	got = st.take(t, 5)
	all = ledger(t, w)
	sameEvents(t, got, all[last:])
	st.quiet(t, 100*time.Millisecond)
	// And it goes on live.
	appendEvents(t, w, "", "workspace.noted", 1)
	sameEvents(t, st.take(t, 1), ledger(t, w)[len(all):])

	// ?after is the same for scripts; Last-Event-ID wins over it, as when
	// a browser reconnects to a URL with ?after.
	sameEvents(t, onceEvents(t, srv, w.ownerToken, "?once=1&after="+strconv.FormatInt(last, 10)), ledger(t, w)[last:])
	st2 := openEvents(t, srv, w.ownerToken, "?after=0", map[string]string{"Last-Event-ID": strconv.FormatInt(last+2, 10)})
	sameEvents(t, st2.take(t, 2), ledger(t, w)[last+2:last+4])
	// after=0 replays the whole ledger.
	sameEvents(t, onceEvents(t, srv, w.ownerToken, "?after=0&once=1"), ledger(t, w))
	// once without a resume point starts at the head: nothing.
	if got := onceEvents(t, srv, w.ownerToken, "?once=1"); len(got) != 0 {
		t.Fatalf("once at the head = %+v", got)
	}
}

// TestEventStreamBatches: a backlog larger than one batch arrives whole and
// in order; ?once=1 answers one batch of at most 1000.
func TestEventStreamBatches(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, unlimited(), fastEvents())
	appendEvents(t, w, w.bug.ID, "bulk.noted", 2300)
	all := ledger(t, w)
	sameEvents(t, onceEvents(t, srv, w.ownerToken, "?after=0&once=1"), all[:1000])
	st := openEvents(t, srv, w.ownerToken, "?after=0", nil)
	sameEvents(t, st.take(t, len(all)), all)
	st.quiet(t, 100*time.Millisecond)
}

// TestEventStreamReporter: a reporter sees only case.created,
// case.transitioned and reporter.* events of their own case.
func TestEventStreamReporter(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	rep := w.actor(t, "rita", signoff.RoleReporter)
	repToken := w.token(t, rep)
	own := w.newCase(t, signoff.KindBug, rep.ID)
	other := w.newCase(t, signoff.KindBug, w.actor(t, "rob", signoff.RoleReporter).ID)
	w.move(t, own, "start_triage", "request_info")
	w.move(t, other, "start_triage")
	appendEvents(t, w, own.ID, "reporter.noted", 2)
	appendEvents(t, w, own.ID, "desk.noted", 2) // internal detail on their own case
	appendEvents(t, w, other.ID, "reporter.noted", 2)
	appendEvents(t, w, "", "workspace.noted", 1)
	fixer := w.actor(t, "fixer", signoff.RoleFixer)
	if _, err := store.CreateTask(context.Background(), w.owner, signoff.TaskInput{CaseID: own.ID, Kind: "step", Role: fixer.Role,
		AssigneeID: fixer.ID, Input: json.RawMessage(`{"secret":"internal"}`)}); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, store, nil, unlimited(), fastEvents())

	allowed := func(evs []signoff.Event) []signoff.Event {
		var out []signoff.Event
		for _, e := range evs {
			if e.CaseID == own.ID && (e.Type == "case.created" || e.Type == "case.transitioned" || strings.HasPrefix(e.Type, "reporter.")) {
				e.Payload = reporterView(t, e.Payload)
				out = append(out, e)
			}
		}
		return out
	}
	all := ledger(t, w)
	want := allowed(all)
	if len(want) != 5 { // created, two transitions, two reporter.noted
		t.Fatalf("fixture: %d allowed events", len(want))
	}
	got := onceEvents(t, srv, repToken, "?after=0&once=1")
	sameEvents(t, got, want)

	// Live: only the allowed ones come through.
	st := openEvents(t, srv, repToken, "", nil)
	w.move(t, other, "request_info")
	appendEvents(t, w, own.ID, "desk.noted", 1)
	appendEvents(t, w, other.ID, "reporter.noted", 1)
	w.move(t, own, "provide_info")
	appendEvents(t, w, own.ID, "reporter.answered", 1)
	later := allowed(ledger(t, w)[len(all):])
	if len(later) != 2 {
		t.Fatalf("fixture: %d later allowed events", len(later))
	}
	sameEvents(t, st.take(t, 2), later)
	st.quiet(t, 100*time.Millisecond)
}

// TestEventStreamAgent: an agent sees the events of the cases it has a
// task on, and nothing else.
func TestEventStreamAgent(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	fixer := w.actor(t, "fixer", signoff.RoleFixer)
	fixerToken := w.token(t, fixer)
	idle := w.actor(t, "reviewer", signoff.RoleReviewer)
	idleToken := w.token(t, idle)
	other := w.newCase(t, signoff.KindBug, "")
	w.move(t, other, "start_triage")
	w.move(t, w.bug, "start_triage")
	srv := serve(t, store, nil, unlimited(), fastEvents())

	if got := onceEvents(t, srv, fixerToken, "?after=0&once=1"); len(got) != 0 {
		t.Fatalf("an agent without tasks sees %+v", got)
	}
	w.newTask(t, fixer) // on w.bug
	appendEvents(t, w, other.ID, "desk.noted", 2)
	appendEvents(t, w, "", "workspace.noted", 1)
	var want []signoff.Event
	for _, e := range ledger(t, w) {
		if e.CaseID == w.bug.ID {
			want = append(want, e)
		}
	}
	sameEvents(t, onceEvents(t, srv, fixerToken, "?after=0&once=1"), want)
	if got := onceEvents(t, srv, idleToken, "?after=0&once=1"); len(got) != 0 {
		t.Fatalf("another agent sees %+v", got)
	}
}

// TestEventStreamWorkspaces: another workspace's events never appear.
func TestEventStreamWorkspaces(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	a := newWorkspace(t, store, "Acme")
	b := newWorkspace(t, store, "Globex")
	srv := serve(t, store, nil, unlimited(), fastEvents())
	appendEvents(t, b, b.bug.ID, "desk.noted", 3)
	sameEvents(t, onceEvents(t, srv, a.ownerToken, "?after=0&once=1"), ledger(t, a))
	sameEvents(t, onceEvents(t, srv, b.ownerToken, "?after=0&once=1"), ledger(t, b))

	st := openEvents(t, srv, a.ownerToken, "", nil)
	before := len(ledger(t, a))
	appendEvents(t, b, b.bug.ID, "desk.noted", 5)
	b.move(t, b.bug, "start_triage")
	appendEvents(t, a, a.bug.ID, "desk.noted", 1)
	got := st.take(t, 1)
	sameEvents(t, got, ledger(t, a)[before:])
	st.quiet(t, 100*time.Millisecond)
}

// TestEventStreamRefusals: a bad resume point or query is a 422 problem
// before the stream starts; no credential is 401.
func TestEventStreamRefusals(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, unlimited(), fastEvents())
	for _, tt := range []struct {
		name, query, lastID string
	}{
		// Each carries once=1 where it can, so that a wrong 200 ends.
		{"letters", "?once=1", "abc"},
		{"negative", "?once=1", "-1"},
		{"fraction", "?once=1", "1.5"},
		{"too large", "?once=1", "99999999999999999999"},
		{"bad header wins over good query", "?after=1&once=1", "x"},
		{"negative after", "?after=-3&once=1", ""},
		{"letters after", "?after=seven&once=1", ""},
		{"empty after", "?after=&once=1", ""},
		{"bad once", "?once=maybe", ""},
		{"unknown parameter", "?from=0&once=1", ""},
		{"repeated after", "?after=1&after=2&once=1", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rq := request{method: "GET", path: "/api/v1/events" + tt.query, token: w.ownerToken}
			if tt.lastID != "" {
				rq.header = map[string]string{"Last-Event-ID": tt.lastID}
			}
			got := do(t, srv, rq)
			if got.status != http.StatusUnprocessableEntity {
				t.Fatalf("status = %d, want 422 (%s)", got.status, got.body)
			}
			if p := got.problem(t); p.Code != signoff.EINVALID {
				t.Fatalf("problem = %+v", p)
			}
		})
	}
	// HEAD answers the headers and ends.
	if got := do(t, srv, request{method: "HEAD", path: "/api/v1/events", token: w.ownerToken}); got.status != http.StatusOK ||
		got.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HEAD: status = %d, headers %v", got.status, got.header)
	}
	got := do(t, srv, request{method: "GET", path: "/api/v1/events?once=1"})
	if got.status != http.StatusUnauthorized || got.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("no credential: status = %d (%s)", got.status, got.body)
	}
	got.problem(t)
	if got := do(t, srv, request{method: "GET", path: "/api/v1/events?once=1", token: unknownToken()}); got.status != http.StatusUnauthorized {
		t.Fatalf("unknown token: status = %d", got.status)
	}
}

// TestEventStreamOutlivesTimeouts: the server's read and write timeouts
// do not cut a stream; keepalives flow while it is idle, and it ends by
// itself after its maximum age.
func TestEventStreamOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := httptest.NewUnstartedServer(httpapi.New(store, nil, unlimited(),
		httpapi.WithEventStream(httpapi.EventStream{Poll: 10 * time.Millisecond, Keepalive: 50 * time.Millisecond, MaxAge: 3 * time.Second})))
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)

	start := time.Now()
	st := openEvents(t, srv, w.ownerToken, "", nil)
	keepalives := 0
	for time.Since(start) < 800*time.Millisecond {
		select {
		case f, ok := <-st.frames:
			if !ok {
				t.Fatalf("stream ended after %v", time.Since(start))
			}
			if f.comment == "keepalive" {
				keepalives++
			}
		case <-time.After(time.Second):
			t.Fatal("no keepalive")
		}
	}
	if keepalives < 3 {
		t.Fatalf("%d keepalives in 800 ms", keepalives)
	}
	head := w.head(t)
	appendEvents(t, w, "", "workspace.noted", 1)
	sameEvents(t, st.take(t, 1), ledger(t, w)[head:])
	st.ended(t, 5*time.Second)
	if d := time.Since(start); d < 3*time.Second {
		t.Fatalf("stream ended after %v, before its maximum age", d)
	}
}

// TestEventStreamShutdown: shutting the server down ends the stream, so
// Shutdown does not wait for it.
func TestEventStreamShutdown(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := httptest.NewUnstartedServer(httpapi.New(store, nil, unlimited(), fastEvents()))
	srv.Start()
	t.Cleanup(srv.Close)
	st := openEvents(t, srv, w.ownerToken, "", nil)
	st.quiet(t, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v after %v", err, time.Since(start))
	}
	st.ended(t, time.Second)
}

// TestEventStreamRevoked: a stream whose token is revoked ends at the next
// check of the credential.
func TestEventStreamRevoked(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	op := w.actor(t, "olga", signoff.RoleOperator)
	tok, secret, err := store.CreateToken(context.Background(), w.owner, op.ID, "ui", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, store, nil, unlimited(), httpapi.WithEventStream(httpapi.EventStream{Poll: 10 * time.Millisecond, Recheck: 50 * time.Millisecond}))
	st := openEvents(t, srv, secret, "", nil)
	head := w.head(t)
	appendEvents(t, w, "", "workspace.noted", 1)
	sameEvents(t, st.take(t, 1), ledger(t, w)[head:])
	if _, err := store.RevokeToken(context.Background(), w.owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	st.ended(t, 2*time.Second)
}

// reporterView is what a reporter's stream shows of a payload: where the
// case went, never notes or internal detail, marked as redacted.
func reporterView(t *testing.T, p json.RawMessage) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p, &m); err != nil {
		t.Fatal(err)
	}
	keep := map[string]json.RawMessage{"redacted": json.RawMessage("true")}
	for _, k := range []string{"command", "from", "to", "version", "kind", "state", "question", "question_digest", "answer"} {
		if v, ok := m[k]; ok {
			keep[k] = v
		}
	}
	b, err := json.Marshal(keep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEventStreamCap: one actor holds at most a few live streams; a
// batch (once) does not count, and a closed stream frees its place.
func TestEventStreamCap(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	tok := w.token(t, w.owner)
	srv := serve(t, store, nil, unlimited(), fastEvents())
	var streams []*eventStream
	for range 8 {
		streams = append(streams, openEvents(t, srv, tok, "", nil))
	}
	got := do(t, srv, request{method: "GET", path: "/api/v1/events", token: tok})
	if got.status != http.StatusTooManyRequests {
		t.Fatalf("ninth stream: status %d (%s)", got.status, got.body)
	}
	onceEvents(t, srv, tok, "?after=0&once=1")
	streams[0].close()
	// status opens a live stream and reports its status, then lets go.
	status := func() int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(5 * time.Second)
	for status() != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream did not free its place")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
