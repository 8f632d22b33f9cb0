package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
)

// The deps stage. The runs are offline (GOPROXY=off, no network at all),
// so a checkout's dependencies are fetched before them, on the host, by
// the ecosystem's own tool, allowed to reach only the registry or proxy
// the host is configured with. What it fetched goes into a cache keyed by
// the digest of the lock files (deps_go.go, deps_node.go,
// deps_python.go), which the runs see read-only. The checkout's code is
// never given to the fetch: only its manifest and lock files (and the
// go.mod of in-repository replacements, the tarballs of in-repository
// file: dependencies), so nothing of a candidate runs on the host, and a
// lock file that names any other source is refused before anything is
// fetched.

// fetchTimeout bounds one checkout's fetch.
const fetchTimeout = 10 * time.Minute

// maxToolOutput caps what is kept of a fetch tool's output.
const maxToolOutput = 4 << 20

// depItem is one kind of dependencies of a checkout: its cache entry and
// how to fill it.
type depItem struct {
	kind string // go, node, python
	key  string // hex digest of what decides the contents
	// fetch fills the entry's directory (empty, already created) and
	// says what it fetched. It runs under the entry's lock.
	fetch func(ctx context.Context, entry string) (string, error)
	// apply gives a run the filled entry.
	apply func(entry string, s *sandbox.Spec) error
}

// depsPlan is what a checkout needs.
type depsPlan struct {
	items []depItem
	// vendored: a Go module with vendor/modules.txt, built with
	// -mod=vendor and nothing fetched.
	vendored bool
}

// fetchError is a fetch that did not happen or failed: the stage is
// not-executed with its message (never "failed to build").
type fetchError struct{ msg string }

func (e *fetchError) Error() string { return e.msg }

func refuse(format string, a ...any) error { return &fetchError{msg: fmt.Sprintf(format, a...)} }

// depsRoot is where fetched dependencies are kept, beside the build cache.
func (v *verifier) depsRoot() string {
	root := filepath.Join(filepath.Dir(v.cache), "deps")
	if abs, err := filepath.Abs(root); err == nil {
		root = abs // a venv is mounted at its own path: it must be absolute
	}
	return root
}

// plan reads what the checkout dir needs. An error is a refusal, said in
// the stage's detail.
func (v *verifier) plan(ctx context.Context, dir string) (depsPlan, error) {
	var p depsPlan
	g, vendored, err := goDeps(ctx, dir)
	if err != nil {
		return p, err
	}
	p.vendored = vendored
	if g != nil {
		p.items = append(p.items, *g)
	}
	n, err := nodeDeps(dir)
	if err != nil {
		return p, err
	}
	if n != nil {
		p.items = append(p.items, *n)
	}
	py, err := pythonDeps(dir)
	if err != nil {
		return p, err
	}
	if py != nil {
		p.items = append(p.items, *py)
	}
	return p, nil
}

// fetchDeps fetches the dependencies of the checkout dir before the runs
// of stage, outside the offline sandbox. ran says whether there was a
// deps stage at all; its outcome is OK or NotExecuted.
func (v *verifier) fetchDeps(ctx context.Context, stage, dir string) (st Stage, ran bool) {
	start := time.Now()
	st = Stage{Name: StageDeps}
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	p, err := v.plan(ctx, dir)
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, "dependencies could not be fetched: "+err.Error()
		return st, true
	}
	if len(p.items) == 0 {
		return st, false
	}
	var details []string
	for _, it := range p.items {
		d, err := v.ensure(ctx, it)
		if err != nil {
			st.Outcome, st.Detail = NotExecuted, "dependencies could not be fetched: "+err.Error()
			return st, true
		}
		details = append(details, d)
	}
	st.Outcome, st.Detail = OK, strings.Join(details, "; ")
	return st, true
}

// applyDeps gives a run in the checkout dir the dependencies fetchDeps
// fetched for it. It reads the plan again (the cache is keyed by the
// lock files, so the same files find the same entry) and fetches what is
// missing: runs of a checkout fetchDeps did not see (the warm-up, base
// built to compare with a candidate that does not build) get their
// dependencies too, or an error that makes the run not-executed.
func (v *verifier) applyDeps(dir string, s *sandbox.Spec) error {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	p, err := v.plan(ctx, dir)
	if err != nil {
		return fmt.Errorf("dependencies: %w", err)
	}
	if p.vendored {
		// -mod=readonly turns vendor mode off; the vendored tree is
		// what the module builds with.
		s.Env["GOFLAGS"] = strings.Replace(s.Env["GOFLAGS"], "-mod=readonly", "-mod=vendor", 1)
	}
	for _, it := range p.items {
		if _, err := v.ensure(ctx, it); err != nil {
			return fmt.Errorf("dependencies: %w", err)
		}
		if err := it.apply(v.entry(it), s); err != nil {
			return fmt.Errorf("dependencies (%s): %w", it.kind, err)
		}
	}
	return nil
}

func (v *verifier) entry(it depItem) string {
	return filepath.Join(v.depsRoot(), it.kind+"-"+it.key)
}

