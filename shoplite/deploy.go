package shoplite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/signoff-dev/signoff/gitx"
)

// Bounds of a deployment.
const (
	readyTimeout  = 30 * time.Second // from start until /healthz answers
	probeInterval = 50 * time.Millisecond
	httpTimeout   = 5 * time.Second  // one probe request
	stopGrace     = 10 * time.Second // from SIGTERM until SIGKILL (ShopLite drains for up to 5 s)
	reapTimeout   = 10 * time.Second // from SIGKILL until the process is reaped
	maxOutput     = 16 << 10         // bytes of build or server output kept for errors
)

// Deployed describes a server Deploy started.
type Deployed struct {
	URL           string        `json:"url"`    // http://127.0.0.1:<port>, the same across redeploys
	Commit        string        `json:"commit"` // the full commit id, as GET /version reports it
	PID           int           `json:"pid"`
	BuildDuration time.Duration `json:"build_duration"` // exporting the tree and go build; nanoseconds in JSON
	StartedAt     time.Time     `json:"started_at"`
	// CheckoutFlag is the flag the server's checkout reads over OFREP, ""
	// when it reads none (see Server.SetOFREP).
	CheckoutFlag string `json:"checkout_flag,omitempty"`
}

// ShopLite's checkout reads one boolean flag over OFREP when it is told
// where: while the flag is true, POST /checkout answers 500 "payment
// provider v2 unavailable" (the new payment flow is broken); while it is
// false, or cannot be read, checkout is as before. The flag is evaluated
// on every checkout, without a cache. The X-Flag-Source response header
// says "ofrep" (the flag service answered) or "default" (it did not, and
// the default value false was used); it is absent when no flag is read.
//
// The server reads its settings from these environment variables.
const (
	EnvOFREPURL     = "SHOPLITE_OFREP_URL"     // the flag service's base URL; ShopLite adds /ofrep/v1/evaluate/flags/{key}
	EnvOFREPKey     = "SHOPLITE_OFREP_KEY"     // the environment's OFREP API key (sof_...), sent as a bearer token
	EnvCheckoutFlag = "SHOPLITE_CHECKOUT_FLAG" // the flag's key; CheckoutFlag when unset
)

// CheckoutFlag is the default key of the checkout flag.
const CheckoutFlag = "checkout_v2_new_payment_flow"

// OFREP says where a deployed ShopLite reads its checkout flag. The zero
// value reads none.
type OFREP struct {
	// URL is the flag service's base URL, such as Signoff's
	// http://127.0.0.1:8080; "" reads no flag.
	URL string `json:"url"`
	// APIKey is the OFREP API key of the environment ShopLite runs in.
	APIKey string `json:"-"`
	// Flag is the boolean flag's key; "" is CheckoutFlag.
	Flag string `json:"flag"`
}

// flag is the key of the flag o reads, "" for none.
func (o OFREP) flag() string {
	switch {
	case o.URL == "":
		return ""
	case o.Flag == "":
		return CheckoutFlag
	}
	return o.Flag
}

// environ is the environment of a server reading o: this process's,
// without any flag settings of its own (so that only SetOFREP decides),
// and o's.
func (o OFREP) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != EnvOFREPURL && name != EnvOFREPKey && name != EnvCheckoutFlag {
			env = append(env, kv)
		}
	}
	if o.URL != "" {
		env = append(env, EnvOFREPURL+"="+o.URL, EnvOFREPKey+"="+o.APIKey, EnvCheckoutFlag+"="+o.flag())
	}
	return env
}

func (o OFREP) check() error {
	if o.URL == "" {
		if o.APIKey != "" || o.Flag != "" {
			return errors.New("shoplite: OFREP settings without a URL")
		}
		return nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("shoplite: OFREP URL %q: want an http(s) base URL", o.URL)
	}
	if strings.TrimSpace(o.APIKey) == "" {
		return errors.New("shoplite: OFREP settings without an API key")
	}
	if strings.TrimSpace(o.Flag) != o.Flag {
		return fmt.Errorf("shoplite: OFREP flag key %q has surrounding spaces", o.Flag)
	}
	return nil
}

// Server runs ShopLite's "production" server, built from a commit of a
// repository, on 127.0.0.1. The first Deploy picks a free port; later
// deploys stop the running server and start the new one on the same port,
// so the URL stays the same. The server runs until Stop, independently of
// the contexts given to Deploy; whoever creates a Server must Stop it.
//
// Deploy builds and runs the repository's code on the host, outside any
// sandbox: deploy only commits that are trusted (ShopLite's main and the
// fixes merged into it).
//
// A Server is safe for concurrent use; Deploy and Stop run one at a time.
type Server struct {
	workDir string
	client  *http.Client

	op sync.Mutex // held through Deploy and Stop

	mu       sync.Mutex // guards port, cur, ofrep and prepared
	port     int        // 0 until the first Prepare or Deploy picks one
	cur      *process   // the running server, or nil
	ofrep    OFREP      // the flag settings of servers started from now on
	prepared *binary    // a build Prepare made for the next Deploy, or nil
}

