package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/ledger"
)

// verifyFailed means a ledger did not verify; the CLI exits 1.
type verifyFailed struct{ n int }

func (v *verifyFailed) Error() string {
	return fmt.Sprintf("%d workspace ledger(s) failed verification", v.n)
}

func runLedger(ctx context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "ledger", args, "verify")
	if err != nil {
		return err
	}
	var d dbFlags
	var ws, pubPath string
	var skipSig bool
	fs := newFlags("ledger verify", "signoff ledger verify [--db PATH|URL] [--workspace ID] [--public-key FILE | --key FILE | --skip-signatures]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", "", "verify one workspace (default: all)")
	fs.StringVar(&pubPath, "public-key", "", "trusted public key file (PEM); default: derived from the --key file")
	fs.BoolVar(&skipSig, "skip-signatures", false, "check hashes only; a rewrite of the whole chain then goes undetected")
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	s, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	var trusted map[string]ed25519.PublicKey
	if !skipSig {
		path := pubPath
		if path == "" {
			path = d.keyPath()
		}
		pub, err := keys.LoadPublic(path)
		if errors.Is(err, iofs.ErrNotExist) {
			return signoff.Errorf(signoff.EINVALID, "no key at %s to check signatures with: pass --public-key or --key, or --skip-signatures to check hashes only", path)
		} else if err != nil {
			return err
		}
		trusted = ledger.Trust(pub)
	}
	// Chains are found wherever any trace of them is left, so removing a
	// workspace row does not hide its ledger from verification.
	ids, err := s.LedgerWorkspaceIDs(ctx)
	if err != nil {
		return err
	}
	if ws != "" {
		if !slices.Contains(ids, ws) {
			return signoff.Errorf(signoff.ENOTFOUND, "no ledger for workspace %s in this database", ws)
		}
		ids = []string{ws}
	}
	if len(ids) == 0 {
		return signoff.Errorf(signoff.ENOTFOUND, "no workspaces in this database: nothing to verify")
	}
	type report struct {
		ledger.Result
		OK      bool   `json:"ok"`
		BadSeq  int64  `json:"bad_seq,omitempty"`
		Problem string `json:"problem,omitempty"`
		Seconds string `json:"seconds"`
	}
	var reports []report
	failed := 0
	for _, id := range ids {
		start := time.Now()
		res, err := s.VerifyLedger(ctx, id, trusted)
		r := report{Result: res, OK: err == nil, Seconds: fmt.Sprintf("%.3f", time.Since(start).Seconds())}
		var f *ledger.Failure
		switch {
		case errors.As(err, &f):
			r.BadSeq, r.Problem = f.Seq, f.Reason
			failed++
		case err != nil:
			return err
		}
		reports = append(reports, r)
		if d.json {
			continue
		}
		if r.OK {
			sig := "signatures checked"
			if !res.SignaturesOK {
				sig = "SIGNATURES NOT CHECKED"
			}
			fmt.Fprintf(e.stdout, "%s: OK, %d events, head seq %d, %d checkpoints, %s (%ss)\n", id, res.Events, res.HeadSeq, res.Checkpoints, sig, r.Seconds)
		} else {
			fmt.Fprintf(e.stdout, "%s: FAIL at seq %d: %s\n", id, r.BadSeq, r.Problem)
		}
	}
	if d.json {
		if err := printJSON(e, reports); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &verifyFailed{n: failed}
	}
	return nil
}

func runKeys(_ context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "keys", args, "show")
	if err != nil {
		return err
	}
	var d dbFlags
	fs := newFlags("keys show", "signoff keys show [--key FILE]")
	addDBFlags(fs, e, &d)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	pub, err := keys.LoadPublic(d.keyPath())
	if err != nil {
		return err
	}
	pem, err := keys.EncodePublic(pub)
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e, map[string]string{"key_id": keys.ID(pub), "public_key_pem": string(pem)})
	}
	fmt.Fprintf(e.stdout, "key id %s\n%s", keys.ID(pub), pem)
	return nil
}
