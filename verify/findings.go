package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff/tamper"
)

// staticChecksRefuse is false only in tests that show what the layers
// after the static checks (the frozen tree, the witness, the layered
// cache) do on their own.
var staticChecksRefuse = true

// maxScanBytes bounds a file the static checks read; a larger changed
// file is a finding of its own.
const maxScanBytes = 4 << 20

// findings runs the static checks of package tamper over the candidate's
// changes outside the frozen test tree (its edits inside it are discarded
// and never run).
func (v *verifier) findings(ctx context.Context, cand string, changed, protected []string, base, candBlobs map[string]string) ([]tamper.Finding, error) {
	var files []tamper.File
	var out []tamper.Finding
	for _, p := range changed {
		if firstMatch(protected, p) != "" {
			continue
		}
		f := tamper.File{Path: p}
		for _, side := range []struct {
			rev   string
			blobs map[string]string
			body  *[]byte
			there *bool
		}{{v.h.Base, base, &f.Base, &f.BaseExists}, {cand, candBlobs, &f.Cand, &f.CandExists}} {
			id, ok := side.blobs[p]
			if !ok {
				continue
			}
			*side.there = true
			if strings.HasPrefix(id, "120000 ") || strings.HasPrefix(id, "160000 ") {
				out = append(out, tamper.Finding{Rule: RuleNotAFile, Severity: tamper.Refuse, Path: p,
					Detail: p + " is a symbolic link or submodule: a fix changes regular files"})
				continue
			}
			b, err := v.repo.ShowFile(ctx, side.rev, p)
			if err != nil {
				return nil, fmt.Errorf("read %s at %s: %w", p, short(side.rev), err)
			}
			if len(b) > maxScanBytes {
				out = append(out, tamper.Finding{Rule: RuleTooLarge, Severity: tamper.Flag, Path: p,
					Detail: fmt.Sprintf("%s is %d bytes: too large for the static checks, which did not read it", p, len(b))})
				b = nil
			}
			*side.body = b
		}
		files = append(files, f)
	}
	return append(out, tamper.Candidate(files)...), nil
}

// Rules verify adds to package tamper's.
const (
	RuleNotAFile = "not-a-regular-file"
	RuleTooLarge = "too-large-to-read"
)

// CheckFindings decides what the static findings cost: any finding of
// severity refuse, and a build change when the harness's policy is
// BuildRefuse, refuse the candidate before anything runs.
func CheckFindings(fs []tamper.Finding, buildPolicy string) (outcome, detail string) {
	var bad []string
	for _, f := range fs {
		switch {
		case f.Severity == tamper.Refuse:
			bad = append(bad, f.Detail)
		case f.Severity == tamper.BuildChange && buildPolicy != BuildFlag:
			bad = append(bad, f.Detail+" (the harness refuses build changes)")
		}
	}
	if len(bad) == 0 {
		return OK, ""
	}
	more := ""
	if len(bad) > 5 {
		more = fmt.Sprintf("; and %d more", len(bad)-5)
		bad = bad[:5]
	}
	return Refused, "not run: the static checks refuse the candidate: " + strings.Join(bad, "; ") + more
}

// describeEdits says which of the candidate's test edits were discarded.
func describeEdits(edits []TestEdit) string {
	parts := make([]string, 0, len(edits))
	for _, e := range edits {
		parts = append(parts, e.Path+" ("+e.Change+")")
	}
	return "the candidate's changes to the frozen test tree are discarded: " + strings.Join(firstN(parts, 10), ", ")
}