// binary is a built server in its own folder under the work directory.
type binary struct {
	id, dir, bin string
	took         time.Duration
}

// BuildProgress hears how a build goes: compiled is how many packages go
// build has compiled so far, of total, the packages it had to compile
// (those not already in Go's build cache; 0 when go list could not say).
// It is called from the build's goroutine.
type BuildProgress func(compiled, total int)

// SetOFREP sets where servers started by later deploys read their checkout
// flag; the zero OFREP reads none (the default). The running server keeps
// the settings it was started with: to apply new ones to it, deploy its
// commit again. A redeploy keeps the settings, so a fix deployed later
// still reads the flag.
//
// The settings reach the server as the environment variables EnvOFREPURL,
// EnvOFREPKey and EnvCheckoutFlag; any of these in this process's own
// environment are not passed on.
func (s *Server) SetOFREP(o OFREP) error {
	if err := o.check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ofrep = o
	return nil
}

// NewServer returns a Server that keeps its builds under workDir (created
// when needed). Each build has its own folder there, removed when its
// server is replaced or stopped.
func NewServer(workDir string) *Server {
	return &Server{
		workDir: workDir,
		client: &http.Client{
			Timeout: httpTimeout,
			// No proxy, no connection kept to a server about to be replaced.
			Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

// URL is the running server's URL, or "" when none is running.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.exited() {
		return ""
	}
	return s.url(s.port)
}

func (s *Server) url(port int) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// Deploy builds commit (any revision naming a commit; it is resolved to
// its full id) of the repository at repoDir and runs it in place of the
// running server: it exports the commit's tree into a temporary worktree,
// runs `go build -trimpath -ldflags "-X main.commit=<id>" ./cmd/shoplite`,
// stops the running server, starts the new binary on the same port, waits
// until GET /healthz answers and checks that GET /version reports the id.
//
// If resolving or building fails, the running server is left as it was.
// If the new server then fails to come up (or reports another commit), it
// is stopped and no server runs until the next successful Deploy; the
// error carries the end of its output. ctx bounds the build and the wait
// for the new server, not the server's life.
//
// A build Prepare made of the same commit is used instead of building
// again.
func (s *Server) Deploy(ctx context.Context, repoDir, commit string) (Deployed, error) {
	s.op.Lock()
	defer s.op.Unlock()

	repo := &gitx.Repo{Dir: repoDir}
	id, err := repo.RevParse(ctx, commit+"^{commit}")
	if err != nil {
		return Deployed{}, fmt.Errorf("shoplite: deploy: resolving %q in %s: %w", commit, repoDir, err)
	}
	b := s.takePrepared(id)
	if b == nil {
		if b, err = s.build(ctx, repo, id, nil); err != nil {
			return Deployed{}, err
		}
	}
	dir, bin, buildDuration := b.dir, b.bin, b.took

	// The new binary is ready: the running server makes way for it.
	s.mu.Lock()
	old, port, flags := s.cur, s.port, s.ofrep
	s.cur = nil
	s.mu.Unlock()
	if old != nil {
		// The old server is gone either way; how it went does not matter
		// to the new one.
		_ = old.stop()
		os.RemoveAll(old.dir)
	}
	if port == 0 {
		if port, err = s.reservePort(); err != nil {
			os.RemoveAll(dir)
			return Deployed{}, fmt.Errorf("shoplite: deploy: choosing a port: %w", err)
		}
	}

	p, err := startProcess(bin, dir, port, flags.environ())
	if err != nil {
		os.RemoveAll(dir)
		return Deployed{}, fmt.Errorf("shoplite: deploy %s: %w", short(id), err)
	}
	base := s.url(port)
	if err := s.waitReady(ctx, p, base, id); err != nil {
		_ = p.stop()
		os.RemoveAll(dir)
		return Deployed{}, fmt.Errorf("shoplite: deploy %s: %w\nserver output:\n%s", short(id), err, p.output)
	}
	s.mu.Lock()
	s.cur = p
	s.mu.Unlock()
	return Deployed{URL: base, Commit: id, PID: p.cmd.Process.Pid, BuildDuration: buildDuration, StartedAt: p.started,
		CheckoutFlag: flags.flag()}, nil
}

// Prepare builds commit of the repository at repoDir for the next Deploy
// and reserves the port the server will listen on, without starting
// anything, and returns the URL the server will answer at. It is the slow
// part of a first deploy (go build, which compiles the standard library
// when Go's build cache is cold) done ahead: the caller can learn the URL
// and settle the server's settings (SetOFREP) meanwhile. progress, when
// set, hears how the build goes. The next Deploy of the same commit uses
// this build; another Prepare or Stop discards it.
func (s *Server) Prepare(ctx context.Context, repoDir, commit string, progress BuildProgress) (string, error) {
	s.op.Lock()
	defer s.op.Unlock()

	repo := &gitx.Repo{Dir: repoDir}
	id, err := repo.RevParse(ctx, commit+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("shoplite: prepare: resolving %q in %s: %w", commit, repoDir, err)
	}
	b, err := s.build(ctx, repo, id, progress)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	port, old := s.port, s.prepared
	s.prepared = b
	s.mu.Unlock()
	if old != nil {
		os.RemoveAll(old.dir)
	}
	if port == 0 {
		if port, err = s.reservePort(); err != nil {
			return "", fmt.Errorf("shoplite: prepare: choosing a port: %w", err)
		}
	}
	return s.url(port), nil
}

// takePrepared hands over the prepared build of id, if that is what
// Prepare made; a prepared build of another commit is discarded.
func (s *Server) takePrepared(id string) *binary {
	s.mu.Lock()
	b := s.prepared
	s.prepared = nil
	s.mu.Unlock()
	if b != nil && b.id != id {
		os.RemoveAll(b.dir)
		return nil
	}
	return b
}

// reservePort picks the server's port, kept for every later deploy.
func (s *Server) reservePort() (int, error) {
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.port = port
	s.mu.Unlock()
	return port, nil
}

// Stop stops the running server, if any: SIGTERM, then SIGKILL if it has
// not exited within a bound, and waits for it; a build Prepare made is
// discarded. The URL stays reserved for the next Deploy. An error reports
// a server that had to be killed or that exited with a failure (its
// output included); either way it is stopped.
func (s *Server) Stop() error {
	s.op.Lock()
	defer s.op.Unlock()
	s.mu.Lock()
	p, b := s.cur, s.prepared
	s.cur, s.prepared = nil, nil
	s.mu.Unlock()
	var err error
	if b != nil {
		err = os.RemoveAll(b.dir)
	}
	if p == nil {
		return err
	}
	err = errors.Join(err, p.stop())
	if rerr := os.RemoveAll(p.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// build exports id's tree and builds ./cmd/shoplite into a new folder
// under the work directory. On error the folder is removed.
func (s *Server) build(ctx context.Context, repo *gitx.Repo, id string, progress BuildProgress) (*binary, error) {
	goBin, err := goCommand()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.workDir, 0o755); err != nil {
		return nil, fmt.Errorf("shoplite: deploy: %w", err)
	}
	dir, err := os.MkdirTemp(s.workDir, "build-"+short(id)+"-")
	if err != nil {
		return nil, fmt.Errorf("shoplite: deploy: %w", err)
	}
	began := time.Now()
	bin, err := buildIn(ctx, goBin, repo, id, dir, buildEnv(s.workDir), progress)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &binary{id: id, dir: dir, bin: bin, took: time.Since(began)}, nil
}

// buildIn builds id's ./cmd/shoplite into dir from a temporary worktree.
// With progress, go list first counts the packages the build has to
// compile and go build -v names each one as it compiles it.
func buildIn(ctx context.Context, goBin string, repo *gitx.Repo, id, dir string, env []string, progress BuildProgress) (string, error) {
	wt, err := repo.AddWorktree(ctx, id)
	if err != nil {
		return "", fmt.Errorf("shoplite: deploy: exporting %s: %w", short(id), err)
	}
	// Close always removes the temporary worktree; a failure to prune
	// git's record of it does not make the build wrong.
	defer wt.Close()

	bin := filepath.Join(dir, "shoplite"+exeSuffix())
	// go list must see the build's own flags: a package built with other
	// flags is not the one this build can take from the cache.
	flags := []string{"-trimpath", "-ldflags", "-X main.commit=" + id}
	args := append([]string{"build", "-o", bin}, flags...)
	out := &tailBuffer{max: maxOutput}
	var w io.Writer = out
	if progress != nil {
		total := stalePackages(ctx, goBin, wt.Dir, dir, env, flags)
		progress(0, total)
		args = append(args, "-v")
		w = &packageCounter{rest: out, total: total, progress: progress}
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, "./cmd/shoplite")...)
	cmd.Dir = wt.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	if err := runGo(cmd, filepath.Join(dir, "tmp")); err != nil {
		if ctx.Err() != nil {
			// Killed because the caller gave up: say that, not "signal: killed".
			return "", fmt.Errorf("shoplite: deploy: building %s: %w", short(id), ctx.Err())
		}
		return "", fmt.Errorf("shoplite: deploy: building %s: %w\n%s", short(id), err, out)
	}
	return bin, nil
}

// stalePackages is how many packages go build (with flags) has to compile
// for ./cmd/shoplite in the worktree wtDir: those go list finds stale, not
// in the build cache. 0 when go list fails; the build then says why. Its
// temporary files go under dir, the build's folder.
func stalePackages(ctx context.Context, goBin, wtDir, dir string, env, flags []string) int {
	args := append(append([]string{"list", "-deps"}, flags...), "-f", "{{if .Stale}}{{.ImportPath}}{{end}}", "./cmd/shoplite")
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir, cmd.Env = wtDir, env
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := runGo(cmd, filepath.Join(dir, "tmp")); err != nil {
		return 0
	}
	return len(strings.Fields(out.String()))
}

// runGo runs a go command started with exec.CommandContext in a process
// group of its own (on Unix), and stops it as a terminal's Ctrl-C would
// when ctx is done: SIGINT to the whole group, go and the compiles it
// runs, then SIGKILL to go if it has not exited within a bound.
// CommandContext's default, SIGKILL to go alone, left its compiles
// running. go build removes its temporary work directory only when it
// ends of itself: tmp, given to it as GOTMPDIR, is removed here after it
// ends, whatever it left.
func runGo(cmd *exec.Cmd, tmp string) error {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd.Env = append(slices.Clip(cmd.Env), "GOTMPDIR="+tmp)
	inGroup(cmd)
	cmd.Cancel = func() error {
		if err := interruptGroup(cmd); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	defer reapGroup(cmd)
	return cmd.Run()
}

// packageCounter reads go build -v's output: a line that is an import
// path alone names a package compiled, and is counted; every other line
// (an error and its context) goes to rest.
type packageCounter struct {
	rest     io.Writer
	partial  []byte
	compiled int
	total    int
	progress BuildProgress
}

func (c *packageCounter) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := c.partial[:i+1]
		if isImportPath(bytes.TrimSpace(line)) {
			c.compiled++
			// go list's count can fall short (it failed, or the cache
			// changed meanwhile): never show more done than there is.
			c.total = max(c.total, c.compiled)
			c.progress(c.compiled, c.total)
		} else {
			c.rest.Write(line)
		}
		c.partial = c.partial[i+1:]
	}
	return len(p), nil
}

