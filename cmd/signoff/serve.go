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
	var addr, logFormat string
	fs := newFlags("serve", "signoff serve [--addr 127.0.0.1:8080] [--db PATH|URL] [--key FILE]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address")
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
	log.Info("serving", "url", "http://"+ln.Addr().String(), "backend", s.Dialect())
	return serveUntilDone(ctx, e, log, ln, s, nil)
}

// handler is the API plus the MCP endpoint for agents (streamable HTTP,
// stateless, so any instance can answer any request) and the web UI.
func handler(s *sqlstore.DB, log *slog.Logger, st *stack) http.Handler {
	mux := http.NewServeMux()
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
		httpapi.WithNotify(st.notify)))
	return mux
}

// serveUntilDone serves until ctx ends, then drains in-flight requests for
// up to 15 s before closing.
func serveUntilDone(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, s *sqlstore.DB, st *stack) error {
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
	srv := httpapi.NewServer(ln.Addr().String(), handler(s, log, st))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
