package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
)

const testToken = "sot_secret-token-value"

// server answers every request with fn after recording it.
func server(t *testing.T, fn http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(fn)
	t.Cleanup(srv.Close)
	return srv
}

func TestProblemDecoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		ctype, body string
		wantCode    string
		wantMsg     string
		wantProblem Problem
	}{
		{"conflict with state", 409, "application/problem+json",
			`{"type":"https://signoff.dev/problems/conflict","title":"Conflict","status":409,"detail":"not approved","code":"conflict","instance":"/api/v1/cases/c1/merge","request_id":"r1","current_state":"verified"}`,
			signoff.ECONFLICT, "not approved (HTTP 409 Conflict, request r1); the case is verified",
			Problem{Status: 409, Type: "https://signoff.dev/problems/conflict", Title: "Conflict", Detail: "not approved", Code: "conflict", Instance: "/api/v1/cases/c1/merge", RequestID: "r1", CurrentState: "verified"}},
		{"gate check", 409, "application/problem+json",
			`{"status":409,"detail":"drifted","code":"conflict","check":"before_state","drifted":true}`,
			signoff.ECONFLICT, "drifted (HTTP 409 Conflict)",
			Problem{Status: 409, Detail: "drifted", Code: "conflict", Check: "before_state", Drifted: true}},
		{"not found", 404, "application/json", `{"detail":"no such case"}`,
			signoff.ENOTFOUND, "no such case (HTTP 404 Not Found)", Problem{Status: 404, Detail: "no such case"}},
		{"body status is not trusted", 403, "application/problem+json", `{"status":200,"detail":"no"}`,
			signoff.EFORBIDDEN, "no (HTTP 403 Forbidden)", Problem{Status: 403, Detail: "no"}},
		{"non-JSON body", 502, "text/html", `<html>bad gateway</html>`,
			signoff.EUNAVAILABLE, "the server refused the request (HTTP 502 Bad Gateway)", Problem{Status: 502}},
		{"broken problem", 422, "application/problem+json", `{"detail":`,
			signoff.EINVALID, "the server refused the request (HTTP 422 Unprocessable Entity)", Problem{Status: 422}},
		{"redirect", 302, "", ``,
			signoff.EUNAVAILABLE, "the server answered with a redirect, which is not followed: check --server (HTTP 302 Found)", Problem{Status: 302}},
		{"rate limited", 429, "application/problem+json", `{"detail":"slow down"}`,
			signoff.ERATELIMIT, "slow down (HTTP 429 Too Many Requests)", Problem{Status: 429, Detail: "slow down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.status == 302 {
					w.Header().Set("Location", "http://example.invalid/")
				}
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			c, err := New(srv.URL, testToken)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Merge(context.Background(), "c1")
			var p *Problem
			if !errors.As(err, &p) {
				t.Fatalf("err = %v (%T), want a *Problem", err, err)
			}
			if *p != tt.wantProblem {
				t.Errorf("problem = %+v, want %+v", *p, tt.wantProblem)
			}
			if got := p.Error(); got != tt.wantMsg {
				t.Errorf("Error() = %q, want %q", got, tt.wantMsg)
			}
			if got := signoff.ErrorCode(err); got != tt.wantCode {
				t.Errorf("code = %q, want %q", got, tt.wantCode)
			}
			if got := signoff.ErrorMessage(err); got != tt.wantMsg {
				t.Errorf("message = %q, want %q", got, tt.wantMsg)
			}
			if got := signoff.ErrorState(err); got != tt.wantProblem.CurrentState {
				t.Errorf("state = %q, want %q", got, tt.wantProblem.CurrentState)
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(signoff.ErrorMessage(err), testToken) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestTokenSentAndNeverInErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, token, wantAuth string
	}{
		{"token", testToken, "Bearer " + testToken},
		{"token with spaces around", "  " + testToken + "\n", "Bearer " + testToken},
		{"public call, no token", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var gotAuth, gotHeader string
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				gotAuth, gotHeader = r.Header.Get("Authorization"), r.Header.Get("X-Extra")
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"id":"a1"}`))
			})
			c, err := New(srv.URL, tt.token, WithHeader("X-Extra", "yes"))
			if err != nil {
				t.Fatal(err)
			}
			me, err := c.Me(context.Background())
			if err != nil || me.ID != "a1" {
				t.Fatalf("Me = %+v, %v", me, err)
			}
			if gotAuth != tt.wantAuth || gotHeader != "yes" {
				t.Errorf("Authorization %q, X-Extra %q; want %q, yes", gotAuth, gotHeader, tt.wantAuth)
			}
		})
	}

	// An unreachable server and an undecodable answer do not show it either.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	garbled := server(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("not json")) })
	for _, base := range []string{dead.URL, garbled.URL} {
		c, err := New(base, testToken)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Me(context.Background())
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		if signoff.ErrorCode(err) != signoff.EUNAVAILABLE {
			t.Errorf("%s: code %q, want unavailable", base, signoff.ErrorCode(err))
		}
		if strings.Contains(err.Error(), testToken) || strings.Contains(signoff.ErrorMessage(err), testToken) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

func TestURLJoining(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, wantPath string
	}{
		{"bare host", "", "/api/v1/cases/c%2F1"},
		{"trailing slash", "/", "/api/v1/cases/c%2F1"},
		{"prefix", "/signoff", "/signoff/api/v1/cases/c%2F1"},
		{"prefix with trailing slash", "/signoff/", "/signoff/api/v1/cases/c%2F1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				got = r.URL.EscapedPath()
				w.Write([]byte(`{"id":"c/1"}`))
			})
			c, err := New(srv.URL+tt.base, testToken)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Case(context.Background(), "c/1"); err != nil {
				t.Fatal(err)
			}
			if got != tt.wantPath {
				t.Errorf("path %q, want %q", got, tt.wantPath)
			}
			if strings.HasSuffix(c.BaseURL(), "/") {
				t.Errorf("BaseURL %q ends with a slash", c.BaseURL())
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, token, wantCode string
	}{
		{"no scheme", "127.0.0.1:8080", testToken, signoff.EINVALID},
		{"ftp", "ftp://example.com", testToken, signoff.EINVALID},
		{"credentials", "http://u:p@example.com", testToken, signoff.EINVALID},
		{"query", "http://example.com/?a=b", testToken, signoff.EINVALID},
		{"token with a space", "http://example.com", "a b", signoff.EINVALID},
		{"token with a control character", "http://example.com", "a\x7fb", signoff.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.base, tt.token)
			if got := signoff.ErrorCode(err); got != tt.wantCode {
				t.Errorf("code %q (%v), want %q", got, err, tt.wantCode)
			}
			if tt.token != testToken && strings.Contains(signoff.ErrorMessage(err), tt.token) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name, flagURL, flagToken string
		env                      map[string]string
		wantBase, wantCode       string
	}{
		{"defaults", "", "", map[string]string{EnvToken: "t"}, DefaultURL, ""},
		{"env URL", "", "", map[string]string{EnvURL: "https://s.example/", EnvToken: "t"}, "https://s.example", ""},
		{"flag URL over env", "http://flag.example", "", map[string]string{EnvURL: "https://s.example", EnvToken: "t"}, "http://flag.example", ""},
		{"flag token over env", "", "f", map[string]string{EnvToken: "a b"}, DefaultURL, ""},
		{"no token", "", "", map[string]string{EnvURL: "https://s.example"}, "", signoff.EUNAUTHORIZED},
		{"blank token", "", "  ", nil, "", signoff.EUNAUTHORIZED},
		{"token checked before URL", "not a url", "", nil, "", signoff.EUNAUTHORIZED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := FromEnv(env(tt.env), tt.flagURL, tt.flagToken)
			if got := signoff.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, tt.wantCode)
			}
			if err == nil && c.BaseURL() != tt.wantBase {
				t.Errorf("base %q, want %q", c.BaseURL(), tt.wantBase)
			}
		})
	}
}

func TestContextCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c, err := New(srv.URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Case(ctx, "c1"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDoBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       any
		wantBody string
		wantType string
	}{
		{"nil", nil, "", ""},
		{"raw bytes", []byte(`{"a":1}`), `{"a":1}`, "application/json"},
		{"value", map[string]string{"patch": "x"}, `{"patch":"x"}`, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body, ctype string
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				b := new(strings.Builder)
				_, _ = io.Copy(b, r.Body)
				body, ctype = b.String(), r.Header.Get("Content-Type")
				w.Write([]byte(`{"ok":true}`))
			})
			c, err := New(srv.URL, testToken)
			if err != nil {
				t.Fatal(err)
			}
			var raw []byte
			if err := c.Do(context.Background(), http.MethodPost, Path("x"), tt.in, &raw); err != nil {
				t.Fatal(err)
			}
			if body != tt.wantBody || ctype != tt.wantType || string(raw) != `{"ok":true}` {
				t.Errorf("sent %q (%q), got %q", body, ctype, raw)
			}
		})
	}
}
