package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// containerRunner runs specs with `docker run` or `podman run`: no network,
// read-only root, tmpfs /tmp and scratch, the engine's memory, pids and CPU
// rlimit, uid 65534, no capabilities, no_new_privs. The output limit and
// wall time are enforced here, as for the other backends; a timed-out
// container is killed through the engine.
//
// Differences from the other backends, inherent to images: the image's own
// files make up the root (mount the toolchain or use an image that has it),
// and the engine adds the image's ENV and HOSTNAME under Spec.Env, so the
// environment is Spec.Env plus those rather than exactly Spec.Env.
type containerRunner struct {
	backend string
	bin     string
	image   string
	version string
}

func newContainer(backend string, o options) (Runner, error) {
	if o.image == "" {
		return nil, fmt.Errorf("sandbox %s: an image is required (WithImage)", backend)
	}
	bin, err := lookBinary(o, backend)
	if err != nil {
		return nil, err
	}
	format := "{{.Server.Version}}"
	if backend == BackendPodman {
		format = "{{.Version}}"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := exec.CommandContext(ctx, bin, "version", "--format", format).Output()
	version := strings.TrimSpace(string(v))
	if err != nil || version == "" {
		version = "unknown"
	}
	return &containerRunner{backend: backend, bin: bin, image: o.image, version: backend + " " + version + " image " + o.image}, nil
}

var engineProbes sync.Map // binary -> *probeResult

// engineProbe asks the engine whether it is running, once per process.
func engineProbe(backend, bin string) error {
	if bin == "" {
		p, err := exec.LookPath(backend)
		if err != nil {
			return err
		}
		bin = p
	}
	v, _ := engineProbes.LoadOrStore(bin, &probeResult{})
	p := v.(*probeResult)
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, bin, "info").CombinedOutput(); err != nil {
			p.err = fmt.Errorf("%s info: %v: %s", backend, err, tail(out, 300))
		}
	})
	return p.err
}

func (r *containerRunner) Name() string           { return r.backend }
func (r *containerRunner) Digest(l Limits) string { return RunnerDigest(r.backend, r.version, l) }

// Run runs s in a fresh container. Canceling ctx kills it and returns the
// Result with the context's error.
func (r *containerRunner) Run(ctx context.Context, s Spec) (Result, error) {
	if len(s.Command) == 0 {
		return Result{}, fmt.Errorf("sandbox %s: empty command", r.backend)
	}
	l := s.Limits.WithDefaults()
	env, err := envList(s.Env)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox %s: %w", r.backend, err)
	}
	lay, err := resolveSpec(s, l)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox %s: %w", r.backend, err)
	}
	var id [8]byte
	rand.Read(id[:])
	name := "signoff-sandbox-" + hex.EncodeToString(id[:])
	args := r.runArgs(name, lay, env, l)
	args = append(args, s.Command...)

	cmd := exec.Command(r.bin, args...)
	cmd.Env = nil // the client needs its own configuration (DOCKER_HOST...)
	kill := func(c *exec.Cmd) {
		// The client dying does not stop the container: ask the engine.
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		exec.CommandContext(kctx, r.bin, "kill", name).Run()
		if c.Process != nil {
			c.Process.Kill()
		}
	}
	out, err := execute(ctx, cmd, l, nil, kill)
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec.CommandContext(rctx, r.bin, "rm", "-f", name).Run()
	}()
	if err != nil {
		return Result{}, fmt.Errorf("sandbox %s: %w", r.backend, err)
	}
	res := Result{
		Backend:      r.backend,
		Limits:       l,
		Killed:       out.killed,
		TimedOut:     out.killed == KilledWallTime,
		Duration:     out.duration,
		Stdout:       out.stdout.bytes(),
		Stderr:       out.stderr.bytes(),
		Truncated:    out.stdout.truncated || out.stderr.truncated,
		RunnerDigest: r.Digest(l),
		Isolated:     true,
	}
	if out.killed != "" {
		res.ExitCode, res.Signal = -1, "SIGKILL"
		if out.killed == KilledCanceled {
			return res, ctx.Err()
		}
		return res, nil
	}
	code := out.state.ExitCode()
	// 125-127 are the engine's own failures (daemon error, command not
	// executable, command not found), not the command's exit status.
	if code >= 125 && code <= 127 {
		return res, fmt.Errorf("sandbox %s: container did not run the command (exit %d): %s", r.backend, code, strings.TrimSpace(tail(res.Stderr, 2000)))
	}
	res.ExitCode = code
	if code > 128 {
		res.ExitCode, res.Signal = -1, signalName(syscall.Signal(code-128))
	}
	ictx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b, err := exec.CommandContext(ictx, r.bin, "inspect", "--format", "{{.State.OOMKilled}}", name).Output(); err == nil && strings.TrimSpace(string(b)) == "true" {
		res.Killed = KilledMemory
	} else {
		res.Killed = kernelKill(res, l)
	}
	return res, nil
}

func (r *containerRunner) runArgs(name string, lay layout, env []string, l Limits) []string {
	args := []string{
		"run", "--name", name, "--network", "none", "--read-only",
		"--user", fmt.Sprintf("%d:%d", sandboxUID, sandboxGID),
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--hostname", hostname, "--workdir", lay.workdir, "--entrypoint", "",
	}
	if l.MemoryBytes > 0 {
		m := strconv.FormatInt(l.MemoryBytes, 10)
		args = append(args, "--memory", m, "--memory-swap", m)
	}
	if l.Processes > 0 {
		args = append(args, "--pids-limit", strconv.Itoa(l.Processes))
	}
	if l.CPUTime > 0 {
		sec := int64((l.CPUTime + time.Second - 1) / time.Second)
		args = append(args, "--ulimit", fmt.Sprintf("cpu=%d:%d", sec, sec+1))
	}
	for _, op := range lay.user {
		switch op.Kind {
		case opTmpfs:
			opt := fmt.Sprintf("%s:rw,exec,mode=%o", op.Dst, op.Perm)
			if op.Size > 0 {
				opt += fmt.Sprintf(",size=%d", op.Size)
			}
			args = append(args, "--tmpfs", opt)
		case opReadOnly:
			args = append(args, "--mount", "type=bind,"+csvField("source="+op.Src)+","+csvField("target="+op.Dst)+",readonly")
		case opWritable:
			args = append(args, "--mount", "type=bind,"+csvField("source="+op.Src)+","+csvField("target="+op.Dst))
		}
	}
	for _, kv := range env {
		args = append(args, "--env", kv)
	}
	return append(args, r.image)
}

// csvField quotes a --mount field the way the engines' CSV parser expects
// when it holds a comma or a quote.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
