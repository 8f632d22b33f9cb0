package triage_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// componentCheck counts one kind of component decision on one dataset.
type componentCheck struct{ ok, n int }

func (c *componentCheck) add(good bool) {
	c.n++
	if good {
		c.ok++
	}
}

// TestComponentWideCheck is the offline check of the component model
// across every dataset the workspace has (the sample, the evaluation sets
// and the invented products of generalise_test.go). Three measures:
//
//   - loo: each tracker ticket classified by a model trained on the
//     other tickets (leave one out);
//   - new: each item expected to become a new ticket with a component,
//     assessed as new (the component triage files it under);
//   - dup: each item expected to be a duplicate, classified as a report
//     before any search (what the duplicate evidence compares with the
//     ticket's component): the ticket's component, or the component
//     expected for the batch item it repeats.
//
// It logs the figures and every miss; it holds nothing (the eval sets'
// own tests hold the targets).
func TestComponentWideCheck(t *testing.T) {
	t.Parallel()
	sets := map[string]triage.Dataset{
		"gen-bank": bankDataset(t), "gen-notes": notesDataset(t), "gen-delivery": deliveryDataset(t), "gen-racing": racingDataset(t),
	}
	dirs, _ := filepath.Glob("testdata/eval/*")
	for _, dir := range append([]string{"../samples/orbit_run"}, dirs...) {
		d, err := triage.LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		sets[filepath.Base(dir)] = d
	}
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	var loo, newc, dup componentCheck
	var out strings.Builder
	for _, name := range names {
		d := sets[name]
		var l, nw, dp componentCheck
		var misses []string
		for i, tk := range d.Tickets {
			rest := append(append([]triage.Ticket(nil), d.Tickets[:i]...), d.Tickets[i+1:]...)
			got := triage.NewComponentModel(d.Owners, rest).Decide(triage.ComponentReport{Text: tk.Title + ". " + tk.Description})
			good := strings.EqualFold(got.Component, tk.Component)
			l.add(good)
			if !good {
				misses = append(misses, fmt.Sprintf("loo %s: %s (conf %.2f), want %s", tk.ID, got.Component, got.Confidence, tk.Component))
			}
		}
		p := triage.NewProject(d)
		for _, it := range d.Items {
			exp, ok := d.Expected[it.ID]
			if !ok || exp.Category != triage.CategoryBug {
				continue
			}
			in := triage.Classify(it)
			q := triage.Query{Text: it.Text, Device: in.Device, OS: in.OS, AppVersion: in.AppVersion}
			crashes := p.Crash.Query(q)
			q.Signature = triage.ConfirmedSignature(crashes)
			switch {
			case exp.Outcome == triage.OutcomeNewTicket && exp.Component != "":
				hits := p.Index.Search(q, triage.SearchK)
				as := triage.Assess(triage.AssessInput{Item: it, Intake: in, Investigation: triage.Investigation{Verdict: triage.VerdictNew, Signature: q.Signature},
					Crashes: crashes, CrashUsers: p.Crash.TotalUsers(), Releases: p.Releases, Owners: p.Owners, TrackerHits: hits, Tickets: p.ByID, Components: p.Components})
				good := strings.EqualFold(as.Component, exp.Component)
				nw.add(good)
				if !good {
					misses = append(misses, fmt.Sprintf("new %s: %s, want %s (%v)", it.ID, as.Component, exp.Component, as.Evidence["component_why"]))
				}
			case exp.Outcome == triage.OutcomeDuplicate:
				want := ""
				if id, ok := strings.CutPrefix(exp.DuplicateOf, "batch:"); ok {
					want = d.Expected[id].Component
				} else if tk, ok := p.ByID[exp.DuplicateOf]; ok {
					want = tk.Component
				}
				if want == "" {
					continue
				}
				got := triage.ReportComponentOf(p.Components, q, crashes)
				good := strings.EqualFold(got.Component, want)
				dp.add(good)
				if !good {
					misses = append(misses, fmt.Sprintf("dup %s: %s (conf %.2f, margin %.1f), want %s: %.60q\n        %s", it.ID, got.Component, got.Confidence, got.Margin, want, it.Text, got.Why))
				}
			}
		}
		fmt.Fprintf(&out, "%-13s loo %2d/%2d  new %2d/%2d  dup %2d/%2d\n", name, l.ok, l.n, nw.ok, nw.n, dp.ok, dp.n)
		for _, m := range misses {
			fmt.Fprintf(&out, "    %s\n", m)
		}
		loo.ok, loo.n, newc.ok, newc.n, dup.ok, dup.n = loo.ok+l.ok, loo.n+l.n, newc.ok+nw.ok, newc.n+nw.n, dup.ok+dp.ok, dup.n+dp.n
	}
	t.Logf("component wide check: loo %d/%d, new %d/%d, dup %d/%d, all %d/%d\n%s", loo.ok, loo.n, newc.ok, newc.n, dup.ok, dup.n,
		loo.ok+newc.ok+dup.ok, loo.n+newc.n+dup.n, out.String())
}
