package gitx

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TreeDigest identifies the content of a commit's or tree's files.
type TreeDigest struct {
	// Tree is git's tree object id (SHA-1 or SHA-256, as the repository uses).
	Tree string `json:"tree"`
	// SHA256 is hex SHA-256 over every entry of the recursive listing, in
	// git's order, each as "<mode> <type> <id>\t<path>\x00" where <id> is
	// the SHA-256 of a blob's content (the commit id for a submodule). It
	// depends on content, modes and paths only, never on git's SHA-1 ids,
	// so a SHA-1 collision cannot forge it.
	SHA256 string `json:"sha256"`
	// Files is the number of entries.
	Files int `json:"files"`
}

type treeEntry struct {
	mode, typ, oid, path string
}

// TreeDigest computes rev's TreeDigest. It reads every blob once through a
// single git cat-file process.
func (r *Repo) TreeDigest(ctx context.Context, rev string) (TreeDigest, error) {
	if err := checkRev(rev); err != nil {
		return TreeDigest{}, err
	}
	tree, err := r.RevParse(ctx, rev+"^{tree}")
	if err != nil {
		return TreeDigest{}, err
	}
	out, err := r.run(ctx, nil, nil, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return TreeDigest{}, err
	}
	var entries []treeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return TreeDigest{}, fmt.Errorf("gitx: unexpected ls-tree record %q", rec)
		}
		entries = append(entries, treeEntry{mode: f[0], typ: f[1], oid: f[2], path: p})
	}
	sums, err := r.blobSums(ctx, entries)
	if err != nil {
		return TreeDigest{}, err
	}
	h := sha256.New()
	for i, e := range entries {
		id := e.oid
		if e.typ == "blob" {
			id = sums[i]
		}
		fmt.Fprintf(h, "%s %s %s\t%s\x00", e.mode, e.typ, id, e.path)
	}
	return TreeDigest{Tree: tree, SHA256: hex.EncodeToString(h.Sum(nil)), Files: len(entries)}, nil
}

// blobSums returns the hex SHA-256 of every blob entry's content (indexed
// like entries; "" for other types), streaming them from git cat-file.
func (r *Repo) blobSums(ctx context.Context, entries []treeEntry) ([]string, error) {
	var req bytes.Buffer
	for _, e := range entries {
		if e.typ == "blob" {
			req.WriteString(e.oid + "\n")
		}
	}
	sums := make([]string, len(entries))
	if req.Len() == 0 {
		return sums, nil
	}
	args := []string{"cat-file", "--batch"}
	c, stderr := r.cmd(ctx, nil, args...)
	c.Stdin = &req
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, newError(args, err, stderr)
	}
	readErr := func() error {
		br := bufio.NewReaderSize(stdout, 64<<10)
		h := sha256.New()
		for i, e := range entries {
			if e.typ != "blob" {
				continue
			}
			header, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("gitx: reading cat-file header: %w", err)
			}
			f := strings.Fields(header)
			if len(f) != 3 || f[0] != e.oid || f[1] != "blob" {
				return fmt.Errorf("gitx: unexpected cat-file header %q for %s", strings.TrimSpace(header), e.path)
			}
			size, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || size < 0 {
				return fmt.Errorf("gitx: bad cat-file size %q", f[2])
			}
			h.Reset()
			if _, err := io.CopyN(h, br, size); err != nil {
				return fmt.Errorf("gitx: reading blob %s: %w", e.path, err)
			}
			if b, err := br.ReadByte(); err != nil || b != '\n' {
				return errors.New("gitx: cat-file output out of step")
			}
			sums[i] = hex.EncodeToString(h.Sum(nil))
		}
		return nil
	}()
	if readErr != nil {
		_, _ = io.Copy(io.Discard, stdout)
	}
	if err := c.Wait(); err != nil {
		return nil, newError(args, err, stderr)
	}
	return sums, readErr
}
