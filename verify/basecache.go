package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/canonical"
)

// The base cache. Base's runs depend on base, the frozen test tree, the
// harness, the sandbox and its limits, and the toolchain, never on the
// candidate, yet they were repeated for every candidate (about 45 s for
// one real library). A base stage in which every run reproduced the bug
// is kept on disk under a key over everything it depends on, and a later
// verification with the same key appends it, marked Reused, instead of
// running base again.
//
// What may write it: only trusted base runs, from the verifier's own
// process, after the whole base stage reproduced. A candidate's runs never
// write it (they run in other worktrees and sandboxes, and their stages
// are never stored), nor do a reproduction's (untrustedBase), and a reused
// stage is not stored again. The directory is beside the build cache, not
// in it, so no run mounts it. What is read back is trusted only whole: an
// entry that does not decode strictly, whose key or inputs differ, whose
// output digests do not match, or whose stored output does not judge as
// reproducing the bug again, is ignored and base runs.

const (
	// baseCacheSchema changes whenever what an entry means changes.
	baseCacheSchema = 2
	// baseCacheKeep is how many entries are kept; the oldest go first.
	baseCacheKeep = 256
	// baseCacheMaxAge is how long an entry is trusted: what the host
	// gives the sandbox (system files, the module cache) is not all in
	// the key.
	baseCacheMaxAge = 24 * time.Hour
)

// baseKey is what a base stage's result depends on.
type baseKey struct {
	Schema        int         `json:"schema"`
	Base          string      `json:"base"`
	TestsFrom     string      `json:"tests_from"`
	HarnessDigest string      `json:"harness_digest"`
	RunnerDigest  string      `json:"runner_digest"` // backend, its version and the limits
	Environment   Environment `json:"environment"`
	// Protected are the globs restored from tests_from, the test-only
	// packages' included.
	Protected      []string `json:"protected"`
	Runs           int      `json:"runs"`
	BuildTimeoutMS int64    `json:"build_timeout_ms"`
	// Tools are the host programs a run may execute besides the Go
	// toolchain (the command's own, node, python3), each as path, size
	// and modification time: an upgrade of the interpreter a JUnit
	// harness runs changes base's result without changing anything else
	// in the key (red-team finding, issue 23).
	Tools []string `json:"tools"`
}

// baseEntry is one stored base stage.
type baseEntry struct {
	Key     string        `json:"key"`
	Inputs  baseKey       `json:"inputs"`
	Created string        `json:"created"`
	Stages  []cachedStage `json:"stages"`
}

// cachedStage is a stage with its raw output, which Stage keeps out of
// JSON.
type cachedStage struct {
	Stage  Stage  `json:"stage"`
	Stdout []byte `json:"stdout"`
	Stderr []byte `json:"stderr"`
}

// baseCacheDir is where entries live: beside the build cache.
func (v *verifier) baseCacheDir() string {
	return filepath.Join(filepath.Dir(v.cache), "base-runs")
}

// baseKey is the key of this verification's base stage of runs runs, and
// its inputs.
func (v *verifier) baseKey(rep *Report, runs int) (string, baseKey, error) {
	in := baseKey{
		Schema: baseCacheSchema, Base: v.h.Base, TestsFrom: v.h.TestsFrom, HarnessDigest: rep.HarnessDigest,
		RunnerDigest: rep.RunnerDigest, Environment: rep.Environment, Protected: v.protected(), Runs: runs,
		BuildTimeoutMS: v.buildTimeout().Milliseconds(), Tools: hostTools(v.h.Command),
	}
	k, err := canonical.Digest(in)
	return k, in, err
}

// baseStage runs the base stage, or reuses a stored one, and stores what
// it ran when every run reproduced the bug. It reports whether they did.
func (v *verifier) baseStage(ctx context.Context, runs int, rep *Report) bool {
	if v.reuseBase(runs, rep) {
		return true
	}
	first := len(rep.Stages)
	ok := v.runs(ctx, StageBase, v.h.Base, runs, Reproduced, rep)
	if ok {
		v.storeBase(rep, runs, first)
	}
	return ok
}

// reuseBase appends the stored base stage for this verification, when the
// cache is on and holds a sound one, and reports whether it did.
func (v *verifier) reuseBase(runs int, rep *Report) bool {
	if !v.opts.BaseCache || v.untrustedBase {
		return false
	}
	key, in, err := v.baseKey(rep, runs)
	if err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(v.baseCacheDir(), key+".json"))
	if err != nil {
		return false
	}
	stages, ok := v.soundEntry(b, key, in, runs)
	if !ok {
		return false
	}
	rep.Stages = append(rep.Stages, stages...)
	return true
}

