package gitx

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The plumbing below edits a branch without a working tree: blobs are
// written straight into the object store, a tree is built in a temporary
// index and committed with commit-tree. It works on bare repositories and
// never touches a checkout, so a server can change its own repository while
// something else has it checked out.

// Git file modes as ls-tree prints them.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeTree       = "040000"
	ModeSubmodule  = "160000"
)

// Entry is one entry of a tree.
type Entry struct {
	Path string
	Mode string // one of the Mode constants
	Type string // blob, tree or commit
	ID   string
	// Size is a blob's size in bytes, -1 for trees and submodules.
	Size int64
}

// Entry returns the entry at path p in rev's tree, and false when there is
// none. It looks the path up exactly: a symbolic link on the way is not
// followed (the entry is then simply absent).
func (r *Repo) Entry(ctx context.Context, rev, p string) (Entry, bool, error) {
	if err := checkRev(rev); err != nil {
		return Entry{}, false, err
	}
	if err := checkPath(p); err != nil {
		return Entry{}, false, err
	}
	// One path per call: given both "a" and "a/b", ls-tree descends into
	// a and does not list a itself.
	out, err := r.run(ctx, nil, nil, "ls-tree", "-z", "-l", "--full-tree", "--end-of-options", rev, "--", p)
	if err != nil {
		return Entry{}, false, err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<mode> SP <type> SP <object> SP+ <size>\t<path>"
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || string(name) != p {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 {
			return Entry{}, false, fmt.Errorf("gitx: unexpected ls-tree record %q", rec)
		}
		e := Entry{Path: p, Mode: f[0], Type: f[1], ID: f[2], Size: -1}
		if f[3] != "-" {
			if e.Size, err = strconv.ParseInt(f[3], 10, 64); err != nil {
				return Entry{}, false, fmt.Errorf("gitx: unexpected ls-tree size in %q", rec)
			}
		}
		return e, true, nil
	}
	return Entry{}, false, nil
}

// ReadBlob streams the content of blob id to w, without any filter.
func (r *Repo) ReadBlob(ctx context.Context, id string, w io.Writer) error {
	if err := checkRev(id); err != nil {
		return err
	}
	args := []string{"cat-file", "blob", id}
	c, stderr := r.cmd(ctx, nil, args...)
	c.Stdout = w
	if err := c.Run(); err != nil {
		return newError(args, err, stderr)
	}
	return nil
}

// WriteBlob stores content as a blob, exactly as given (no attribute
// filters, no line-ending conversion), and returns its id.
func (r *Repo) WriteBlob(ctx context.Context, content []byte) (string, error) {
	if content == nil {
		content = []byte{}
	}
	out, err := r.run(ctx, content, nil, "hash-object", "-w", "--no-filters", "--stdin")
	return strings.TrimSpace(string(out)), err
}

// TreeEdit sets or removes one path of a tree. An empty ID removes the
// path; otherwise Mode (default ModeFile) and ID, a blob already in the
// object store, are put at Path.
type TreeEdit struct {
	Path string
	Mode string
	ID   string
}

// CommitEdits makes a commit whose parent is parent and whose tree is the
// parent's tree with edits applied, and returns its id. No ref moves: the
// caller publishes the commit (SetBranch, UpdateRef). The index used is a
// temporary file, so the repository's own index and working tree are
// never read or written.
func (r *Repo) CommitEdits(ctx context.Context, parent string, edits []TreeEdit, msg string, sig Signature) (string, error) {
	parent, env, err := r.commitOn(ctx, parent, msg, sig)
	if err != nil {
		return "", err
	}
	var info bytes.Buffer
	for _, e := range edits {
		if err := checkPath(e.Path); err != nil {
			return "", err
		}
		if e.ID == "" {
			// Mode 0 removes the path from the index; the id is ignored
			// but must have the repository's hash length.
			fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(parent)), e.Path)
			continue
		}
		mode := e.Mode
		if mode == "" {
			mode = ModeFile
		}
		if mode != ModeFile && mode != ModeExecutable {
			return "", fmt.Errorf("%w: mode %q for %s: only regular files are written", ErrInvalid, mode, e.Path)
		}
		if err := checkRev(e.ID); err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", mode, e.ID, e.Path)
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
	if info.Len() > 0 {
		if _, err := r.run(ctx, info.Bytes(), idx, "update-index", "-z", "--index-info"); err != nil {
			return "", err
		}
	}
	tree, err := r.run(ctx, nil, idx, "write-tree")
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, []byte(msg), env, "commit-tree", strings.TrimSpace(string(tree)), "-p", parent, "-F", "-")
	return strings.TrimSpace(string(out)), err
}

// SetBranch points branch name at id whatever it pointed at before (or
// creates it), recording reason in the reflog. Use UpdateRef where a
// concurrent writer must not be overwritten.
func (r *Repo) SetBranch(ctx context.Context, name, id, reason string) error {
	if err := checkName("branch", name); err != nil {
		return err
	}
	if err := checkRev(id); err != nil {
		return err
	}
	if strings.TrimSpace(reason) == "" || strings.ContainsAny(reason, "\n\x00") {
		reason = "gitx set branch"
	}
	_, err := r.run(ctx, nil, nil, "update-ref", "-m", reason, "refs/heads/"+name, id)
	return err
}

// commitOn checks what every commit Signoff makes needs: a parent that
// resolves to a commit (returned as its full id), a message and a
// signature (returned as git's environment).
func (r *Repo) commitOn(ctx context.Context, parent, msg string, sig Signature) (string, []string, error) {
	if err := checkRev(parent); err != nil {
		return "", nil, err
	}
	if strings.TrimSpace(msg) == "" {
		return "", nil, fmt.Errorf("%w: empty commit message", ErrInvalid)
	}
	env, err := sig.env()
	if err != nil {
		return "", nil, err
	}
	if parent, err = r.RevParse(ctx, parent+"^{commit}"); err != nil {
		return "", nil, err
	}
	return parent, env, nil
}
