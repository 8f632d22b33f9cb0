package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/samples"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/web"
	"github.com/signoff-dev/signoff/webhook"
)

// demo is everything `signoff demo` sets up.
type demo struct {
	dir      string
	s        *sqlstore.DB
	st       *stack
	ws       signoff.Workspace
	owner    signoff.Actor
	operator signoff.Actor
	// Tokens are demo credentials, printed for the newcomer to use.
	ownerToken, operatorToken string
	shop, game                signoff.Project
	sample                    *shoplite.Sample
	prod                      *shoplite.Server
	live                      shoplite.Deployed
	opKey                     ed25519.PrivateKey
	opKeyPath                 string
	secret                    string
	url                       string
	ln                        net.Listener
	// agents is how the reproducer and fixer run.
	agents demoAgents
	hooks  demoHooks
	// signIn is the operator's one-time sign-in link printEarly made ("" if
	// none): the demo makes one only, and printIntro shows it again.
	signIn        string
	signInExpires time.Time
}

func runDemo(ctx context.Context, e *env, args []string) error {
	return runDemoWith(ctx, e, args, demoHooks{})
}

// demoHooks let a test see into the demo's start.
type demoHooks struct {
	// beforeCompile, when set, runs as ShopLite's compile step begins,
	// with the build's context: a test holds it to look at the demo while
	// ShopLite is not built yet. An error fails the step.
	beforeCompile func(context.Context) error
}

