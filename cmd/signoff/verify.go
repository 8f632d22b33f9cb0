package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
)

// Exit codes of verify and evidence verify. They differ from the rest of
// the CLI on purpose: a CI job must tell "the fix is wrong" (1) from "we
// could not tell" (2) from "the command was wrong" (3).
const (
	exitVerified     = 0
	exitRejected     = 1
	exitInconclusive = 2
	exitSetup        = 3
)

// exitStatus ends a command with a given exit code; the command has
// already said why on stdout or stderr.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitStatusCode is the code carried by the *exitStatus in err.
func exitStatusCode(err error) int {
	var es *exitStatus
	if errors.As(err, &es) {
		return es.code
	}
	return exitSetup
}

// setupError prints a setup problem and ends with exitSetup.
func setupError(e *env, cmd string, err error) error {
	fmt.Fprintf(e.stderr, "signoff %s: %v\n", cmd, err)
	return &exitStatus{exitSetup}
}

// usageStatus maps the shared flag parsing errors to exitSetup, leaving
// --help (exit 0) alone.
func usageStatus(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &exitStatus{exitSetup}
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runVerify(ctx context.Context, e *env, args []string) error {
	var (
		repo, harnessFile, cand, backend, image, out, keyFile, cache string
		runs                                                         int
		asJSON, noBaseCache                                          bool
		maxMemory                                                    = verify.FormatBytes(verify.DefaultMaxMemoryBytes)
		allow, protect                                               listFlag
	)
	fs := newFlags("verify", "signoff verify --repo DIR --harness FILE --candidate REV [--runs N] [--sandbox bwrap|namespaces|docker|podman|none] [--allow GLOB ...] [--json] [--out BUNDLE] [--key FILE] [--max-memory SIZE] [--no-base-cache]\n\n"+
		"Runs the harness's tests on base (they must fail with the expected signature) and, with the\n"+
		"harness test files restored, on the candidate (every fail-to-pass and pass-to-pass test must\n"+
		"pass on every run), in a sandbox. Prints one row per stage and the verdict last.\n"+
		"Exit status: 0 VERIFIED, 1 REJECTED, 2 INCONCLUSIVE, 3 usage or setup error")
	fs.StringVar(&repo, "repo", ".", "git repository holding base, tests_from and the candidate")
	fs.StringVar(&harnessFile, "harness", "", "harness file (JSON)")
	fs.StringVar(&cand, "candidate", "", "candidate revision (branch, tag or commit)")
	fs.IntVar(&runs, "runs", 0, "runs of each stage (default: the harness's runs)")
	fs.StringVar(&backend, "sandbox", "", "sandbox backend: bwrap, namespaces, docker, podman or none (default: bwrap if it works here, else namespaces; none only when asked)")
	fs.StringVar(&image, "image", "", "image for the docker and podman backends")
	fs.Var(&allow, "allow", "glob of paths the candidate may change, e.g. 'internal/cart/**' (repeatable; default: any)")
	fs.Var(&protect, "protect", "glob of paths the candidate must not touch (repeatable; the harness file is protected when it lives in the repository)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object instead of the table")
	fs.StringVar(&out, "out", "", "write an evidence bundle to this directory (must not exist or be empty)")
	fs.StringVar(&keyFile, "key", "", "Ed25519 private key to sign the bundle with (default: a fresh key, reported as self-signed)")
	fs.BoolVar(&noBaseCache, "no-base-cache", false, "run base again for this candidate instead of reusing a stored base run of the same base, harness, runner and environment (kept beside the build cache)")
	fs.StringVar(&maxMemory, "max-memory", maxMemory, "the most memory a harness may ask for with memory_mb (e.g. 8GiB, 512MiB); a harness asking more is refused")
	fs.StringVar(&cache, "cache", "", "trusted Go build cache (default: signoff/go-build in the user cache directory): base runs write it, a candidate's runs read it through a layer thrown away with them")
	if err := parse(fs, e, args); err != nil {
		return usageStatus(err)
	}
	if err := required(fs, e, "harness", harnessFile, "candidate", cand); err != nil {
		return usageStatus(err)
	}
	if keyFile != "" && out == "" {
		fmt.Fprintln(e.stderr, "--key signs the evidence bundle: give --out too")
		fs.Usage()
		return &exitStatus{exitSetup}
	}
	maxMem, err := verify.ParseBytes(maxMemory)
	if err != nil {
		fmt.Fprintf(e.stderr, "--max-memory: %v\n", err)
		fs.Usage()
		return &exitStatus{exitSetup}
	}
	h, raw, err := verify.LoadHarness(harnessFile)
	if err != nil {
		return setupError(e, "verify", err)
	}
	if rel, ok := inside(repo, harnessFile); ok {
		protect = append(protect, rel)
	}
	var key ed25519.PrivateKey
	if keyFile != "" {
		if key, err = keys.Load(keyFile); err != nil {
			return setupError(e, "verify", err)
		}
	}
	var opts []sandbox.Option
	if image != "" {
		opts = append(opts, sandbox.WithImage(image))
	}
	var runner sandbox.Runner
	if backend == "" {
		runner, err = sandbox.Default(opts...)
	} else {
		runner, err = sandbox.New(backend, opts...)
	}
	if err != nil {
		return setupError(e, "verify", err)
	}
	rep, err := verify.Verify(ctx, verify.Options{
		RepoDir: repo, Harness: h, Candidate: cand, Runs: runs, Runner: runner,
		Allowlist: allow, HarnessPaths: protect, CacheDir: cache, Parallel: true,
		BaseCache: !noBaseCache, MaxMemoryBytes: maxMem,
	})
	if err != nil {
		return setupError(e, "verify", err)
	}

	var signer string
	selfSigned := false
	if out != "" {
		if key == nil {
			selfSigned = true
			if _, key, err = ed25519.GenerateKey(rand.Reader); err != nil {
				return setupError(e, "verify", err)
			}
		}
		if err := evidence.WriteBundle(out, rep, raw, key, selfSigned); err != nil {
			return setupError(e, "verify", err)
		}
		signer = keys.ID(key.Public().(ed25519.PublicKey))
		if selfSigned {
			fmt.Fprintf(e.stderr, "evidence: %s (signed with a fresh key %s: self-signed, authenticity not established; pass --key to sign with a key others trust)\n", out, signer)
		} else {
			fmt.Fprintf(e.stderr, "evidence: %s (signed with key %s from %s)\n", out, signer, keyFile)
		}
	}
	if asJSON {
		if err := printJSON(e, struct {
			verify.Report
			Bundle      string `json:"bundle,omitempty"`
			SignerKeyID string `json:"signer_keyid,omitempty"`
			SelfSigned  bool   `json:"self_signed,omitempty"`
		}{rep, out, signer, selfSigned}); err != nil {
			return setupError(e, "verify", err)
		}
	} else {
		fmt.Fprint(e.stdout, verify.Table(rep))
	}
	switch rep.Verdict {
	case verify.Verified:
		return nil
	case verify.Rejected:
		return &exitStatus{exitRejected}
	}
	return &exitStatus{exitInconclusive}
}

// inside returns file's path relative to the repository when it lies in it.
func inside(repo, file string) (string, bool) {
	r, err1 := filepath.Abs(repo)
	f, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return "", false
	}
	rel, err := filepath.Rel(r, f)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func runEvidence(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "evidence", args, "verify", "export")
	if err != nil {
		return usageStatus(err)
	}
	if verb == "export" {
		return runEvidenceExport(ctx, e, rest)
	}
	var (
		keyFiles listFlag
		asJSON   bool
		bundles  []string
	)
	fs := newFlags("evidence verify", "signoff evidence verify BUNDLE [--key PUB ...] [--json]\n\n"+
		"Recomputes every digest and signature of an evidence bundle offline (a candidate's verification\n"+
		"or a change case's plan, approvals and receipts) and lists what it could not check.\n"+
		"Exit status: 0 when everything checks, 1 when anything failed, 3 usage or setup error")
	fs.Var(&keyFiles, "key", "trusted public key of the signer (PEM; a private key file works too; repeatable). Without it the bundle's own key is used and authenticity is not established")
	fs.BoolVar(&asJSON, "json", false, "print the findings as JSON")
	// Flags may come before or after the bundle.
	for {
		fs.SetOutput(e.stderr)
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stdout)
				fs.Usage()
				return err
			}
			return usageStatus(err)
		}
		if fs.NArg() == 0 {
			break
		}
		bundles = append(bundles, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(bundles) != 1 {
		fmt.Fprintln(e.stderr, "signoff evidence verify: want exactly one BUNDLE")
		fs.Usage()
		return &exitStatus{exitSetup}
	}
	var trusted []ed25519.PublicKey
	for _, k := range keyFiles {
		pub, err := keys.LoadPublic(k)
		if err != nil {
			return setupError(e, "evidence verify", err)
		}
		trusted = append(trusted, pub)
	}
	f, err := evidence.VerifyBundle(bundles[0], trusted)
	if err != nil {
		return setupError(e, "evidence verify", err)
	}
	if asJSON {
		if err := printJSON(e, struct {
			OK bool `json:"ok"`
			evidence.Findings
		}{f.OK(), f}); err != nil {
			return setupError(e, "evidence verify", err)
		}
	} else {
		fmt.Fprint(e.stdout, f.String())
		what := "recorded verdict " + f.Verdict
		if f.Kind == evidence.KindChange {
			what = printChangeSummary(e, f.Change)
		}
		failed, unchecked := len(f.With(evidence.StatusFailed)), len(f.With(evidence.StatusUnchecked))
		switch {
		case failed > 0:
			fmt.Fprintf(e.stdout, "evidence: FAILED: %d check(s) failed, %d could not be checked\n", failed, unchecked)
		case len(trusted) == 0:
			fmt.Fprintf(e.stdout, "evidence: intact (%s), but self-signed: authenticity not established; %d item(s) could not be checked\n", what, unchecked)
		default:
			fmt.Fprintf(e.stdout, "evidence: OK (%s), signed by a trusted key; %d item(s) could not be checked\n", what, unchecked)
		}
	}
	if !f.OK() {
		return &exitStatus{exitRejected}
	}
	return nil
}

