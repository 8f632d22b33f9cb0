package gitx

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CommitPatch makes a commit whose parent is parent and whose tree is the
// parent's tree with patch (a unified diff) applied, in a temporary index
// (git apply --cached), and returns its id. Like CommitEdits it moves no
// ref and never reads or writes the repository's own index or working
// tree. A patch that does not apply wraps ErrConflict.
func (r *Repo) CommitPatch(ctx context.Context, parent string, patch []byte, msg string, sig Signature) (string, error) {
	if len(bytes.TrimSpace(patch)) == 0 {
		return "", fmt.Errorf("%w: empty patch", ErrInvalid)
	}
	parent, env, err := r.commitOn(ctx, parent, msg, sig)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "gitx-index-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	if _, err := r.run(ctx, nil, idx, "read-tree", "--end-of-options", parent+"^{tree}"); err != nil {
		return "", err
	}
	if _, err := r.run(ctx, patch, idx, "apply", "--cached", "--whitespace=nowarn", "-"); err != nil {
		return "", fmt.Errorf("%w: patch does not apply: %w", ErrConflict, err)
	}
	tree, err := r.run(ctx, nil, idx, "write-tree")
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, []byte(msg), env, "commit-tree", strings.TrimSpace(string(tree)), "-p", parent, "-F", "-")
	return strings.TrimSpace(string(out)), err
}

// SetSignoffRef points ref, which must be under refs/signoff/, at id, so
// an object Signoff made stays reachable (gc keeps it) without a branch
// or tag the user would see.
func (r *Repo) SetSignoffRef(ctx context.Context, ref, id string) error {
	name, ok := strings.CutPrefix(ref, "refs/signoff/")
	if !ok {
		return fmt.Errorf("%w: ref %q is not under refs/signoff/", ErrInvalid, ref)
	}
	if err := checkName("ref", name); err != nil {
		return err
	}
	if err := checkRev(id); err != nil {
		return err
	}
	_, err := r.run(ctx, nil, nil, "update-ref", "-m", "signoff", ref, id)
	return err
}

// CommitTime is the committer date of rev.
func (r *Repo) CommitTime(ctx context.Context, rev string) (time.Time, error) {
	if err := checkRev(rev); err != nil {
		return time.Time{}, err
	}
	out, err := r.out(ctx, "show", "-s", "--format=%ct", "--end-of-options", rev+"^{commit}", "--")
	if err != nil {
		return time.Time{}, err
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("gitx: commit time of %s: %q", rev, out)
	}
	return time.Unix(sec, 0).UTC(), nil
}
