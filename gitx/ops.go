package gitx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Init creates an empty repository at r.Dir (creating the directory) whose
// current branch is main. It refuses a directory that already holds one.
func (r *Repo) Init(ctx context.Context) error {
	if r.Dir == "" {
		return fmt.Errorf("%w: empty directory", ErrInvalid)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git")); err == nil {
		return fmt.Errorf("%w: %s is already a git repository", ErrInvalid, r.Dir)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	if _, err := r.run(ctx, nil, nil, "init", "--quiet"); err != nil {
		return err
	}
	// init.defaultBranch is set too; this also covers a git too old for it.
	_, err := r.run(ctx, nil, nil, "symbolic-ref", "HEAD", "refs/heads/main")
	return err
}

// Clone clones src (a local path or a URL) into dst, which must not exist
// or be empty, and returns the new repository.
func Clone(ctx context.Context, src, dst string) (*Repo, error) {
	r := &Repo{Dir: dst}
	return r, r.CloneFrom(ctx, src)
}

// CloneFrom clones src (a local path or a URL) into r.Dir.
func (r *Repo) CloneFrom(ctx context.Context, src string) error {
	if err := checkRev(src); err != nil {
		return fmt.Errorf("clone source: %w", err)
	}
	if r.Dir == "" {
		return fmt.Errorf("%w: empty destination", ErrInvalid)
	}
	dst, err := filepath.Abs(r.Dir)
	if err != nil {
		return err
	}
	if !strings.Contains(src, "://") {
		if abs, err := filepath.Abs(src); err == nil {
			if _, err := os.Stat(abs); err == nil {
				src = abs
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	// Run from the destination's parent: r.Dir does not exist yet.
	parent := &Repo{Dir: filepath.Dir(dst), Home: r.Home}
	_, err = parent.run(ctx, nil, nil, "clone", "--quiet", "--", src, dst)
	return err
}

// Checkout switches the working tree to rev: a branch name checks the
// branch out, anything else detaches HEAD at it.
func (r *Repo) Checkout(ctx context.Context, rev string) error {
	if err := checkRev(rev); err != nil {
		return err
	}
	_, err := r.run(ctx, nil, nil, "checkout", "--quiet", rev, "--")
	return err
}

// Add stages the given paths.
func (r *Repo) Add(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return fmt.Errorf("%w: no paths to add", ErrInvalid)
	}
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
	}
	_, err := r.run(ctx, nil, nil, append([]string{"add", "--"}, paths...)...)
	return err
}

// AddAll stages every change in the working tree, deletions included.
func (r *Repo) AddAll(ctx context.Context) error {
	_, err := r.run(ctx, nil, nil, "add", "--all")
	return err
}

// Commit records the staged changes with msg, sig as author and committer,
// and returns the new commit id. Hooks never run; nothing is signed.
func (r *Repo) Commit(ctx context.Context, msg string, sig Signature) (string, error) {
	if strings.TrimSpace(msg) == "" {
		return "", fmt.Errorf("%w: empty commit message", ErrInvalid)
	}
	env, err := sig.env()
	if err != nil {
		return "", err
	}
	if _, err := r.run(ctx, []byte(msg), env, "commit", "--quiet", "--no-verify", "--cleanup=whitespace", "--file=-"); err != nil {
		return "", err
	}
	return r.RevParse(ctx, "HEAD")
}

func (s Signature) env() ([]string, error) {
	if s.Name == "" || s.Email == "" || strings.ContainsAny(s.Name+s.Email, "<>\n\x00") {
		return nil, fmt.Errorf("%w: signature needs a name and an email without <, > or newlines", ErrInvalid)
	}
	when := s.When
	if when.IsZero() {
		when = time.Now()
	}
	date := fmt.Sprintf("@%d %s", when.Unix(), when.Format("-0700"))
	return []string{
		"GIT_AUTHOR_NAME=" + s.Name, "GIT_AUTHOR_EMAIL=" + s.Email, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + s.Name, "GIT_COMMITTER_EMAIL=" + s.Email, "GIT_COMMITTER_DATE=" + date,
	}, nil
}

// RevParse resolves rev to a full object id. Append "^{commit}" or
// "^{tree}" to require a type.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	return r.out(ctx, "rev-parse", "--verify", "--quiet", rev)
}

// CurrentBranch is the branch HEAD points at, or "" when HEAD is detached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	b, err := r.out(ctx, "symbolic-ref", "--quiet", "HEAD")
	if exitCode(err) == 1 {
		return "", nil
	}
	return strings.TrimPrefix(b, "refs/heads/"), err
}

// diffArgs pin down the diff options a repository's configuration could
// otherwise change.
var diffArgs = []string{
	"--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/",
	"--full-index", "--binary", "--find-renames=50%", "--ignore-submodules=none",
}