// printChangeSummary shows what a change bundle records, below its
// findings: the case, the plan and policy digests, the approvals and each
// receipt's outcome with its health results. The text came from the
// bundle, so it is escaped for the terminal; whether each item checked is
// in the findings above. It returns the short form for the last line.
func printChangeSummary(e *env, c *evidence.ChangeFindings) string {
	if c == nil {
		return "change bundle"
	}
	d := &display{}
	w := e.stdout
	fmt.Fprintf(w, "\nchange case %s (%s): %s\n", d.line(c.Case), d.line(c.State), d.line(c.Title))
	fmt.Fprintf(w, "  plan %s, digest %s\n", d.line(c.PlanID), d.line(c.PlanDigest))
	fmt.Fprintf(w, "  policy digest %s\n", d.line(c.PolicyDigest))
	review := "passed"
	if !c.ReviewOK {
		review = "not passed"
	}
	fmt.Fprintf(w, "  review %s\n", review)
	for _, a := range c.Approvals {
		fmt.Fprintf(w, "  approval %s: %s by %s, key %s, %s\n", d.line(a.ID), d.line(a.Decision), d.line(a.Approver), d.line(a.KeyID), verifiedWord(a.Verified))
	}
	var outcomes []string
	for _, r := range c.Receipts {
		how := "approvals " + d.line(strings.Join(r.Approvals, ", "))
		if r.Preapproved {
			how = "pre-approved rollback"
		} else if len(r.Approvals) == 0 {
			how = "no approvals"
		}
		fmt.Fprintf(w, "  receipt %s (%s): %s %s by %s, %s, %s; %s\n", d.line(r.ID), d.line(r.Kind), d.line(r.Outcome), d.line(r.Target),
			d.line(r.Executor), how, r.FinishedAt.UTC().Format(time.RFC3339), verifiedWord(r.Verified))
		fmt.Fprintf(w, "    health %s\n", d.line(r.Health))
		outcomes = append(outcomes, d.line(r.Outcome))
	}
	if len(c.Receipts) == 0 {
		fmt.Fprintln(w, "  no receipts: the change has not been executed")
	}
	if d.escaped > 0 {
		fmt.Fprintf(w, "  (%d characters a terminal would not show as themselves are escaped)\n", d.escaped)
	}
	fmt.Fprintln(w)
	if len(outcomes) == 0 {
		return fmt.Sprintf("change case %s, not executed", d.line(c.Case))
	}
	return fmt.Sprintf("change case %s: %s", d.line(c.Case), strings.Join(outcomes, ", "))
}

func verifiedWord(ok bool) string {
	if ok {
		return "verified"
	}
	return "NOT verified"
}
