// Package gitx is a small wrapper over the git binary: init and clone,
// worktrees in temporary directories that are always cleaned up, checkout,
// deterministic commits, diffs, apply, merge, ancestry and tree digests.
//
// Every invocation runs with a fixed environment so that the host's
// configuration cannot change a result: no system or global configuration
// (GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null), HOME set to
// Repo.Home (default /dev/null, where nobody can plant a file), no terminal
// prompts, the C locale, UTC, no pager, no editor, no replace refs,
// hooks disabled (core.hooksPath=/dev/null), no fsmonitor, no signing, no
// automatic gc, and a fixed fallback identity. Only PATH, TMPDIR and the
// TLS and proxy variables are inherited. The repository's own .git/config is
// still read: the repository is trusted by whoever opened it.
//
// Arguments are passed as an argument vector, never through a shell.
// Revisions and paths are validated (an argument starting with "-" is
// refused so it cannot be read as an option) and paths follow "--".
// Errors are *Error values carrying git's trimmed, bounded stderr.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"
)

// Repo is a git repository (or a worktree of one) at Dir.
type Repo struct {
	// Dir is the working tree's directory.
	Dir string
	// Home is HOME for git (SSH keys, netrc). Empty means os.DevNull.
	// Global configuration is never read either way.
	Home string
}

// Signature is the author and committer of a commit. Commits made through
// this package use it for both, so the same tree, parents, message and
// Signature always give the same commit id.
type Signature struct {
	Name  string
	Email string
	// When is the author and committer date. The zero time means now.
	When time.Time
}

// ErrInvalid is returned (wrapped) for a revision, path or name this
// package refuses to pass to git.
var ErrInvalid = errors.New("gitx: invalid argument")

// ErrConflict is returned (wrapped) when a merge or apply does not go
// through cleanly. The repository is left as it was before the attempt.
var ErrConflict = errors.New("gitx: conflict")

// Error is a git invocation that failed.
type Error struct {
	Args     []string // the git subcommand and its arguments (no global options)
	ExitCode int      // -1 when git did not exit normally
	Stderr   string   // trimmed and bounded
	Err      error    // the underlying exec error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

const (
	maxStderr    = 64 << 10 // bytes of stderr kept while running
	maxStderrMsg = 2 << 10  // bytes of stderr kept in an Error
	maxArgInErr  = 200      // bytes of one argument shown in an Error
)

// globalArgs precede every subcommand. They pin down everything in
// configuration that could change a result or run a program.
func globalArgs() []string {
	return []string{
		"--no-pager",
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "core.autocrlf=false",
		"-c", "core.quotePath=false",
		"-c", "core.pager=cat",
		"-c", "color.ui=false",
		"-c", "commit.gpgSign=false",
		"-c", "tag.gpgSign=false",
		"-c", "gc.auto=0",
		"-c", "maintenance.auto=false",
		"-c", "advice.detachedHead=false",
		"-c", "init.defaultBranch=main",
		"-c", "protocol.file.allow=always",
		"-c", "protocol.ext.allow=never",
		"-c", "user.name=gitx",
		"-c", "user.email=gitx@localhost",
	}
}

// inherited are the only variables taken from the calling process.
var inherited = []string{
	"PATH", "TMPDIR", "SYSTEMROOT",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy",
}

func (r *Repo) environ(extra []string) []string {
	home := r.Home
	if home == "" {
		home = os.DevNull
	}
	env := make([]string, 0, len(inherited)+20+len(extra))
	for _, k := range inherited {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_EDITOR=true",
		"GIT_MERGE_AUTOEDIT=no",
		"GIT_NO_REPLACE_OBJECTS=1",
		"LC_ALL=C",
		"LANG=C",
		"TZ=UTC",
	)
	return append(env, extra...)
}

// cmd builds a git command in r.Dir (the current directory when r.Dir is
// empty) with the fixed environment; stderr is captured, bounded.
func (r *Repo) cmd(ctx context.Context, extraEnv []string, args ...string) (*exec.Cmd, *boundedBuffer) {
	c := exec.CommandContext(ctx, "git", append(globalArgs(), args...)...)
	c.Dir = r.Dir
	c.Env = r.environ(extraEnv)
	stderr := &boundedBuffer{max: maxStderr}
	c.Stderr = stderr
	c.WaitDelay = 5 * time.Second
	setProcessGroup(c)
	return c, stderr
}

// run runs git and returns its stdout.
func (r *Repo) run(ctx context.Context, stdin []byte, extraEnv []string, args ...string) ([]byte, error) {
	c, stderr := r.cmd(ctx, extraEnv, args...)
	var stdout bytes.Buffer
	c.Stdout = &stdout
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	if err := c.Run(); err != nil {
		return stdout.Bytes(), newError(args, err, stderr)
	}
	return stdout.Bytes(), nil
}

// out runs git and returns its stdout with surrounding space trimmed.
func (r *Repo) out(ctx context.Context, args ...string) (string, error) {
	b, err := r.run(ctx, nil, nil, args...)
	return strings.TrimSpace(string(b)), err
}

func newError(args []string, err error, stderr *boundedBuffer) *Error {
	e := &Error{Args: make([]string, len(args)), ExitCode: -1, Err: err}
	for i, a := range args {
		if len(a) > maxArgInErr {
			a = a[:maxArgInErr] + "..."
		}
		e.Args[i] = a
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		e.ExitCode = ee.ExitCode()
	}
	s := strings.TrimSpace(stderr.String())
	if len(s) > maxStderrMsg {
		s = s[:maxStderrMsg] + "... (truncated)"
	}
	e.Stderr = s
	return e
}

// exitCode is err's git exit code, or -1.
func exitCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.ExitCode
	}
	return -1
}

