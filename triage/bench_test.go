package triage_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/triage"
)

func BenchmarkRunBatch(b *testing.B) {
	d := loadOrbit(b)
	b.ReportAllocs()
	for b.Loop() {
		triage.RunBatch(d)
	}
	b.ReportMetric(float64(len(d.Items)), "items/op")
}

// synthTracker builds n tickets from a vocabulary of product nouns and
// generic bug words, with realistic title and description lengths.
func synthTracker(n int, seed uint64) ([]triage.Ticket, func(r *rand.Rand) string) {
	r := rand.New(rand.NewPCG(seed, 1))
	nouns := make([]string, 4000)
	for i := range nouns {
		nouns[i] = synthWord(r)
	}
	problems := []string{"crashes", "freezes", "shows a blank screen", "is slow", "fails with an error", "does not load", "shows the wrong total",
		"loses data", "charges twice", "does not sync", "logs the user out", "overlaps the button", "plays no sound", "drains the battery"}
	actions := []string{"opening", "tapping", "saving", "exporting", "sharing", "searching", "uploading", "deleting", "editing", "signing in to"}
	platforms := []string{"Android 14", "Android 15", "iOS 17.4", "iOS 18.1", "iPadOS 17.3", "Windows 11"}
	devices := []string{"Pixel 8", "Galaxy S24", "iPhone 15", "iPad Air", "OnePlus 12", "Xiaomi 13"}
	phrase := func(r *rand.Rand) string {
		return fmt.Sprintf("%s %s %s %s when %s the %s on %s", nouns[r.IntN(len(nouns))], nouns[r.IntN(len(nouns))],
			problems[r.IntN(len(problems))], nouns[r.IntN(len(nouns))], actions[r.IntN(len(actions))], nouns[r.IntN(len(nouns))], platforms[r.IntN(len(platforms))])
	}
	tickets := make([]triage.Ticket, n)
	for i := range tickets {
		var desc strings.Builder
		for range 3 {
			desc.WriteString(phrase(r) + ". ")
		}
		desc.WriteString("Seen on " + devices[r.IntN(len(devices))] + ".")
		status := "open"
		var fixed *string
		if r.IntN(3) == 0 {
			status = "closed"
			v := fmt.Sprintf("3.%d.%d", r.IntN(9), r.IntN(9))
			fixed = &v
		}
		tickets[i] = triage.Ticket{ID: fmt.Sprintf("T-%d", i+1), Title: phrase(r), Status: status, FixedIn: fixed,
			Component: nouns[r.IntN(40)], AffectedVersions: []string{fmt.Sprintf("3.%d.0", r.IntN(9))}, Description: desc.String()}
	}
	report := func(r *rand.Rand) string {
		return "Hi, since the update the " + phrase(r) + ". Also " + phrase(r) + ". Please fix!"
	}
	return tickets, report
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 9)) }

func synthWord(r *rand.Rand) string {
	const cons, vows = "bcdfghjklmnprstvwz", "aeiou"
	n := 2 + r.IntN(3)
	var b strings.Builder
	for range n {
		b.WriteByte(cons[r.IntN(len(cons))])
		b.WriteByte(vows[r.IntN(len(vows))])
	}
	return b.String()
}

var (
	bigOnce    sync.Once
	bigIndex   *triage.TrackerIndex
	bigReports []triage.Query
)

func bigTracker(tb testing.TB) (*triage.TrackerIndex, []triage.Query) {
	bigOnce.Do(func() {
		tickets, report := synthTracker(100_000, 42)
		bigIndex = triage.NewTrackerIndex(tickets)
		r := rand.New(rand.NewPCG(7, 7))
		for range 500 {
			bigReports = append(bigReports, triage.Query{Text: report(r), Device: "Pixel 8", OS: "Android 14", AppVersion: "3.4.0"})
		}
	})
	return bigIndex, bigReports
}

func BenchmarkTrackerSearch100k(b *testing.B) {
	ix, reports := bigTracker(b)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		q := reports[i%len(reports)]
		i++
		t0 := time.Now()
		hits := ix.Search(q, 10)
		lat = append(lat, time.Since(t0))
		if len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkBatchSearch1000 searches a batch memory of 1,000 processed
// reports (a busy day's feedback).
func BenchmarkBatchSearch1000(b *testing.B) {
	_, report := synthTracker(10, 5)
	r := newRand(11)
	batch := triage.NewBatch()
	for i := range 1000 {
		batch.Add(fmt.Sprintf("I-%d", i), triage.Query{Text: report(r), AppVersion: "3.4.0"}, fmt.Sprintf("NEW-%d", i))
	}
	q := triage.Query{Text: report(r), AppVersion: "3.4.0"}
	for b.Loop() {
		batch.Search(q, 5)
	}
}

// adversarialQueries are reports at the store's cap (32 KB) built to be
// slow: thousands of distinct invented near-words (each a trigram
// lookup), the tracker's own commonest words (every ticket a candidate),
// real reports repeated, numbers and quoted fragments.
func adversarialQueries(reports []triage.Query) map[string]string {
	r := rand.New(rand.NewPCG(3, 3))
	var common, vocab, fuzzy strings.Builder
	for range 40 {
		common.WriteString("crashes freezes blank screen slow error load wrong total data charges twice sync logs user out button sound battery opening tapping saving exporting sharing searching when the on Android 14 ")
	}
	for range 3 {
		vocab.WriteString(reports[r.IntN(len(reports))].Text + " ")
	}
	for range 4000 {
		fuzzy.WriteString(synthWord(r) + synthWord(r) + " ")
	}
	return map[string]string{
		"common":   common.String(),
		"vocab32k": strings.Repeat(vocab.String(), (32<<10)/vocab.Len()),
		"fuzzy":    fuzzy.String()[:32<<10],
		"numbers":  strings.Repeat("1 2 3 4 5 6 7 8 9 10 11 12 10000 2.2 billion ", 700),
		"quotes":   strings.Repeat(`"tion" "ing the" "when tapping" `, 1000),
	}
}

// BenchmarkTrackerSearch100kAdversarial is the duplicate search's worst
// case on a 100,000-ticket tracker: each adversarial query, p50 and p99.
func BenchmarkTrackerSearch100kAdversarial(b *testing.B) {
	ix, reports := bigTracker(b)
	qs := adversarialQueries(reports)
	names := make([]string, 0, len(qs))
	for n := range qs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			q := triage.Query{Text: qs[name], OS: "Android 14", Device: "Pixel 8", AppVersion: "3.4.0"}
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				ix.Search(q, 10)
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
