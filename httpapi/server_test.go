package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
)

func TestUnroutedRequests(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	tests := []struct {
		name, method, path string
		want               int
		allow              string
	}{
		{"unknown API route", "GET", "/api/v1/nope", 404, ""},
		{"root", "GET", "/", 404, ""},
		{"other API version", "GET", "/api/v2/cases", 404, ""},
		{"too deep", "GET", "/api/v1/cases/" + w.bug.ID + "/events/1", 404, ""},
		{"PUT on a collection", "PUT", "/api/v1/projects", 405, "GET, HEAD, POST"},
		{"DELETE a case", "DELETE", "/api/v1/cases/" + w.bug.ID, 405, "GET, HEAD"},
		{"POST to health", "POST", "/healthz", 405, "GET, HEAD"},
		{"PATCH a token", "PATCH", "/api/v1/tokens/" + signoff.NewID(signoff.PrefixToken), 405, "DELETE"},
		{"GET transitions", "GET", "/api/v1/cases/" + w.bug.ID + "/transitions", 405, "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// With and without a credential: routing comes before it.
			for _, tok := range []string{"", w.ownerToken} {
				got := do(t, srv, request{method: tt.method, path: tt.path, token: tok})
				if got.status != tt.want {
					t.Fatalf("status = %d, want %d (%s)", got.status, tt.want, got.body)
				}
				p := got.problem(t)
				wantCode := signoff.ENOTFOUND
				if tt.want == 405 {
					wantCode = "method_not_allowed"
				}
				if p.Code != wantCode {
					t.Fatalf("code = %q, want %q", p.Code, wantCode)
				}
				if allow := got.header.Get("Allow"); allow != tt.allow {
					t.Fatalf("Allow = %q, want %q", allow, tt.allow)
				}
			}
		})
	}
}

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLogKeepsSecrets runs good and bad requests carrying secrets in every
// place a client might put them and checks the log never shows one.
func TestLogKeepsSecrets(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	op := w.actor(t, "olga", signoff.RoleOperator)
	opToken := w.token(t, op)
	var logs syncBuffer
	srv := serve(t, store, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))

	last := byte('a')
	if opToken[len(opToken)-1] == 'a' {
		last = 'b'
	}
	tampered := opToken[:len(opToken)-1] + string(last)
	secrets := []string{w.ownerToken, opToken, tampered}

	reqs := []request{
		{method: "GET", path: "/api/v1/me", token: w.ownerToken},
		{method: "GET", path: "/api/v1/me", token: tampered},
		{method: "GET", path: "/api/v1/me", token: opToken + "x"},
		{method: "GET", path: "/api/v1/actors", token: opToken},
		{method: "GET", path: "/api/v1/me", header: map[string]string{"Authorization": "Basic " + opToken}},
		{method: "GET", path: "/api/v1/me", token: w.ownerToken, header: map[string]string{"X-Request-Id": opToken}},
		{method: "POST", path: "/api/v1/projects", token: w.ownerToken, body: `{"name":"` + opToken + `","extra":1}`},
		{method: "POST", path: "/api/v1/projects", token: tampered, body: `{"name":"` + opToken + `"}`},
		{method: "GET", path: "/api/v1/cases?cursor=" + opToken, token: w.ownerToken},
		{method: "GET", path: "/api/v1/" + opToken, token: w.ownerToken},
		{method: "DELETE", path: "/api/v1/me", token: opToken},
	}
	for _, rq := range reqs {
		do(t, srv, rq)
	}
	// A token minted through the API: its secret is in the response only.
	got := do(t, srv, request{method: "POST", path: "/api/v1/actors/" + op.ID + "/tokens", token: w.ownerToken, body: `{"label":"ci"}`})
	var created struct{ Secret string }
	got.decode(t, &created)
	secrets = append(secrets, created.Secret)
	do(t, srv, request{method: "GET", path: "/api/v1/me", token: created.Secret})

	srv.Close() // waits for every handler, so every line is written
	out := logs.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Fatalf("log contains a secret:\n%s", out)
		}
	}
	for _, bad := range []string{"Bearer", "Authorization", "so_"} {
		if strings.Contains(out, bad) {
			t.Fatalf("log contains %q:\n%s", bad, out)
		}
	}
	// The log still says what happened, one line per request.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(reqs)+2 {
		t.Fatalf("%d log lines for %d requests:\n%s", len(lines), len(reqs)+2, out)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first["msg"] != "http request" || first["method"] != "GET" || first["route"] != "GET /api/v1/me" ||
		first["status"] != float64(200) || first["actor_id"] != w.owner.ID || first["request_id"] == "" || first["duration"] == nil {
		t.Fatalf("access log line = %v", first)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	srv := serve(t, openStore(t), nil)
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		given string
		keep  bool
	}{
		{"", false},
		{"req-42.a", true},
		{"0d7c1e8a-6f0e-4b4c-9d1e-3a1b2c3d4e5f", true},
		{"has space", false},
		{"so_underscores_look_like_tokens", false},
		{strings.Repeat("a", 65), false},
		{"<script>", false},
	}
	for _, tt := range tests {
		got := do(t, srv, request{method: "GET", path: "/api/v1/me", header: map[string]string{"X-Request-Id": tt.given}})
		id := got.header.Get("X-Request-Id")
		if tt.keep && id != tt.given {
			t.Fatalf("X-Request-Id %q came back as %q", tt.given, id)
		}
		if !tt.keep && !generated.MatchString(id) {
			t.Fatalf("X-Request-Id %q came back as %q, want a generated id", tt.given, id)
		}
		if p := got.problem(t); p.RequestID != id {
			t.Fatalf("problem request_id = %q, header %q", p.RequestID, id)
		}
	}
}

