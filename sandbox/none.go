package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// newNone runs commands without isolation, as the caller, on the host's
// filesystem: only the clean environment, the limits and the wall time
// hold (Processes only through a cgroup: RLIMIT_NPROC would count every
// process of the user). Every Result says Isolated=false.
func newNone(o options) (Runner, error) {
	helper, err := helperPath(o)
	if err != nil {
		return nil, err
	}
	return &helperRunner{backend: BackendNone, version: withCgroup(runtime.GOOS + " " + kernelRelease()), helper: helper}, nil
}

// pathMap lets a spec written for the sandbox's tree run without one: the
// command, working directory and environment values that name a target
// (the /src snapshot, a mount, /tmp or a scratch dir) are rewritten to the
// host path behind it. /tmp and scratch targets become directories of a
// private temporary directory removed after the run.
type pathMap struct {
	targets []string // longest first
	hosts   map[string]string
}

func newPathMap(s Spec, lay layout) (*pathMap, func(), error) {
	tmp, err := os.MkdirTemp("", "signoff-sandbox-none-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	m := &pathMap{hosts: map[string]string{}}
	for i, op := range lay.user {
		switch op.Kind {
		case opTmpfs:
			dir := filepath.Join(tmp, strconv.Itoa(i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				cleanup()
				return nil, nil, err
			}
			m.hosts[op.Dst] = dir
		default:
			m.hosts[op.Dst] = op.Src
		}
	}
	for t := range m.hosts {
		m.targets = append(m.targets, t)
	}
	sort.Slice(m.targets, func(i, j int) bool { return len(m.targets[i]) > len(m.targets[j]) })
	return m, cleanup, nil
}

func (m *pathMap) path(p string) string {
	for _, t := range m.targets {
		if p == t || strings.HasPrefix(p, t+"/") {
			return m.hosts[t] + p[len(t):]
		}
	}
	return p
}

// list rewrites each element of a colon-separated list such as PATH; a
// value that is not a path under a target is left as it is.
func (m *pathMap) list(v string) string {
	parts := strings.Split(v, string(os.PathListSeparator))
	for i, p := range parts {
		parts[i] = m.path(p)
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

func (m *pathMap) all(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = m.path(a)
	}
	return out
}

func (m *pathMap) env(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out[i] = k + "=" + m.list(v)
	}
	return out
}