// runDemoWith is runDemo with hooks.
func runDemoWith(ctx context.Context, e *env, args []string, hooks demoHooks) error {
	var addr, dir, walk, provider, record, replay string
	var verbose bool
	var a demoAgents
	fs := newFlags("demo", "signoff demo [--addr 127.0.0.1:8080] [--dir DIR] [--verbose] [--walk bug|change] [--provider openai --base-url URL --model NAME [--api-key-env VAR]] [--record FILE | --replay FILE]")
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address, walks included (a free port is chosen if this one is taken)")
	fs.StringVar(&dir, "dir", "", "keep the demo's database, keys and ShopLite repository here; an earlier demo's state in it is replaced, a folder with files of the same names no demo made is refused (default: a new temporary directory, deleted on Ctrl-C)")
	fs.BoolVar(&verbose, "verbose", false, "log every HTTP request and job in the terminal too (always in DIR/demo.log)")
	fs.StringVar(&walk, "walk", "", `run a whole loop headlessly and exit: "bug" walks the ShopLite coupon bug (with a model: all three ShopLite bugs) from report to the reporter's last word; "change" walks the checkout flag incident through the change desk`)
	fs.StringVar(&provider, "provider", agent.ProviderAuthored, `who writes the reproducer's tests and the fixer's patches: "authored" (the demo's human-written fixtures for the coupon bug) or "openai" (a model at --base-url, any OpenAI-compatible endpoint with tool calling, e.g. Ollama)`)
	fs.StringVar(&a.baseURL, "base-url", "", "with --provider openai: the endpoint's base URL, e.g. http://localhost:11434/v1")
	fs.StringVar(&a.modelName, "model", "", "with --provider openai: the model, e.g. qwen2.5-coder:14b")
	fs.StringVar(&a.keyEnv, "api-key-env", "", "with --provider openai: the environment variable holding the API key (none for a local server)")
	fs.StringVar(&record, "record", "", "with --walk bug: write every model exchange of the walk to FILE (a replay transcript)")
	fs.StringVar(&replay, "replay", "", "with --walk bug: answer the reproducer and fixer from the transcript FILE that --record wrote, instead of calling a model")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if walk != "" && walk != "bug" && walk != "change" {
		return signoff.Errorf(signoff.EINVALID, `--walk takes "bug" or "change"`)
	}
	if err := a.check(provider, walk, record, replay); err != nil {
		return err
	}
	rr, err := openRecordReplay(record, replay)
	if err != nil {
		return err
	}
	a.rr = rr
	defer func() {
		if err := rr.Close(e.stdout); err != nil {
			fmt.Fprintf(e.stderr, "signoff demo: %v\n", err)
		}
	}()
	if replay != "" {
		if err := a.replayedRoles(replay); err != nil {
			return err
		}
	}
	created := dir == ""
	if created {
		var err error
		if dir, err = os.MkdirTemp("", "signoff-demo-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// The first line comes at once: a first start can take a minute
	// (ShopLite is compiled with a cold Go build cache), and a silent
	// terminal looks stuck.
	where := "yours, from --dir: kept after the demo stops"
	if created {
		where = "a new temporary folder, deleted on Ctrl-C"
	}
	fmt.Fprintf(e.stdout, "Signoff demo: a workspace on SQLite with ShopLite, a sample Go shop with real bugs, in %s (%s).\n", dir, where)
	// A folder the demo made holds private keys and is of no use once the
	// demo is stopped: Ctrl-C (or a failed setup) deletes it. A --dir is
	// the user's and stays.
	var setupErr error
	defer func() {
		if created && (ctx.Err() != nil || setupErr != nil) {
			if err := os.RemoveAll(dir); err != nil {
				fmt.Fprintf(e.stderr, "signoff demo: remove %s: %v\n", dir, err)
			} else {
				fmt.Fprintf(e.stderr, "signoff demo: removed %s\n", dir)
			}
		}
	}()
	replaced, err := clearDemoDir(dir)
	if err != nil {
		setupErr = err
		return err
	}
	if err := markDemoDir(dir); err != nil {
		setupErr = err
		return err
	}
	log, closeLog, err := demoLogger(e, dir, verbose)
	if err != nil {
		setupErr = err
		return err
	}
	defer closeLog()
	if replaced {
		fmt.Fprintf(e.stdout, "%s held an earlier demo: its database, keys and ShopLite were replaced by a new demo.\n", dir)
	}
	start := newDemoStart(e)
	d, err := openDemo(ctx, e, dir, addr, log, a, start)
	if err != nil {
		setupErr = err
		return err
	}
	defer d.s.Close()
	defer d.prod.Stop()
	d.hooks = hooks
	if walk != "" {
		// A walk needs ShopLite at once: it is built in the foreground.
		if err := d.finishShop(ctx, start); err != nil {
			setupErr = err
			return err
		}
	}
	switch walk {
	case "bug":
		if err := d.walkBug(ctx, e, log, a.stories()); err != nil {
			return err
		}
		// A walk that ended well but asked what the recording never
		// answered is not the recorded run.
		return rr.diverged()
	case "change":
		return d.walkChange(ctx, e, log)
	}
	return d.serveWhileBuilding(ctx, e, log, start, created)
}

// serveWhileBuilding serves the desk and the API at once and builds
// ShopLite meanwhile: the desk's notice says how far it is, and the
// walkthrough is printed once ShopLite is ready. A failed build is shown
// in the terminal and on the desk, and the demo goes on serving the rest
// (the triage sample): the person may be reading the desk in a browser
// by then, and a demo that vanished would leave them the terminal only.
// It exits non-zero when stopped, as a failed setup does.
func (d *demo) serveWhileBuilding(ctx context.Context, e *env, log *slog.Logger, start *demoStart, temporary bool) error {
	d.printEarly(e)
	bctx, cancelBuild := context.WithCancel(ctx)
	defer cancelBuild()
	// failed is the build's error when it failed of itself, not because
	// the demo was stopped (which kills go build too).
	failed := make(chan error, 1)
	go func() {
		err := d.finishShop(bctx, start)
		switch {
		case err == nil:
			d.printIntro(e, temporary)
		case bctx.Err() == nil:
			fmt.Fprintf(e.stderr, "signoff demo: %s: %v\n", shopFailed(err), err)
			fmt.Fprintln(e.stdout, shopFailed(err)+" (above); the desk says so too. The rest of the demo (the triage sample project) keeps serving. Press Ctrl-C to stop.")
			failed <- err
			return
		}
		failed <- nil
	}()
	err := serveUntilDone(ctx, e, log, d.ln, d.s, d.st, serveConfig{approvalKey: d.opKeyPath, notice: start.notice})
	// Stopped (or the server failed) while ShopLite may still be building:
	// the build ends before the demo's folder can go.
	cancelBuild()
	berr := <-failed
	if err != nil && ctx.Err() == nil {
		return err
	}
	if berr != nil {
		return fmt.Errorf("%s: %w", shopFailed(berr), berr)
	}
	// Stopped by Ctrl-C, possibly while the jobs were still starting or
	// ShopLite was still building: that is a clean stop.
	return nil
}

// printEarly says, as soon as the server is up, where the desk is and
// that ShopLite is still to come.
func (d *demo) printEarly(e *env) {
	signIn := d.url + "/login (paste the operator token, printed when ShopLite is ready)"
	if code, link, err := d.s.CreateLoginLink(context.Background(), d.operator.ID, loginLinkTTL); err == nil {
		d.signIn, d.signInExpires = d.url+"/login/"+code, link.ExpiresAt
		signIn = d.signIn + "   (signs the operator in, once, within 15 minutes)"
	}
	fmt.Fprintf(e.stdout, "The desk is up at %s (web desk, API, MCP; %s/healthz answers). Sign in:\n  %s\n", d.url, d.url, signIn)
	fmt.Fprintln(e.stdout, "ShopLite is being built in the background; the desk shows how far. Its project, the walkthrough and the tokens follow when it is ready.")
}

// The steps of the demo's start, in order (demoSteps names them).
const (
	stepWorkspace = iota
	stepCompile
	stepStart
)

// demoSteps name the start's steps, as the terminal and the desk say
// them; short is for the line a terminal rewrites in place, which must
// fit on one row to be rewritten.
var demoSteps = []struct{ name, short string }{
	stepWorkspace: {"setting up the workspace (database, people, keys, the triage sample, ShopLite's repository)", "workspace"},
	stepCompile:   {"compiling ShopLite's production server (go build)", "compiling ShopLite"},
	stepStart:     {"starting ShopLite and adding its project", "starting ShopLite"},
}

// demoStart is how far the demo's start is: the step under way and its
// progress, or how it failed. The terminal hears each step as it begins
// and ends; the desk's notice reads it (notice). A nil *demoStart says
// nothing (setupDemo's tests).
type demoStart struct {
	out io.Writer
	// tty: out is a terminal, where the step under way is one line
	// rewritten in place; elsewhere (a log, a pipe) each report is a line.
	tty bool
	// first and every are when the step under way is first reported
	// while it runs, and how often after that.
	first, every time.Duration

	mu     sync.Mutex
	cur    int       // the step under way; len(demoSteps) once ShopLite is ready
	began  time.Time // when it began
	detail string    // its progress ("57 of 191 packages compiled")
	note   string    // a remark on it (say), for the desk too
	err    error     // why the start failed
	stop   chan struct{}
	ticker sync.WaitGroup
}

func newDemoStart(e *env) *demoStart {
	st := &demoStart{out: e.stdout, every: 10 * time.Second}
	if f, ok := e.stdout.(*os.File); ok && e.getenv("TERM") != "dumb" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			// A quick step shows its result only: the first report waits
			// a moment, so no line is left half-written for a message on
			// stderr to land on.
			st.tty, st.first, st.every = true, 300*time.Millisecond, time.Second
		}
	}
	return st
}

