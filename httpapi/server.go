// Package httpapi serves the Signoff JSON API over HTTP. It is a transport:
// it authenticates the caller, asks identity whether the caller's role may
// attempt the operation, decodes and bounds the input, and hands the rest to
// a signoff.Store, which decides. Every error is an RFC 9457 problem whose
// status comes from signoff.Mapping.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/httplog"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/metrics"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/sse"
)

// requestTimeout bounds the work done for one request, so a stuck database
// call cannot hold a connection and a goroutine forever.
const requestTimeout = 30 * time.Second

type server struct {
	store signoff.Store
	log   *slog.Logger
	mux   *http.ServeMux
	opts  options
	// pub holds the public routes' rate limits (limits.go).
	pub *ratelimit.Public
	// tools are the agent tools role configurations are checked against.
	tools  *agent.Registry
	routes []Route
	// streams counts open live event streams per actor.
	streams sse.Streams
	// publicRoutes holds the patterns of the routes that take no credential.
	publicRoutes map[string]bool
}

// Route is one route the API serves and what guards it.
type Route struct {
	Pattern string
	// Op is the operation the role policy checks; empty for a route any
	// authenticated caller may attempt, and for a public one.
	Op identity.Operation
	// Public routes take no credential at all.
	Public bool
}

// Routes lists every route pattern the API serves, so tests can prove that
// each one is covered.
func Routes() []string {
	var out []string
	for _, r := range RouteTable() {
		out = append(out, r.Pattern)
	}
	return out
}

// RouteTable lists every route with the operation that guards it, so tests
// can prove which roles reach which routes.
func RouteTable() []Route {
	s := &server{mux: http.NewServeMux()}
	s.register()
	return s.routes
}

// handle registers a route and remembers it.
func (s *server) handle(rt Route, h http.HandlerFunc) {
	s.routes = append(s.routes, rt)
	if rt.Public {
		if s.publicRoutes == nil {
			s.publicRoutes = map[string]bool{}
		}
		s.publicRoutes[rt.Pattern] = true
	}
	s.mux.HandleFunc(rt.Pattern, h)
}

// Limit is a token bucket: Rate requests per second on average, Burst at
// once.
type Limit = ratelimit.Limit

type options struct {
	intakePerIP, intakePerProject Limit
	public                        *ratelimit.Public
	clients                       clientip.Resolver
	tools                         *agent.Registry
	desk                          *bugdesk.Desk
	change                        *changedesk.Desk
	events                        eventOptions  // the event stream (events.go)
	notify                        notifyOptions // chat answers to approval cards (outbox.go)
	metrics                       *httpMetrics
	// simulatedPeople honours signoff.SimulatedPersonHeader (the demo).
	simulatedPeople bool
}

// Option configures the handler.
type Option func(*options)

// WithIntakeLimits sets the public intake's rate limits, per client address
// and per project. The defaults (10 reports a minute per address, bursts of
// 5; 10 a second per project, bursts of 100) suit a public form. It has no
// effect with WithPublicLimits, whose budgets say it.
func WithIntakeLimits(perIP, perProject Limit) Option {
	return func(o *options) { o.intakePerIP, o.intakePerProject = perIP, perProject }
}

// WithTools sets the agent tools that role configurations are checked
// against and handoffs are configured with. Without it (or with nil) the
// server knows the base tools only.
func WithTools(r *agent.Registry) Option {
	return func(o *options) { o.tools = r }
}

// WithSimulatedPeople honours signoff.SimulatedPersonHeader: a request
// that carries it records its own person's events (the authenticated
// human's, or the reporter's on a public route) as evidence simulated.
// It is for `signoff demo`, whose walks play the people of the loops, and
// only ever lowers a claim; an agent's or the server's events in the same
// request are untouched. Without this option the header means nothing.
func WithSimulatedPeople() Option {
	return func(o *options) { o.simulatedPeople = true }
}

// httpMetrics are the API's request metrics.
type httpMetrics struct {
	requests *metrics.Counter
	duration *metrics.Histogram
}

