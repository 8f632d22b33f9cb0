package main

import (
	"context"
	"fmt"
)

// runReverify asks the server to move an approved (or awaiting) candidate
// onto the current main and verify it again, after main moved under it.
func runReverify(ctx context.Context, e *env, args []string) error {
	caseID, c, err := caseCommand(e, "reverify", "signoff reverify --case ID [--server URL]   (token from SIGNOFF_TOKEN)",
		"the case whose candidate main has overtaken (required)", args, nil)
	if err != nil {
		return err
	}
	cand, err := c.Reverify(ctx, caseID)
	if err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "candidate %s (rebased from %s) on base %s: commit %s, verifying\n",
		d.line(cand.ID), d.line(cand.RebasedFrom), d.line(cand.Base), d.line(cand.Commit))
	fmt.Fprintln(e.stdout, "its card will need a new approval: the old one is superseded")
	return nil
}