// completeMarker is written last into a filled entry: an entry without
// it (a fetch that died half-way) is never used, but emptied and fetched
// again.
const completeMarker = ".signoff-complete"

// ensure fills the cache entry of it unless it is complete, under a lock so
// two fetches of the same key do not race, and says what it did.
func (v *verifier) ensure(ctx context.Context, it depItem) (string, error) {
	root := v.depsRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("dependency cache: %w", err)
	}
	entry := v.entry(it)
	marker := filepath.Join(entry, completeMarker)
	if b, err := os.ReadFile(marker); err == nil {
		return it.kind + ": " + string(b) + " (already fetched, key " + it.key[:12] + ")", nil
	}
	unlock, err := lockPath(ctx, entry+".lock")
	if err != nil {
		return "", fmt.Errorf("dependency cache lock: %w", err)
	}
	defer unlock()
	if b, err := os.ReadFile(marker); err == nil {
		return it.kind + ": " + string(b) + " (already fetched, key " + it.key[:12] + ")", nil
	}
	if err := removeAll(entry); err != nil {
		return "", fmt.Errorf("dependency cache: clearing a half-filled entry: %w", err)
	}
	if err := os.Mkdir(entry, 0o700); err != nil {
		return "", fmt.Errorf("dependency cache: %w", err)
	}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	start := time.Now()
	what, err := it.fetch(fctx, entry)
	if err != nil {
		removeAll(entry)
		return "", err
	}
	if err := os.WriteFile(marker, []byte(what), 0o400); err != nil {
		removeAll(entry)
		return "", fmt.Errorf("dependency cache: %w", err)
	}
	return fmt.Sprintf("%s: %s, fetched in %.1f s (key %s)", it.kind, what, time.Since(start).Seconds(), it.key[:12]), nil
}

// removeAll removes a cache entry, first making its directories writable
// (a tool may have left read-only ones).
func removeAll(p string) error {
	filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}

// digest is the key of a cache entry: the SHA-256 over its parts, each
// length-prefixed so no two different lists of parts collide.
func digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// size says n bytes for a person.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tool runs a fetch tool with exactly env, in dir, its output capped. The
// error carries the last lines of its output and how to run it by hand.
func tool(ctx context.Context, dir string, env []string, hint string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut capped
	out.max, errOut.max = maxToolOutput, maxToolOutput
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		why := err.Error()
		if ctx.Err() != nil {
			why = "timed out: " + ctx.Err().Error()
		}
		return out.buf.Bytes(), refuse("%s %s: %s%s (run: %s)", filepath.Base(name), strings.Join(firstArgs(args), " "), why, lastLines(errOut.buf.Bytes(), out.buf.Bytes()), hint)
	}
	return out.buf.Bytes(), nil
}

func firstArgs(args []string) []string {
	if len(args) > 2 {
		return args[:2]
	}
	return args
}

// lastLines is the last few lines of a tool's output, for the detail.
func lastLines(stderr, stdout []byte) string {
	b := bytes.TrimSpace(stderr)
	if len(b) == 0 {
		b = bytes.TrimSpace(stdout)
	}
	if len(b) == 0 {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 4 {
		lines = lines[len(lines)-4:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return ": " + s
}

// readSmall reads a manifest or lock file of the checkout: a regular file
// (not a symlink out of it), at most 32 MiB. ok is false when absent.
func readSmall(dir, rel string) (b []byte, ok bool, err error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, refuse("%s is not a regular file", rel)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, 32<<20+1))
	if err != nil {
		return nil, false, err
	}
	if len(b) > 32<<20 {
		return nil, false, refuse("%s is larger than 32 MiB", rel)
	}
	return b, true, nil
}

// inside resolves rel (slash-separated, relative) in the checkout dir and
// checks that it stays inside it, symlinks followed: a path a manifest
// names must not make the host read anything else.
func inside(dir, rel string) (string, error) {
	if rel == "" || filepath.IsAbs(rel) || strings.Contains(rel, "\\") {
		return "", refuse("%q is not a relative path inside the repository", rel)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", refuse("%q: %v", rel, err)
	}
	r, err := filepath.Rel(root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", refuse("%q is outside the repository", rel)
	}
	return real, nil
}

// hostEnv picks the named variables of the host's environment that are
// set.
func hostEnv(names ...string) []string {
	var out []string
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			out = append(out, n+"="+v)
		}
	}
	return out
}

// proxyEnv are the host's proxy settings, which a fetch through a
// corporate proxy needs.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// copyFile copies a regular file of at most 256 MiB, creating dst's folder.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 256<<20 {
		return refuse("%s is not a regular file of at most 256 MiB", filepath.Base(src))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// replaceMount puts m in place of any read-only mount at the same target.
func replaceMount(s *sandbox.Spec, m sandbox.Mount) {
	kept := s.ReadOnly[:0]
	for _, o := range s.ReadOnly {
		if o.Target != m.Target {
			kept = append(kept, o)
		}
	}
	s.ReadOnly = append(kept, m)
}
