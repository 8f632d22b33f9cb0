package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

func runMerge(ctx context.Context, e *env, args []string) error {
	caseID, c, err := caseCommand(e, "merge", "signoff merge --case ID [--server URL]   (token from SIGNOFF_TOKEN)",
		"the approved case to merge (required)", args, nil)
	if err != nil {
		return err
	}
	m, err := c.Merge(ctx, caseID)
	if err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "merged case %s\n", caseID)
	fmt.Fprintf(e.stdout, "commit:      %s\n", d.line(m.Commit))
	fmt.Fprintf(e.stdout, "main before: %s\n", d.line(m.MainBefore))
	fmt.Fprintf(e.stdout, "tree:        %s\n", d.line(m.Tree))
	fmt.Fprintf(e.stdout, "candidate:   %s\n", d.line(m.CandidateID))
	fmt.Fprintf(e.stdout, "approvals:   %s\n", d.line(strings.Join(m.Approvals, ", ")))
	fmt.Fprintf(e.stdout, "by:          %s at %s\n", d.line(m.By), m.At.Format(time.RFC3339))
	return nil
}