// Diff is the unified diff from a to b (commits or trees), suitable for
// Apply: binary changes included, renames detected, no external diff
// drivers or text conversion.
func (r *Repo) Diff(ctx context.Context, a, b string) ([]byte, error) {
	if err := checkRev(a); err != nil {
		return nil, err
	}
	if err := checkRev(b); err != nil {
		return nil, err
	}
	args := append(append([]string{"diff"}, diffArgs...), a, b, "--")
	return r.run(ctx, nil, nil, args...)
}

// DiffNames lists every path that differs between a and b, sorted. A
// renamed file is listed under its old and its new path.
func (r *Repo) DiffNames(ctx context.Context, a, b string) ([]string, error) {
	if err := checkRev(a); err != nil {
		return nil, err
	}
	if err := checkRev(b); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, nil, nil, "diff", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--name-only", "-z", a, b, "--")
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

func splitZ(out []byte) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range bytes.Split(out, []byte{0}) {
		if s := string(n); s != "" && !seen[s] {
			seen[s] = true
			names = append(names, s)
		}
	}
	sort.Strings(names)
	return names
}

// Apply applies a unified diff to the index and the working tree. It checks
// the whole patch first, so a patch that does not apply changes nothing
// (the error wraps ErrConflict). Paths outside the tree are refused by git.
func (r *Repo) Apply(ctx context.Context, patch []byte) error {
	if len(bytes.TrimSpace(patch)) == 0 {
		return fmt.Errorf("%w: empty patch", ErrInvalid)
	}
	if _, err := r.run(ctx, patch, nil, "apply", "--index", "--check", "-"); err != nil {
		return fmt.Errorf("%w: patch does not apply: %w", ErrConflict, err)
	}
	_, err := r.run(ctx, patch, nil, "apply", "--index", "--whitespace=nowarn", "-")
	return err
}

// Merge merges rev into the current branch with a merge commit (never a
// fast-forward) carrying message and sig, and returns its id. On conflict
// the merge is aborted and the error wraps ErrConflict.
func (r *Repo) Merge(ctx context.Context, rev, message string, sig Signature) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	if strings.TrimSpace(message) == "" {
		return "", fmt.Errorf("%w: empty merge message", ErrInvalid)
	}
	env, err := sig.env()
	if err != nil {
		return "", err
	}
	_, err = r.run(ctx, nil, env, "merge", "--no-ff", "--no-edit", "--no-log", "--no-stat", "--quiet",
		"--cleanup=whitespace", "-m", message, "--", rev)
	if err != nil {
		if _, merging := r.run(ctx, nil, nil, "rev-parse", "--quiet", "--verify", "MERGE_HEAD"); merging == nil {
			if _, aerr := r.run(ctx, nil, nil, "merge", "--abort"); aerr != nil {
				return "", fmt.Errorf("%w: merging %s: %w (and the abort failed: %w)", ErrConflict, rev, err, aerr)
			}
			return "", fmt.Errorf("%w: merging %s: %w", ErrConflict, rev, err)
		}
		return "", err
	}
	return r.RevParse(ctx, "HEAD")
}

// MergeBase is the best common ancestor of a and b.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	if err := checkRev(a); err != nil {
		return "", err
	}
	if err := checkRev(b); err != nil {
		return "", err
	}
	return r.out(ctx, "merge-base", "--", a, b)
}

// IsAncestor reports whether commit a is an ancestor of commit b (a commit
// is its own ancestor). An unknown revision is an error, not false.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	for _, rev := range []string{a, b} {
		if err := checkRev(rev); err != nil {
			return false, err
		}
	}
	_, err := r.run(ctx, nil, nil, "merge-base", "--is-ancestor", "--", a+"^{commit}", b+"^{commit}")
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// ShowFile returns the content of path as of rev.
func (r *Repo) ShowFile(ctx context.Context, rev, p string) ([]byte, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	if strings.Contains(rev, ":") {
		return nil, fmt.Errorf("%w: revision %q contains ':'", ErrInvalid, rev)
	}
	if err := checkPath(p); err != nil {
		return nil, err
	}
	return r.run(ctx, nil, nil, "cat-file", "blob", rev+":"+p)
}

// CreateBranch creates branch name at rev. It refuses an existing name.
func (r *Repo) CreateBranch(ctx context.Context, name, rev string) error {
	if err := checkName("branch", name); err != nil {
		return err
	}
	if err := checkRev(rev); err != nil {
		return err
	}
	_, err := r.run(ctx, nil, nil, "branch", "--no-track", "--", name, rev)
	return err
}

// Branches maps every local branch to its commit.
func (r *Repo) Branches(ctx context.Context) (map[string]string, error) {
	return r.refs(ctx, "refs/heads/")
}

