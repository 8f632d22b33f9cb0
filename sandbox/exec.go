package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// helperRunner is the bwrap, namespaces and none backends. namespaces and
// none re-execute the helper (helper.go); bwrap builds the sandbox itself,
// and the caller applies the rlimits to bwrap's init before it starts the
// command, which saves starting a Go program per run.
type helperRunner struct {
	backend string
	version string
	helper  string // host path of the helper executable (namespaces, none)
	bwrap   string // bubblewrap executable, bwrap backend only
	bwrapV  bwrapFeatures
}

func (r *helperRunner) Name() string           { return r.backend }
func (r *helperRunner) Digest(l Limits) string { return RunnerDigest(r.backend, r.version, l) }

// Run runs s. Canceling ctx kills the run and returns its Result together
// with the context's error; a ctx deadline counts as the wall time limit.
func (r *helperRunner) Run(ctx context.Context, s Spec) (Result, error) {
	if len(s.Command) == 0 {
		return Result{}, fmt.Errorf("sandbox %s: empty command", r.backend)
	}
	return r.run(ctx, s, false)
}

func (r *helperRunner) run(ctx context.Context, s Spec, probe bool) (Result, error) {
	l := s.Limits.WithDefaults()
	res, err := r.runLimited(ctx, s, l, probe)
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("sandbox %s: %w", r.backend, err)
	}
	return res, err
}

func (r *helperRunner) runLimited(ctx context.Context, s Spec, l Limits, probe bool) (Result, error) {
	env, err := envList(s.Env)
	if err != nil {
		return Result{}, err
	}
	lay, err := resolveSpec(s, l)
	if err != nil {
		return Result{}, err
	}
	cg, err := newRunCgroup(l)
	if err != nil {
		return Result{}, err
	}
	defer cg.remove()
	isolated := r.backend != BackendNone
	// As the caller's uid, RLIMIT_NPROC would count every process the user
	// has on the machine; only a run's own user namespace makes it a
	// per-run bound.
	limits := rlimitsFor(l, isolated)
	hio := &helperIO{cg: cg}
	cfg := helperConfig{
		Mode:     "exec",
		Probe:    probe,
		Command:  s.Command,
		Env:      env,
		Dir:      lay.workdir,
		Isolated: isolated,
		Rlimits:  limits,
	}

	var (
		cmd  *exec.Cmd
		kill func(*exec.Cmd)
	)
	switch r.backend {
	case BackendNone:
		m, cleanup, err := newPathMap(s, lay)
		if err != nil {
			return Result{}, err
		}
		defer cleanup()
		cfg.Command = m.all(cfg.Command)
		cfg.Env = m.env(cfg.Env)
		cfg.Dir = m.path(cfg.Dir)
		cmd = exec.Command(r.helper, helperArg)
		cmd.SysProcAttr = noneSysProcAttr()
		kill = killGroup
	case BackendBwrap:
		hio.bwrapSync = true
		hio.rlimits = limits
		var args []string
		args, hio.data = r.bwrapArgs(fullPlan(lay), env, lay.workdir)
		args = append(args, "--")
		if _, ok := s.Env["PWD"]; !ok && r.bwrapV.env {
			// bwrap sets PWD; the environment is to be exactly Spec.Env.
			if strings.Contains(s.Command[0], "=") {
				return Result{}, fmt.Errorf("command %q: a name with '=' cannot be run", s.Command[0])
			}
			args = append(args, bwrapEnv, "-u", "PWD")
		}
		cmd = exec.Command(r.bwrap, append(args, s.Command...)...)
		protectInheritedFDs()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		kill = killGroup
	case BackendNamespaces:
		cfg.Mode = "ns"
		cfg.Plan = fullPlan(lay)
		cmd = exec.Command(r.helper, helperArg)
		cmd.SysProcAttr = namespacesSysProcAttr()
		kill = killProcess
	default:
		return Result{}, fmt.Errorf("backend %s has no runner", r.backend)
	}
	if r.backend != BackendBwrap {
		if hio.config, err = json.Marshal(cfg); err != nil {
			return Result{}, err
		}
	}
	cmd.Env = []string{} // bwrap's or the helper's own environment: nothing
	out, err := execute(ctx, cmd, l, hio, kill)
	if err != nil {
		return Result{}, err
	}
	res, err := out.result(r.backend, l, r.Digest(l), isolated)
	if err != nil {
		return res, err
	}
	if out.killed == KilledCanceled {
		return res, ctx.Err()
	}
	return res, nil
}

