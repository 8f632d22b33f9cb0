package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/metrics"
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
	var addr, logFormat, metricsAddr string
	fs := newFlags("serve", "signoff serve [--addr 127.0.0.1:8080] [--metrics-addr HOST:PORT] [--db PATH|URL] [--key FILE]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&metricsAddr, "metrics-addr", "", "serve GET /metrics on this address instead of on --addr (default: on --addr, no credential needed)")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	if err := parse(fs, e, args); err != nil {
		return err
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
	log.Info("serving", "url", "http://"+ln.Addr().String(), "backend", s.Dialect())
	return serveWith(ctx, e, log, ln, mln, s, nil)
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
	s.RegisterMetrics(reg)
	return reg
}

// handler is the API plus the MCP endpoint for agents (streamable HTTP,
// stateless, so any instance can answer any request) and the web UI.
func handler(s *sqlstore.DB, log *slog.Logger, st *stack) http.Handler {
	return handlerWith(s, log, st, nil, false)
}

// handlerWith is handler with the API's requests counted in reg (when not
// nil) and, when mountMetrics is set, GET /metrics served from reg. Without
// it /metrics is the API's, which answers 404.
func handlerWith(s *sqlstore.DB, log *slog.Logger, st *stack, reg *metrics.Registry, mountMetrics bool) http.Handler {
	mux := http.NewServeMux()
	if reg != nil && mountMetrics {
		mux.Handle("GET /metrics", reg.Handler(scrapeTimeout))
	}
	mcpHandler := mcp.Handler(s, mcp.Options{Tools: st.reg, Log: log, ChangeDesk: st.change})
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/mcp/", mcpHandler)
	// The web UI: server-rendered pages on their own paths; everything
	// else is the API's, as before.
	webUI := web.New(web.Options{Store: s, BugDesk: st.desk, ChangeDesk: st.change, Log: log})
	for _, p := range web.Paths() {
		mux.Handle(p, webUI)
	}
	mux.Handle("/", httpapi.New(s, log, httpapi.WithTools(st.reg), httpapi.WithDesk(st.desk), httpapi.WithChangeDesk(st.change),
		httpapi.WithNotify(st.notify), httpapi.WithMetrics(reg)))
	return mux
}

// serveUntilDone serves until ctx ends, then drains in-flight requests for
// up to 15 s before closing. /metrics is served on ln.
func serveUntilDone(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, s *sqlstore.DB, st *stack) error {
	return serveWith(ctx, e, log, ln, nil, s, st)
}

// serveWith is serveUntilDone with /metrics on its own listener mln, when
// not nil, instead of on ln.
func serveWith(ctx context.Context, e *env, log *slog.Logger, ln, mln net.Listener, s *sqlstore.DB, st *stack) error {
	if mln != nil {
		defer mln.Close()
	}
	if st == nil {
		var err error
		if st, err = newStack(e, s, log, nil); err != nil {
			return err
		}
	}
	// This process's share of the job queue: triage, decisions and the
	// bug loop. Several processes on one PostgreSQL database share it.
	stopJobs, err := s.StartJobs(ctx, st.workers(log), 4)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := stopJobs(sctx); err != nil {
			log.Error("stop job workers", "err", err)
		}
	}()
	reg := newMetrics(s, log)
	srv := httpapi.NewServer(ln.Addr().String(), handlerWith(s, log, st, reg, mln == nil))
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