// Tag creates the lightweight tag name at rev. It refuses an existing name.
func (r *Repo) Tag(ctx context.Context, name, rev string) error {
	if err := checkName("tag", name); err != nil {
		return err
	}
	if err := checkRev(rev); err != nil {
		return err
	}
	_, err := r.run(ctx, nil, nil, "tag", "--", name, rev)
	return err
}

// Tags maps every tag to the object it names.
func (r *Repo) Tags(ctx context.Context) (map[string]string, error) {
	return r.refs(ctx, "refs/tags/")
}

func (r *Repo) refs(ctx context.Context, prefix string) (map[string]string, error) {
	out, err := r.run(ctx, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if ok {
			refs[strings.TrimPrefix(ref, prefix)] = id
		}
	}
	return refs, nil
}

// IsClean reports whether the working tree and index match HEAD, with no
// untracked files (ignored files do not count).
func (r *Repo) IsClean(ctx context.Context) (bool, error) {
	out, err := r.run(ctx, nil, nil, "status", "--porcelain", "--untracked-files=all", "--ignore-submodules=none", "-z")
	return len(out) == 0 && err == nil, err
}

// ListFiles lists every file path in the tree of rev, sorted.
func (r *Repo) ListFiles(ctx context.Context, rev string) ([]string, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--name-only", "--full-tree", rev)
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

// Tree returns the tree id of rev.
func (r *Repo) Tree(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	return r.out(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{tree}")
}

// UpdateRef points ref at newID only if it still points at oldID (a
// compare-and-swap: git refuses when the ref moved meanwhile).
func (r *Repo) UpdateRef(ctx context.Context, ref, newID, oldID string) error {
	if !strings.HasPrefix(ref, "refs/heads/") {
		return fmt.Errorf("%w: ref %q is not a branch", ErrInvalid, ref)
	}
	if err := checkName("branch", strings.TrimPrefix(ref, "refs/heads/")); err != nil {
		return err
	}
	for _, id := range []string{newID, oldID} {
		if err := checkRev(id); err != nil {
			return err
		}
	}
	if _, err := r.run(ctx, nil, nil, "update-ref", "-m", "signoff merge", ref, newID, oldID); err != nil {
		return fmt.Errorf("%w: %s moved: %w", ErrConflict, ref, err)
	}
	return nil
}

// Parents returns the parent commit ids of rev, first parent first.
func (r *Repo) Parents(ctx context.Context, rev string) ([]string, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	out, err := r.out(ctx, "rev-list", "--parents", "-n", "1", "--end-of-options", rev)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return nil, fmt.Errorf("%w: no commit %s", ErrInvalid, rev)
	}
	return f[1:], nil
}

// Modes returns the git file mode (e.g. "100644", "120000" for a symbolic
// link) of each of paths that exists in rev's tree.
func (r *Repo) Modes(ctx context.Context, rev string, paths []string) (map[string]string, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, err
		}
	}
	out, err := r.run(ctx, nil, nil, append([]string{"ls-tree", "-z", "--full-tree", rev, "--"}, paths...)...)
	if err != nil {
		return nil, err
	}
	modes := map[string]string{}
	for _, ent := range bytes.Split(out, []byte{0}) {
		// "<mode> <type> <object>\t<path>"
		meta, p, ok := bytes.Cut(ent, []byte{'\t'})
		if !ok {
			continue
		}
		if f := bytes.Fields(meta); len(f) == 3 {
			modes[string(p)] = string(f[0])
		}
	}
	return modes, nil
}

// RestorePaths makes each of paths in the working tree and index what it
// is in rev: rewritten when rev has it, deleted when rev does not (git's
// no-overlay checkout). Paths are literal, never patterns, and git does
// not write through a symbolic link on the way.
func (r *Repo) RestorePaths(ctx context.Context, rev string, paths []string) error {
	if err := checkRev(rev); err != nil {
		return err
	}
	if len(paths) == 0 {
		return nil
	}
	var list bytes.Buffer
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return err
		}
		list.WriteString(p)
		list.WriteByte(0)
	}
	_, err := r.run(ctx, list.Bytes(), []string{"GIT_LITERAL_PATHSPECS=1"}, "checkout", "--no-overlay", "--pathspec-from-file=-", "--pathspec-file-nul", rev)
	return err
}

// Blobs maps every file path in the tree of rev to its mode and object id
// ("100644 <id>"), so two trees can be compared path by path without
// reading contents.
func (r *Repo) Blobs(ctx context.Context, rev string) (map[string]string, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", rev)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			return nil, fmt.Errorf("gitx: unexpected ls-tree record %q", rec)
		}
		m[string(name)] = f[0] + " " + f[2]
	}
	return m, nil
}