// envList turns Spec.Env into the exact environment of the command.
func envList(m map[string]string) ([]string, error) {
	env := make([]string, 0, len(m))
	for k, v := range m {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			return nil, fmt.Errorf("invalid environment variable %q", k)
		}
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
	}
}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// outcome is what execute saw of one process.
type outcome struct {
	stdout, stderr *capture
	killed         string
	duration       time.Duration
	waitErr        error
	state          *os.ProcessState
	status         *helperStatus // nil without a helper or when it never reported
	oomKilled      bool          // the run's memory cgroup saw an OOM kill
	cgroupCPU      time.Duration // CPU time of the whole run, when its cgroup counts it
	bwrap          bool          // bwrap ran the command: its exit status is the command's
}

// helperIO is how the caller talks to a starting run, on fd 3 and up: for
// the helper, its config and then its status back; for bwrap, the --file
// contents, then --info-fd and --block-fd. The run proceeds
// only once it has joined its cgroup (cg, when not nil) and, for bwrap,
// its init has its rlimits: the helper waits for its config, bwrap's init
// for its block fd.
type helperIO struct {
	config    []byte // nil for bwrap
	data      [][]byte
	bwrapSync bool
	rlimits   []rlimit // set on bwrap's init
	cg        *runCgroup
}

// execute runs cmd, captures its output within the limit and kills it on
// the wall time, on ctx, or when the output is full. hio is nil for a
// command that is not the helper (docker, podman).
func execute(ctx context.Context, cmd *exec.Cmd, l Limits, hio *helperIO, kill func(*exec.Cmd)) (*outcome, error) {
	out := &outcome{}
	var (
		mu     sync.Mutex
		exited bool
	)
	stop := func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		if exited || out.killed != "" {
			return
		}
		out.killed = reason
		kill(cmd)
	}
	out.stdout = &capture{limit: l.OutputBytes, full: func() { stop(KilledOutput) }}
	out.stderr = &capture{limit: l.OutputBytes, full: func() { stop(KilledOutput) }}
	cmd.Stdout, cmd.Stderr = out.stdout, out.stderr
	// Output pipes held open by a process that escaped the kill (possible
	// only without a PID namespace) must not hold up the result.
	cmd.WaitDelay = 2 * time.Second

	var p *helperPipes
	if hio != nil {
		var err error
		if p, err = openHelperPipes(hio); err != nil {
			return nil, err
		}
		defer p.closeParent()
		cmd.ExtraFiles = p.child
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if p != nil {
			p.closeChild()
		}
		return nil, err
	}

	// The wall time runs from the start: a run held in release counts.
	wctx, cancel := context.WithTimeout(ctx, l.WallTime)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-wctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				stop(KilledCanceled)
			} else {
				stop(KilledWallTime)
			}
		case <-done:
		}
	}()

	var statusCh chan []byte
	if p != nil {
		out.bwrap = hio.bwrapSync
		p.closeChild()
		if err := p.release(cmd.Process.Pid, hio); err != nil {
			mu.Lock()
			killed := out.killed != ""
			mu.Unlock()
			if !killed { // else the release failed because of the kill
				kill(cmd)
				cmd.Wait()
				close(done)
				if msg := strings.TrimSpace(out.stderr.String()); msg != "" {
					err = fmt.Errorf("%w: %s", err, tail([]byte(msg), 2000))
				}
				return nil, err
			}
		} else if p.status != nil {
			statusCh = make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(io.LimitReader(p.status, 1<<20))
				statusCh <- b
			}()
		}
	}

	out.waitErr = cmd.Wait()
	mu.Lock()
	exited = true
	mu.Unlock()
	close(done)
	out.duration = time.Since(start)
	out.state = cmd.ProcessState

	if statusCh != nil {
		var b []byte
		select {
		case b = <-statusCh:
		case <-time.After(2 * time.Second):
			// Only a descendant that escaped could still hold the pipe.
			p.status.Close()
			b = <-statusCh
		}
		if len(b) > 0 {
			var st helperStatus
			if err := json.Unmarshal(b, &st); err == nil {
				out.status = &st
			}
		}
	}
	if hio != nil {
		out.oomKilled = hio.cg.oomKilled()
		out.cgroupCPU = hio.cg.cpuTime()
	}
	return out, nil
}

