// Package web serves Signoff's web UI: server-rendered pages for the people
// who run and watch the desk (sign-in, the desk, case pages, approval
// pages), the public report form and the reporter's tracking page. It is a
// transport like httpapi: it authenticates the person, hands the rest to
// the store and the desks, which decide, and renders what they answer.
//
// Pages are html/template, the assets are embedded, and the only script is
// a static file (/static/desk.js) under a strict Content-Security-Policy
// with no inline script or style. Every state-changing request is a POST
// that carries a CSRF token. Signed approvals are given on the approval
// page with a registered passkey (passkey.go: the authenticator signs the
// digest of the exact approval statement) or with the signoff approve
// command the page shows, which signs on the approver's machine; both go
// through the desks' Approve and the same gate.
package web

import (
	"context"
	"crypto/ed25519"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/httplog"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/sse"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Store is what the web UI reads and writes: the domain store plus ledger
// verification, browser sessions, sign-in links and the desk's list.
// *sqlstore.DB implements it (checked in storeiface_internal_test.go).
type Store interface {
	signoff.Store
	// VerifyLedger checks a workspace's chain (store.VerifyLedger).
	VerifyLedger(ctx context.Context, ws string, trusted map[string]ed25519.PublicKey) (ledger.Result, error)
	// SignIn opens a session with an API token; EUNAUTHORIZED for a bad
	// token, EFORBIDDEN for a role that does not use the web UI.
	SignIn(ctx context.Context, token string, ttl time.Duration) (string, signoff.WebSession, error)
	// SignInWithLink redeems a one-time sign-in link; EUNAUTHORIZED for an
	// unknown, expired or used one.
	SignInWithLink(ctx context.Context, code string, ttl time.Duration) (string, signoff.WebSession, error)
	// WebSession resolves a session secret; EUNAUTHORIZED when there is
	// no such live session.
	WebSession(ctx context.Context, secret string) (signoff.WebSession, error)
	// SignOut ends a session.
	SignOut(ctx context.Context, secret string) error
	// DeskCases lists the desk's cases with severity and owner.
	DeskCases(ctx context.Context, by signoff.Actor, f signoff.DeskFilter) ([]signoff.DeskCase, error)
	// IntakeProject names a project for its public report form.
	IntakeProject(ctx context.Context, id string) (string, error)
	// CaseStateChanges reads the case states now and their changes since a time, for the charts.
	CaseStateChanges(ctx context.Context, by signoff.Actor, since time.Time, limit int) (signoff.CaseStates, error)
	// CrashWindow reads a project's crash events of the days before its
	// newest, for the charts.
	CrashWindow(ctx context.Context, by signoff.Actor, projectID string, days, limit int) (signoff.CrashWindow, error)
}

// Limit is a token bucket: Rate requests per second on average, Burst at
// once.
type Limit = ratelimit.Limit

// Options configure the web UI. Store is required; a zero field keeps its
// default.
type Options struct {
	Store Store
	// BugDesk serves the reporter's questions and the bug approval card;
	// without it the tracking page shows the state only and bug cases have
	// no approval page.
	BugDesk *bugdesk.Desk
	// ChangeDesk serves the change approval card.
	ChangeDesk *changedesk.Desk
	// Log receives one line per request (never its path, which can hold a
	// tracking secret or a sign-in code) and internal errors in full.
	Log *slog.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
	// SessionTTL is how long a session lasts (12 h).
	SessionTTL time.Duration
	// Trusted are the keys the ledger's heads must be signed with; nil
	// trusts the store's own signing key (as signoff ledger verify does
	// with the server's key file).
	Trusted map[string]ed25519.PublicKey
	// Rate limits, per client address unless named otherwise: filing a
	// report (10 a minute, bursts of 5) and per project (10 a second,
	// bursts of 100); requests to tracking links (300 a second, bursts of
	// 3000; ratelimit.Budgets.LinkPerAddress); signing in (20 a minute,
	// bursts of 20). Public replaces the first three.
	IntakePerIP, IntakePerProject, TrackPerIP, LoginPerIP Limit
	// Public, when set, holds the public routes' budgets, shared with the
	// API (httpapi.WithPublicLimits) so that a client has one budget
	// whichever door it uses. Without it the web UI keeps its own
	// (ratelimit.DefaultBudgets with the limits above).
	Public *ratelimit.Public
	// Proxies are the proxies whose X-Forwarded-For names the client for
	// the per-address limits; the zero Resolver trusts none.
	Proxies clientip.Resolver
	// The desk's live stream: how often it polls the store (250 ms), how
	// often it checks the session again (30 s), and how long one
	// connection lasts (1 h; the browser reconnects with Last-Event-ID).
	EventPoll, EventRecheck, EventMaxAge time.Duration
	// PublicURL is the server's URL as people reach it (behind a proxy,
	// say): the commands pages print name it in SIGNOFF_URL. Empty: the
	// URL the request came in on.
	PublicURL string
	// ApprovalKey is the approval key path the approve commands name
	// (~/.config/signoff/approver.key, where signoff keys init puts it).
	ApprovalKey string
	// Notice, when set, is asked for a note to show at the top of every
	// staff page (false: none); a page showing one follows it (notice.js).
	Notice func() (Notice, bool)
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	lim := func(l *Limit, d Limit) {
		if l.Rate <= 0 && l.Burst <= 0 {
			*l = d
		}
	}
	lim(&o.LoginPerIP, Limit{Rate: 20.0 / 60, Burst: 20})
	dur := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	dur(&o.EventPoll, 250*time.Millisecond)
	dur(&o.EventRecheck, 30*time.Second)
	dur(&o.EventMaxAge, time.Hour)
	return o
}

// ContentSecurityPolicy is sent with every response: scripts, styles and
// connections only from this origin, no inline script or style, no
// framing, forms post only here.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// Paths are the path patterns the web UI serves, for mounting it beside
// the API on one mux: "/{$}" is the root alone, which redirects to the
// desk or the sign-in page.
func Paths() []string {
	return []string{"/{$}", "/login", "/login/", "/logout", "/desk", "/desk/", "/cases/", "/charts", "/people", "/people/", "/changes/", "/p/", "/t/", "/static/"}
}

// CheckPublicURL says whether u can be Options.PublicURL: http(s)://host
// with an optional port and nothing else, since it is printed in shell
// commands and is a passkey's origin.
func CheckPublicURL(u string) error {
	scheme, host, ok := strings.Cut(strings.TrimSuffix(u, "/"), "://")
	if !ok || (scheme != "http" && scheme != "https") || !safeHost.MatchString(host) {
		return fmt.Errorf("%q is not http(s)://host[:port]", u)
	}
	return nil
}

// requestTimeout bounds one request's work, as in the API; the desk's
// live stream bounds its own calls instead.
const requestTimeout = 30 * time.Second

type server struct {
	o      Options
	store  Store
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]*template.Template
	static map[string]asset

	// pub holds the public routes' budgets (limit.go); loginIP the
	// sign-in attempts per address.
	pub     *ratelimit.Public
	loginIP *ratelimit.Limiter

	trusted map[string]ed25519.PublicKey
	verify  verifyCache
	streams sse.Streams
	// passkeys are the passkey requests waiting for the authenticator.
	passkeys ceremonies
}

