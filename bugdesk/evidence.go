package bugdesk

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/verify"
)

// storeEvidence writes the verification's evidence bundle (signed with
// the server's key) and stores it as a gzip'd tar; it returns the
// bundle's digest, or "" when the desk has no key or the report has no
// runs to show.
func (d *Desk) storeEvidence(ctx context.Context, c signoff.Case, candID string, h *signoff.HarnessRecord, rep verify.Report) (string, error) {
	if len(d.Key) == 0 || len(rep.Stages) == 0 || rep.Fingerprint == "" {
		return "", nil
	}
	tmp, err := os.MkdirTemp("", "signoff-evidence-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "bundle")
	if err := evidence.WriteBundle(dir, rep, h.Spec, d.Key, false); err != nil {
		return "", fmt.Errorf("write evidence bundle: %w", err)
	}
	archive, err := tarGz(dir)
	if err != nil {
		return "", err
	}
	return d.Store.PutEvidence(ctx, sys(c.WorkspaceID), c.ID, candID, archive)
}

// tarGz packs dir's regular files, with fixed times and modes so the
// same bundle packs to the same bytes.
func tarGz(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("evidence: %s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0).UTC(), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
