package main

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// maxPatch is the largest patch the server takes in a candidate body.
const maxPatch = 2 << 20

func runFix(ctx context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "fix", args, "submit")
	if err != nil {
		return err
	}
	var sf serverFlags
	var caseID, patchFile string
	fs := newFlags("fix submit", "signoff fix submit --case ID --patch FILE [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&caseID, "case", "", "the case the fix is for (required)")
	fs.StringVar(&patchFile, "patch", "", "a unified diff (git diff) to propose as a candidate (required)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID, "patch", patchFile); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	patch, err := readFileLimited(patchFile, maxPatch)
	if err != nil {
		return err
	}
	// JSON strings are UTF-8: invalid bytes would arrive as U+FFFD, a
	// different patch from the one on disk.
	if !utf8.Valid(patch) {
		return signoff.Errorf(signoff.EINVALID, "%s is not valid UTF-8; the API takes patches as text", patchFile)
	}
	cand, err := c.SubmitCandidate(ctx, caseID, string(patch))
	if err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "candidate %s (attempt %d) for case %s\n", d.line(cand.ID), cand.Attempt, caseID)
	fmt.Fprintf(e.stdout, "commit:  %s\n", d.line(cand.Commit))
	fmt.Fprintf(e.stdout, "branch:  %s\n", d.line(cand.Branch))
	fmt.Fprintf(e.stdout, "status:  %s\n", d.line(cand.Status))
	fmt.Fprintf(e.stdout, "changed (%d):\n", len(cand.Changed))
	for _, p := range cand.Changed {
		fmt.Fprintf(e.stdout, "  %s\n", d.line(p))
	}
	return nil
}
