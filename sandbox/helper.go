package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// helperArg is argv[1] of the helper: the running program re-executed by
// the namespaces and none backends. It reads a helperConfig from fd 3,
// builds the namespace's filesystem when asked, applies the limits, starts
// the command as its child, reaps it and writes a helperStatus to fd 4.
const helperArg = "__signoff_sandbox_exec"

const (
	configFD = 3
	statusFD = 4
)

// The helper runs from init so that any program importing this package
// (cmd/signoff, a test binary) serves as its own helper without a main of
// its own having to cooperate.
func init() {
	if len(os.Args) > 1 && os.Args[1] == helperArg {
		os.Exit(helperMain())
	}
}

type helperConfig struct {
	// Mode is "exec" (none: run on the host's filesystem) or "ns"
	// (namespaces: build the sandbox's from Plan first).
	Mode    string    `json:"mode"`
	Probe   bool      `json:"probe,omitempty"`
	Command []string  `json:"command"`
	Env     []string  `json:"env"`
	Dir     string    `json:"dir"`
	Plan    []mountOp `json:"plan,omitempty"`
	// Isolated runs drop every capability and set no_new_privs before the
	// command starts; none runs as the caller.
	Isolated bool     `json:"isolated,omitempty"`
	Rlimits  []rlimit `json:"rlimits,omitempty"`
}

// rlimit is one resource limit, applied by the helper to itself before it
// starts the command, or by the caller to bwrap's init with prlimit; the
// command inherits it either way.
type rlimit struct {
	Name     string `json:"name"`
	Resource int    `json:"resource"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// rlimitsFor turns limits into rlimits. No core dumps either: a crashing
// test must not fill a writable mount.
func rlimitsFor(l Limits, nproc bool) []rlimit {
	out := []rlimit{{Name: "RLIMIT_CORE", Resource: syscall.RLIMIT_CORE}}
	if l.MemoryBytes > 0 {
		v := uint64(l.MemoryBytes)
		out = append(out, rlimit{Name: "RLIMIT_DATA", Resource: syscall.RLIMIT_DATA, Cur: v, Max: v})
	}
	if l.CPUTime > 0 {
		// SIGXCPU at the soft limit, SIGKILL one second later.
		sec := uint64((l.CPUTime + time.Second - 1) / time.Second)
		out = append(out, rlimit{Name: "RLIMIT_CPU", Resource: syscall.RLIMIT_CPU, Cur: sec, Max: sec + 1})
	}
	if nproc && l.Processes > 0 {
		v := uint64(l.Processes)
		out = append(out, rlimit{Name: "RLIMIT_NPROC", Resource: rlimitNPROC, Cur: v, Max: v})
	}
	return out
}

type helperStatus struct {
	// Err is set when the command could not be started.
	Err      string `json:"err,omitempty"`
	Exit     int    `json:"exit"`
	Signal   int    `json:"signal,omitempty"`
	UserUS   int64  `json:"user_us"`
	SysUS    int64  `json:"sys_us"`
	MaxRSSKB int64  `json:"max_rss_kb"`
}

func helperMain() int {
	// Capabilities and no_new_privs are per thread, and a child inherits
	// those of the thread that forked it: keep everything on this one.
	runtime.LockOSThread()
	status := os.NewFile(statusFD, "status")
	syscall.CloseOnExec(statusFD)
	report := func(st helperStatus) {
		b, _ := json.Marshal(st)
		status.Write(b)
		status.Close()
	}
	fail := func(format string, args ...any) int {
		report(helperStatus{Err: fmt.Sprintf(format, args...)})
		return 127
	}

	cfgFile := os.NewFile(configFD, "config")
	raw, err := io.ReadAll(cfgFile)
	cfgFile.Close()
	if err != nil {
		return fail("read config: %v", err)
	}
	var cfg helperConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fail("decode config: %v", err)
	}
	if err := closeExtraFDs(); err != nil {
		return fail("close inherited descriptors: %v", err)
	}
	if cfg.Mode == "ns" {
		if err := buildRoot(cfg.Plan); err != nil {
			return fail("build sandbox filesystem: %v", err)
		}
	}
	if err := os.Chdir(cfg.Dir); err != nil {
		return fail("working directory: %v", err)
	}
	if cfg.Isolated {
		if err := dropPrivileges(); err != nil {
			return fail("drop privileges: %v", err)
		}
	}
	if err := setRlimits(cfg); err != nil {
		return fail("set limits: %v", err)
	}
	if cfg.Probe {
		report(helperStatus{})
		return 0
	}
	if len(cfg.Command) == 0 {
		return fail("no command")
	}

	// The command is resolved with the run's own PATH (none if the spec
	// sets none), never the helper's.
	os.Clearenv()
	for _, kv := range cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "PATH" {
			os.Setenv("PATH", v)
		}
	}
	path, err := exec.LookPath(cfg.Command[0])
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return fail("%v", err)
	}
	if !cfg.Isolated {
		// Without a PID namespace, the helper adopts orphans so that it can
		// end whatever the command left running (see reapAll).
		becomeSubreaper()
	}
	proc, err := os.StartProcess(path, cfg.Command, &os.ProcAttr{
		Env:   cfg.Env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   commandSysProcAttr(cfg),
	})
	if err != nil {
		return fail("start %s: %v", cfg.Command[0], err)
	}

	// Reap everything: in the namespaces backend the helper is the PID
	// namespace's init and inherits every orphan.
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("wait: %v", err)
		}
		if pid != proc.Pid {
			continue
		}
		st := helperStatus{
			UserUS:   time.Duration(ru.Utime.Nano()).Microseconds(),
			SysUS:    time.Duration(ru.Stime.Nano()).Microseconds(),
			MaxRSSKB: int64(ru.Maxrss),
		}
		code := ws.ExitStatus()
		if ws.Signaled() {
			st.Exit = -1
			st.Signal = int(ws.Signal())
			code = 128 + st.Signal
		} else {
			st.Exit = code
		}
		report(st)
		if !cfg.Isolated {
			reapAll()
		}
		return code
	}
}

func setRlimits(cfg helperConfig) error {
	for _, r := range cfg.Rlimits {
		if err := syscall.Setrlimit(r.Resource, &syscall.Rlimit{Cur: r.Cur, Max: r.Max}); err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	return nil
}