// WithMetrics counts every request in r: signoff_http_requests_total by
// route, method and status, and signoff_http_request_duration_seconds by
// route. The route is the pattern that served the request, or "other" when
// none did: never the path, which may carry a secret.
func WithMetrics(r *metrics.Registry) Option {
	return func(o *options) {
		if r == nil {
			return
		}
		o.metrics = &httpMetrics{
			requests: r.Counter("signoff_http_requests_total", "API requests, by route pattern, method and status.", "route", "method", "status"),
			duration: r.Histogram("signoff_http_request_duration_seconds", "API request durations in seconds, by route pattern.", metrics.DefaultBuckets, "route"),
		}
	}
}

// New returns the API handler over store. It logs one access line per
// request and the full text of internal errors to log; it never logs
// credentials or request bodies.
func New(store signoff.Store, log *slog.Logger, opts ...Option) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.public == nil {
		b := ratelimit.DefaultBudgets()
		b.IntakePerAddress, b.IntakePerProject = o.intakePerIP, o.intakePerProject
		o.public = ratelimit.NewPublic(b)
	}
	if o.tools == nil {
		o.tools = agent.NewRegistry(agent.BaseTools()...)
	}
	s := &server{store: store, log: log, mux: http.NewServeMux(), opts: o, tools: o.tools,
		pub: o.public}
	s.streams.Max = maxStreamsPerActor
	s.register()
	return s.withRequest(s.recoverPanics(http.HandlerFunc(s.route)))
}

// NewServer returns an http.Server for h with timeouts on every phase, so
// that slow or idle clients cannot pin connections.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