// helperPipes are the parent's and the child's ends of the helper protocol.
type helperPipes struct {
	child       []*os.File // ExtraFiles, fd 3 and up
	parent      []*os.File
	config      *os.File // write end
	status      *os.File // read end
	info, block *os.File // bwrap sync, parent ends
	released    bool     // config handed to its writer
}

func openHelperPipes(hio *helperIO) (*helperPipes, error) {
	p := &helperPipes{}
	pipe := func(toChild bool) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		if toChild {
			p.child, p.parent = append(p.child, r), append(p.parent, w)
			return w, nil
		}
		p.child, p.parent = append(p.child, w), append(p.parent, r)
		return r, nil
	}
	fail := func(err error) (*helperPipes, error) {
		p.closeChild()
		p.closeParent()
		return nil, err
	}
	var err error
	if hio.config != nil {
		if p.config, err = pipe(true); err != nil {
			return fail(err)
		}
		if p.status, err = pipe(false); err != nil {
			return fail(err)
		}
	}
	for _, d := range hio.data {
		w, err := pipe(true)
		if err != nil {
			return fail(err)
		}
		// A few hundred bytes: the pipe buffer holds them, so bwrap finds
		// them complete whenever it reads.
		if _, err := w.Write(d); err != nil {
			return fail(err)
		}
		w.Close()
	}
	if hio.bwrapSync {
		if p.info, err = pipe(false); err != nil {
			return fail(err)
		}
		if p.block, err = pipe(true); err != nil {
			return fail(err)
		}
	}
	return p, nil
}

// release lets the started run proceed: into its cgroup first, then the
// config (and, for bwrap, the byte its init blocks on).
func (p *helperPipes) release(pid int, hio *helperIO) error {
	if hio.bwrapSync {
		// bwrap reports its init's host pid on the info fd, then blocks
		// before that init forks anything.
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		if err := json.NewDecoder(p.info).Decode(&info); err != nil || info.ChildPID == 0 {
			return fmt.Errorf("bwrap did not report its sandbox (%v)", err)
		}
		pid = info.ChildPID
		for _, r := range hio.rlimits {
			if err := prlimit(pid, r); err != nil {
				return err
			}
		}
	}
	if hio.cg != nil {
		if err := hio.cg.add(pid); err != nil {
			return err
		}
	}
	if p.block != nil {
		p.block.Write([]byte{1})
		p.block.Close()
	}
	if p.config != nil {
		p.released = true
		go func() {
			// A helper that dies early makes this write fail; the
			// missing status then says what matters.
			p.config.Write(hio.config)
			p.config.Close()
		}()
	}
	return nil
}

func (p *helperPipes) closeChild() {
	for _, f := range p.child {
		f.Close()
	}
	p.child = nil
}

func (p *helperPipes) closeParent() {
	for _, f := range p.parent {
		if f != p.config || !p.released { // else closed by its writer
			f.Close()
		}
	}
}

// result interprets an outcome. A helper that reported a setup error, or
// a backend that ended without the helper reporting and without being
// killed, means the run could not execute: an error, not a Result.
func (o *outcome) result(backend string, l Limits, digest string, isolated bool) (Result, error) {
	res := Result{
		Backend:      backend,
		Limits:       l,
		Killed:       o.killed,
		TimedOut:     o.killed == KilledWallTime,
		Duration:     o.duration,
		Stdout:       o.stdout.bytes(),
		Stderr:       o.stderr.bytes(),
		Truncated:    o.stdout.truncated || o.stderr.truncated,
		RunnerDigest: digest,
		Isolated:     isolated,
	}
	st := o.status
	switch {
	case o.bwrap && o.killed == "":
		if err := o.bwrapStatus(&res); err != nil {
			return res, err
		}
	case st != nil && st.Err != "" && o.killed == "":
		return res, errors.New(st.Err)
	case st != nil && st.Err == "":
		res.ExitCode = st.Exit
		if st.Signal != 0 {
			res.ExitCode = -1
			res.Signal = signalName(syscall.Signal(st.Signal))
		}
		res.CPUTime = time.Duration(st.UserUS+st.SysUS) * time.Microsecond
		res.MaxRSSBytes = st.MaxRSSKB * 1024
	case o.killed != "":
		res.ExitCode = -1
		res.Signal = signalName(syscall.SIGKILL)
	case o.oomKilled || helperOutOfMemory(res.Stderr):
		// The helper itself was the victim when the run hit its memory
		// limit (under memory pressure the kernel or the Go runtime may
		// end it rather than the command): the run was stopped for
		// memory, which is what the result must say.
		res.ExitCode, res.Signal, res.Killed = -1, signalName(syscall.SIGKILL), KilledMemory
	default:
		// The head says what failed (a Go runtime's fatal error names it
		// before its goroutine dump); the tail what happened last.
		return res, fmt.Errorf("backend ended without running the command (%v): %s … %s", o.waitErr,
			strings.TrimSpace(head(res.Stderr, 600)), strings.TrimSpace(tail(res.Stderr, 1400)))
	}
	if o.cgroupCPU > 0 {
		res.CPUTime = o.cgroupCPU
	}
	if res.Killed == "" && o.oomKilled && res.ExitCode != 0 {
		res.Killed = KilledMemory
	}
	if res.Killed == "" {
		res.Killed = kernelKill(res, l)
	}
	return res, nil
}

