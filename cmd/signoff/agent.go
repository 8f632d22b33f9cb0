package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/openai"
	"github.com/signoff-dev/signoff/sqlstore"
)

// toolRegistry is every tool this build offers to agents.
// toolRegistry knows every tool, for checking role configurations and for
// running triage tasks in-process; the bug desk's tools answer that the
// desk is not running here (they need signoff serve or signoff worker).
func toolRegistry() *agent.Registry {
	return toolRegistryFor(&bugdesk.Desk{}, &changedesk.Desk{})
}

// providers makes the provider each role names, with no fallback: a role
// configured for openai whose key variable is unset fails, it does not
// quietly run as something else.
func providers(e *env, fixtures string, st signoff.Store) (agent.Factory, error) {
	b := agent.NewBuiltin()
	crew.RegisterBuiltin(b, st)
	b.Register(bugdesk.RoleReviewer, reviewPolicy)
	b.Register(changedesk.RolePlanner, changedesk.BuiltinPlanner)
	f := agent.Factory{
		Builtin: b,
		OpenAI: func(rc agent.RoleConfig) (agent.Provider, error) {
			key := ""
			if rc.APIKeyEnv != "" {
				if key = e.getenv(rc.APIKeyEnv); key == "" {
					return nil, signoff.Errorf(signoff.EINVALID, "role %s: environment variable %s (its API key) is not set", rc.Name, rc.APIKeyEnv)
				}
			}
			return openai.New(openai.Config{BaseURL: rc.BaseURL, Model: rc.Model, APIKey: key})
		},
	}
	if fixtures != "" {
		a, err := agent.LoadAuthored(os.DirFS(fixtures), ".")
		if err != nil {
			return agent.Factory{}, fmt.Errorf("load authored fixtures: %w", err)
		}
		f.Authored = a
	}
	return f, nil
}

// recordReplay is what --record FILE and --replay FILE open: a recorder
// writing every model exchange to a new transcript, or a transcript whose
// answers replace the openai and authored roles' (labelled replayed, or
// authored for authored roles). The zero value does neither; a nil one
// too.
type recordReplay struct {
	Record *agent.Recorder
	Replay *agent.Replay
	path   string
	file   *os.File
}

// openRecordReplay opens the transcript one of record and replay names.
// A recording never overwrites a file: transcripts are evidence.
func openRecordReplay(record, replay string) (*recordReplay, error) {
	switch {
	case record != "" && replay != "":
		return nil, signoff.Errorf(signoff.EINVALID, "--record and --replay cannot be used together")
	case record != "":
		f, err := os.OpenFile(record, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, signoff.Errorf(signoff.ECONFLICT, "--record %s: the file exists; a transcript is never overwritten", record)
			}
			return nil, fmt.Errorf("--record: %w", err)
		}
		return &recordReplay{Record: agent.NewRecorder(f), path: record, file: f}, nil
	case replay != "":
		f, err := os.Open(replay)
		if err != nil {
			return nil, fmt.Errorf("--replay: %w", err)
		}
		defer f.Close()
		rp, err := agent.LoadReplay(f)
		if err != nil {
			return nil, fmt.Errorf("--replay %s: %w", replay, err)
		}
		return &recordReplay{Replay: rp, path: replay}, nil
	}
	return &recordReplay{}, nil
}

// apply makes f record or replay. A recording redacts the API key of
// every openai role it makes.
func (rr *recordReplay) apply(e *env, f *agent.Factory) {
	if rr == nil {
		return
	}
	f.Replay = rr.Replay
	if rr.Record == nil {
		return
	}
	f.Record = rr.Record
	if inner := f.OpenAI; inner != nil {
		f.OpenAI = func(rc agent.RoleConfig) (agent.Provider, error) {
			if rc.APIKeyEnv != "" {
				rr.Record.Redact(e.getenv(rc.APIKeyEnv))
			}
			return inner(rc)
		}
	}
}

// Close finishes a recording (its trailer marks it complete) and says
// what was recorded or replayed on w.
func (rr *recordReplay) Close(w io.Writer) error {
	switch {
	case rr == nil:
		return nil
	case rr.Record != nil:
		err := rr.Record.Close()
		if cerr := rr.file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--record %s: %w", rr.path, err)
		}
		fmt.Fprintf(w, "recorded %d model exchange(s) to %s\n", rr.Record.Exchanges(), rr.path)
	case rr.Replay != nil:
		n := rr.Replay.Exchanges()
		fmt.Fprintf(w, "replayed %d of %d recorded exchange(s) from %s\n", n-rr.Replay.Unused(), n, rr.path)
	}
	return nil
}

// diverged is the first call of a replay that matched no recorded
// exchange: the run is not the recorded one.
func (rr *recordReplay) diverged() error {
	if rr == nil || rr.Replay == nil {
		return nil
	}
	return rr.Replay.Diverged()
}

