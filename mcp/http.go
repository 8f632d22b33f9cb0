package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
)

// problemBase prefixes every problem type, as in the HTTP API.
const problemBase = "https://signoff.dev/problems/"

// Problem is the RFC 9457 body of a request refused before MCP starts
// (authentication and role), shaped like the HTTP API's.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Code     string `json:"code"`
	Instance string `json:"instance,omitempty"`
}

type serverKey struct{}

// Handler serves MCP over streamable HTTP, stateless: every POST carries
// its own credential and is served by a server built for that request, so
// any number of instances can stand behind a load balancer. Each request
// must carry "Authorization: Bearer <token>" of an agent: no or a bad
// credential is 401 (with WWW-Authenticate: Bearer), a person's credential
// 403, both as application/problem+json. Tokens are never logged.
func Handler(st signoff.Store, o Options) http.Handler {
	o = o.withDefaults()
	sh := newShared()
	servers := &serverCache{m: map[serverKeyOf]*sdk.Server{}}
	inner := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		srv, _ := r.Context().Value(serverKey{}).(*sdk.Server)
		return srv
	}, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       o.Log,
		// A client that hangs up ends its call (a decision long-poll
		// included) instead of leaving it to run out.
		PropagateRequestCancellation: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		by, err := authenticate(r.Context(), st, r.Header.Get("Authorization"))
		if err == nil {
			err = checkAgent(by)
		}
		if err != nil {
			fail(w, r, o, err)
			return
		}
		srv, err := servers.get(by, func() (*sdk.Server, error) { return newServer(st, by, o, sh) })
		if err != nil {
			fail(w, r, o, err)
			return
		}
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
	})
}

// maxCachedServers bounds the server cache; past it the cache starts over.
const maxCachedServers = 4096

// serverCache keeps the server built for each identity: a server is bound
// to its actor and never changes, and building one (tool schemas) costs
// more than the rest of a small call. Each request still authenticates;
// the cache only skips the rebuild.
type serverCache struct {
	mu sync.Mutex
	m  map[serverKeyOf]*sdk.Server
}

// serverKeyOf is what a server depends on of its actor.
type serverKeyOf struct {
	id, workspace, name string
	role                signoff.Role
}

func (c *serverCache) get(by signoff.Actor, build func() (*sdk.Server, error)) (*sdk.Server, error) {
	key := serverKeyOf{id: by.ID, workspace: by.WorkspaceID, name: by.Name, role: by.Role}
	c.mu.Lock()
	srv, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return srv, nil
	}
	srv, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedServers {
		clear(c.m)
	}
	c.m[key] = srv
	return srv, nil
}

// authenticate resolves an Authorization header to its actor.
func authenticate(ctx context.Context, st signoff.Store, header string) (signoff.Actor, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return signoff.Actor{}, signoff.Errorf(signoff.EUNAUTHORIZED, "an agent token is required: Authorization: Bearer <token>")
	}
	return st.Authenticate(ctx, token)
}

// fail answers err as a problem; internal errors are logged and shown only
// as "internal error".
func fail(w http.ResponseWriter, r *http.Request, o Options, err error) {
	m, code := signoff.Mapping(err), signoff.ErrorCode(err)
	if code == signoff.EINTERNAL {
		o.Log.ErrorContext(r.Context(), "mcp request failed", "path", r.URL.EscapedPath(), "err", err)
	}
	if code == signoff.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(m.HTTPStatus)
	_ = json.NewEncoder(w).Encode(Problem{
		Type: problemBase + code, Title: http.StatusText(m.HTTPStatus), Status: m.HTTPStatus,
		Detail: signoff.ErrorMessage(err), Code: code, Instance: r.URL.EscapedPath(),
	})
}
