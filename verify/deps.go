package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
)

// The deps stage. The runs are offline (GOPROXY=off, no network at all),
// so a checkout's dependencies are fetched before them, on the host, by
// the ecosystem's own tool, allowed to reach only the registry or proxy
// the host is configured with. What it fetched goes into a cache keyed by
// the digest of everything the fetch depends on: the lock files, the
// bytes of in-repository tarballs, the host's registry and tool versions
// (deps_go.go, deps_node.go, deps_python.go), which the runs see
// read-only. An entry is reused on its completion marker, so anything
// left out of the key would let one checkout be given another's install.
// The checkout's code is never given to the fetch: only its manifest and
// lock files (and the go.mod of in-repository replacements, the tarballs
// of in-repository file: dependencies), so nothing of a candidate runs on
// the host, and a lock file that names any other source is refused before
// anything is fetched. An entry is capped in size (a small tarball can
// expand to any size) and a cache root keeps its newest entries only.

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
	n, err := nodeDeps(ctx, dir)
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
	// The runs of this checkout get their specs (applyDeps) under the
	// same context.
	checkoutCtx.Store(dir, ctx)
	context.AfterFunc(ctx, func() { checkoutCtx.CompareAndDelete(dir, ctx) })
	var details []string
	for _, it := range p.items {
		d, release, err := v.ensure(ctx, it)
		if err != nil {
			st.Outcome, st.Detail = NotExecuted, "dependencies could not be fetched: "+err.Error()
			return st, true
		}
		// The entry is in use (a pruner leaves it alone) until the
		// verification is over.
		context.AfterFunc(ctx, release)
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
	// A run's spec is built without a context (verifier.spec): the
	// checkout's is the one fetchDeps was given. A checkout it did not
	// see fetches under no context but the fetch timeout, and keeps its
	// entries in use as long as this process lives.
	ctx := context.Background()
	if c, ok := checkoutCtx.Load(dir); ok {
		ctx = c.(context.Context)
	}
	return v.applyDepsContext(ctx, dir, s)
}

// checkoutCtx maps a checkout folder to the context fetchDeps was given
// for it, while that context lasts.
var checkoutCtx sync.Map

// applyDepsContext is applyDeps under ctx: the fetch stops with it, and
// the entries stay in use until it is done.
func (v *verifier) applyDepsContext(ctx context.Context, dir string, s *sandbox.Spec) error {
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	p, err := v.plan(fctx, dir)
	if err != nil {
		return fmt.Errorf("dependencies: %w", err)
	}
	if p.vendored {
		// -mod=readonly turns vendor mode off; the vendored tree is
		// what the module builds with.
		s.Env["GOFLAGS"] = strings.Replace(s.Env["GOFLAGS"], "-mod=readonly", "-mod=vendor", 1)
	}
	for _, it := range p.items {
		_, release, err := v.ensure(fctx, it)
		if err != nil {
			return fmt.Errorf("dependencies: %w", err)
		}
		context.AfterFunc(ctx, release)
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
// two fetches of the same key do not race, and says what it did. The
// entry is marked in use (useEntry) before its marker is read, until
// release is called, so a pruner never deletes it under a run.
func (v *verifier) ensure(ctx context.Context, it depItem) (detail string, release func(), err error) {
	root := v.depsRoot()
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", nil, fmt.Errorf("dependency cache: %w", err)
	}
	entry := v.entry(it)
	held, err := useEntry(entry)
	if err != nil {
		return "", nil, fmt.Errorf("dependency cache lock: %w", err)
	}
	defer func() {
		if err != nil {
			held()
		}
	}()
	marker := filepath.Join(entry, completeMarker)
	if b, err := os.ReadFile(marker); err == nil {
		return it.kind + ": " + string(b) + " (already fetched, key " + it.key[:12] + ")", held, nil
	}
	unlock, err := lockPath(ctx, entry+".lock")
	if err != nil {
		return "", nil, fmt.Errorf("dependency cache lock: %w", err)
	}
	defer unlock()
	if b, err := os.ReadFile(marker); err == nil {
		return it.kind + ": " + string(b) + " (already fetched, key " + it.key[:12] + ")", held, nil
	}
	if err := removeAll(entry); err != nil {
		return "", nil, fmt.Errorf("dependency cache: clearing a half-filled entry: %w", err)
	}
	if err := os.Mkdir(entry, 0o700); err != nil {
		return "", nil, fmt.Errorf("dependency cache: %w", err)
	}
	limit, err := depsMaxBytes()
	if err != nil {
		removeAll(entry)
		return "", nil, err
	}
	start := time.Now()
	what, err := fetchCapped(ctx, it, entry, limit)
	if err != nil {
		removeAll(entry)
		return "", nil, err
	}
	if err := os.WriteFile(marker, []byte(what), 0o400); err != nil {
		removeAll(entry)
		return "", nil, fmt.Errorf("dependency cache: %w", err)
	}
	// Room for the next: the oldest entries beyond the newest
	// maxDepsEntries go (never one in use).
	prune(root, maxDepsEntries)
	return fmt.Sprintf("%s: %s, fetched in %.1f s (key %s)", it.kind, what, time.Since(start).Seconds(), it.key[:12]), held, nil
}

// defaultDepsMaxBytes caps what one entry may hold after its fetch; the
// host can set another cap with SIGNOFF_DEPS_MAX_BYTES.
const defaultDepsMaxBytes = 2 << 30

// maxDepsFiles caps the files and folders of one entry (a tarball of
// empty files fills the disk's inodes, not its bytes).
const maxDepsFiles = 1 << 20

// maxDepsEntries is how many complete entries a cache root keeps.
const maxDepsEntries = 64

func depsMaxBytes() (int64, error) {
	s, ok := os.LookupEnv("SIGNOFF_DEPS_MAX_BYTES")
	if !ok || s == "" {
		return defaultDepsMaxBytes, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, refuse("SIGNOFF_DEPS_MAX_BYTES=%q is not a positive number of bytes", s)
	}
	return n, nil
}

// fetchCapped runs it.fetch with the fetch timeout, watching the entry's
// size as it grows: past limit the fetch is stopped (a small tarball can
// expand to any size), and an entry over the cap once fetched is refused.
func fetchCapped(ctx context.Context, it depItem, entry string, limit int64) (string, error) {
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	over := func() bool {
		n, b := entryUsage(entry)
		return b > limit || n > maxDepsFiles
	}
	var tooBig atomic.Bool
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if over() {
					tooBig.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	what, err := it.fetch(fctx, entry)
	close(done)
	<-watched
	if tooBig.Load() || over() {
		return "", refuse("dependencies take more than %s (%d files at most), the cap of one fetch (SIGNOFF_DEPS_MAX_BYTES)", size(limit), maxDepsFiles)
	}
	return what, err
}

// entryUsage counts the files and folders under dir and the bytes of its
// regular files.
func entryUsage(dir string) (n int, bytes int64) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n++
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	return n, bytes
}

// Entries in use. A process using an entry holds a lock on a file of its
// own beside it (entry.use-*), from before it reads the marker until it is
// done; a pruner deletes an entry only when no such file is locked. In a
// process, the uses of one entry share that file.
var (
	usesMu sync.Mutex
	uses   = map[string]*entryUse{}
)

type entryUse struct {
	n      int
	file   string
	unlock func()
}

// useEntry marks entry in use until release is called (once or more).
func useEntry(entry string) (release func(), err error) {
	usesMu.Lock()
	defer usesMu.Unlock()
	u := uses[entry]
	for u == nil {
		var rnd [8]byte
		rand.Read(rnd[:])
		f := fmt.Sprintf("%s.use-%d-%s", entry, os.Getpid(), hex.EncodeToString(rnd[:]))
		unlock, err := lockPath(context.Background(), f)
		if err != nil {
			os.Remove(f)
			return nil, err
		}
		// A pruner that locked the file between its creation and this
		// lock took it for a dead process's and removed it: start over.
		if _, err := os.Stat(f); err != nil {
			unlock()
			continue
		}
		u = &entryUse{file: f, unlock: unlock}
		uses[entry] = u
	}
	u.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			usesMu.Lock()
			defer usesMu.Unlock()
			if u.n--; u.n == 0 {
				delete(uses, entry)
				os.Remove(u.file)
				u.unlock()
			}
		})
	}, nil
}