// bwrapStatus reads the command's end from bwrap's: bwrap exits with the
// command's status, or 128+N when signal N ended it, and with 1 and a
// "bwrap: " message when it could not run the command at all (env, which
// runs the command for it, says so with 127 and an "env: " message). The
// CPU time comes from the run's cgroup: bwrap's own rusage stops at its
// init.
func (o *outcome) bwrapStatus(res *Result) error {
	if o.state == nil {
		return fmt.Errorf("bwrap: %v", o.waitErr)
	}
	code := o.state.ExitCode()
	lines := strings.Split(strings.TrimSpace(string(res.Stderr)), "\n")
	last := lines[len(lines)-1]
	if code == 1 && strings.HasPrefix(last, "bwrap: ") ||
		code == 127 && (strings.HasPrefix(last, "env: ") || strings.HasPrefix(last, bwrapEnv+": ")) {
		return errors.New(last)
	}
	if code < 0 {
		// bwrap itself was killed, and not by us.
		return fmt.Errorf("bwrap ended abnormally: %v", o.waitErr)
	}
	res.ExitCode = code
	if code > 128 {
		res.ExitCode, res.Signal = -1, signalName(syscall.Signal(code-128))
	}
	return nil
}

// kernelKill recognises a run ended by a kernel limit. RLIMIT_CPU ends in
// SIGXCPU or, for programs that ignore it, SIGKILL once the hard limit is
// reached. RLIMIT_DATA makes allocations fail, and programs report that in
// their own words; the usual ones are matched.
func kernelKill(res Result, l Limits) string {
	if l.CPUTime > 0 && (res.Signal == "SIGXCPU" || (res.Signal == "SIGKILL" && res.CPUTime >= l.CPUTime)) {
		return KilledCPU
	}
	if l.MemoryBytes > 0 && res.ExitCode != 0 {
		msg := strings.ToLower(string(res.Stderr))
		for _, s := range []string{"out of memory", "cannot allocate memory", "std::bad_alloc", "memoryerror"} {
			if strings.Contains(msg, s) {
				return KilledMemory
			}
		}
	}
	return ""
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL",
	syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGSYS: "SIGSYS",
	syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP", syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// capture keeps the first limit bytes written to it (all of them when the
// limit is negative) and calls full once when more arrive; it accepts and
// discards the rest so the writer never blocks.
type capture struct {
	mu        sync.Mutex
	buf       []byte
	limit     int64
	truncated bool
	full      func()
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.limit < 0 || int64(len(c.buf)+len(p)) <= c.limit {
		c.buf = append(c.buf, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	first := !c.truncated
	if room := c.limit - int64(len(c.buf)); room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.truncated = true
	c.mu.Unlock()
	if first && c.full != nil {
		c.full()
	}
	return len(p), nil
}

func (c *capture) String() string { return string(c.bytes()) }

func (c *capture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf
}

// helperOutOfMemory reports whether the helper's own stderr says it ran out
// of memory: the Go runtime's "out of memory", or a thread it could not
// create for want of memory (ENOMEM, errno=12), which is how the helper
// dies when the run fills the memory limit they share.
func helperOutOfMemory(stderr []byte) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "errno=12"} {
		if bytes.Contains(stderr, []byte(s)) {
			return true
		}
	}
	return false
}

// head returns at most n bytes from the start of b.
func head(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