func (s *server) register() {
	s.handle(Route{Pattern: "GET /healthz", Public: true}, s.healthz)
	s.handle(Route{Pattern: "GET /readyz", Public: true}, s.readyz)

	s.api("GET /api/v1/me", "", s.getMe)

	s.api("GET /api/v1/workspace", identity.OpWorkspaceRead, s.getWorkspace)
	s.api("PATCH /api/v1/workspace", identity.OpWorkspaceUpdate, s.patchWorkspace)

	s.api("GET /api/v1/projects", identity.OpProjectRead, s.listProjects)
	s.api("POST /api/v1/projects", identity.OpProjectWrite, s.createProject)
	s.api("GET /api/v1/projects/{id}", identity.OpProjectRead, s.getProject)
	s.api("PATCH /api/v1/projects/{id}", identity.OpProjectWrite, s.patchProject)

	s.api("GET /api/v1/actors", identity.OpActorRead, s.listActors)
	s.api("POST /api/v1/actors", identity.OpActorWrite, s.createActor)
	s.api("GET /api/v1/actors/{id}", identity.OpActorRead, s.getActor)
	s.api("GET /api/v1/actors/{id}/tokens", identity.OpTokenWrite, s.listTokens)
	s.api("POST /api/v1/actors/{id}/tokens", identity.OpTokenWrite, s.createToken)
	s.api("DELETE /api/v1/tokens/{id}", identity.OpTokenWrite, s.revokeToken)
	// Disabling stops the actor's tokens and sessions at once and voids
	// their approvals that still count (revoke.go).
	s.api("POST /api/v1/actors/{id}/disable", identity.OpActorWrite, s.disableActor)
	s.api("POST /api/v1/actors/{id}/enable", identity.OpActorWrite, s.enableActor)

	s.api("GET /api/v1/cases", identity.OpCaseList, s.listCases)
	s.api("POST /api/v1/cases", identity.OpCaseCreate, s.createCase)
	s.api("GET /api/v1/cases/{id}", identity.OpCaseRead, s.getCase)
	s.api("POST /api/v1/cases/{id}/transitions", identity.OpCaseTransition, s.transitionCase)
	// A note that moves nothing: an agent's voice where it may not act.
	s.api("POST /api/v1/cases/{id}/attention", identity.OpMessagePost, s.requestAttention)
	s.api("GET /api/v1/cases/{id}/events", identity.OpLedgerRead, s.listEvents)
	s.api("GET /api/v1/events", identity.OpLedgerRead, s.streamEvents)
	s.api("GET /api/v1/cases/{id}/reports", identity.OpCaseRead, s.listReports)
	s.api("GET /api/v1/cases/{id}/triage", identity.OpDecisionRead, s.getTriage)

	// Tasks: the receipts agents quote. Agents see and act on their own
	// only; the store enforces that per task.
	s.api("GET /api/v1/tasks", identity.OpTaskRead, s.listTasks)
	s.api("POST /api/v1/tasks", identity.OpTaskCreate, s.createTask)
	s.api("GET /api/v1/tasks/{id}", identity.OpTaskRead, s.getTask)
	s.api("GET /api/v1/tasks/{id}/prompt", identity.OpTaskRead, s.taskPrompt)
	s.api("POST /api/v1/tasks/{id}/submit", identity.OpTaskSubmit, s.submitTask)
	s.api("POST /api/v1/tasks/{id}/handoff", identity.OpTaskSubmit, s.handoffTask)
	s.api("POST /api/v1/tasks/{id}/close", identity.OpTaskClose, s.closeTask)
	s.api("GET /api/v1/tasks/{id}/calls", identity.OpCallRead, s.listCalls)

	// The case room. Mentions open tasks only as addressing policies allow.
	s.api("GET /api/v1/cases/{id}/messages", identity.OpMessageRead, s.listMessages)
	s.api("POST /api/v1/cases/{id}/messages", identity.OpMessagePost, s.postMessage)

	// Agents: presence, who may address them, and the role configuration.
	s.api("GET /api/v1/agents", identity.OpAgentRead, s.listAgents)
	s.api("POST /api/v1/agents/heartbeat", identity.OpHeartbeat, s.heartbeat)
	s.api("GET /api/v1/agents/{id}/addressing", identity.OpAddressingRead, s.getAddressing)
	s.api("PUT /api/v1/agents/{id}/addressing", identity.OpAddressingWrite, s.putAddressing)
	s.api("GET /api/v1/roles", identity.OpRolesRead, s.getRoles)
	s.api("PUT /api/v1/roles", identity.OpRolesWrite, s.putRoles)

	// Decisions are requested by the server; people decide them over the
	// exact digest they saw. No agent role holds OpDecisionDecide.
	s.api("GET /api/v1/decisions/{id}", identity.OpDecisionRead, s.getDecision)
	s.api("POST /api/v1/decisions/{id}/decide", identity.OpDecisionDecide, s.decide)

	// Project data for triage: the built-in tracker, crash log, release
	// data and CODEOWNERS. Agents file tickets and comments; the desk
	// edits and imports.
	s.api("GET /api/v1/projects/{id}/tickets", identity.OpProjectDataRead, s.listTickets)
	// Filing a ticket directly is for people: agents file through the
	// crew's create_ticket tool, which holds the human gate.
	s.api("POST /api/v1/projects/{id}/tickets", identity.OpProjectDataWrite, s.createTicket)
	s.api("GET /api/v1/projects/{id}/tickets/{ticket}", identity.OpProjectDataRead, s.getTicket)
	s.api("PATCH /api/v1/projects/{id}/tickets/{ticket}", identity.OpProjectDataWrite, s.patchTicket)
	s.api("POST /api/v1/projects/{id}/tickets/{ticket}/comments", identity.OpTicketWrite, s.addComment)
	s.api("GET /api/v1/projects/{id}/crashes", identity.OpProjectDataRead, s.listCrashes)
	s.api("POST /api/v1/projects/{id}/crashes", identity.OpProjectDataWrite, s.addCrashes)
	s.api("GET /api/v1/projects/{id}/releases", identity.OpProjectDataRead, s.getReleases)
	s.api("PUT /api/v1/projects/{id}/releases", identity.OpProjectDataWrite, s.putReleases)
	s.api("GET /api/v1/projects/{id}/owners", identity.OpProjectDataRead, s.getOwners)
	s.api("PUT /api/v1/projects/{id}/owners", identity.OpProjectDataWrite, s.putOwners)
	s.api("POST /api/v1/projects/{id}/dataset", identity.OpProjectDataWrite, s.importDataset)

	// Public: the intake form and the reporter's tracking link. No account;
	// the tracking secret in the path is the capability.
	s.public("POST /api/v1/projects/{id}/reports", s.submitReport)
	s.public("GET /api/v1/track/{token}", s.track)
	s.public("POST /api/v1/track/{token}/answers", s.answer)
	// The reporter's yes or no to the question on their page, bound to
	// the question's digest.
	s.public("POST /api/v1/track/{token}/decision", s.reporterDecision)

	// The bug loop on the project's repository.
	s.api("GET /api/v1/projects/{id}/repo", identity.OpRepoRead, s.getRepo)
	s.api("PUT /api/v1/projects/{id}/repo", identity.OpRepoWrite, s.putRepo)
	s.api("GET /api/v1/projects/{id}/deployments", identity.OpRepoRead, s.listDeployments)
	s.api("GET /api/v1/cases/{id}/loop", identity.OpLoopRead, s.getLoop)
	s.api("POST /api/v1/cases/{id}/reproduce", identity.OpLoopStart, s.startLoop)
	s.api("POST /api/v1/cases/{id}/candidates", identity.OpCandidateSubmit, s.submitCandidate)
	s.api("GET /api/v1/cases/{id}/candidates/{candidate}/evidence", identity.OpLoopRead, s.getEvidence)
	// A person reads the reproduction's test source and approves or
	// rejects it over its review digest before any fix is tried.
	s.api("GET /api/v1/cases/{id}/harness", identity.OpHarnessRead, s.getHarness)
	s.api("POST /api/v1/cases/{id}/harness/review", identity.OpHarnessReview, s.reviewHarness)
	// Approving and merging are human acts over the exact card: no agent
	// role holds these operations, and the approval is a signature made
	// on the approver's machine. The card and approvals serve change cases
	// too, through the change desk (change.go), so one client flow signs
	// both.
	s.api("GET /api/v1/cases/{id}/approval", identity.OpApprovalRead, s.getCard)
	s.api("POST /api/v1/cases/{id}/approvals", identity.OpApprove, s.approve)
	s.api("POST /api/v1/cases/{id}/merge", identity.OpMerge, s.merge)
	// Main moved under an approved candidate: rebase it and verify again.
	s.api("POST /api/v1/cases/{id}/reverify", identity.OpLoopStart, s.reverify)
	s.api("GET /api/v1/keys", identity.OpKeyRead, s.listKeys)
	s.api("POST /api/v1/keys", identity.OpKeyWrite, s.registerKey)
	// Owners revoke any key, people their own; the key's approvals that
	// still count are voided with it (revoke.go).
	s.api("POST /api/v1/keys/{id}/revoke", identity.OpKeyWrite, s.revokeKey)
	// Deployments arrive signed (Standard Webhooks); the signature is the
	// credential.
	s.public("POST /api/v1/hooks/deployments/{id}", s.deploymentHook)

	// The built-in flag store (ofrep.go). Everyone but reporters reads
	// flags; the owner declares new ones and issues each environment's
	// OFREP key. No route changes a flag's value: that is the change
	// gate's, after a signed approval.
	s.api("GET /api/v1/projects/{id}/flags", identity.OpFlagRead, s.listFlags)
	s.api("POST /api/v1/projects/{id}/flags", identity.OpFlagDeclare, s.declareFlag)
	s.api("GET /api/v1/projects/{id}/flags/{env}/{key}", identity.OpFlagRead, s.getFlag)
	s.api("GET /api/v1/projects/{id}/flag-keys", identity.OpFlagKeyWrite, s.listFlagKeys)
	s.api("POST /api/v1/projects/{id}/flag-keys", identity.OpFlagKeyWrite, s.createFlagKey)
	s.api("DELETE /api/v1/flag-keys/{id}", identity.OpFlagKeyWrite, s.revokeFlagKey)
	// OFREP evaluation for apps: the environment's flag key is the
	// credential, so these are public in the API's sense.
	s.public("POST /ofrep/v1/evaluate/flags/{key}", s.ofrepEvaluate)
	s.public("POST /ofrep/v1/evaluate/flags", s.ofrepBulk)

	// The change loop (change.go). Everyone but reporters reads the
	// policy, change cases, their plans and receipts; the owner sets the
	// policy. People open requests; people and the planner agent draft
	// plans, which the policy reviews. The approval card and signed
	// approvals are the routes above, which serve change cases too. Only
	// people run the gate (execute) and open compensating rollbacks: no
	// agent role holds change.execute.
	s.api("GET /api/v1/change-policy", identity.OpPolicyRead, s.getChangePolicy)
	s.api("PUT /api/v1/change-policy", identity.OpPolicyWrite, s.putChangePolicy)
	s.api("POST /api/v1/projects/{id}/changes", identity.OpChangeRequest, s.requestChange)
	s.api("GET /api/v1/cases/{id}/change", identity.OpChangeRead, s.getChange)
	s.api("POST /api/v1/cases/{id}/plan", identity.OpChangePlan, s.planChange)
	s.api("POST /api/v1/cases/{id}/execute", identity.OpChangeExecute, s.executeChange)
	s.api("POST /api/v1/cases/{id}/rollback", identity.OpChangeExecute, s.rollbackChange)
	s.api("GET /api/v1/cases/{id}/receipts", identity.OpChangeRead, s.listReceipts)
	s.api("GET /api/v1/cases/{id}/change/evidence", identity.OpChangeRead, s.getChangeEvidence)
	// The one flag write outside the gate, where the policy allows it.
	s.api("POST /api/v1/projects/{id}/flags/{env}/{key}/emergency", identity.OpFlagBypass, s.flagBypass)

	// Notifications (outbox.go): channels, the outbox and its re-drive,
	// a case's approval cards, chat user mapping, and the chat platforms'
	// public endpoints, whose signature or token is the credential.
	s.registerNotify()
}

