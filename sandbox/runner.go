package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/canonical"
)

// Option configures a backend in New.
type Option func(*options)

type options struct {
	binary string // bwrap, docker or podman executable
	helper string // executable re-executed as the helper
	image  string // docker/podman image
}

// WithBinary sets the bwrap, docker or podman executable (default: looked
// up in PATH).
func WithBinary(path string) Option { return func(o *options) { o.binary = path } }

// WithHelper sets the executable re-executed as the sandbox helper. It must
// be a program that imports this package (default: the running program).
func WithHelper(path string) Option { return func(o *options) { o.helper = path } }

// WithImage sets the image the docker and podman backends run in. Those
// backends need one; the image must have the commands the spec runs.
func WithImage(image string) Option { return func(o *options) { o.image = image } }

// New returns a runner for backend: bwrap, namespaces, docker, podman or
// none. It checks that the backend works here (with a trivial run, once per
// process) and wraps ErrUnavailable when it does not.
func New(backend string, opts ...Option) (Runner, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var (
		r   Runner
		err error
	)
	switch backend {
	case BackendBwrap:
		r, err = newBwrap(o)
	case BackendNamespaces:
		r, err = newNamespaces(o)
	case BackendDocker, BackendPodman:
		r, err = newContainer(backend, o)
	case BackendNone:
		r, err = newNone(o)
	default:
		return nil, fmt.Errorf("sandbox: unknown backend %q (want bwrap, namespaces, docker, podman or none)", backend)
	}
	if err != nil {
		return nil, err
	}
	if err := probe(backend, o, r); err != nil {
		return nil, fmt.Errorf("sandbox %s: %w: %v", backend, ErrUnavailable, err)
	}
	return r, nil
}

// Default returns the best isolated backend here: bwrap when it is installed
// and works, else namespaces. It never falls back to none.
func Default(opts ...Option) (Runner, error) {
	r, err := New(BackendBwrap, opts...)
	if err == nil {
		return r, nil
	}
	r, err2 := New(BackendNamespaces, opts...)
	if err2 == nil {
		return r, nil
	}
	return nil, fmt.Errorf("sandbox: no isolated backend works here (%v; %v)", err, err2)
}

// Available lists the isolated backends that work on this machine, in order
// of preference: bwrap, namespaces, then docker and podman when their
// engine answers (an image is needed to use them: WithImage). Each is
// probed once per process. none is never listed: it always "works" and
// isolates nothing.
func Available() []string {
	var out []string
	for _, b := range []string{BackendBwrap, BackendNamespaces, BackendDocker, BackendPodman} {
		var err error
		switch b {
		case BackendDocker, BackendPodman:
			err = engineProbe(b, "")
		default:
			_, err = New(b)
		}
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

var probes sync.Map // probe key -> *probeResult

type probeResult struct {
	once sync.Once
	err  error
}

// probe runs a trivial spec through r once per backend and options: a
// backend that is installed but cannot create namespaces here (a container
// without user namespaces, say) must fail in New, not in the first Run.
func probe(backend string, o options, r Runner) error {
	if backend == BackendDocker || backend == BackendPodman {
		return engineProbe(backend, o.binary)
	}
	key := backend + "\x00" + o.binary + "\x00" + o.helper
	v, _ := probes.LoadOrStore(key, &probeResult{})
	p := v.(*probeResult)
	p.once.Do(func() {
		hr, ok := r.(*helperRunner)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s := Spec{Command: []string{"probe"}, Limits: Limits{WallTime: 20 * time.Second}}
		if backend == BackendBwrap {
			// bwrap runs commands itself: any command present everywhere.
			s.Command, s.Env = []string{"true"}, map[string]string{"PATH": "/usr/bin:/bin"}
		}
		res, err := hr.run(ctx, s, backend != BackendBwrap)
		if err != nil {
			p.err = err
			return
		}
		if res.ExitCode != 0 {
			p.err = fmt.Errorf("probe exited %d: %s", res.ExitCode, tail(res.Stderr, 400))
		}
	})
	return p.err
}

// helperPath is the executable the helper-based backends re-execute.
func helperPath(o options) (string, error) {
	if o.helper != "" {
		return o.helper, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox: locate own executable for the helper: %w", err)
	}
	return exe, nil
}

func lookBinary(o options, name string) (string, error) {
	if o.binary != "" {
		return o.binary, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("sandbox %s: %w: %v", name, ErrUnavailable, err)
	}
	return p, nil
}

// WithDefaults returns l with zero fields taken from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultLimits.MemoryBytes
	}
	if l.CPUTime == 0 {
		l.CPUTime = DefaultLimits.CPUTime
	}
	if l.WallTime <= 0 {
		l.WallTime = DefaultLimits.WallTime
	}
	if l.Processes == 0 {
		l.Processes = DefaultLimits.Processes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = DefaultLimits.OutputBytes
	}
	return l
}

// runnerDigest is the SHA-256 of the canonical JSON of backend, version and
// limits (defaults filled in, so a zero field and its default agree).
func RunnerDigest(backend, version string, l Limits) string {
	d, err := canonical.Digest(struct {
		Backend string `json:"backend"`
		Version string `json:"version"`
		Limits  Limits `json:"limits"`
	}{backend, version, l.WithDefaults()})
	if err != nil {
		// Only non-finite floats fail canonicalisation; there are none.
		panic(fmt.Sprintf("sandbox: runner digest: %v", err))
	}
	return d
}

// withCgroup adds how runs are bounded beyond rlimits to a backend version:
// a run with a pids and memory cgroup is not the same kind of run as one
// without.
func withCgroup(version string) string {
	if d := cgroupInfo().desc; d != "" {
		return version + "; " + d
	}
	return version
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
