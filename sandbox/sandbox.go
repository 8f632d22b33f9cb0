// Package sandbox runs untrusted commands (a candidate's tests) with no
// network, a read-only view of the code, a private writable work dir, a
// clean environment and hard limits. Backends: bwrap (bubblewrap),
// namespaces (pure Go re-exec into new namespaces), docker/podman when
// configured, and none (only when explicitly asked; every result says so).
//
// The namespaces and none backends re-execute the running program as a
// small helper (the init function in helper.go) that builds the sandbox's
// filesystem, applies the limits, starts the command and reports how it
// ended: any program that imports this package serves as its own helper,
// nothing else is installed. bwrap builds the sandbox itself; the caller
// holds its init (--block-fd) until it has its rlimits and its cgroup.
//
// Every isolated run (bwrap, namespaces) sees the same tree: /usr, /bin,
// /lib* and a few /etc files read-only, fresh /dev and /proc, a private
// tmpfs /tmp, the snapshot read-only at /src, the spec's mounts, and
// nothing else of the host; the root itself is read-only. It has its own
// user, mount, PID, network, IPC, UTS and cgroup namespaces: only a private
// loopback (up, so tests can listen on 127.0.0.1), uid/gid 65534 with no
// capabilities and no_new_privs, and no descriptor of the caller beyond
// stdin (/dev/null), stdout and stderr. Inside, 65534 is the caller's own
// uid outside (root's, in CI): files written to a writable mount belong
// to the caller, and only what the tree shows is reachable.
//
// How each limit is enforced:
//   - MemoryBytes is RLIMIT_DATA on every process of the run, the size of
//     each tmpfs, and, when the run has a cgroup (below), the memory limit
//     of the whole run. RLIMIT_DATA counts private writable mappings, so Go
//     programs, whose runtime reserves large PROT_NONE ranges, are charged
//     for what they can touch, unlike with RLIMIT_AS: `go test -race` runs
//     under the default. A process that hits RLIMIT_DATA fails to allocate
//     (Go prints "fatal error: runtime: out of memory"); the cgroup's OOM
//     killer sends SIGKILL. Either way Result.Killed says "memory".
//   - CPUTime is RLIMIT_CPU per process: SIGXCPU at the limit and SIGKILL a
//     second later (Go ignores SIGXCPU, so Go programs see the SIGKILL).
//   - Processes bounds tasks, threads included: pids.max of the run's
//     cgroup, and RLIMIT_NPROC in isolated runs. RLIMIT_NPROC alone does
//     not hold for a caller that is root (the kernel exempts uid 0, which
//     the sandbox user is outside) and counts all of a user's processes in
//     none runs, so without a cgroup it binds only non-root isolated runs.
//   - OutputBytes bounds each of stdout and stderr. The first OutputBytes
//     are kept, Truncated is set and the run is killed (Killed "output"):
//     truncated output cannot be parsed, so running on only wastes time.
//     The pipes are drained until the kill lands, so the child never
//     blocks on a full pipe.
//   - WallTime (and the context deadline) kills the whole run: with bwrap
//     and namespaces the run's PID namespace, so no descendant survives,
//     whatever process group or session it moved to; with none, the
//     process group. A run's leftover background processes end with it
//     too (none: the helper, a child subreaper, kills its descendants).
//
// A run gets a cgroup of its own (pids, memory, CPU accounting) when this
// process may create one below its own: as root on cgroup v1, or on a
// delegated cgroup v2 subtree whose controllers are enabled. The runner
// version, and so the runner digest, says whether runs have one.
package sandbox

import (
	"context"
	"errors"
	"time"
)

// Backend names accepted by New.
const (
	BackendBwrap      = "bwrap"
	BackendNamespaces = "namespaces"
	BackendDocker     = "docker"
	BackendPodman     = "podman"
	BackendNone       = "none"
)

// Reasons in Result.Killed.
const (
	KilledWallTime = "wall time"
	KilledCanceled = "canceled"
	KilledOutput   = "output"
	KilledMemory   = "memory"
	KilledCPU      = "cpu time"
)