func runAgent(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "agent", args, "run", "worker", "list")
	if err != nil {
		return err
	}
	var d dbFlags
	var ws, role, taskID, roles, fixtures, record, replay string
	var poll time.Duration
	var once bool
	syn := map[string]string{
		"run":    "signoff agent run --workspace ID --role ROLE --task ID [--fixtures DIR] [--record FILE|--replay FILE] [--db PATH|URL]",
		"worker": "signoff agent worker --workspace ID --roles R1,R2 [--poll 2s] [--once] [--fixtures DIR] [--record FILE|--replay FILE] [--db PATH|URL]",
		"list":   "signoff agent list --workspace ID [--db PATH|URL]",
	}[verb]
	fs := newFlags("agent "+verb, syn)
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	switch verb {
	case "run":
		fs.StringVar(&role, "role", "", "the role the task is for (required): a configured role name")
		fs.StringVar(&taskID, "task", "", "task id (required)")
		fs.StringVar(&fixtures, "fixtures", "", "folder of authored fixtures for roles whose provider is authored")
	case "worker":
		fs.StringVar(&roles, "roles", "", "comma-separated roles whose tasks to take (required)")
		fs.DurationVar(&poll, "poll", 2*time.Second, "how often to look for new tasks")
		fs.BoolVar(&once, "once", false, "take the tasks there are now, then exit")
		fs.StringVar(&fixtures, "fixtures", "", "folder of authored fixtures for roles whose provider is authored")
	}
	if verb != "list" {
		fs.StringVar(&record, "record", "", "record every model exchange to this new transcript file")
		fs.StringVar(&replay, "replay", "", "answer the openai and authored roles from this recorded transcript (evidence replayed)")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "workspace", ws); err != nil {
		return err
	}
	if verb == "list" {
		return listAgents(ctx, e, &d, ws)
	}
	if verb == "run" {
		if err := required(fs, e, "role", role, "task", taskID); err != nil {
			return err
		}
	} else if err := required(fs, e, "roles", roles); err != nil {
		return err
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	fac, err := providers(e, fixtures, s)
	if err != nil {
		return err
	}
	rr, err := openRecordReplay(record, replay)
	if err != nil {
		return err
	}
	rr.apply(e, &fac)
	reg := toolRegistry()
	rt := &agent.Runtime{Store: s, Tools: reg, Providers: fac.Make}
	if verb == "run" {
		res, err := runOne(ctx, s, rt, ws, role, taskID, reg)
		if err == nil {
			err = printRun(e, &d, res)
		}
		return firstError(err, rr.Close(e.stderr))
	}
	err = work(ctx, e, &d, s, rt, ws, strings.Split(roles, ","), poll, once, reg, rr.diverged)
	return firstError(err, rr.Close(e.stderr))
}

// firstError is the first of errs that is not nil: the command's own
// error keeps its code when closing fails too.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runOne runs one task as the agent identity it is assigned to. The CLI
// reads the task with its database access, but the run itself acts as that
// agent: every ledger entry names the agent, and the store's checks for
// agents apply.
func runOne(ctx context.Context, s *sqlstore.DB, rt *agent.Runtime, ws, role, taskID string, reg *agent.Registry) (agent.RunResult, error) {
	cli := signoff.CLIActor(ws)
	t, err := s.GetTask(ctx, cli, taskID)
	if err != nil {
		return agent.RunResult{}, err
	}
	cfg, err := agent.LoadConfig(ctx, s, ws, reg)
	if err != nil {
		return agent.RunResult{}, err
	}
	rc, err := cfg.ForTask(t)
	if err != nil {
		return agent.RunResult{}, err
	}
	if role != rc.Name && role != string(rc.Actor) {
		return agent.RunResult{}, signoff.Errorf(signoff.EINVALID, "task %s is for role %s, not %s", t.ID, rc.Name, role)
	}
	a, err := s.GetActor(ctx, ws, t.AssigneeID)
	if err != nil {
		return agent.RunResult{}, err
	}
	if a.DisabledAt != nil {
		return agent.RunResult{}, signoff.Errorf(signoff.EFORBIDDEN, "agent %s is disabled", a.ID)
	}
	return rt.Run(ctx, a, t.ID, cfg)
}

func printRun(e *env, d *dbFlags, res agent.RunResult) error {
	if d.json {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "task %s: %s after %d turn(s), %d+%d tokens, $%.6f, evidence %s\n",
		res.TaskID, res.Outcome, res.Turns, res.PromptTokens, res.CompletionTokens, float64(res.CostMicros)/1e6, res.Evidence)
	if res.Reason != "" {
		fmt.Fprintf(e.stdout, "  reason: %s\n", res.Reason)
	}
	if res.Next != nil {
		fmt.Fprintf(e.stdout, "  next: task %s for %s (%s)\n", res.Next.ID, res.Next.Kind, res.Next.Role)
	}
	return nil
}

