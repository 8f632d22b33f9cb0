package triage_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// The duplicate floor is measured, not chosen: over every dataset the
// tests know (the sample, the evaluation sets, the four generalisation
// sets), run as the reference pipeline and with created tickets filed
// into the tracker, calibrationPairs collects the best score of every
// true duplicate pair and every false candidate, and TestCalibration
// holds StrongScore at least calibrationMargin above the highest false
// candidate.

// calibrationMargin is the distance the floor keeps above the highest
// false candidate of every dataset.
const calibrationMargin = 0.03

// calPair is one measured pair: a report and a candidate.
type calPair struct {
	set, item, candidate string
	score                float64
	why                  []string
}

// calSet is one dataset run in one mode: each expected duplicate's best
// true score (0 when its target was not among the hits) and every false
// candidate.
type calSet struct {
	name  string
	trues []calPair
	false []calPair
}

func (c calSet) maxFalse() calPair {
	var m calPair
	for _, p := range c.false {
		if p.score > m.score || m.candidate == "" {
			m = p
		}
	}
	return m
}

func (c calSet) accepted(floor float64) int {
	n := 0
	for _, p := range c.trues {
		if p.score >= floor {
			n++
		}
	}
	return n
}

func (c calSet) minTrue() float64 {
	m := 1.0
	for _, p := range c.trues {
		m = min(m, p.score)
	}
	return m
}

// calibrationSets loads every dataset at hand.
func calibrationSets(t *testing.T) map[string]triage.Dataset {
	t.Helper()
	sets := map[string]triage.Dataset{"gen/bank": bankDataset(t), "gen/notes": notesDataset(t), "gen/delivery": deliveryDataset(t), "gen/racing": racingDataset(t)}
	if d, ok := tryOrbit(); ok {
		sets["sample"] = d
	}
	dirs, _ := filepath.Glob("testdata/eval/*")
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		d, err := triage.LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		sets["eval/"+filepath.Base(dir)] = d
	}
	return sets
}

// runsFiling is runFilingTickets keeping every item's run.
func runsFiling(d triage.Dataset) []triage.ItemRun {
	tickets := append([]triage.Ticket(nil), d.Tickets...)
	batch, itemTicket, known, n := triage.NewBatch(), map[string]string{}, map[string]bool{}, 0
	var out []triage.ItemRun
	for _, it := range d.Items {
		p := triage.NewProject(triage.Dataset{Tickets: tickets, Crashes: d.Crashes, Owners: d.Owners, Releases: d.Releases})
		s := p.NewSession()
		s.Batch, s.ItemTicket = batch, itemTicket
		for id := range known {
			s.Known[id] = true
		}
		s.NewTicketID = func() string { n++; return fmt.Sprintf("FILED-%d", n) }
		r := s.Process(it)
		out = append(out, r)
		if r.Result.Outcome == triage.OutcomeNewTicket {
			known[r.Result.Ticket] = true
			tickets = append(tickets, triage.Ticket{ID: r.Result.Ticket, Title: r.Action.Title, Description: r.Action.Body, Status: "open",
				Severity: r.Result.Severity, Component: r.Result.Component, AffectedVersions: []string{r.Intake.AppVersion}})
		}
	}
	return out
}

