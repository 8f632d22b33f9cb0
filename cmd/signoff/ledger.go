package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlstore"
)

// verifyFailed means a ledger did not verify; the CLI exits 1.
type verifyFailed struct{ n int }

func (v *verifyFailed) Error() string {
	return fmt.Sprintf("%d workspace ledger(s) failed verification", v.n)
}

func runLedger(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "ledger", args, "verify", "head")
	if err != nil {
		return err
	}
	if verb == "head" {
		return runLedgerHead(ctx, e, rest)
	}
	var d dbFlags
	var ws, pubPath, published string
	var skipSig bool
	fs := newFlags("ledger verify", "signoff ledger verify [--db PATH|URL] [--workspace ID] [--public-key FILE | --key FILE | --skip-signatures] [--published FILE]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", "", "verify one workspace's chain (default: all; the registry of chains is always checked whole)")
	fs.StringVar(&pubPath, "public-key", "", "trusted public key file (PEM); default: derived from the --key file")
	fs.BoolVar(&skipSig, "skip-signatures", false, "check hashes only; a rewrite of the whole chain then goes undetected")
	fs.StringVar(&published, "published", "", "heads published earlier (signoff ledger head --json): each must still be in its chain, or history was rolled back")
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
	var pub *publishedHeads
	if published != "" {
		if pub, err = readPublished(published, trusted); err != nil {
			return err
		}
	}
	type report struct {
		ledger.Result
		OK      bool   `json:"ok"`
		BadSeq  int64  `json:"bad_seq,omitempty"`
		Problem string `json:"problem,omitempty"`
		Seconds string `json:"seconds"`
		// Registry marks a problem the registry of chains found: a chain
		// deleted or replaced, rows of an unregistered workspace, or the
		// registry itself broken (workspace_id empty).
		Registry bool `json:"registry,omitempty"`
	}
	var reports []report
	failed := 0
	fail := func(ws, problem string) {
		failed++
		reports = append(reports, report{Result: ledger.Result{WorkspaceID: ws}, Problem: problem, Registry: true, Seconds: "0.000"})
		if d.json {
			return
		}
		if ws == "" {
			ws = "registry"
		}
		fmt.Fprintf(e.stdout, "%s: FAIL: %s\n", ws, problem)
	}
	// The registry says which chains must exist: a workspace deleted
	// everywhere, or whose chain was replaced, shows up only here.
	start := time.Now()
	reg, err := s.VerifyRegistry(ctx, trusted)
	var rf *ledger.RegistryFailure
	switch {
	case errors.As(err, &rf):
		for _, p := range rf.Problems {
			fail(p.WorkspaceID, p.Reason)
		}
	case err != nil:
		return err
	case !d.json:
		sig := "signatures checked"
		if !reg.SignaturesOK {
			sig = "SIGNATURES NOT CHECKED"
		}
		fmt.Fprintf(e.stdout, "registry: OK, %d workspaces registered, head seq %d, %s (%.3fs)\n", reg.Workspaces, reg.HeadSeq, sig, time.Since(start).Seconds())
	}
	if pub != nil {
		for _, p := range pub.check(ctx, s) {
			fail(p.WorkspaceID, p.Reason)
		}
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
	if len(ids) == 0 && failed == 0 {
		return signoff.Errorf(signoff.ENOTFOUND, "no workspaces in this database: nothing to verify")
	}
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

// publishedHeads is what signoff ledger head --json prints: the signed
// statements to keep outside the database.
type publishedHeads struct {
	Registry   ledger.RegistryHead `json:"registry"`
	Workspaces []ledger.Checkpoint `json:"workspaces"`
}

func runLedgerHead(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	fs := newFlags("ledger head", "signoff ledger head [--db PATH|URL] [--json]")
	addDBFlags(fs, e, &d)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	s, err := d.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	reg, heads, err := s.Heads(ctx)
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e, publishedHeads{Registry: reg, Workspaces: heads})
	}
	fmt.Fprintf(e.stdout, "registry: seq %d hash %s key %s signed %s\n", reg.Seq, reg.Hash, reg.KeyID, reg.SignedAt.Format(time.RFC3339))
	for _, h := range heads {
		fmt.Fprintf(e.stdout, "%s: seq %d hash %s key %s signed %s\n", h.WorkspaceID, h.Seq, h.Hash, h.KeyID, h.SignedAt.Format(time.RFC3339))
	}
	return nil
}

// readPublished loads heads published earlier. With trusted keys every
// statement must carry a good signature: a forged "published" head must
// not make a good database look rolled back, nor vouch for a bad one.
func readPublished(path string, trusted map[string]ed25519.PublicKey) (*publishedHeads, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p publishedHeads
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s is not the output of signoff ledger head --json: %v", path, err)
	}
	if trusted == nil {
		return &p, nil
	}
	if !p.Registry.Pending() {
		if err := p.Registry.Verify(trusted); err != nil {
			return nil, signoff.Errorf(signoff.EINVALID, "%s: registry head %v", path, err)
		}
	}
	for _, h := range p.Workspaces {
		h.Head = true
		if h.Seq == 0 {
			continue
		}
		if err := h.Verify(trusted); err != nil {
			return nil, signoff.Errorf(signoff.EINVALID, "%s: head of %s %v", path, h.WorkspaceID, err)
		}
	}
	return &p, nil
}

// check reports every published statement the database no longer holds.
func (p *publishedHeads) check(ctx context.Context, s *sqlstore.DB) []ledger.Problem {
	var out []ledger.Problem
	have := func(ws string, seq int64, hash string, signed time.Time) {
		ok, err := s.Contains(ctx, ws, seq, hash)
		switch {
		case err != nil:
			out = append(out, ledger.Problem{WorkspaceID: ws, Reason: err.Error()})
		case !ok:
			out = append(out, ledger.Problem{WorkspaceID: ws, Reason: fmt.Sprintf("the head published at seq %d (signed %s) is no longer in the chain: history was rolled back or rewritten", seq, signed.Format(time.RFC3339))})
		}
	}
	have("", p.Registry.Seq, p.Registry.Hash, p.Registry.SignedAt)
	for _, h := range p.Workspaces {
		have(h.WorkspaceID, h.Seq, h.Hash, h.SignedAt)
	}
	return out
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
