package repair

import (
	"fmt"

	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// Defences is what the verification did against a counterfeit verdict, as
// an approver reads it on the card: the frozen test tree (its globs, the
// defaults the harness exempted and why), the candidate's edits to it that
// were discarded, every static finding whether or not it refused, the
// harness's build-change policy, how the candidate's runs saw the build
// cache, and each candidate run's witness.
type Defences struct {
	Protected    []string           `json:"protected"`
	Unprotected  []verify.Exemption `json:"unprotected"`
	TestEdits    []verify.TestEdit  `json:"test_edits"`
	TestOnly     []string           `json:"test_only"`
	Findings     []tamper.Finding   `json:"findings"`
	BuildChanges string             `json:"build_changes"`
	Cache        string             `json:"cache"`
	Witness      []string           `json:"witness"`
}

// DefencesOf reads the defences from a verification report. Lists are
// never nil, so a card's digest does not depend on how a report was
// decoded.
func DefencesOf(r verify.Report) Defences {
	d := Defences{
		Protected: nonNil(r.Protected), Unprotected: nonNil(r.Unprotected), TestEdits: nonNil(r.TestEdits), TestOnly: nonNil(r.TestOnly),
		Findings: nonNil(r.Findings), BuildChanges: r.BuildChanges, Cache: r.Cache, Witness: []string{},
	}
	for _, s := range r.Stages {
		if s.Name != verify.StageCandidate || s.Run == 0 {
			continue
		}
		switch w := s.Witness; {
		case w == nil:
			d.Witness = append(d.Witness, fmt.Sprintf("run %d: no witness check recorded", s.Run))
		case !w.Applied:
			d.Witness = append(d.Witness, fmt.Sprintf("run %d: %s", s.Run, w.Reason))
		case len(w.Missing) > 0:
			d.Witness = append(d.Witness, fmt.Sprintf("run %d: %d of %d harness results without the witness of their pass", s.Run, len(w.Missing), w.Checked))
		default:
			d.Witness = append(d.Witness, fmt.Sprintf("run %d: all %d harness results carried the witness of their pass (%d test functions instrumented)", s.Run, w.Checked, w.Instrumented))
		}
	}
	return d
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