// ErrUnavailable is wrapped by New and Default when a backend cannot run
// on this machine.
var ErrUnavailable = errors.New("sandbox backend unavailable")

// DefaultLimits fill the zero fields of Limits. They are generous enough for
// `go test` of a mid-sized module (the compiler and linker run under the
// same per-process memory bound) and tight enough to stop a runaway test.
var DefaultLimits = Limits{
	MemoryBytes: 2 << 30,
	CPUTime:     10 * time.Minute,
	WallTime:    5 * time.Minute,
	Processes:   1024,
	OutputBytes: 16 << 20,
}

// Limits bound one run. Zero values take the defaults (DefaultLimits); a
// negative value removes that limit (not allowed for WallTime, which always
// applies).
type Limits struct {
	MemoryBytes int64         `json:"memory_bytes"`
	CPUTime     time.Duration `json:"cpu_time"`
	WallTime    time.Duration `json:"wall_time"`
	Processes   int           `json:"processes"`
	OutputBytes int64         `json:"output_bytes"`
}

// Mount exposes a host path inside the sandbox at Target.
type Mount struct {
	Host   string `json:"host"`
	Target string `json:"target"`
}

// Spec is one run. Src is bound read-only at SrcTarget (default /src) and is
// the working directory unless Workdir says otherwise; /tmp and Scratch
// targets are private writable tmpfs; ReadOnly mounts (a Go toolchain, a
// module cache) are read-only; Writable mounts (a build cache) are the only
// host paths a run can change. Env is the whole environment: nothing is
// inherited.
type Spec struct {
	Command   []string          `json:"command"`
	Src       string            `json:"src"`
	SrcTarget string            `json:"src_target,omitempty"`
	Workdir   string            `json:"workdir,omitempty"`
	Env       map[string]string `json:"env"`
	ReadOnly  []Mount           `json:"read_only,omitempty"`
	Writable  []Mount           `json:"writable,omitempty"`
	Scratch   []string          `json:"scratch,omitempty"`
	Limits    Limits            `json:"limits"`
}

// Result is what happened. A run that could not execute at all (the
// backend failed, a mount source is missing, the command was not found) is
// an error from Run, not a Result.
type Result struct {
	Backend string `json:"backend"`
	// Limits are the limits in force, defaults filled in.
	Limits Limits `json:"limits"`
	// ExitCode is the command's exit status, -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the command ("SIGKILL").
	Signal   string `json:"signal,omitempty"`
	TimedOut bool   `json:"timed_out"`
	// Killed says why the run was stopped (one of the Killed constants:
	// wall time, canceled, output, memory, cpu time), empty when it ended
	// by itself. "memory" and "cpu time" are the kernel's limits at work,
	// recognised after the fact; the others are kills by the sandbox.
	Killed    string        `json:"killed,omitempty"`
	Duration  time.Duration `json:"duration"`
	Stdout    []byte        `json:"stdout"`
	Stderr    []byte        `json:"stderr"`
	Truncated bool          `json:"truncated"`
	// CPUTime is the user plus system time of the command and the
	// children it waited for, when the backend can tell (zero otherwise).
	CPUTime time.Duration `json:"cpu_time,omitempty"`
	// MaxRSSBytes is the largest resident set of the command or one of its
	// waited-for children, when the backend can tell.
	MaxRSSBytes int64 `json:"max_rss_bytes,omitempty"`
	// RunnerDigest identifies backend, its version and the limits: the
	// same digest means the same kind of run.
	RunnerDigest string `json:"runner_digest"`
	// Isolated is false only for the none backend.
	Isolated bool `json:"isolated"`
}

// Runner runs specs in one backend.
type Runner interface {
	// Name is the backend: bwrap, namespaces, docker, podman or none.
	Name() string
	Run(ctx context.Context, s Spec) (Result, error)
	// Digest is the runner digest for limits.
	Digest(l Limits) string
}