// New returns the web UI's handler. It panics when o.Store is nil: that
// is a wiring mistake, not a condition to serve through.
func New(o Options) http.Handler {
	if o.Store == nil {
		panic("web: Options.Store is required")
	}
	o = o.withDefaults()
	if o.PublicURL != "" {
		if err := CheckPublicURL(o.PublicURL); err != nil {
			panic("web: Options.PublicURL: " + err.Error())
		}
		o.PublicURL = strings.TrimSuffix(o.PublicURL, "/")
	}
	s := &server{o: o, store: o.Store, log: o.Log, mux: http.NewServeMux(), pages: parsePages(), static: loadAssets(),
		pub: o.Public, loginIP: ratelimit.New(o.LoginPerIP), trusted: o.Trusted}
	if s.pub == nil {
		b := ratelimit.DefaultBudgets()
		b.IntakePerAddress, b.IntakePerProject, b.LinkPerAddress = o.IntakePerIP, o.IntakePerProject, o.TrackPerIP
		s.pub = ratelimit.NewPublic(b)
	}
	if s.trusted == nil {
		if k, ok := o.Store.(interface{ Signer() ed25519.PrivateKey }); ok && k.Signer() != nil {
			s.trusted = ledger.Trust(k.Signer().Public().(ed25519.PublicKey))
		}
	}
	s.streams.Max = maxStreamsPerActor
	s.routes()
	return s.withRequest(s.recoverPanics(http.HandlerFunc(s.route)))
}