// stepLabel is step i as the terminal shows it: "[2/3] compiling ...".
func stepLabel(i int, short bool) string {
	name := demoSteps[i].name
	if short {
		name = demoSteps[i].short
	}
	return fmt.Sprintf("[%d/%d] %s", i+1, len(demoSteps), name)
}

// begin starts step i: a line saying so (on a terminal, once it has taken
// a moment), then a report every so often while it runs: the elapsed
// time, and its progress if it has any.
func (st *demoStart) begin(i int) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cur, st.began, st.detail, st.note = i, time.Now(), "", ""
	if !st.tty {
		fmt.Fprintln(st.out, stepLabel(i, false)+" …")
	}
	st.stop = make(chan struct{})
	st.ticker.Add(1)
	go st.tick(st.stop, i)
}

func (st *demoStart) tick(stop chan struct{}, i int) {
	defer st.ticker.Done()
	wait := st.every
	if st.first > 0 {
		wait = st.first
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		st.mu.Lock()
		st.report(i)
		st.mu.Unlock()
		t.Reset(st.every)
	}
}

// report writes how far step i is: on a terminal in place of the last
// report (short, to fit one row), elsewhere as a line of its own. st.mu
// is held.
func (st *demoStart) report(i int) {
	text := stepLabel(i, false) + " … "
	if st.tty {
		text = stepLabel(i, true) + ": "
	}
	if st.detail != "" {
		text += st.detail + ", "
	}
	text += seconds(time.Since(st.began)) + " so far"
	if st.tty {
		fmt.Fprintf(st.out, "\r\x1b[K%s", text)
		return
	}
	fmt.Fprintln(st.out, text)
}

// say remarks on the step under way: a line of its own in the terminal,
// and a sentence in the desk's notice.
func (st *demoStart) say(text string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.note = strings.TrimSpace(text)
	if st.tty {
		// In place of the step's report, which the next tick writes again.
		fmt.Fprintf(st.out, "\r\x1b[K%s\n", text)
		return
	}
	fmt.Fprintln(st.out, text)
}

// progress records how far the step under way is.
func (st *demoStart) progress(detail string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.detail = detail
}

// finish stops the ticker of the step under way and writes its last line.
func (st *demoStart) finish(outcome string) {
	st.mu.Lock()
	stop := st.stop
	st.stop = nil
	st.mu.Unlock()
	if stop != nil {
		close(stop)
		st.ticker.Wait()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	text := stepLabel(st.cur, false) + " … " + outcome
	if st.tty {
		fmt.Fprintf(st.out, "\r\x1b[K%s\n", text)
		return
	}
	fmt.Fprintln(st.out, text)
}

// end ends the step under way, with what it did if summary says.
func (st *demoStart) end(summary string) {
	if st == nil {
		return
	}
	out := "done in " + seconds(time.Since(st.began))
	if summary != "" {
		out += " (" + summary + ")"
	}
	st.finish(out)
}

// fail ends the step under way with err: the start stops there. A step
// cut short by Ctrl-C did not fail, and does not say so.
func (st *demoStart) fail(err error) {
	if st == nil {
		return
	}
	if errors.Is(err, context.Canceled) {
		st.finish("stopped after " + seconds(time.Since(st.began)))
		return
	}
	st.finish("FAILED after " + seconds(time.Since(st.began)))
	st.mu.Lock()
	defer st.mu.Unlock()
	st.err = err
}

// ready marks every step done: ShopLite serves.
func (st *demoStart) ready() {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cur = len(demoSteps)
}

// notice is the desk's note while ShopLite is not ready: the step under
// way, how far it is and what is left; or why it failed. None once
// ShopLite is ready.
func (st *demoStart) notice() (web.Notice, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		text := st.err.Error()
		if len(text) > 2000 {
			// The end of go build's output says what went wrong.
			text = "…" + strings.ToValidUTF8(text[len(text)-2000:], "")
		}
		return web.Notice{Heading: shopFailed(st.err) + ".", Failed: true,
			Text: "Step " + strconv.Itoa(st.cur+1) + " of " + strconv.Itoa(len(demoSteps)) + ", " + demoSteps[st.cur].name + ", failed:\n" + text +
				"\nThe rest of the demo (the triage sample project) works; the terminal has the whole output."}, true
	}
	if st.cur >= len(demoSteps) {
		return web.Notice{}, false
	}
	now := fmt.Sprintf("Step %d of %d: %s", st.cur+1, len(demoSteps), demoSteps[st.cur].name)
	if st.detail != "" {
		now += ": " + st.detail
	}
	now += ", " + seconds(time.Since(st.began)) + " so far."
	if st.note != "" {
		now += " " + st.note
	}
	var rest []string
	for _, step := range demoSteps[st.cur+1:] {
		rest = append(rest, step.name)
	}
	left := "Left: " + strings.Join(rest, "; then ") + "."
	if len(rest) == 0 {
		left = "That is the last step."
	}
	return web.Notice{Heading: "ShopLite is being built.", Ready: "ShopLite is ready: its project is on the desk.",
		Text: now + "\n" + left + "\nUntil then ShopLite's project is not on the desk; the triage sample project works already."}, true
}

// seconds says a duration in seconds, to a tenth.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

// demoState are the names the demo writes in its directory; an earlier
// demo's are removed before a new one starts there (clearDemoDir).
var demoState = []string{"signoff.db", "signoff.db-wal", "signoff.db-shm", "signoff.key", "operator-approval.key", "shoplite", "production", demoLogName}

