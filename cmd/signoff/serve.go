package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/samples"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
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
	return serveUntilDone(ctx, e, log, ln, s)
}

// startWorkers runs this process's share of the job queue: triage of
// reported bugs and resumption after decisions. Several processes on one
// PostgreSQL database share the work.
func startWorkers(ctx context.Context, e *env, s *sqlstore.DB, log *slog.Logger) (func(context.Context) error, error) {
	fac, err := providers(e, "", s)
	if err != nil {
		return nil, err
	}
	reg := toolRegistry()
	r := &crew.Runner{Store: s, Runtime: &agent.Runtime{Store: s, Tools: reg, Providers: fac.Make, Log: log}, Tools: reg}
	return s.StartJobs(ctx, r.Workers(log), 4)
}

// handler is the API plus the MCP endpoint for agents (streamable HTTP,
// stateless, so any instance can answer any request).
func handler(s *sqlstore.DB, log *slog.Logger) http.Handler {
	reg := toolRegistry()
	mux := http.NewServeMux()
	mcpHandler := mcp.Handler(s, mcp.Options{Tools: reg, Log: log})
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/mcp/", mcpHandler)
	mux.Handle("/", httpapi.New(s, log, httpapi.WithTools(reg)))
	return mux
}

// serveUntilDone serves until ctx ends, then drains in-flight requests for
// up to 15 s before closing.
func serveUntilDone(ctx context.Context, e *env, log *slog.Logger, ln net.Listener, s *sqlstore.DB) error {
	stopJobs, err := startWorkers(ctx, e, s, log)
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
	srv := httpapi.NewServer(ln.Addr().String(), handler(s, log))
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

func runDemo(ctx context.Context, e *env, args []string) error {
	var addr, dir string
	fs := newFlags("demo", "signoff demo [--addr 127.0.0.1:8080] [--dir DIR]")
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address (a free port is chosen if this one is taken)")
	fs.StringVar(&dir, "dir", "", "keep the demo database and key here (default: a new temporary directory)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "signoff-demo-"); err != nil {
			return err
		}
	}
	dbf := dbFlags{db: filepath.Join(dir, "signoff.db"), key: filepath.Join(dir, "signoff.key")}
	s, err := dbf.openRW(ctx, e, true)
	if err != nil {
		return err
	}
	defer s.Close()
	w, owner, err := s.CreateWorkspace(ctx, "Demo", "demo-owner")
	if err != nil {
		return err
	}
	_, secret, err := s.CreateToken(ctx, signoff.CLIActor(w.ID), owner.ID, "demo", nil)
	if err != nil {
		return err
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite", Description: "sample shop (its repository arrives with the bug loop)"})
	if err != nil {
		return err
	}
	c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "[simulated report] coupon applied twice at checkout"})
	if err != nil {
		return err
	}
	// The triage crew's sample project: its tracker, crash log, releases and
	// CODEOWNERS, and a triager agent, so public reports to it are triaged
	// live by the builtin roles.
	d, err := triage.LoadDataset(samples.TriageDataset())
	if err != nil {
		return err
	}
	tp, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "triage-sample", Description: "sample mobile game (" + d.Releases.Product + "): tracker, crash log, releases and CODEOWNERS from the sample dataset"})
	if err != nil {
		return err
	}
	if err := s.ImportDataset(ctx, owner, tp.ID, d); err != nil {
		return err
	}
	if _, err := s.CreateActor(ctx, owner, "triage-crew", signoff.RoleTriager); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(e.stdout, `Signoff demo (SQLite, builtin data)

  server     %[1]s
  database   %[2]s
  workspace  %[3]s
  owner      %[4]s   token: %[5]s

What is here so far: a workspace, a project and one bug case whose report
text is SIMULATED (written by this demo, not by a user), and a second project
holding the AUTHORED sample triage data (a tracker, crash log, releases and
CODEOWNERS written by people, not by a model). Every ledger event is LIVE: it
was executed and signed by this process.

Try:
  curl -s -H 'Authorization: Bearer %[5]s' %[1]s/api/v1/cases
  curl -s -H 'Authorization: Bearer %[5]s' -H 'Content-Type: application/json' \
       -d '{"command":"start_triage"}' %[1]s/api/v1/cases/%[6]s/transitions
  curl -s -H 'Authorization: Bearer %[5]s' %[1]s/api/v1/cases/%[6]s/events

File a public report (no account; it passes the airlock: try pasting an
e-mail address, a card number or "ignore previous instructions"):
  curl -s -H 'Content-Type: application/json' \
       -d '{"text":"Coupon applied twice. Mail me at ana@example.com"}' \
       %[1]s/api/v1/projects/%[7]s/reports
  curl -s %[1]s/api/v1/track/<tracking token from the answer>

Watch the triage crew (builtin roles, evidence LIVE) take a public report to
the sample game project: a second report of the same crash lands on the first
one's ticket; a high-severity ticket waits for a person at the gate.
  curl -s -H 'Content-Type: application/json' \
       -d '{"text":"The game crashes every time I open the shop from level select","device":"Pixel 8","os":"Android 15","app_version":"2.4.1"}' \
       %[1]s/api/v1/projects/%[8]s/reports
  curl -s -H 'Authorization: Bearer %[5]s' %[1]s/api/v1/cases/<case_id from the answer>/triage
  (answer a gate: POST %[1]s/api/v1/decisions/<decision id>/decide
   {"subject_digest":"...","approve":true} with the owner token)
  signoff triage eval --dataset samples/orbit_run      # the whole sample inbox, scored

  signoff ledger verify --db %[2]s
  echo 'my key is AKIAIOSFODNN7EXAMPLE' | signoff airlock

("signoff" above is "go run ./cmd/signoff" from a checkout; "make build" puts
the binary in bin/.) Press Ctrl-C to stop.
`, url, dbf.db, w.ID, owner.ID, secret, c.ID, p.ID, tp.ID)
	return serveUntilDone(ctx, e, newLogger(e.stderr, "text"), ln, s)
}