// apiFunc is an authenticated, authorized handler. A returned error is
// answered as a problem.
type apiFunc func(w http.ResponseWriter, r *http.Request, by signoff.Actor) error

// api registers an authenticated route. The checks run in a fixed order so
// that the status says which one failed: credential (401), role policy for
// op (403), then the handler's own validation (422) and the store (404, 409,
// ...). An empty op admits any authenticated actor.
func (s *server) api(pattern string, op identity.Operation, fn apiFunc) {
	s.handle(Route{Pattern: pattern, Op: op}, func(w http.ResponseWriter, r *http.Request) {
		by, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		infoFrom(r.Context()).actorID = by.ID
		signoff.BindSimulatedPerson(r.Context(), by)
		if op != "" {
			if err := identity.Authorize(by.Role, op); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		if err := fn(w, r, by); err != nil {
			s.fail(w, r, err)
		}
	})
}

var errNoCredential = signoff.Errorf(signoff.EUNAUTHORIZED, "a bearer token is required")

// authenticate resolves the one Bearer credential of r. The store answers
// every kind of bad token alike, so the response reveals nothing about it.
func (s *server) authenticate(r *http.Request) (signoff.Actor, error) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return signoff.Actor{}, errNoCredential
	}
	scheme, secret, ok := strings.Cut(vals[0], " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return signoff.Actor{}, errNoCredential
	}
	return s.store.Authenticate(r.Context(), secret)
}