// demoLogName is the demo's full log in its directory: every HTTP
// request and job, which the terminal leaves out unless --verbose.
const demoLogName = "demo.log"

// clearDemoDir removes an earlier demo's state from dir, so that --dir can
// be given again: a demo's workspace, keys and ShopLite repository are
// made fresh on every start (the old database's keys would otherwise be
// registered twice). Only the demo's own names are touched; it reports
// whether there was anything to replace. The names are common ones (a
// server's signoff.db and signoff.key, a project's production/): in a
// folder no demo marked (demoMarkName) nothing is removed and the demo is
// refused.
func clearDemoDir(dir string) (bool, error) {
	var present []string
	for _, name := range demoState {
		if _, err := os.Lstat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return false, fmt.Errorf("earlier demo in %s: %w", dir, err)
		}
		present = append(present, name)
	}
	if len(present) == 0 {
		return false, nil
	}
	if _, err := os.Lstat(filepath.Join(dir, demoMarkName)); err != nil {
		return false, fmt.Errorf("%s holds %s, which no signoff demo made there: the demo would replace them, so it does not start; give --dir an empty folder (or the folder of an earlier demo)",
			dir, strings.Join(present, ", "))
	}
	found := false
	for _, name := range present {
		if name != demoLogName {
			found = true
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return false, fmt.Errorf("replace the earlier demo in %s: %w", dir, err)
		}
	}
	return found, nil
}

// demoMarkName marks a folder as a demo's: written when a demo starts in
// it, and what clearDemoDir needs before it removes anything there.
const demoMarkName = ".signoff-demo"

// markDemoDir marks dir as holding a demo's state.
func markDemoDir(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, demoMarkName), []byte("a signoff demo's folder: signoff demo --dir replaces its state\n"), 0o600); err != nil {
		return fmt.Errorf("mark the demo folder: %w", err)
	}
	return nil
}

// demoLogger writes the whole log (every HTTP request and job, at info) to
// demo.log in dir, and to the terminal only warnings and errors, or
// everything with --verbose: the tokens and the sign-in link printed in
// the terminal must not scroll away under access lines.
func demoLogger(e *env, dir string, verbose bool) (*slog.Logger, func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, demoLogName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("demo log: %w", err)
	}
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewMultiHandler(slog.NewTextHandler(f, nil), slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})))
	return log, func() { f.Close() }, nil
}

// demoAgents is how the demo's reproducer and fixer run: on the authored
// fixtures (the default), on a model through an OpenAI-compatible
// endpoint, or answered from a transcript a recorded walk wrote.
type demoAgents struct {
	provider                   string
	baseURL, modelName, keyEnv string
	// rr records the walk's model exchanges, or answers them from a
	// recording (nil: neither).
	rr *recordReplay
}

func (a *demoAgents) check(provider, walk, record, replay string) error {
	a.provider = provider
	switch provider {
	case agent.ProviderAuthored:
		if a.baseURL != "" || a.modelName != "" || a.keyEnv != "" {
			return signoff.Errorf(signoff.EINVALID, "--base-url, --model and --api-key-env go with --provider openai")
		}
	case agent.ProviderOpenAI:
		if a.baseURL == "" || a.modelName == "" {
			return signoff.Errorf(signoff.EINVALID, "--provider openai needs --base-url and --model")
		}
		// Refused before anything is set up or printed, and never echoed:
		// a key put in the URL (user info, ?key=...) would otherwise be
		// shown in the walk's banner and kept in the workspace's roles.
		if u, err := url.Parse(a.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return signoff.Errorf(signoff.EINVALID, "--base-url must be an http(s) URL with a host and without credentials, a query or a fragment: give an API key through --api-key-env")
		}
		if replay != "" {
			return signoff.Errorf(signoff.EINVALID, "--replay answers from a transcript: it takes no --provider")
		}
	default:
		return signoff.Errorf(signoff.EINVALID, `--provider takes "authored" or "openai"`)
	}
	if (record != "" || replay != "") && walk != "bug" {
		return signoff.Errorf(signoff.EINVALID, "--record and --replay go with --walk bug")
	}
	if record != "" && replay != "" {
		return signoff.Errorf(signoff.EINVALID, "--record and --replay: choose one")
	}
	return nil
}

// replayedRoles configures the roles a transcript was recorded with: a
// model walk's openai roles, with the same model name so the requests
// match (the endpoint is never called), or else the authored ones.
func (a *demoAgents) replayedRoles(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--replay: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ex struct{ Role, Provider, Model string }
		if json.Unmarshal(line, &ex) != nil || (ex.Role != bugdesk.RoleReproducer && ex.Role != bugdesk.RoleFixer) {
			continue
		}
		if ex.Provider == agent.ProviderOpenAI {
			a.provider, a.modelName, a.baseURL = agent.ProviderOpenAI, ex.Model, replayBaseURL
			return nil
		}
	}
	return nil
}

// replayBaseURL is the endpoint a replayed model walk's roles name: the
// replay answers them, and .invalid never resolves, so nothing is called.
const replayBaseURL = "http://replay.invalid/v1"

// model reports whether the reproducer and fixer are a model's, live or
// replayed: the walk then takes all three ShopLite bugs.
func (a demoAgents) model() bool { return a.provider == agent.ProviderOpenAI }

