// Command signoff is the Signoff server and CLI. It only wires packages
// together: every decision lives in the packages it calls.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"

	"github.com/signoff-dev/signoff"
)

// Set with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands = map[string]command{
	"version":   {"print the version and commit", runVersion},
	"serve":     {"run the HTTP API", runServe},
	"worker":    {"take jobs from the queue without serving HTTP (--queues triage,agent,sandbox,outbox,default)", runWorker},
	"demo":      {"start a local server with demo data on SQLite", runDemo},
	"migrate":   {"bring the database schema up to date", runMigrate},
	"workspace": {"create or list workspaces (create|list)", runWorkspace},
	"actor":     {"add, list, disable or enable actors (add|list|disable|enable)", runActor},
	"token":     {"create, list or revoke API tokens (create|list|revoke)", runToken},
	"ledger":    {"verify the hash-chained ledger, or print its signed heads to publish (verify|head)", runLedger},
	"doctor":    {"check a deployment: database, migrations, ledger, job tables, sandbox, keys, clock", runDoctor},
	"backup":    {"copy a live SQLite database to a file and verify the copy (PostgreSQL: prints the pg_dump procedure)", runBackup},
	"restore":   {"put a verified backup in place of a SQLite database (--force moves the old one aside)", runRestore},
	"keys":      {"show the server's signing key, create and register your approval key, list or revoke approval keys (show|init|register|list|revoke)", runKeysCommand},
	"airlock":   {"sanitize text from stdin and print the dossier as JSON", runAirlock},
	"agent":     {"run agent tasks or list agents (run|worker|list)", runAgent},
	"roles":     {"show or set the workspace's agent role configuration (show|set)", runRoles},
	"mcp":       {"serve MCP to one agent on stdin/stdout (--stdio)", runMCP},
	"triage":    {"run the triage crew on a dataset (eval|run)", runTriage},
	"verify":    {"verify a candidate fix against a frozen harness in a sandbox", runVerify},
	"evidence":  {"check an evidence bundle offline (verify)", runEvidence},
	"sample":    {"write a sample project as a git repository (shoplite)", runSample},
	"harness":   {"derive a harness from a fix commit (init), or show a case's reproduction (its test source in full) or approve or reject it as a member of staff (show|review)", runHarness},
	"approve":   {"show a case's approval card and sign your approval or rejection of it", runApprove},
	"merge":     {"merge an approved case's candidate", runMerge},
	"reverify":  {"rebase an approved candidate onto the current main and verify it again", runReverify},
	"fix":       {"submit a patch as a candidate fix for a case (submit)", runFix},
	"repo":      {"show or set a project's repository settings (show|set)", runRepo},
	"change":    {"request, plan, show, approve, execute or roll back a change; show or set the change policy (request|plan|show|approve|execute|rollback|policy)", runChange},
	"flags":     {"list or show a project's feature flags; read-only: flags change through change requests (list|get)", runFlags},
	"outbox":    {"list or show notification messages and their delivery attempts, re-drive a dead one (list|show|retry)", runOutbox},
	"channel":   {"configure or list notification channels: webhook, Slack, Mattermost, e-mail (put|list)", runChannel},
	"chat":      {"map a Slack or Mattermost user to a person, so their chat answers count as theirs (map)", runChat},
	"bench":     {"load generation against a running server (load), the cost of an idle server (idle)", runBench},

	"login-link": {"print a one-time sign-in link to the web UI for a person (15 minutes, single use)", runLoginLink},
}

// env is what commands read and write, so tests can run them in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "signoff: unknown command %q\n\n", args[0])
		usage(e.stderr)
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, new(*exitStatus)):
		return exitStatusCode(err)
	case errors.As(err, new(*verifyFailed)), errors.As(err, new(*errBelowMin)):
		fmt.Fprintf(e.stderr, "signoff %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintf(e.stderr, "signoff %s: %s\n", args[0], describe(err))
	return signoff.Mapping(err).ExitCode
}

// describe shows domain errors by their message and everything else in full:
// the CLI runs on the operator's machine, so there is nothing to hide.
func describe(err error) string {
	var se *signoff.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Signoff: agents draft, people decide, the reporter has the last word.")
	fmt.Fprintln(w, "\nUsage: signoff <command> [flags]   (signoff <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

func runVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags("version", "signoff version")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "signoff %s (commit %s)\n", version, buildCommit())
	return nil
}

func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