// route dispatches to the mux, answering what it cannot route as a problem
// rather than with the mux's plain-text pages. A path that is not in
// canonical form (dot segments, doubled or trailing slashes) names no
// resource: it answers 404 instead of the mux's redirect, so that a client
// never follows a redirect to somewhere it did not ask for.
func (s *server) route(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.EscapedPath(); p != path.Clean(p) {
		s.fail(w, r, signoff.Errorf(signoff.ENOTFOUND, "no such route"))
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		s.unrouted(w, r, h)
		return
	}
	infoFrom(r.Context()).route = pattern
	if s.publicRoutes[pattern] {
		signoff.BindSimulatedPublic(r.Context())
	}
	s.mux.ServeHTTP(w, r)
}

// unrouted runs the mux's own 404/405 handler into a probe to learn which it
// is and, for 405, the Allow list, and answers the same as a problem.
func (s *server) unrouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		s.fail(w, r, signoff.Errorf(signoff.EMETHOD, "method not allowed on this route; see the Allow header"))
		return
	}
	s.fail(w, r, signoff.Errorf(signoff.ENOTFOUND, "no such route"))
}

// probeWriter records a status and headers and discards the body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(status int)      { p.status = status }

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 503 until the store answers and its schema is current, so
// a load balancer sends no traffic to a process that cannot serve it.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.store.Ready(r.Context()); err != nil {
		if signoff.ErrorCode(err) != signoff.EUNAVAILABLE {
			s.log.ErrorContext(r.Context(), "readiness check", "err", err, "request_id", infoFrom(r.Context()).id)
			err = signoff.Errorf(signoff.EUNAVAILABLE, "not ready")
		}
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// requestInfo collects what the access log reports about one request as the
// request goes through the layers.
type requestInfo struct {
	id, route, actorID string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// withRequest gives every request an id, the common response headers, a
// deadline and one access log line. The line carries no path, query, header
// or body, because any of those could hold a credential a client put in the
// wrong place.
func (s *server) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: requestID(r.Header.Get("X-Request-Id"))}
		sw := &httplog.StatusWriter{ResponseWriter: w}
		h := w.Header()
		h.Set("X-Request-Id", info.id)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		// The event stream outlives any request timeout: it bounds its
		// own database calls and its duration (events.go).
		ctx, cancel := context.WithValue(r.Context(), infoKey{}, info), context.CancelFunc(func() {})
		if !isEventStream(r) {
			ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		}
		// Exactly the one value, or the request is not marked.
		if s.opts.simulatedPeople {
			if v := r.Header.Values(signoff.SimulatedPersonHeader); len(v) == 1 && v[0] == signoff.SimulatedPersonValue {
				ctx = signoff.WithSimulatedPerson(ctx)
			}
		}
		defer cancel()
		defer func() {
			level := slog.LevelInfo
			if sw.Code() >= 500 {
				level = slog.LevelError
			}
			took := time.Since(start)
			if m := s.opts.metrics; m != nil {
				route := info.route
				if route == "" {
					route = metrics.Other
				}
				m.requests.Inc(route, httplog.Method(r.Method), strconv.Itoa(sw.Code()))
				m.duration.ObserveDuration(took, route)
			}
			s.log.LogAttrs(ctx, level, "http request",
				slog.String("method", httplog.Method(r.Method)),
				slog.String("route", info.route),
				slog.Int("status", sw.Code()),
				slog.Duration("duration", took),
				slog.String("actor_id", info.actorID),
				slog.String("request_id", info.id))
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// recoverPanics turns a panic in a handler into a logged 500, so one bad
// request cannot take the connection's caller down with a bare reset.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // the handler asked for the connection to be dropped
			}
			s.log.ErrorContext(r.Context(), "panic serving request", "panic", fmt.Sprint(v),
				"stack", string(debug.Stack()), "request_id", infoFrom(r.Context()).id)
			if sw, ok := w.(*httplog.StatusWriter); ok && sw.Status != 0 {
				return // too late for a problem: the response has begun
			}
			s.fail(w, r, signoff.Errorf(signoff.EINTERNAL, "internal error"))
		}()
		next.ServeHTTP(w, r)
	})
}

// requestID keeps a caller's id when it is a short, safe token, so that
// requests can be followed across systems, and makes a new one otherwise.
// Underscores are not accepted because API tokens contain them: a token
// pasted into the wrong header must never be echoed into the logs.
func requestID(given string) string {
	if n := len(given); n > 0 && n <= 64 && strings.Trim(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") == "" {
		return given
	}
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics if the OS source is broken)
	return hex.EncodeToString(b[:])
}