func (a demoAgents) describe() string {
	switch {
	case a.rr != nil && a.rr.Replay != nil && a.model():
		return fmt.Sprintf("a recorded run of model %s, replayed", a.modelName)
	case a.model():
		where := a.baseURL
		if u, err := url.Parse(a.baseURL); err == nil {
			u.User = nil // never print credentials put in the URL
			where = u.Redacted()
		}
		return fmt.Sprintf("model %s at %s (live)", a.modelName, where)
	}
	return "authored fixtures"
}

// stories are the bugs the walk takes: the coupon bug, the only one with
// authored fixtures, or all three for a model.
func (a demoAgents) stories() []bugStory {
	if a.model() {
		return []bugStory{couponStory, negativeStory, overflowStory}
	}
	return []bugStory{couponStory}
}

// roles is the demo workspace's role configuration: the bug loop's roles
// with the reproducer and fixer on the authored fixtures or on the model
// (with a call timeout a local model on a laptop can meet), and the
// builtin reviewer noting candidates and change plans alike.
func (a demoAgents) roles() string {
	y := bugdesk.Roles(a.provider)
	if a.model() {
		extra := fmt.Sprintf("    provider: openai\n    base_url: %s\n    model: %s\n    timeout: 5m\n", strconv.Quote(a.baseURL), strconv.Quote(a.modelName))
		if a.keyEnv != "" {
			extra += fmt.Sprintf("    api_key_env: %s\n", strconv.Quote(a.keyEnv))
		}
		y = strings.ReplaceAll(y, "    provider: openai\n", extra)
	}
	return strings.Replace(y, "tools: [record_review]", "tools: [record_review, "+changedesk.ToolRecordReview+"]", 1)
}

// setupDemo writes ShopLite as a git repository, starts its production
// server from main, and creates the workspace, identities, keys, projects
// and role configuration of the demo.
func setupDemo(ctx context.Context, e *env, dir, addr string, log *slog.Logger) (*demo, error) {
	return setupDemoWith(ctx, e, dir, addr, log, demoAgents{provider: agent.ProviderAuthored})
}

// setupDemoWith is setupDemo with the reproducer and fixer run as a says:
// the whole demo, ShopLite built and running, before it returns.
func setupDemoWith(ctx context.Context, e *env, dir, addr string, log *slog.Logger, a demoAgents) (*demo, error) {
	d, err := openDemo(ctx, e, dir, addr, log, a, nil)
	if err != nil {
		return nil, err
	}
	if err := d.finishShop(ctx, nil); err != nil {
		d.prod.Stop()
		d.s.Close()
		return nil, err
	}
	return d, nil
}

// openDemo sets up everything of the demo that can serve before ShopLite
// is built: the store, workspace, identities, keys and role configuration,
// the triage sample project, ShopLite's repository (a git commit, quick)
// with the authored fixtures that match its commit, the stack and the
// listener. ShopLite's project and production server follow (finishShop).
// start, when set, hears the step.
func openDemo(ctx context.Context, e *env, dir, addr string, log *slog.Logger, a demoAgents, start *demoStart) (*demo, error) {
	start.begin(stepWorkspace)
	d := &demo{dir: dir, agents: a}
	dbf := dbFlags{db: filepath.Join(dir, "signoff.db"), key: filepath.Join(dir, "signoff.key")}
	s, err := dbf.openRW(ctx, e, true)
	if err != nil {
		start.fail(err)
		return nil, err
	}
	d.s = s
	fail := func(err error) (*demo, error) {
		start.fail(err)
		if d.ln != nil {
			d.ln.Close()
		}
		s.Close()
		return nil, err
	}
	if d.ws, d.owner, err = s.CreateWorkspace(ctx, "Demo", "demo-owner"); err != nil {
		return fail(err)
	}
	cli := signoff.CLIActor(d.ws.ID)
	if d.operator, err = s.CreateActor(ctx, d.owner, "demo-operator", signoff.RoleOperator); err != nil {
		return fail(err)
	}
	if _, d.ownerToken, err = s.CreateToken(ctx, cli, d.owner.ID, "demo", nil); err != nil {
		return fail(err)
	}
	if _, d.operatorToken, err = s.CreateToken(ctx, cli, d.operator.ID, "demo", nil); err != nil {
		return fail(err)
	}
	// One agent identity per role of the loops; each has its own
	// credential and none can approve, merge or confirm.
	for _, a := range []struct {
		name string
		role signoff.Role
	}{{"triage-crew", signoff.RoleTriager}, {"reproducer", signoff.RoleReproducer}, {"fixer", signoff.RoleFixer}, {"reviewer", signoff.RoleReviewer}, {"planner", signoff.RolePlanner}} {
		if _, err := s.CreateActor(ctx, d.owner, a.name, a.role); err != nil {
			return fail(err)
		}
	}
	// The operator's approval key. In real use it lives in
	// ~/.config/signoff (signoff keys init) and never leaves that machine;
	// the demo keeps its own in the demo directory.
	d.opKeyPath = filepath.Join(dir, "operator-approval.key")
	if d.opKey, _, err = keys.LoadOrCreate(d.opKeyPath); err != nil {
		return fail(err)
	}
	pub, err := keys.EncodePublic(d.opKey.Public().(ed25519.PublicKey))
	if err != nil {
		return fail(err)
	}
	if _, err := s.RegisterKey(ctx, d.operator, string(pub)); err != nil {
		return fail(err)
	}
	// The change policy is the workspace's: it names no project.
	if _, err := s.SetChangePolicy(ctx, cli, demoPolicy(d.operator.ID), 0, change.PolicyDigest); err != nil {
		return fail(err)
	}

	// ShopLite's repository: main only (fixes arrive as proposals). It is
	// a few git commands; compiling its server is what takes time.
	if d.sample, err = shoplite.BuildMain(ctx, filepath.Join(dir, "shoplite")); err != nil {
		return fail(err)
	}

	// The triage crew's sample game project (the sample dataset).
	ds, err := triage.LoadDataset(samples.TriageDataset())
	if err != nil {
		return fail(err)
	}
	if d.game, err = s.CreateProject(ctx, d.owner, signoff.ProjectInput{Name: "triage-sample",
		Description: "sample mobile game (" + ds.Releases.Product + "): tracker, crash log, releases and CODEOWNERS from the sample dataset"}); err != nil {
		return fail(err)
	}
	if err := s.ImportDataset(ctx, d.owner, d.game.ID, ds); err != nil {
		return fail(err)
	}

	// Reproducer and fixer run on authored fixtures for ShopLite's coupon
	// bug: human-written, labelled authored everywhere. The runs of what
	// they propose (sandbox, git, verification) are live. With a model
	// they are its answers (live), or a recorded run's (replayed).
	fx, err := shopFixtures(d.sample.Base)
	if err != nil {
		return fail(err)
	}
	st, err := newStackWith(e, s, log, agent.NewAuthored(fx...), a.rr)
	if err != nil {
		return fail(err)
	}
	d.st = st
	// The demo has one project of its own, so it shares the default Go
	// build cache (warm after the first run) instead of a cold cache per
	// project; a server keeps one cache per project.
	st.desk.CacheDir = ""
	if _, err := agent.SaveConfig(ctx, s, d.owner, []byte(a.roles()), st.reg); err != nil {
		return fail(err)
	}
	// Signoff's listener: ShopLite's checkout reads its flag from Signoff
	// over OFREP, so it is deployed knowing the URL.
	if d.ln, err = net.Listen("tcp", addr); err != nil {
		if d.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fail(fmt.Errorf("listen: %w", err))
		}
	}
	d.url = "http://" + d.ln.Addr().String()
	d.prod = shoplite.NewServer(filepath.Join(dir, "production"))
	start.end("")
	return d, nil
}

