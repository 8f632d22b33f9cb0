package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/verify"
)

// runEvidenceExport downloads a candidate's evidence bundle, checks its
// digest against the one on the case's loop record (and so the ledger),
// and unpacks it for `signoff evidence verify`.
func runEvidenceExport(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var caseID, candID, out string
	fs := newFlags("evidence export", "signoff evidence export --case ID --candidate ID --out DIR [--server URL]   (token from SIGNOFF_TOKEN)\n\n"+
		"Writes the candidate's verification evidence (in-toto statements in DSSE envelopes, the harness,\n"+
		"its test files and every run's output) into DIR; check it offline with signoff evidence verify DIR --key SERVER.pub")
	fs.StringVar(&caseID, "case", "", "the case (required)")
	fs.StringVar(&candID, "candidate", "", "the candidate (required)")
	fs.StringVar(&out, "out", "", "directory to write the bundle into; must not exist or be empty (required)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID, "candidate", candID, "out", out); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var loop signoff.BugLoop
	if err := c.do(ctx, http.MethodGet, apiPath("cases", caseID, "loop"), nil, &loop); err != nil {
		return err
	}
	want := ""
	for _, cand := range loop.State.Candidates {
		if cand.ID == candID {
			want = cand.BundleDigest
		}
	}
	if want == "" {
		return signoff.Errorf(signoff.ENOTFOUND, "candidate %s of case %s has no evidence bundle on record", candID, caseID)
	}
	var archive []byte
	if err := c.do(ctx, http.MethodGet, apiPath("cases", caseID, "candidates", candID, "evidence"), nil, &archive); err != nil {
		return err
	}
	sum := sha256.Sum256(archive)
	if got := hex.EncodeToString(sum[:]); got != want {
		return signoff.Errorf(signoff.ECONFLICT, "the bundle's digest %s is not the recorded %s: refusing to write it", got, want)
	}
	if err := untarGz(archive, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote the evidence of candidate %s (bundle %s) to %s\ncheck it offline: signoff evidence verify %s --key SERVER.pub\n", candID, want, out, out)
	return nil
}

// untarGz unpacks regular files only, each under dir, refusing absolute
// paths, "..", links and anything else.
func untarGz(archive []byte, dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return signoff.Errorf(signoff.EINVALID, "%s is not empty", dir)
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "bundle: %v", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for files := 0; ; files++ {
		if files > 10000 {
			return signoff.Errorf(signoff.EINVALID, "bundle has more than 10000 files")
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return signoff.Errorf(signoff.EINVALID, "bundle: %v", err)
		}
		name := hdr.Name
		if hdr.Typeflag != tar.TypeReg || verify.CheckPath(name) != nil || strings.Contains(name, `\`) || hdr.Size > 64<<20 {
			return signoff.Errorf(signoff.EINVALID, "bundle entry %q is not a plain file inside the bundle", hdr.Name)
		}
		if total += hdr.Size; total > 256<<20 {
			return signoff.Errorf(signoff.EINVALID, "bundle unpacks to more than 256 MiB")
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}
