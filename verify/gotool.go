package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/gocache"
	"github.com/signoff-dev/signoff/sandbox"
)

// goTool is the host's Go toolchain, which runs are given read-only.
type goTool struct {
	version, goroot, modcache string
}

var (
	goOnce sync.Once
	goInfo goTool
	goErr  error
)

// findGo asks the go command on PATH where it lives, once per process. It
// does not use the caller's context: the answer is cached for every later
// caller, so one cancelled verification must not poison it.
func findGo() (goTool, error) {
	goOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		bin, err := exec.LookPath("go")
		if err != nil {
			goErr = fmt.Errorf("no go toolchain on PATH: %w", err)
			return
		}
		cmd := exec.CommandContext(ctx, bin, "env", "GOVERSION", "GOROOT", "GOMODCACHE")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
		out, err := cmd.Output()
		if err != nil {
			goErr = fmt.Errorf("go env: %w", err)
			return
		}
		f := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(f) != 3 || f[0] == "" || f[1] == "" {
			goErr = fmt.Errorf("go env: unexpected output %q", out)
			return
		}
		goInfo = goTool{version: f[0], goroot: f[1], modcache: f[2]}
	})
	return goInfo, goErr
}

// sandboxPath is where a run's PATH looks after the Go toolchain.
var sandboxPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// Paths inside the sandbox.
const (
	sbCache    = "/signoff/go-build"
	sbModCache = "/signoff/gomod"
	// A run that may not write the trusted cache reads it here, through
	// the cache program (this program, mounted at sbProg), and builds into
	// a layer on its own /tmp.
	sbTrusted = "/signoff/go-build-trusted"
	sbProg    = "/signoff/bin/signoff"
	sbLayer   = "/tmp/.signoff-gocache/layer"
	sbPrivate = "/tmp/.signoff-gocache/local"
)

// Ways a run sees the build cache.
const (
	// cacheTrusted: the shared cache is writable. Only base runs, whose
	// code is the project's own and whose tests a person reviewed.
	cacheTrusted = "trusted"
	// cacheLayered: the shared cache is read-only under a layer of the
	// run's own that is thrown away with it.
	cacheLayered = "layered"
	// cachePrivate: a cold cache of the run's own, for backends that
	// cannot mount the cache program.
	cachePrivate = "private"
	// cacheShielded: the go command writes the shared cache (compiling is
	// the trusted toolchain's work; no candidate code runs in it), and
	// every test binary runs behind Landlock through the witness's -exec
	// wrapper, unable to write it. As fast as a trusted run.
	cacheShielded = "shielded"
	// sbWork is the go command's work directory in a shielded run: the
	// test binaries may be executed from it, not read.
	sbWork = "/signoff/work"
)

// spec runs command in src with the toolchain and module cache read-only,
// the build cache as mode says (cacheTrusted, cacheLayered, cachePrivate),
// and an environment that keeps go offline and
// local: no proxy, no toolchain download, no VCS stamping, no cgo (the
// sandbox has no C compiler to count on). -count=1 turns off go test's
// result cache: every run must really run the tests, or N runs would be
// one run and N-1 replays.
func (g goTool) spec(command []string, src, cache, mode string, l sandbox.Limits) (sandbox.Spec, error) {
	env := map[string]string{
		"PATH":        strings.Join(append([]string{filepath.Join(g.goroot, "bin")}, sandboxPath...), ":"),
		"HOME":        "/tmp",
		"TMPDIR":      "/tmp",
		"GOTMPDIR":    "/tmp",
		"GOROOT":      g.goroot,
		"GOCACHE":     sbCache,
		"GOMODCACHE":  sbModCache,
		"GOPATH":      "/tmp/gopath",
		"GOPROXY":     "off",
		"GOSUMDB":     "off",
		"GOTOOLCHAIN": "local",
		"GOFLAGS":     "-mod=readonly -buildvcs=false -count=1",
		"GOTELEMETRY": "off",
		"GOENV":       "off",
		"GOWORK":      "off",
		"CGO_ENABLED": "0",
	}
	s := sandbox.Spec{
		Command:  command,
		Src:      src,
		Env:      env,
		ReadOnly: []sandbox.Mount{{Host: g.goroot, Target: g.goroot}},
		Limits:   l,
	}
	switch mode {
	case cacheTrusted:
		s.Writable = append(s.Writable, sandbox.Mount{Host: cache, Target: sbCache})
	case cacheLayered:
		exe, err := os.Executable()
		if err != nil {
			return sandbox.Spec{}, fmt.Errorf("the cache program: %w", err)
		}
		prog, err := gocache.Command(sbProg, sbTrusted, sbLayer)
		if err != nil {
			return sandbox.Spec{}, err
		}
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: cache, Target: sbTrusted}, sandbox.Mount{Host: exe, Target: sbProg})
		env["GOCACHE"], env["GOCACHEPROG"] = sbPrivate, prog
	case cachePrivate:
		env["GOCACHE"] = sbPrivate
	case cacheShielded:
		exe, err := os.Executable()
		if err != nil {
			return sandbox.Spec{}, fmt.Errorf("the -exec wrapper: %w", err)
		}
		s.Writable = append(s.Writable, sandbox.Mount{Host: cache, Target: sbCache})
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: exe, Target: sbProg})
		s.Scratch = append(s.Scratch, sbWork)
		env["GOTMPDIR"] = sbWork
	default:
		return sandbox.Spec{}, fmt.Errorf("unknown cache mode %q", mode)
	}
	if st, err := os.Stat(g.modcache); err == nil && st.IsDir() {
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: g.modcache, Target: sbModCache})
	}
	return s, nil
}

func defaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("build cache: %w (set a cache directory)", err)
	}
	return filepath.Join(d, "signoff", "go-build"), nil
}

// spec is the sandbox spec of one command of this verification in the
// checkout dir: the toolchain's (goTool.spec) with the dependencies this
// checkout was given (deps.go) and node's assertion modules frozen before
// any test loads (nodefreeze.go).
func (v *verifier) spec(command []string, dir, mode string) (sandbox.Spec, error) {
	v.specMu.Lock()
	defer v.specMu.Unlock()
	s, err := v.goTool.spec(command, dir, v.cache, mode, v.limits)
	if err != nil {
		return s, err
	}
	if err := v.applyNodeFreeze(&s); err != nil {
		return s, err
	}
	return s, v.applyDeps(dir, &s)
}