// finishShop compiles ShopLite's production server, then adds its project
// (flag, flag key, triage data, repository settings, deployer) and starts
// the server: the project appears only once its server is built, so the
// desk never offers a ShopLite that cannot build. Its settings follow in
// separate writes (the server needs the flag key made under the project)
// and the server starts a moment later; until the desk's notice clears,
// the project may lack them, and if a step fails the project stays half
// set up, with the failure on the desk and the demo exiting non-zero.
// start, when set, hears the steps.
func (d *demo) finishShop(ctx context.Context, start *demoStart) error {
	start.begin(stepCompile)
	if h := d.hooks.beforeCompile; h != nil {
		if err := h(ctx); err != nil {
			start.fail(err)
			return err
		}
	}
	var compiled, total int
	liveURL, err := d.prod.Prepare(ctx, d.sample.Dir, d.sample.Base, func(c, t int) {
		if c == 0 && t > coldPackages {
			start.say(fmt.Sprintf("      Go's build cache is cold: %d packages to compile, mostly the standard library; this happens once, later starts reuse them.", t))
		}
		compiled, total = c, t
		start.progress(packagesDone(c, t))
	})
	if err != nil {
		start.fail(err)
		return fmt.Errorf("build ShopLite's production server: %w", err)
	}
	switch {
	case compiled == 0:
		start.end("nothing to compile: Go's build cache had it all")
	case compiled < total:
		start.end(packagesDone(compiled, total) + "; the rest came from Go's build cache")
	default:
		start.end(packagesDone(compiled, total) + "; later starts take them from Go's build cache")
	}

	start.begin(stepStart)
	if err := d.addShop(ctx, liveURL); err != nil {
		start.fail(err)
		return err
	}
	start.end("ShopLite serves at " + d.live.URL)
	start.ready()
	return nil
}

// coldPackages is how many packages to compile make a build cache cold
// enough to say so: a warm one leaves ShopLite's own few at most.
const coldPackages = 20

// packagesDone says how far a build is: compiled of total packages.
func packagesDone(compiled, total int) string {
	if total > 0 {
		return fmt.Sprintf("%d of %d packages compiled", compiled, total)
	}
	return fmt.Sprintf("%d packages compiled", compiled)
}

