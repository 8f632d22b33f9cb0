package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/metrics"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/web"
)

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

func runServe(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var addr, logFormat, metricsAddr, queues, publicURL string
	var intakePerMinute, intakeProjectPerSecond, intakeTotalPerSecond int
	var trackPerMinute, trackLinkPerMinute, trackMissesPerMinute int
	var trustedProxies string
	fs := newFlags("serve", "signoff serve [--addr 127.0.0.1:8080] [--metrics-addr HOST:PORT] [--queues all|none|triage,agent,sandbox,outbox,default] [--db PATH|URL] [--key FILE]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&metricsAddr, "metrics-addr", "", "serve GET /metrics on this address instead of on --addr (default: on --addr, no credential needed)")
	fs.StringVar(&queues, "queues", "all", "the job queues this process works: all, none (a stateless API process; signoff worker takes the jobs), or some of triage, agent, sandbox, outbox, default")
	fs.IntVar(&intakePerMinute, "intake-per-minute", 10, "public reports accepted per client address a minute (bursts of half as many, at least 5)")
	fs.IntVar(&intakeProjectPerSecond, "intake-project-per-second", 10, "public reports accepted per project a second (bursts of ten times as many)")
	fs.IntVar(&intakeTotalPerSecond, "intake-total-per-second", 50, "public reports accepted for all projects together a second, the server's ceiling (bursts of ten times as many; at least the per-project limit)")
	fs.IntVar(&trackPerMinute, "track-per-minute", 18000, "requests through valid tracking links (reads, answers, decisions) per client address a minute (bursts of a sixth as many; a tenth more is kept for readers at a person's pace on their own link)")
	fs.IntVar(&trackLinkPerMinute, "track-link-per-minute", 3600, "reads of one tracking link a minute, from anywhere (bursts of a sixth as many)")
	fs.IntVar(&trackMissesPerMinute, "track-misses-per-minute", 10, "lookups of tracking links that do not exist per client address a minute (bursts as many); past it they are answered 429")
	fs.StringVar(&trustedProxies, "trusted-proxies", "", "comma-separated addresses and CIDR prefixes of the proxies in front of this server: only from them is X-Forwarded-For believed when the rate limits look for the client's address (default: none; the connection's peer is the client)")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&publicURL, "public-url", "", "the URL people reach this server at (https://host[:port]), behind a proxy: the commands pages print name it, passkeys use it as their origin, and cookies are Secure when it is https (default: the URL a request came in on)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := web.CheckPublicURL(publicURL); publicURL != "" && err != nil {
		return signoff.Errorf(signoff.EINVALID, "--public-url: %v", err)
	}
	qs, err := parseQueues(queues)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"intake-per-minute", intakePerMinute, 1_000_000}, {"intake-project-per-second", intakeProjectPerSecond, 100_000},
		{"intake-total-per-second", intakeTotalPerSecond, 100_000}, {"track-per-minute", trackPerMinute, 10_000_000},
		{"track-link-per-minute", trackLinkPerMinute, 1_000_000}, {"track-misses-per-minute", trackMissesPerMinute, 1_000_000},
	} {
		if f.v < 1 || f.v > f.max {
			return signoff.Errorf(signoff.EINVALID, "--%s must be from 1 to %d, got %d", f.name, f.max, f.v)
		}
	}
	proxies, err := clientip.Parse(trustedProxies)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "--trusted-proxies: %v", err)
	}
	log := newLogger(e.stderr, logFormat)
	s, err := d.openRW(ctx, e, true)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	var mln net.Listener
	if metricsAddr != "" {
		if mln, err = net.Listen("tcp", metricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen %s: %w", metricsAddr, err)
		}
		log.Info("serving metrics", "url", "http://"+mln.Addr().String()+"/metrics")
	}
	log.Info("serving", "url", "http://"+ln.Addr().String(), "backend", s.Dialect(), "queues", strings.Join(qs, ","))
	if len(proxies.Proxies()) > 0 {
		log.Info("trusting X-Forwarded-For from proxies", "proxies", strings.Join(proxies.Proxies(), ","))
	}
	perMinute := func(n, burst int) ratelimit.Limit { return ratelimit.Limit{Rate: float64(n) / 60, Burst: burst} }
	return serveWith(ctx, e, log, ln, s, nil, serveConfig{metrics: mln, queues: qs, publicURL: publicURL, proxies: proxies,
		budgets: ratelimit.Budgets{
			IntakePerAddress: perMinute(intakePerMinute, max(5, intakePerMinute/2)),
			IntakePerProject: ratelimit.Limit{Rate: float64(intakeProjectPerSecond), Burst: 10 * intakeProjectPerSecond},
			IntakeTotal:      ratelimit.Limit{Rate: float64(max(intakeTotalPerSecond, intakeProjectPerSecond)), Burst: 10 * max(intakeTotalPerSecond, intakeProjectPerSecond)},
			LinkPerAddress:   perMinute(trackPerMinute, max(30, trackPerMinute/6)),
			ReadPerLink:      perMinute(trackLinkPerMinute, max(30, trackLinkPerMinute/6)),
			MissPerAddress:   perMinute(trackMissesPerMinute, trackMissesPerMinute),
		}})
}