// isImportPath reports whether line is what go build -v prints for a
// package: its import path alone. Errors have spaces or a colon, and "#
// pkg" heads a package's errors.
func isImportPath(line []byte) bool {
	return len(line) > 0 && line[0] != '#' && !bytes.ContainsAny(line, " \t:")
}

// buildEnv is the host environment pinned for an offline, local build:
// ShopLite has no dependencies.
func buildEnv(workDir string) []string {
	env := append(os.Environ(),
		"GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-buildvcs=false", "GOPROXY=off")
	if os.Getenv("GOCACHE") == "" {
		if _, err := os.UserCacheDir(); err != nil {
			// No HOME: the go command has no default build cache.
			env = append(env, "GOCACHE="+filepath.Join(workDir, "go-build"))
		}
	}
	return env
}

// goCommand finds the go command: on PATH, else in the GOROOT this
// program was built with.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go"+exeSuffix())
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("shoplite: deploy: no go command on PATH")
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// freePort asks the system for a free loopback port. Another program could
// take it before the server binds it; the deploy then fails (the server
// cannot listen, and never says it does: see waitReady) rather than take
// that program for the server.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// process is a started server.
type process struct {
	cmd     *exec.Cmd
	dir     string // its build folder
	started time.Time
	output  *tailBuffer // stdout and stderr
	// first is its first line of stdout; listening is closed once that
	// line is in (or stdout ended without one).
	first     firstLine
	listening chan struct{}
	done      chan struct{}
	err       error // Wait's result, set before done is closed
}