// addShop adds ShopLite's project with everything it needs, then starts
// its production server from the build Prepare made: liveURL is where it
// will answer.
func (d *demo) addShop(ctx context.Context, liveURL string) error {
	s := d.s
	cli := signoff.CLIActor(d.ws.ID)
	var err error
	if d.shop, err = s.CreateProject(ctx, d.owner, signoff.ProjectInput{Name: "shoplite", RepoURL: d.sample.Dir,
		Description: "ShopLite, the sample shop: a local git repository with real bugs, and its production server"}); err != nil {
		if signoff.ErrorCode(err) == signoff.ECONFLICT {
			// Made on the desk, which serves while ShopLite is built.
			return errShopTaken
		}
		return err
	}
	d.secret = webhook.NewSecret()
	// Set before the project has repository settings: a release (the only
	// reader) needs them, and reads them from the store after this write.
	d.st.desk.Deployers = map[string]bugdesk.Deployer{d.shop.ID: &shopDeployer{srv: d.prod, hook: d.url + "/api/v1/hooks/deployments/" + d.shop.ID, secret: d.secret}}
	// The change desk's incident: the new payment flow's flag, off, read
	// by production over OFREP with the prod environment's key.
	if _, err := s.CreateFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag, signoff.FlagBoolean, json.RawMessage("false")); err != nil {
		return err
	}
	_, flagSecret, err := s.CreateFlagKey(ctx, d.owner, d.shop.ID, demoFlagEnv, "ShopLite production")
	if err != nil {
		return err
	}
	if err := s.ImportDataset(ctx, d.owner, d.shop.ID, shopTriageData()); err != nil {
		return err
	}
	if _, err := s.SetRepoSettings(ctx, cli, d.shop.ID, signoff.RepoSettings{
		Path: d.sample.Dir, MainBranch: shoplite.BranchMain, FixPaths: []string{"cart/**", "cmd/**"},
		LiveURL: liveURL, WebhookSecret: d.secret,
		Smoke: []signoff.SmokeCheck{
			{Name: "healthz", Method: "GET", Path: "/healthz", ExpectBody: "ok"},
			{Name: "a 10% coupon applies once", Method: "POST", Path: "/checkout",
				Body:       `{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}],"coupon":"SAVE10"}`,
				ExpectBody: `"total_cents":9000`},
		}}); err != nil {
		return err
	}
	if err := d.prod.SetOFREP(shoplite.OFREP{URL: d.url, APIKey: flagSecret}); err != nil {
		return err
	}
	if d.live, err = d.prod.Deploy(ctx, d.sample.Dir, d.sample.Base); err != nil {
		return fmt.Errorf("start ShopLite's production server: %w", err)
	}
	if d.live.URL != liveURL {
		return fmt.Errorf("ShopLite's production server answers at %s, not at %s as prepared", d.live.URL, liveURL)
	}
	return nil
}

// errShopTaken is why ShopLite's project could not be added: someone made
// a project of its name on the desk while ShopLite was being built.
var errShopTaken = errors.New("a project named shoplite already exists (made on the desk while ShopLite was being built); start the demo again")

// shopFailed says how ShopLite's start failed with err, in a few words:
// the heading of the desk's notice and the terminal's line.
func shopFailed(err error) string {
	if errors.Is(err, errShopTaken) {
		return "ShopLite could not be added: a project named shoplite already exists"
	}
	return "ShopLite could not be built"
}

// shopTriageData is the triage data of ShopLite: who owns what, and its
// one release. Written for the demo (authored).
func shopTriageData() triage.Dataset {
	return triage.Dataset{
		Owners: []triage.Owner{{Component: "cart", Team: "shop-checkout"}, {Component: "server", Team: "shop-platform"}},
		Releases: triage.Releases{Product: "ShopLite", Company: "Signoff demo", CurrentVersion: "1.0.0",
			Releases:             []triage.Release{{Version: "1.0.0", Date: "2026-01-05"}},
			ActiveUsersByVersion: map[string]float64{"1.0.0": 100}},
		Tickets: []triage.Ticket{},
	}
}

// shopFixtures are the authored reproducer and fixer turns for ShopLite's
// coupon bug, matched by the base commit (ShopLite's main is the same
// commit on every machine). The fixer's first attempt is the false fix
// that breaks TestZeroCoupon; its second is the genuine one.
func shopFixtures(base string) ([]agent.Fixture, error) {
	main, err := shoplite.Files(shoplite.BranchMain)
	if err != nil {
		return nil, err
	}
	// What a branch adds or changes over main: the proposal.
	files := func(branch string) ([]bugdesk.FileArg, error) {
		m, err := shoplite.Files(branch)
		if err != nil {
			return nil, err
		}
		var out []bugdesk.FileArg
		for _, p := range slices.Sorted(maps.Keys(m)) {
			if old, ok := main[p]; !ok || !bytes.Equal(old, m[p]) {
				out = append(out, bugdesk.FileArg{Path: p, Content: string(m[p])})
			}
		}
		return out, nil
	}
	call := func(name string, args any) (agent.Message, error) {
		b, err := json.Marshal(args)
		if err != nil {
			return agent.Message{}, err
		}
		return agent.Message{Content: "[authored fixture]", ToolCalls: []agent.ToolCall{{ID: name + "-1", Name: name, Arguments: string(b)}}}, nil
	}
	repro, err := files(shoplite.BranchReproCoupon)
	if err != nil {
		return nil, err
	}
	rm, err := call("propose_reproduction", map[string]any{"test_files": repro, "fail_to_pass": []string{"TestCouponAppliesOnce"},
		"expected_failure": "8100", "explanation": "A 10% coupon on a 10000-cent cart must leave 9000 cents."})
	if err != nil {
		return nil, err
	}
	out := []agent.Fixture{{Name: "shoplite-coupon-repro", Role: bugdesk.RoleReproducer, Match: map[string]string{"/base": base}, Turns: []agent.Message{rm}}}
	for i, br := range []string{shoplite.BranchFalseBreaks, shoplite.BranchGenuine} {
		fs, err := files(br)
		if err != nil {
			return nil, err
		}
		m, err := call("propose_fix", map[string]any{"files": fs, "summary": "[authored] " + br})
		if err != nil {
			return nil, err
		}
		out = append(out, agent.Fixture{Name: "shoplite-coupon-" + br, Role: bugdesk.RoleFixer,
			Match: map[string]string{"/base": base, "/attempt": strconv.Itoa(i + 1)}, Turns: []agent.Message{m}})
	}
	return out, nil
}