// boundedBuffer keeps the first max bytes written to it and counts the rest.
type boundedBuffer struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - b.buf.Len(); room < len(p) {
		if room < 0 {
			room = 0
		}
		b.dropped += len(p) - room
		p = p[:room]
	}
	b.buf.Write(p)
	return n, nil
}

func (b *boundedBuffer) String() string {
	if b.dropped > 0 {
		return fmt.Sprintf("%s... (%d more bytes)", b.buf.String(), b.dropped)
	}
	return b.buf.String()
}

var _ io.Writer = (*boundedBuffer)(nil)

// checkRev refuses revisions git could read as an option or that cannot be
// a revision at all.
func checkRev(rev string) error {
	switch {
	case rev == "":
		return fmt.Errorf("%w: empty revision", ErrInvalid)
	case len(rev) > 1024:
		return fmt.Errorf("%w: revision longer than 1024 bytes", ErrInvalid)
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("%w: revision %q starts with '-'", ErrInvalid, rev)
	case strings.ContainsAny(rev, "\x00\n\r"):
		return fmt.Errorf("%w: revision %q contains a control character", ErrInvalid, rev)
	}
	return nil
}

// checkPath refuses paths that are not clean, relative paths inside the
// working tree.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty path", ErrInvalid)
	case strings.HasPrefix(p, "-"):
		return fmt.Errorf("%w: path %q starts with '-'", ErrInvalid, p)
	case strings.HasPrefix(p, "/"), strings.Contains(p, "\\"):
		return fmt.Errorf("%w: path %q is not a relative slash-separated path", ErrInvalid, p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%w: path contains NUL", ErrInvalid)
	case path.Clean(p) != p, p == "..", strings.HasPrefix(p, "../"):
		return fmt.Errorf("%w: path %q is not clean or leaves the tree", ErrInvalid, p)
	}
	return nil
}

// checkName refuses branch and tag names that are not plain ref names.
func checkName(kind, name string) error {
	if err := checkRev(name); err != nil {
		return err
	}
	if strings.ContainsAny(name, " ~^:?*[\\\t") || strings.Contains(name, "..") || strings.Contains(name, "@{") ||
		strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".") ||
		strings.HasPrefix(name, "/") || strings.Contains(name, "//") || name == "@" || name == "HEAD" {
		return fmt.Errorf("%w: %s name %q", ErrInvalid, kind, name)
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return fmt.Errorf("%w: %s name %q", ErrInvalid, kind, name)
		}
	}
	return nil
}