// soundEntry decodes an entry and returns its stages, marked reused, only
// when all of it holds.
func (v *verifier) soundEntry(b []byte, key string, in baseKey, runs int) ([]Stage, bool) {
	var e baseEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if dec.Decode(&e) != nil || dec.More() {
		return nil, false
	}
	got, err := canonical.Digest(e.Inputs)
	if err != nil || e.Key != key || got != key {
		return nil, false
	}
	created, err := time.Parse(time.RFC3339, e.Created)
	if err != nil || time.Since(created) > baseCacheMaxAge || time.Until(created) > time.Minute {
		return nil, false
	}
	var out []Stage
	n := 0
	for _, c := range e.Stages {
		s := c.Stage
		s.Stdout, s.Stderr = c.Stdout, c.Stderr
		switch {
		case s.Run == 0:
			// A stage before the runs (dependencies): it must have gone well.
			if s.Outcome != OK {
				return nil, false
			}
		case s.Name != StageBase || s.Run != n+1 || !v.stillReproduces(s):
			return nil, false
		default:
			n++
		}
		s.Reused = created.UTC().Format(time.RFC3339)
		s.Detail += " (reused: base run of " + s.Reused + ", same base, harness, runner and environment)"
		out = append(out, s)
	}
	if n != runs {
		return nil, false
	}
	return out, true
}

// stillReproduces says whether a stored base run is whole and its own
// output, judged again now, reproduces the bug: the stored outcome is not
// taken on trust.
func (v *verifier) stillReproduces(s Stage) bool {
	r := s.Runner
	if s.Outcome != Reproduced || r == nil || r.Error != "" || r.Truncated ||
		r.StdoutSHA256 != SHA256(s.Stdout) || r.StderrSHA256 != SHA256(s.Stderr) {
		return false
	}
	results, err := Parse(v.h.Format, bytes.NewReader(s.Stdout))
	if err != nil || len(results.Tests) == 0 {
		return false
	}
	if r.TimedOut || r.Killed != "" || r.Signal != "" {
		results.Interrupted = "interrupted"
	}
	outcome, _, _ := JudgeBase(v.h, results)
	return outcome == Reproduced
}

// storeBase keeps the base stage rep.Stages[first:] when the cache is on,
// the runs were trusted and every one reproduced the bug. It is best
// effort: a verification does not fail because its base could not be kept.
func (v *verifier) storeBase(rep *Report, runs, first int) {
	if !v.opts.BaseCache || v.untrustedBase || first > len(rep.Stages) {
		return
	}
	stages := rep.Stages[first:]
	n := 0
	for _, s := range stages {
		if s.Reused != "" || (s.Run == 0 && s.Outcome != OK) || (s.Run > 0 && (s.Name != StageBase || s.Outcome != Reproduced)) {
			return
		}
		if s.Run > 0 {
			n++
		}
	}
	if n != runs {
		return
	}
	key, in, err := v.baseKey(rep, runs)
	if err != nil {
		return
	}
	e := baseEntry{Key: key, Inputs: in, Created: time.Now().UTC().Format(time.RFC3339)}
	for _, s := range stages {
		e.Stages = append(e.Stages, cachedStage{Stage: s, Stdout: s.Stdout, Stderr: s.Stderr})
	}
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	dir := v.baseCacheDir()
	if writeAtomic(dir, key+".json", b) == nil {
		pruneBaseCache(dir, baseCacheKeep)
	}
}

// writeAtomic writes name in dir (made 0700) through a temporary file and
// a rename, so a reader sees the whole entry or none.
func writeAtomic(dir, name string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}

// pruneBaseCache keeps the newest keep entries of dir.
func pruneBaseCache(dir string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type entry struct {
		path string
		mod  time.Time
	}
	var all []entry
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			all = append(all, entry{filepath.Join(dir, e.Name()), fi.ModTime()})
		}
	}
	if len(all) <= keep {
		return
	}
	slices.SortFunc(all, func(a, b entry) int { return b.mod.Compare(a.mod) })
	for _, e := range all[keep:] {
		os.Remove(e.path)
	}
}

// hostTools describes the host programs a run of command may execute
// besides the Go toolchain, as the sandbox's PATH finds them: command[0]
// and the interpreters JUnit harnesses use, plus Debian's pytest, each
// as "path size mtime" (a missing one as its name). A package upgrade
// rewrites them.
func hostTools(command []string) []string {
	names := []string{"node", "python3", "/usr/lib/python3/dist-packages/_pytest"}
	if len(command) > 0 {
		names = append([]string{command[0]}, names...)
	}
	var out []string
	for _, n := range names {
		p := n
		if !filepath.IsAbs(n) {
			p = ""
			for _, dir := range sandboxPath {
				if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
					p = filepath.Join(dir, n)
					break
				}
			}
		}
		if p != "" {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
		}
		fi, err := os.Stat(p)
		if p == "" || err != nil {
			out = append(out, n)
			continue
		}
		out = append(out, fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
	}
	return out
}