func (d *demo) printIntro(e *env, temporary bool) {
	// A one-time sign-in link for the operator: the web desk without
	// copying a token. If it cannot be made, the token still signs in.
	// printEarly's, if it made one, is the only one: two live links would
	// be two ways in for whoever reads the terminal.
	signIn := d.url + "/login   (paste the operator token)"
	if d.signIn != "" {
		signIn = d.signIn + "   (the link printed above: signs the operator in, once, until " +
			d.signInExpires.Local().Format("15:04") + "; or paste a token at /login)"
	} else if code, _, err := d.s.CreateLoginLink(context.Background(), d.operator.ID, loginLinkTTL); err == nil {
		signIn = d.url + "/login/" + code + "   (signs the operator in, once, within 15 minutes; or paste a token at /login)"
	}
	agents := "builtin and authored agents"
	if d.agents.model() {
		agents = "builtin agents; the reproducer and fixer on " + d.agents.describe()
	}
	kept := "kept after the demo stops (yours, from --dir)"
	if temporary {
		kept = "deleted on Ctrl-C (it holds private keys); give --dir to keep it"
	}
	fmt.Fprintf(e.stdout, `Evidence types: LIVE = executed here (airlock, triage builtin, sandbox runs,
verification, git, deploy, smoke); AUTHORED = written by people for the demo
(ShopLite's reproduction test and the two candidate fixes, the sample triage
data); SIMULATED = the demo standing in for a person (the report text).

Walk the bug loop (or run it all headlessly: signoff demo --walk bug). Every step shows on the
web desk as it happens: the case page has the timeline, triage evidence, reproduction, candidates
side by side with their verdict tables, and the approval page shows the exact digest to sign.
 1. Report the coupon bug through the report form below, or the API (public intake, airlock, then the triage crew):
    curl -s -H 'Content-Type: application/json' -d '{"text":"SAVE10 takes 19%% off: my 100.00 lamp cost 81.00 at checkout","device":"Firefox 133","os":"Linux","app_version":"1.0.0","steps":"add the lamp, apply SAVE10, check out"}' %[1]s/api/v1/projects/%[9]s/reports
    Keep the tracking token. The reproducer's test (authored) runs on main in the sandbox (live).
 2. As staff, read the test's source and approve it (or on the case page's reproduction review):
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[7]s signoff harness review --case CASE --approve
    As the reporter: curl -s %[1]s/api/v1/track/TOKEN      (shows the failing output and question_digest)
    curl -s -H 'Content-Type: application/json' -d '{"question_digest":"DIGEST","answer":"yes"}' %[1]s/api/v1/track/TOKEN/decision
    Once both agree, the harness is frozen and the fixer starts.
 3. The fixer's first candidate is REJECTED, the second VERIFIED, the reviewer notes it (advisory):
    curl -s -H 'Authorization: Bearer %[7]s' %[1]s/api/v1/cases/CASE/loop
 4. Approve the exact candidate and merge it (a person):
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[7]s signoff approve --case CASE --key %[8]s
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[7]s signoff merge --case CASE
    ShopLite is rebuilt and redeployed from main; the deployment arrives as a signed webhook,
    the desk checks ancestry and runs the smoke checks against %[2]s.
 5. As the reporter: GET the tracking page again and answer "Does the live fix work for you?"
    (yes: verified; no with what still fails: reopened and reproduced again).

  signoff ledger verify --db %[5]s

Walk the change desk (or headlessly: signoff demo --walk change). ShopLite's checkout reads the
flag checkout_v2_new_payment_flow (prod, off) from this server over OFREP; on, checkout answers 500.
 1. Ask for a change; the planner agent (builtin) drafts the plan and the policy reviews it:
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[6]s signoff change request --project %[9]s --builtin \
      --reason "Enable checkout_v2_new_payment_flow in prod for the new payment provider"
 2. Sign it (the operator), then run it through the gate; the health check and the receipt follow:
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[7]s signoff approve --case CASE --key %[8]s
    SIGNOFF_URL=%[1]s SIGNOFF_TOKEN=%[7]s signoff change execute --case CASE
    (the builtin plan's health check is the first smoke check, /healthz: it passes and checkout breaks;
     give a plan your own check with signoff change plan --file to see the automatic restore)
 3. Roll it back (pre-approved for flags by the demo's policy): signoff change rollback --case CASE --reason "..."
    signoff change show --case CASE; signoff evidence export --case CASE --out DIR; signoff evidence verify DIR

Triage crew on the sample game (%[10]s): POST reports to %[1]s/api/v1/projects/%[10]s/reports
("signoff" above is "go run ./cmd/signoff" from a checkout.)

=== Signoff demo is ready (SQLite, %[12]s) ===
  web desk    %[11]s
  server      %[1]s   (API, MCP, reporter pages)
  report form %[1]s/p/%[9]s/report   (public, no account; the reporter's tracking link follows)
  ShopLite    %[2]s   (production, built from main %[3]s; GET /version)
  repository  %[4]s
  database    %[5]s   (every HTTP request and job is logged to %[13]s)
  owner       token: %[6]s
  operator    token: %[7]s   approval key %[8]s
  folder      %[14]s: %[15]s
`, d.url, d.live.URL, short(d.sample.Base), d.sample.Dir, filepath.Join(d.dir, "signoff.db"), d.ownerToken, d.operatorToken, d.opKeyPath, d.shop.ID, d.game.ID, signIn, agents,
		filepath.Join(d.dir, demoLogName), d.dir, kept)
	if d.agents.model() {
		fmt.Fprintf(e.stdout, "\nWith a model, the reproducer's tests and the fixer's patches are the model's (LIVE), not the authored\nfixtures: report any of ShopLite's three bugs (coupon applied twice, negative total, subtotal overflow).\n")
	}
	fmt.Fprintln(e.stdout, "Press Ctrl-C to stop.")
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