// calibrationPairs runs d in both modes and collects its pairs. A hit on a
// closed ticket fixed before the reporter's version (or the regression
// the pipeline recorded) is the right match for a regression, not a false
// candidate.
func calibrationPairs(name string, d triage.Dataset) []calSet {
	var out []calSet
	for _, mode := range []string{"batch", "filed"} {
		var runs []triage.ItemRun
		if mode == "batch" {
			runs = triage.Run(d)
		} else {
			runs = runsFiling(d)
		}
		itemTicket := map[string]string{}
		for _, r := range runs {
			if r.Result.Ticket != "" {
				itemTicket[r.Item.ID] = r.Result.Ticket
			}
		}
		cs := calSet{name: name + " " + mode}
		for _, r := range runs {
			exp, ok := d.Expected[r.Item.ID]
			if !ok || exp.Category != triage.CategoryBug || r.Intake.Category != triage.CategoryBug {
				continue
			}
			want := exp.DuplicateOf
			if strings.HasPrefix(want, triage.BatchPrefix) {
				want = itemTicket[strings.TrimPrefix(want, triage.BatchPrefix)]
				if want == "" {
					want = "?" // the first report filed nothing: no hit can land on it
				}
			}
			best := calPair{set: cs.name, item: r.Item.ID, candidate: exp.DuplicateOf}
			hits := append(append([]triage.Hit(nil), r.TrackerHits...), r.BatchHits...)
			// A hit whose words match the report less than the closed
			// ticket it regressed from is never claimable (Investigate's
			// regression rule), whatever its score.
			regWords, regressed := 0.0, false
			if r.Investigation != nil && r.Investigation.RegressionOf != "" {
				for _, h := range hits {
					if h.ID == r.Investigation.RegressionOf {
						regWords, regressed = h.Words, true
					}
				}
			}
			for _, h := range hits {
				lands := h.ID
				if h.Resolves != "" {
					lands = h.Resolves
				}
				switch {
				case want != "" && lands == want:
					if h.Score > best.score {
						best.score, best.why = h.Score, h.Why
					}
				case h.ID == r.Result.RegressionOf || h.FixedIn != "" && r.Intake.AppVersion != "" && triage.CompareVersions(h.FixedIn, r.Intake.AppVersion) < 0:
				case regressed && h.Words < regWords:
				default:
					cs.false = append(cs.false, calPair{set: cs.name, item: r.Item.ID, candidate: h.ID, score: h.Score, why: h.Why})
				}
			}
			if want != "" {
				cs.trues = append(cs.trues, best)
			}
		}
		out = append(out, cs)
	}
	return out
}

// measuredFloor is the floor the data supports: the highest false
// candidate plus calibrationMargin, rounded up to a hundredth.
func measuredFloor(sets []calSet) (float64, calPair) {
	var worst calPair
	for _, c := range sets {
		if m := c.maxFalse(); m.score > worst.score {
			worst = m
		}
	}
	return math.Ceil((worst.score+calibrationMargin)*100-1e-9) / 100, worst
}

// TestCalibrationTable logs the calibration table: per dataset and mode,
// the true duplicates accepted at StrongScore and at the measured floor,
// the lowest true score, the highest false candidate and the margin.
func TestCalibrationTable(t *testing.T) {
	t.Parallel()
	data := calibrationSets(t)
	names := make([]string, 0, len(data))
	for n := range data {
		names = append(names, n)
	}
	sort.Strings(names)
	var sets []calSet
	for _, n := range names {
		sets = append(sets, calibrationPairs(n, data[n])...)
	}
	floor, worst := measuredFloor(sets)
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %6s %8s %8s %8s %8s  %s\n", "set", "trues", "@strong", "@floor", "minTrue", "maxFalse", "highest false")
	tt, ts, tf := 0, 0, 0
	for _, c := range sets {
		m := c.maxFalse()
		fmt.Fprintf(&b, "%-22s %6d %8d %8d %8.3f %8.3f  %s→%s\n", c.name, len(c.trues), c.accepted(triage.StrongScore), c.accepted(floor), c.minTrue(), m.score, m.item, m.candidate)
		tt += len(c.trues)
		ts += c.accepted(triage.StrongScore)
		tf += c.accepted(floor)
	}
	fmt.Fprintf(&b, "all: %d true pairs, %d accepted at StrongScore %.2f, %d at the measured floor %.2f (highest false %.3f %s→%s %v, margin %.3f)\n",
		tt, ts, triage.StrongScore, tf, floor, worst.score, worst.item, worst.candidate, worst.why, triage.StrongScore-worst.score)
	var below []string
	for _, c := range sets {
		for _, p := range c.trues {
			if p.score < triage.StrongScore {
				below = append(below, fmt.Sprintf("%s %s→%s %.3f", c.name, p.item, p.candidate, p.score))
			}
		}
	}
	t.Logf("\n%strue pairs below StrongScore: %s", b.String(), strings.Join(below, "; "))
}