// firstLine keeps the first line written to it (up to a bound) and closes
// its listening channel once it has it; everything goes on to rest.
type firstLine struct {
	rest      io.Writer
	mu        sync.Mutex
	line      []byte
	complete  bool // listening is closed
	ended     bool // ... because output ended without a whole line
	listening chan struct{}
}

func (f *firstLine) Write(b []byte) (int, error) {
	f.mu.Lock()
	if !f.complete {
		part := b
		if i := bytes.IndexByte(part, '\n'); i >= 0 {
			part, f.complete = part[:i], true
		}
		f.line = append(f.line, part...)
		if len(f.line) > 1024 {
			f.line, f.complete = f.line[:1024], true
		}
		if f.complete {
			close(f.listening)
		}
	}
	f.mu.Unlock()
	return f.rest.Write(b)
}

// text is the first line, once listening is closed, and whether it was
// a whole one.
func (f *firstLine) text() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.line), !f.ended
}

// end closes listening if no whole line came (stdout ended).
func (f *firstLine) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.complete {
		f.complete, f.ended = true, true
		close(f.listening)
	}
}

func startProcess(bin, dir string, port int, env []string) (*process, error) {
	cmd := exec.Command(bin, "-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	cmd.Dir, cmd.Env = dir, env
	p := &process{cmd: cmd, dir: dir, output: &tailBuffer{max: maxOutput}, listening: make(chan struct{}), done: make(chan struct{})}
	p.first = firstLine{rest: p.output, listening: p.listening}
	// Its own stdout, not stderr: only the server's first line of stdout
	// says it listens.
	cmd.Stdout, cmd.Stderr = &p.first, p.output
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.started = time.Now()
	go func() {
		p.err = cmd.Wait()
		p.first.end()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process and reaps it.
func (p *process) stop() error {
	if p.exited() {
		return p.exitError("had exited")
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		// No SIGTERM on this system, or the process just exited.
		p.cmd.Process.Kill()
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-p.done:
		// Exiting on the signal, with status 0 or by the signal itself
		// (exit code -1), is a clean stop.
		if code := p.cmd.ProcessState.ExitCode(); code > 0 {
			return p.exitError("exited while stopping")
		}
		return nil
	case <-grace.C:
	}
	p.cmd.Process.Kill()
	reap := time.NewTimer(reapTimeout)
	defer reap.Stop()
	select {
	case <-p.done:
		return fmt.Errorf("shoplite: server pid %d did not stop within %s of SIGTERM and was killed", p.cmd.Process.Pid, stopGrace)
	case <-reap.C:
		return fmt.Errorf("shoplite: server pid %d survives SIGKILL", p.cmd.Process.Pid)
	}
}

func (p *process) exitError(what string) error {
	return fmt.Errorf("shoplite: server pid %d %s: %v\n%s", p.cmd.Process.Pid, what, p.err, p.output)
}

// waitReady waits until the server says it listens at base (ShopLite's
// first line of output, printed once it holds the port), then until
// base/healthz answers 200, then checks that base/version reports commit.
// Whatever answers on the port before the server says so is not the
// server: another program that took the port first (freePort) would
// answer /healthz and /version as well as the server, which cannot bind
// it and exits.
func (s *Server) waitReady(ctx context.Context, p *process, base, commit string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	select {
	case <-p.listening:
	case <-ctx.Done():
		return fmt.Errorf("the server did not say it listens on %s: %w", base, ctx.Err())
	}
	line, whole := p.first.text()
	if !whole {
		// Its stdout closed without a line: it is exiting.
		select {
		case <-p.done:
			return fmt.Errorf("the server exited before listening on %s: %v", base, p.err)
		case <-ctx.Done():
			return fmt.Errorf("the server closed its output without saying it listens on %s", base)
		}
	}
	if want := "shoplite " + commit + " listening on " + base; line != want {
		return fmt.Errorf("the server's first line is %q, want %q", line, want)
	}
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		_, err := s.get(ctx, base+"/healthz")
		if err == nil {
			break
		}
		select {
		case <-p.done:
			return fmt.Errorf("the server exited before answering /healthz: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("no answer on %s/healthz: %w (last: %v)", base, ctx.Err(), err)
		case <-tick.C:
		}
	}
	if p.exited() {
		// Something else answers on the port.
		return fmt.Errorf("the server exited (%v) and something else answers on %s", p.err, base)
	}
	body, err := s.get(ctx, base+"/version")
	if err != nil {
		return err
	}
	var v struct {
		Commit string `json:"commit"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("GET /version: %w", err)
	}
	if v.Commit != commit {
		return fmt.Errorf("GET /version reports commit %q, want %s", v.Commit, commit)
	}
	return nil
}

// get returns the body of a 200 answer to GET url.
func (s *Server) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// tailBuffer keeps the last max bytes written to it; it is safe for
// concurrent use.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) > b.max {
		b.dropped += len(p) - b.max
		p = p[len(p)-b.max:]
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.dropped += over
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("(%d earlier bytes dropped)\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}