// fakeStore answers Authenticate with an owner and otherwise calls through
// to its embedded store, which is nil unless set: a call to it panics.
type fakeStore struct {
	signoff.Store
	ready        error
	getWorkspace func() (signoff.Workspace, error)
}

func (f *fakeStore) Authenticate(context.Context, string) (signoff.Actor, error) {
	return signoff.Actor{ID: signoff.NewID(signoff.PrefixActor), WorkspaceID: signoff.NewID(signoff.PrefixWorkspace), Role: signoff.RoleOwner}, nil
}

func (f *fakeStore) Ready(context.Context) error { return f.ready }

func (f *fakeStore) GetWorkspace(ctx context.Context, id string) (signoff.Workspace, error) {
	if f.getWorkspace == nil {
		return f.Store.GetWorkspace(ctx, id) // panics: nil Store
	}
	return f.getWorkspace()
}

func TestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		store   *fakeStore
		path    string
		want    int
		code    string
		detail  string
		logged  string
		private string // must not reach the client
	}{
		{"panic", &fakeStore{}, "/api/v1/workspace", 500, signoff.EINTERNAL, "internal error", "panic serving request", "nil pointer"},
		{"internal error", &fakeStore{getWorkspace: func() (signoff.Workspace, error) {
			return signoff.Workspace{}, errors.New("disk on fire at /var/lib/signoff")
		}}, "/api/v1/workspace", 500, signoff.EINTERNAL, "internal error", "disk on fire", "disk on fire"},
		{"timeout", &fakeStore{getWorkspace: func() (signoff.Workspace, error) {
			return signoff.Workspace{}, context.DeadlineExceeded
		}}, "/api/v1/workspace", 500, signoff.EINTERNAL, "internal error", "deadline", "deadline"},
		{"not ready", &fakeStore{ready: signoff.Errorf(signoff.EUNAVAILABLE, "migrations pending")}, "/readyz", 503, signoff.EUNAVAILABLE, "migrations pending", "", ""},
		{"ready check broken", &fakeStore{ready: errors.New("socket closed")}, "/readyz", 503, signoff.EUNAVAILABLE, "not ready", "socket closed", "socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			srv := serve(t, tt.store, slog.New(slog.NewJSONHandler(&logs, nil)))
			got := do(t, srv, request{method: "GET", path: tt.path, token: unknownToken()})
			if got.status != tt.want {
				t.Fatalf("status = %d, want %d (%s)", got.status, tt.want, got.body)
			}
			p := got.problem(t)
			if p.Code != tt.code || p.Detail != tt.detail {
				t.Fatalf("problem = %+v", p)
			}
			if tt.private != "" && strings.Contains(string(got.body), tt.private) {
				t.Fatalf("response leaks %q: %s", tt.private, got.body)
			}
			srv.Close()
			if !strings.Contains(logs.String(), tt.logged) {
				t.Fatalf("log lacks %q:\n%s", tt.logged, logs.String())
			}
		})
	}
}

func TestNewServer(t *testing.T) {
	t.Parallel()
	h := http.NotFoundHandler()
	s := httpapi.NewServer("127.0.0.1:0", h)
	if s.Addr != "127.0.0.1:0" || s.ReadHeaderTimeout != 10*time.Second || s.ReadTimeout != 30*time.Second ||
		s.WriteTimeout != 60*time.Second || s.IdleTimeout != 120*time.Second || s.MaxHeaderBytes != 64<<10 {
		t.Fatalf("server = %+v", s)
	}
}