// work keeps taking the roles' open tasks. Tasks are picked up by polling;
// a task that fails with a provider error stays open and is retried on a
// later round. halt, when it reports an error after a round (a replay that
// diverged from its recording), stops the worker with it.
func work(ctx context.Context, e *env, d *dbFlags, s *sqlstore.DB, rt *agent.Runtime, ws string, roles []string, poll time.Duration, once bool, reg *agent.Registry, halt func() error) error {
	cli := signoff.CLIActor(ws)
	for {
		cfg, err := agent.LoadConfig(ctx, s, ws, reg)
		if err != nil {
			return err
		}
		ran := 0
		for _, status := range []string{signoff.TaskOpen, signoff.TaskRecorded} {
			tasks, err := s.ListTasks(ctx, cli, signoff.TaskFilter{Status: status, Limit: 100})
			if err != nil {
				return err
			}
			slices.Reverse(tasks) // oldest first
			for _, t := range tasks {
				rc, err := cfg.ForTask(t)
				if err != nil || rc.Provider == agent.ProviderExternal || !(slices.Contains(roles, rc.Name) || slices.Contains(roles, string(rc.Actor))) {
					continue
				}
				res, err := runOne(ctx, s, rt, ws, rc.Name, t.ID, reg)
				if ctx.Err() != nil {
					return nil
				}
				if err != nil {
					fmt.Fprintf(e.stderr, "task %s: %s\n", t.ID, describe(err))
					continue
				}
				ran++
				if err := printRun(e, d, res); err != nil {
					return err
				}
			}
		}
		if err := halt(); err != nil {
			return err
		}
		if once {
			return nil
		}
		if ran > 0 {
			continue // more may have been handed off to us
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

func listAgents(ctx context.Context, e *env, d *dbFlags, ws string) error {
	s, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.ListAgents(ctx, ws, signoff.DefaultPresenceWindow)
	if err != nil || d.json {
		return firstErr(err, func() error { return printJSON(e, list) })
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tCONNECTED\tLAST SEEN\tCLIENT")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\n", a.ID, a.Name, a.Role, a.Connected, fmtTime(a.LastSeenAt), a.Client)
	}
	return tw.Flush()
}

func runRoles(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "roles", args, "show", "set")
	if err != nil {
		return err
	}
	var d dbFlags
	var ws, file string
	syn := "signoff roles show --workspace ID [--db PATH|URL]"
	if verb == "set" {
		syn = "signoff roles set --workspace ID --file roles.yaml [--db PATH|URL]"
	}
	fs := newFlags("roles "+verb, syn)
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	if verb == "set" {
		fs.StringVar(&file, "file", "", "YAML role configuration (required; - for stdin)")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "workspace", ws); err != nil {
		return err
	}
	reg := toolRegistry()
	if verb == "show" {
		s, err := d.open(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		cfg, err := agent.LoadConfig(ctx, s, ws, reg)
		if err != nil {
			return err
		}
		if d.json {
			return printJSON(e, cfg)
		}
		b, err := cfg.Marshal()
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(b)
		return err
	}
	if err := required(fs, e, "file", file); err != nil {
		return err
	}
	var b []byte
	if file == "-" {
		b, err = readAllLimited(e, 64<<10)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return err
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.GetWorkspace(ctx, ws); err != nil {
		return err
	}
	cfg, err := agent.SaveConfig(ctx, s, signoff.CLIActor(ws), b, reg)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "role configuration saved: %d roles\n", len(cfg.Roles))
	return nil
}

func readAllLimited(e *env, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(e.stdin, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, signoff.Errorf(signoff.ETOOLARGE, "input is larger than %d bytes", limit)
	}
	return b, nil
}

// runMCP serves the MCP protocol on stdin/stdout for one agent, whose token
// comes from the environment (never a flag: flags show up in process
// listings).
func runMCP(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var stdio bool
	fs := newFlags("mcp", "SIGNOFF_TOKEN=so_... signoff mcp --stdio [--db PATH|URL]")
	addDBFlags(fs, e, &d)
	fs.BoolVar(&stdio, "stdio", false, "serve MCP on stdin/stdout (the HTTP transport is served by signoff serve at /mcp)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if !stdio {
		fmt.Fprintln(e.stderr, "pass --stdio; streamable HTTP is served by signoff serve at /mcp")
		fs.Usage()
		return errUsage
	}
	token := e.getenv("SIGNOFF_TOKEN")
	if token == "" {
		return signoff.Errorf(signoff.EUNAUTHORIZED, "set SIGNOFF_TOKEN to the agent's API token")
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	return mcp.ServeStdio(ctx, s, token, mcp.Options{Tools: toolRegistry(), ChangeDesk: newChangeDesk(s, slog.New(slog.NewTextHandler(e.stderr, nil)))}, e.stdin, e.stdout)
}
