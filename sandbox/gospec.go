package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Where GoSpec puts the module cache and the build cache inside the sandbox.
const (
	GoPathTarget  = "/gopath"
	GoModTarget   = "/gopath/pkg/mod"
	GoCacheTarget = "/gocache"
)

// GoSpec returns a spec that runs `go args...` on the module at srcDir the
// way the verifier runs tests: the module read-only at /src (the working
// directory), the host's Go toolchain read-only at its own path, the host's
// module cache read-only as GOMODCACHE, cacheDir (a host directory, created
// if missing) writable as GOCACHE, HOME=/tmp, PWD=/src, and the module
// graph frozen: GOFLAGS=-mod=mod with GOPROXY=off (and GOSUMDB=off,
// GOTOOLCHAIN=local, GOWORK=off), so a module missing from the cache is
// an error rather than a download. An empty cacheDir puts the build cache
// on the run's tmpfs (every run then builds from scratch). Limits are left
// zero (the defaults); set them on the result.
//
// The toolchain is the `go` on PATH (its GOROOT and GOMODCACHE), else the
// one this program was built with.
func GoSpec(srcDir string, args []string, cacheDir string) Spec {
	tc := goToolchain()
	s := Spec{
		Command: append([]string{"go"}, args...),
		Src:     srcDir,
		Env: map[string]string{
			"PATH":        filepath.Join(tc.goroot, "bin") + ":/usr/local/bin:/usr/bin:/bin",
			"HOME":        "/tmp",
			"GOROOT":      tc.goroot,
			"GOPATH":      GoPathTarget,
			"GOMODCACHE":  GoModTarget,
			"GOCACHE":     GoCacheTarget,
			"GOFLAGS":     "-mod=mod",
			"GOPROXY":     "off",
			"GOSUMDB":     "off",
			"GOTOOLCHAIN": "local",
			"GOWORK":      "off",
			// The working directory, as a shell would say; set here, it
			// also spares bwrap runs the step that removes bwrap's own.
			"PWD": "/src",
		},
	}
	if tc.goroot != "" {
		s.ReadOnly = append(s.ReadOnly, Mount{Host: tc.goroot, Target: tc.goroot})
	}
	if tc.modcache != "" {
		s.ReadOnly = append(s.ReadOnly, Mount{Host: tc.modcache, Target: GoModTarget})
	}
	if cacheDir == "" {
		s.Env["GOCACHE"] = "/tmp/gocache"
	} else {
		os.MkdirAll(cacheDir, 0o755)
		s.Writable = append(s.Writable, Mount{Host: cacheDir, Target: GoCacheTarget})
	}
	return s
}

type toolchain struct {
	goroot   string // symlinks resolved: it is also the target
	modcache string // empty when there is none on this machine
}

var goToolchain = sync.OnceValue(func() toolchain {
	var tc toolchain
	if goBin, err := exec.LookPath("go"); err == nil {
		out, err := exec.Command(goBin, "env", "-json", "GOROOT", "GOMODCACHE").Output()
		if err == nil {
			var v struct{ GOROOT, GOMODCACHE string }
			if json.Unmarshal(out, &v) == nil {
				tc.goroot, tc.modcache = v.GOROOT, v.GOMODCACHE
			}
		}
	}
	if tc.goroot == "" {
		tc.goroot = runtime.GOROOT() //nolint:staticcheck // the fallback when no go is on PATH
	}
	if p, err := filepath.EvalSymlinks(tc.goroot); err == nil {
		tc.goroot = p
	}
	if fi, err := os.Stat(tc.modcache); err != nil || !fi.IsDir() {
		tc.modcache = ""
	}
	return tc
})