func (s *server) routes() {
	s.mux.HandleFunc("GET /{$}", s.root)
	s.mux.HandleFunc("GET /login", s.loginForm)
	s.mux.HandleFunc("POST /login", s.handle(s.login))
	s.mux.HandleFunc("GET /login/{code}", s.handle(s.loginLinkForm))
	s.mux.HandleFunc("POST /login/{code}", s.handle(s.loginLink))
	s.mux.HandleFunc("POST /logout", s.handle(s.logout))

	s.mux.HandleFunc("GET /desk", s.signedIn(s.desk))
	s.mux.HandleFunc("GET /desk/rows/{id}", s.signedInAPI(s.deskRow))
	s.mux.HandleFunc("GET /desk/events", s.deskEvents)
	s.mux.HandleFunc("GET "+noticePath, s.serveNotice)
	s.mux.HandleFunc("GET /cases/{id}", s.signedIn(s.casePage))
	s.mux.HandleFunc("GET /cases/{id}/approval", s.signedIn(s.approvalPage))
	s.mux.HandleFunc("GET /cases/{id}/harness", s.signedIn(s.harnessPage))
	s.mux.HandleFunc("POST /cases/{id}/harness/review", s.signedInPost(s.reviewHarness))
	s.mux.HandleFunc("POST /cases/{id}/decisions/{decision}", s.signedInPost(s.decide))
	s.mux.HandleFunc("POST /cases/{id}/resume-triage", s.signedInPost(s.resumeTriage))
	s.caseRoutes()
	s.changeRoutes()
	s.chartRoutes()
	s.peopleRoutes()

	// Public: the report form of a project and the reporter's tracking
	// page, whose secret in the path is the capability.
	s.mux.HandleFunc("GET /p/{project}/report", s.handle(s.reportForm))
	s.mux.HandleFunc("POST /p/{project}/report", s.handle(s.submitReport))
	s.mux.HandleFunc("GET /t/{secret}", s.handle(s.trackPage))
	s.mux.HandleFunc("POST /t/{secret}/answer", s.handle(s.trackAnswer))
	s.mux.HandleFunc("POST /t/{secret}/info", s.handle(s.trackInfo))

	s.mux.HandleFunc("GET /static/{file}", s.serveStatic)
}

// handle adapts a handler that returns an error, answered as a page.
func (s *server) handle(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.fail(w, r, err)
		}
	}
}

// route dispatches to the mux and answers what it cannot route as a page.
// A path that is not in canonical form names nothing: 404, never the
// mux's redirect.
func (s *server) route(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.EscapedPath(); p != path.Clean(p) {
		s.fail(w, r, signoff.Errorf(signoff.ENOTFOUND, "There is no page here."))
		return
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		probe := &probeWriter{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			s.fail(w, r, signoff.Errorf(signoff.EMETHOD, "This page does not answer %s requests.", httplog.Method(r.Method)))
			return
		}
		s.fail(w, r, signoff.Errorf(signoff.ENOTFOUND, "There is no page here."))
		return
	}
	infoFrom(r.Context()).route = pattern
	s.mux.ServeHTTP(w, r)
}

func (s *server) root(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := s.session(r); ok {
		http.Redirect(w, r, "/desk", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// probeWriter records a status and headers and discards the body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header         { return p.header }
func (p *probeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (p *probeWriter) WriteHeader(status int)      { p.status = status }

// requestInfo is what the access log says about a request.
type requestInfo struct {
	route, actorID string
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// securityHeaders go on every response, error pages and redirects too.
// Referrer-Policy matters most on the tracking page: its URL is a
// capability and must never leave in a Referer header.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// withRequest sets the security headers, a deadline (except on the live
// streams of the desk and of a case) and one access log line, which names the route pattern, never
// the path: paths hold tracking secrets and sign-in codes.
func (s *server) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &httplog.StatusWriter{ResponseWriter: w}
		securityHeaders(w.Header())
		ctx, cancel := context.WithValue(r.Context(), infoKey{}, info), context.CancelFunc(func() {})
		if !(r.Method == http.MethodGet && (r.URL.Path == eventsPath || isCaseEventsPath(r.URL.Path))) {
			ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		}
		defer cancel()
		defer func() {
			level := slog.LevelInfo
			if sw.Code() >= 500 {
				level = slog.LevelError
			}
			s.log.LogAttrs(ctx, level, "web request",
				slog.String("method", httplog.Method(r.Method)),
				slog.String("route", info.route),
				slog.Int("status", sw.Code()),
				slog.Duration("duration", time.Since(start)),
				slog.String("actor_id", info.actorID))
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(r.Context(), "panic serving web request", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw, ok := w.(*httplog.StatusWriter); ok && sw.Status != 0 {
				return
			}
			s.fail(w, r, signoff.Errorf(signoff.EINTERNAL, "internal error"))
		}()
		next.ServeHTTP(w, r)
	})
}

// assetFS is the embedded static directory.
func assetFS() fs.FS {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	return sub
}