// serveConfig is what a serve process sets beyond its listener and store.
type serveConfig struct {
	// metrics, when set, serves /metrics instead of the main listener.
	metrics net.Listener
	// queues are the job queues worked here: nil for all, empty for none.
	queues []string
	// budgets are the public routes' rate limits, shared by the API and
	// the web pages; a zero field keeps its default.
	budgets ratelimit.Budgets
	// proxies are the proxies whose X-Forwarded-For is believed.
	proxies clientip.Resolver
	// simulatedPeople honours the demo walks' marker
	// (httpapi.WithSimulatedPeople): set by `signoff demo --walk` only.
	simulatedPeople bool
	// publicURL and approvalKey are the web UI's Options.PublicURL and
	// Options.ApprovalKey.
	publicURL, approvalKey string
	// notice is the web UI's Options.Notice: the demo's "ShopLite is
	// being built".
	notice func() (web.Notice, bool)
}

// scrapeTimeout bounds the database reads of one metrics scrape.
const scrapeTimeout = 5 * time.Second

// newMetrics is the process's registry: the process gauges, the database's
// gauges and counters, and signoff_scrape_errors_total for a metric that
// could not be read (logged, and left out of that scrape only).
func newMetrics(s *sqlstore.DB, log *slog.Logger) *metrics.Registry {
	reg := metrics.NewRegistry()
	reg.RegisterProcess()
	reg.CountScrapeErrors("signoff_scrape_errors_total", "Metrics that could not be read and were left out of a scrape, by metric.",
		func(metric string, err error) { log.Error("metrics scrape", "metric", metric, "err", err) })
	registerStoreMetrics(reg, s)
	return reg
}

// handler is the API plus the MCP endpoint for agents (streamable HTTP,
// stateless, so any instance can answer any request) and the web UI.
func handler(s *sqlstore.DB, log *slog.Logger, st *stack) http.Handler {
	return handlerWith(s, log, st, nil, false, serveConfig{})
}

// handlerWith is handler with the API's requests counted in reg (when not
// nil) and, when mountMetrics is set, GET /metrics served from reg. Without
// it /metrics is the API's, which answers 404.
func handlerWith(s *sqlstore.DB, log *slog.Logger, st *stack, reg *metrics.Registry, mountMetrics bool, cfg serveConfig) http.Handler {
	mux := http.NewServeMux()
	if reg != nil && mountMetrics {
		mux.Handle("GET /metrics", reg.Handler(scrapeTimeout))
	}
	mcpHandler := mcp.Handler(s, mcp.Options{Tools: st.reg, Log: log, ChangeDesk: st.change})
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/mcp/", mcpHandler)
	// The web UI: server-rendered pages on their own paths; everything
	// else is the API's, as before.
	// One set of public budgets for both doors: a client cannot double
	// its budget by switching between the pages and the API.
	pub := ratelimit.NewPublic(cfg.budgets)
	webUI := web.New(web.Options{Store: s, BugDesk: st.desk, ChangeDesk: st.change, Log: log,
		PublicURL: cfg.publicURL, ApprovalKey: cfg.approvalKey, Notice: cfg.notice, Public: pub, Proxies: cfg.proxies})
	for _, p := range web.Paths() {
		mux.Handle(p, webUI)
	}
	opts := []httpapi.Option{httpapi.WithTools(st.reg), httpapi.WithDesk(st.desk), httpapi.WithChangeDesk(st.change),
		httpapi.WithNotify(st.notify), httpapi.WithMetrics(reg), httpapi.WithPublicLimits(pub), httpapi.WithTrustedProxies(cfg.proxies)}
	if cfg.simulatedPeople {
		opts = append(opts, httpapi.WithSimulatedPeople())
	}
	mux.Handle("/", httpapi.New(s, log, opts...))
	return mux
}

// serveUntilDone serves until ctx ends, then drains in-flight requests for
// up to 15 s before closing. /metrics is served on ln.
func serveUntilDone(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, s *sqlstore.DB, st *stack, cfg serveConfig) error {
	return serveWith(ctx, e, log, ln, s, st, cfg)
}

// serveWith is serveUntilDone as cfg says: /metrics on its own listener,
// some job queues or none, the intake's limit.
func serveWith(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, s *sqlstore.DB, st *stack, cfg serveConfig) error {
	mln := cfg.metrics
	if mln != nil {
		defer mln.Close()
	}
	if st == nil {
		var err error
		if st, err = newStack(e, s, log, nil); err != nil {
			return err
		}
	}
	// This process's share of the job queue. Several processes on one
	// PostgreSQL database share it; on shutdown the HTTP server drains
	// first (its live streams end), then running jobs finish or are
	// cancelled for another process to retry.
	queues := cfg.queues
	if queues == nil {
		queues = signoff.Queues
	}
	stopJobs, err := startJobs(ctx, log, s, st, queues, 4)
	if err != nil {
		return err
	}
	defer stopJobs()
	reg := newMetrics(s, log)
	srv := httpapi.NewServer(ln.Addr().String(), handlerWith(s, log, st, reg, mln == nil, cfg))
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	serving := 1
	var msrv *http.Server
	if mln != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", reg.Handler(scrapeTimeout))
		msrv = httpapi.NewServer(mln.Addr().String(), mux)
		go func() { errc <- msrv.Serve(mln) }()
		serving++
		defer msrv.Close()
	}
	select {
	case err := <-errc:
		srv.Close()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if msrv != nil {
		_ = msrv.Shutdown(sctx)
	}
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	for range serving {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}
