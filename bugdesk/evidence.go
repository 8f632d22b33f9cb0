package bugdesk

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// verdictFile is where a bundle keeps its signed verdict statement.
const verdictFile = "statements/verdict.dsse.json"

// reportOfBundle reads the verification report a stored bundle signed, so
// a retried verification records the verdict its evidence shows rather
// than a second run's.
func reportOfBundle(archive []byte) (verify.Report, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return verify.Report{}, err
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return verify.Report{}, fmt.Errorf("bundle has no %s: %w", verdictFile, err)
		}
		if hdr.Name != verdictFile {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 16<<20))
		if err != nil {
			return verify.Report{}, err
		}
		_, payload, err := evidence.DecodeEnvelope(b)
		if err != nil {
			return verify.Report{}, err
		}
		var st evidence.Statement
		if err := json.Unmarshal(payload, &st); err != nil {
			return verify.Report{}, err
		}
		var vp evidence.VerdictPredicate
		if err := json.Unmarshal(st.Predicate, &vp); err != nil {
			return verify.Report{}, err
		}
		return vp.Report, nil
	}
}
