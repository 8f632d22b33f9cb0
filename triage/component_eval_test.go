package triage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// componentEvalDirs are the datasets the component and severity
// measurements run over.
var componentEvalDirs = func() []string {
	dirs, _ := filepath.Glob("testdata/eval/*")
	return append([]string{"../samples/orbit_run"}, dirs...)
}()

// TestComponentSeverityMeasure assesses every bug item that expects a
// component or a minimum severity, whatever the duplicate decision, and
// logs how many get the component and the severity right; and classifies
// each tracker ticket with a model trained on the others (leave one out).
// It measures; the eval sets' own tests hold the targets.
func TestComponentSeverityMeasure(t *testing.T) {
	t.Parallel()
	for _, dir := range componentEvalDirs {
		d, err := LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		p := NewProject(d)
		s := p.NewSession()
		compOK, compN, sevOK, sevN := 0, 0, 0, 0
		var log strings.Builder
		for _, it := range d.Items {
			r := s.Process(it)
			exp, ok := d.Expected[it.ID]
			if !ok || (exp.Component == "" && exp.MinSeverity == "") {
				continue
			}
			in := Classify(it)
			q := Query{Text: it.Text, Device: in.Device, OS: in.OS, AppVersion: in.AppVersion}
			crashes := p.Crash.Query(q)
			q.Signature = ConfirmedSignature(crashes)
			hits := p.Index.Search(q, SearchK)
			inv := Investigation{Verdict: VerdictNew, Signature: q.Signature}
			if r.Investigation != nil {
				inv = *r.Investigation
				inv.Verdict = VerdictNew
			}
			as := Assess(AssessInput{Item: it, Intake: in, Investigation: inv, Crashes: crashes, CrashUsers: p.Crash.TotalUsers(),
				Releases: p.Releases, Owners: p.Owners, TrackerHits: hits, Tickets: p.ByID, Components: p.Components})
			mark := func(good bool) string {
				if good {
					return "ok"
				}
				return "MISS"
			}
			if exp.Component != "" {
				compN++
				good := strings.EqualFold(as.Component, exp.Component)
				if good {
					compOK++
				}
				fmt.Fprintf(&log, "  %s component %-4s %s (want %s): %s\n", it.ID, mark(good), as.Component, exp.Component, as.Evidence["component_why"])
			}
			if exp.MinSeverity != "" {
				sevN++
				good := SeverityRank(as.Severity) >= SeverityRank(exp.MinSeverity)
				if good {
					sevOK++
				}
				fmt.Fprintf(&log, "  %s severity  %-4s %s (want >= %s): %.160s\n", it.ID, mark(good), as.Severity, exp.MinSeverity, as.Rationale)
			}
		}
		// Leave one ticket out: train on the rest, classify its text.
		looOK := 0
		for i, tk := range d.Tickets {
			rest := append(append([]Ticket(nil), d.Tickets[:i]...), d.Tickets[i+1:]...)
			m := NewComponentModel(d.Owners, rest)
			got, _ := m.Choose(tk.Title+". "+tk.Description, nil, nil, nil)
			if strings.EqualFold(got, tk.Component) {
				looOK++
			} else {
				fmt.Fprintf(&log, "  loo %s: %s, want %s\n", tk.ID, got, tk.Component)
			}
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		sort.Strings(lines)
		t.Logf("%s: component %d/%d, severity %d/%d, tracker leave-one-out %d/%d\n%s", filepath.Base(dir), compOK, compN, sevOK, sevN,
			looOK, len(d.Tickets), strings.Join(lines, "\n"))
	}
}
