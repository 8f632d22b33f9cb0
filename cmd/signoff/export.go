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
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/verify"
)

// runEvidenceExport downloads a case's evidence bundle and unpacks it for
// `signoff evidence verify`. For a bug it is a candidate's verification
// evidence, whose digest is checked against the one on the case's loop
// record (and so the ledger); for a change it is the bundle the server
// signs on request (plan, review, policy, approvals, receipts), whose
// digest is checked against the one sent with it.
func runEvidenceExport(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var caseID, candID, out string
	fs := newFlags("evidence export", "signoff evidence export --case ID [--candidate ID] --out DIR [--server URL]   (token from SIGNOFF_TOKEN)\n\n"+
		"Writes a case's evidence into DIR as in-toto statements in DSSE envelopes with the files they name.\n"+
		"For a bug, --candidate names the candidate: the harness, its test files and every run's output.\n"+
		"For a change: the plan, its review, the policy, the signed approvals with the approvers' keys and\n"+
		"the receipts with their health results.\n"+
		"Check it offline with signoff evidence verify DIR --key SERVER.pub")
	fs.StringVar(&caseID, "case", "", "the case (required)")
	fs.StringVar(&candID, "candidate", "", "the candidate (required for a bug; a change has none)")
	fs.StringVar(&out, "out", "", "directory to write the bundle into; must not exist or be empty (required)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID, "out", out); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	if candID == "" {
		return exportChangeEvidence(ctx, e, c, caseID, out)
	}
	loop, err := c.Loop(ctx, caseID)
	if err != nil {
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
	archive, err := c.CandidateEvidence(ctx, caseID, candID)
	if err != nil {
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

// exportChangeEvidence downloads a change case's evidence bundle.
func exportChangeEvidence(ctx context.Context, e *env, c *client.Client, caseID, out string) error {
	cs, err := c.Case(ctx, caseID)
	if err != nil {
		return err
	}
	if cs.Kind != signoff.KindChange {
		return signoff.Errorf(signoff.EINVALID, "case %s is a %s: name the candidate whose evidence to export with --candidate ID", caseID, cs.Kind)
	}
	archive, want, err := c.ChangeEvidence(ctx, caseID)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(archive)
	switch got := hex.EncodeToString(sum[:]); {
	case want == "":
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server sent the bundle without its digest: refusing to write it")
	case got != want:
		return signoff.Errorf(signoff.ECONFLICT, "the bundle's digest %s is not the %s the server sent with it: refusing to write it", got, want)
	}
	if err := untarGz(archive, out); err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "wrote the evidence of change case %s (%s, bundle %s) to %s\ncheck it offline: signoff evidence verify %s --key SERVER.pub\n",
		caseID, d.line(cs.State), want, out, out)
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
