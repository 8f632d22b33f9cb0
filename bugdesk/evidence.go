package bugdesk

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	archive, err := evidence.Pack(dir)
	if err != nil {
		return "", err
	}
	return d.Store.PutEvidence(ctx, sys(c.WorkspaceID), c.ID, candID, archive)
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