// inUse says whether any process holds a use of entry; a use file no one
// holds (its process died) is removed.
func inUse(entry string) bool {
	files, err := filepath.Glob(entry + ".use-*")
	if err != nil {
		return true
	}
	busy := false
	for _, f := range files {
		unlock, ok := tryLock(f)
		if !ok {
			busy = true
			continue
		}
		os.Remove(f)
		unlock()
	}
	return busy
}

// tryLock takes the lock of the file f if no one holds it, without
// waiting.
func tryLock(f string) (unlock func(), ok bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // lockPath tries once before it waits
	unlock, err := lockPath(ctx, f)
	return unlock, err == nil
}

// prune keeps the newest keep complete entries of root (by their
// marker's time) and deletes the others, and any half-filled entry no
// fetch holds. An entry is deleted only under its fetch lock, when no
// process uses it: it is renamed away first (its marker then gone from
// where a user looks), and put back if a use appeared meanwhile.
func prune(root string, keep int) {
	des, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type complete struct {
		dir string
		at  time.Time
	}
	var done []complete
	var partial []string
	for _, de := range des {
		name := de.Name()
		p := filepath.Join(root, name)
		switch {
		case strings.HasPrefix(name, ".trash-"):
			// Left by a pruner that died, unless one is still
			// deciding about it under the entry's lock.
			if m := trashName.FindStringSubmatch(name); m != nil {
				if unlock, ok := tryLock(filepath.Join(root, m[1]) + ".lock"); ok {
					removeAll(p)
					unlock()
				}
			}
		case de.IsDir() && entryName.MatchString(name):
			if fi, err := os.Stat(filepath.Join(p, completeMarker)); err == nil {
				done = append(done, complete{p, fi.ModTime()})
			} else {
				partial = append(partial, p)
			}
		}
	}
	slices.SortFunc(done, func(a, b complete) int { return b.at.Compare(a.at) })
	var old []string
	for i, c := range done {
		if i >= keep {
			old = append(old, c.dir)
		}
	}
	for _, p := range append(old, partial...) {
		pruneEntry(root, p)
	}
}

// entryName is a cache entry's folder: kind-key; trashName one being
// deleted.
var (
	entryName = regexp.MustCompile(`^[a-z]+-[0-9a-f]{64}$`)
	trashName = regexp.MustCompile(`^\.trash-([a-z]+-[0-9a-f]{64})-[0-9a-f]{16}$`)
)

func pruneEntry(root, entry string) {
	unlock, ok := tryLock(entry + ".lock")
	if !ok {
		return // being fetched, or pruned by another
	}
	defer unlock()
	if inUse(entry) {
		return
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	trash := filepath.Join(root, ".trash-"+filepath.Base(entry)+"-"+hex.EncodeToString(rnd[:]))
	if err := os.Rename(entry, trash); err != nil {
		return
	}
	if inUse(entry) {
		// A user may have read the marker before the rename: put it
		// back (no fetch can have made a new one: the lock is held).
		os.Rename(trash, entry)
		return
	}
	removeAll(trash)
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
	if !fi.Mode().IsRegular() || fi.Size() > maxTarball {
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
