package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// openStore opens a fresh SQLite store, closed at cleanup.
func openStore(t testing.TB) *sqlstore.DB {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// serve starts the API over store; a nil log discards. Without options the
// intake limits are lifted, since every test client shares one address.
func serve(t testing.TB, store signoff.Store, log *slog.Logger, opts ...httpapi.Option) *httptest.Server {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(opts) == 0 {
		opts = []httpapi.Option{unlimited()}
	}
	srv := httptest.NewServer(httpapi.New(store, log, opts...))
	t.Cleanup(srv.Close)
	return srv
}

// unlimited lifts the intake limits.
func unlimited() httpapi.Option {
	return httpapi.WithIntakeLimits(httpapi.Limit{Rate: 1e6, Burst: 1e6}, httpapi.Limit{Rate: 1e6, Burst: 1e6})
}

// serveDesk starts the API over store, intake limits lifted, with a bug
// desk that has the store only: no repository, no sandbox, no agents. Its
// routes answer as far as the store alone takes them. More options (a
// change desk) may follow.
func serveDesk(t testing.TB, store *sqlstore.DB, more ...httpapi.Option) *httptest.Server {
	t.Helper()
	return serve(t, store, nil, append([]httpapi.Option{unlimited(), httpapi.WithDesk(&bugdesk.Desk{Store: store})}, more...)...)
}

// workspace is one tenant with its owner, a project and a bug, with a
// token for the owner.
type workspace struct {
	store      *sqlstore.DB
	ws         signoff.Workspace
	owner      signoff.Actor
	ownerToken string
	proj       signoff.Project
	bug        signoff.Case
}

func newWorkspace(t testing.TB, store *sqlstore.DB, name string) *workspace {
	t.Helper()
	ctx := context.Background()
	ws, owner, err := store.CreateWorkspace(ctx, name, "owner of "+name)
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	w := &workspace{store: store, ws: ws, owner: owner}
	w.ownerToken = w.token(t, owner)
	if w.proj, err = store.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"}); err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	w.bug = w.newCase(t, signoff.KindBug, "")
	return w
}

func (w *workspace) actor(t testing.TB, name string, role signoff.Role) signoff.Actor {
	t.Helper()
	a, err := w.store.CreateActor(context.Background(), w.owner, name, role)
	if err != nil {
		t.Fatalf("CreateActor(%s): %v", role, err)
	}
	return a
}

func (w *workspace) token(t testing.TB, a signoff.Actor) string {
	t.Helper()
	_, secret, err := w.store.CreateToken(context.Background(), w.owner, a.ID, "test", nil)
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	return secret
}

func (w *workspace) newCase(t testing.TB, kind signoff.CaseKind, reporter string) signoff.Case {
	t.Helper()
	c, err := w.store.CreateCase(context.Background(), w.owner, signoff.CaseInput{ProjectID: w.proj.ID, Kind: kind, Title: "coupon applied twice", ReporterID: reporter})
	if err != nil {
		t.Fatalf("CreateCase: %v", err)
	}
	return c
}

// move applies commands as the owner.
func (w *workspace) move(t *testing.T, c signoff.Case, commands ...string) {
	t.Helper()
	for _, cmd := range commands {
		if _, _, err := w.store.TransitionCase(context.Background(), w.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("TransitionCase(%s): %v", cmd, err)
		}
	}
}

// newTask opens a task on the workspace's bug for agent a, as the owner.
func (w *workspace) newTask(t testing.TB, a signoff.Actor) signoff.Task {
	t.Helper()
	tk, err := w.store.CreateTask(context.Background(), w.owner, signoff.TaskInput{
		CaseID: w.bug.ID, Kind: "step", Role: a.Role, AssigneeID: a.ID,
		Input: json.RawMessage(`{"question":"what broke?","nonce":"` + signoff.NewID(signoff.PrefixTask) + `"}`),
	})
	if err != nil {
		t.Fatalf("CreateTask for %s: %v", a.Role, err)
	}
	return tk
}

// recordedTask opens a task for agent a and records a's result on it.
func (w *workspace) recordedTask(t testing.TB, a signoff.Actor) signoff.Task {
	t.Helper()
	tk := w.newTask(t, a)
	tk, err := w.store.SubmitTask(context.Background(), a, signoff.Submission{
		TaskID: tk.ID, InputDigest: tk.InputDigest, Output: json.RawMessage(`{"answer":"the coupon"}`), Evidence: signoff.EvidenceLive,
	})
	if err != nil {
		t.Fatalf("SubmitTask: %v", err)
	}
	return tk
}

// newDecision asks, as the owner, for a decision on case c.
func (w *workspace) newDecision(t testing.TB, c signoff.Case) signoff.Decision {
	t.Helper()
	d, err := w.store.RequestDecision(context.Background(), w.owner, c.ID, "approval",
		json.RawMessage(`{"plan":"roll back flag checkout_v2","case":"`+c.ID+`"}`), time.Hour)
	if err != nil {
		t.Fatalf("RequestDecision: %v", err)
	}
	return d
}

func (w *workspace) head(t *testing.T) int64 {
	t.Helper()
	seq, err := w.store.HeadSeq(context.Background(), w.ws.ID)
	if err != nil {
		t.Fatalf("HeadSeq: %v", err)
	}
	return seq
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// request is one API call. An empty token sends no Authorization header; a
// non-empty body is sent as application/json unless contentType says
// otherwise ("-" sends none).
type request struct {
	method, path, token, contentType, body string
	header                                 map[string]string
}

func do(t *testing.T, srv *httptest.Server, rq request) response {
	t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequest(rq.method, srv.URL+rq.path, body)
	if err != nil {
		t.Fatalf("NewRequest %s %s: %v", rq.method, rq.path, err)
	}
	switch {
	case rq.contentType == "-":
	case rq.contentType != "":
		req.Header.Set("Content-Type", rq.contentType)
	case rq.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.token != "" {
		req.Header.Set("Authorization", "Bearer "+rq.token)
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", rq.method, rq.path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// problem decodes a problem response, failing unless it is one.
func (r response) problem(t *testing.T) httpapi.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (status %d, body %s)", ct, r.status, r.body)
	}
	var p httpapi.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Status != r.status {
		t.Fatalf("problem status = %d, want %d", p.Status, r.status)
	}
	if p.Type != "https://signoff.dev/problems/"+p.Code {
		t.Fatalf("problem type = %q, code %q", p.Type, p.Code)
	}
	if p.Title != http.StatusText(r.status) || p.RequestID == "" || p.Instance == "" {
		t.Fatalf("problem = %+v", p)
	}
	return p
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json (status %d, body %s)", ct, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
}

// unknownToken is shaped like a real token so that it reaches the lookup.
func unknownToken() string {
	return "so_" + strings.TrimPrefix(signoff.NewID(signoff.PrefixToken), signoff.PrefixToken+"_") + "_" + strings.Repeat("a", 32)
}
