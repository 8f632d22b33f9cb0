package web

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// The charts page: crash events over time per signature, for each project
// of the workspace, and the workspace's cases by state over time. The
// handler reads; everything else here is pure: bucketing, counting,
// top-N, stacking and the SVG geometry, which the template draws as
// <rect> elements (names are text in the template, escaped there).

const (
	// chartDaysDefault and chartDaysMax bound ?days=N.
	chartDaysDefault = 30
	chartDaysMax     = 365
	// chartMaxBuckets bounds the periods of one chart.
	chartMaxBuckets = 60
	// chartTopSignatures is how many crash signatures get their own
	// chart; the rest are summed as one.
	chartTopSignatures = 8
	// chartTopStates is how many states the stacked chart draws apart;
	// the rest are stacked as one (the table still lists each).
	chartTopStates = 11
	// chartMaxProjects bounds the projects the page reads crashes of.
	chartMaxProjects = 20
	// chartCrashEvents bounds the crash events read per project: the
	// newest of the window.
	chartCrashEvents = 10000
	// chartStateChanges bounds the ledger events the state chart reads.
	chartStateChanges = 10000
	// The SVGs' coordinate systems: the width, the stacked chart's
	// height and a small multiple's height. They stretch to their box
	// (preserveAspectRatio="none"), so these are proportions only.
	chartW      = 600.0
	chartH      = 200.0
	chartPanelH = 40.0
)

// chartRanges are the ranges the page offers, in days.
var chartRanges = []int{7, 30, 90, 365}

func (s *server) chartRoutes() {
	s.mux.HandleFunc("GET /charts", s.signedIn(s.chartsPage))
}

func (s *server) chartsPage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	days, err := chartDays(r.URL.Query().Get("days"))
	if err != nil {
		return err
	}
	ctx, me, now := r.Context(), sess.Actor, s.o.Now().UTC()
	v := chartsView{Days: days, Now: now.Format("2006-01-02 15:04")}
	for _, d := range chartRanges {
		v.Ranges = append(v.Ranges, chartRange{Days: d, Current: d == days})
	}
	projects, err := s.store.ListProjects(ctx, me.WorkspaceID)
	if err != nil {
		return err
	}
	if len(projects) > chartMaxProjects {
		v.MoreProjects = len(projects) - chartMaxProjects
		projects = projects[:chartMaxProjects]
	}
	for i, p := range projects {
		win, err := s.store.CrashWindow(ctx, me, p.ID, days, chartCrashEvents)
		if err != nil {
			return err
		}
		c := crashChart(i, p.Name, win.Events, days, now)
		c.Older += win.Older
		c.Cut = win.Cut
		v.Crashes = append(v.Crashes, c)
	}
	hist, err := s.store.CaseStateChanges(ctx, me, now.Add(-time.Duration(days)*24*time.Hour), chartStateChanges)
	if err != nil {
		return err
	}
	v.States = stateChart(hist, now, caseStates())
	s.render(w, r, http.StatusOK, "charts", page{Title: "Charts", Me: &me, CSRF: sess.CSRF, Body: v})
	return nil
}

// chartDays reads ?days=N: 30 when absent, at most 365.
func chartDays(q string) (int, error) {
	if q == "" {
		return chartDaysDefault, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 {
		return 0, signoff.Errorf(signoff.EINVALID, "days must be a whole number of days from 1 to %d.", chartDaysMax)
	}
	return min(n, chartDaysMax), nil
}

// ---- views ----

// chartsView is the charts page.
type chartsView struct {
	Days int
	// Now is the end of every chart's window, to the minute (UTC).
	Now    string
	Ranges []chartRange
	// Crashes has one chart per project, in project order.
	Crashes []crashChartView
	// MoreProjects counts the projects left out (chartMaxProjects).
	MoreProjects int
	States       stateChartView
}

type chartRange struct {
	Days    int
	Current bool
}

// axisView is what the HTML around an SVG says: the y-axis labels (top,
// middle, bottom) and the range of the x-axis.
type axisView struct {
	YTop, YMid string
	XFrom, XTo string
}

// chartRect is one <rect> in user units, with its tooltip.
type chartRect struct {
	X, Y, W, H float64
	Title      string
}

// panelView is one small multiple: one signature's bars.
type panelView struct {
	Label string
	// Summary says the panel in words, for its aria-label.
	Summary string
	Class   string
	Total   int
	Peak    int
	Bars    []chartRect
}

// chartTable is the numbers of a chart: one row per period.
type chartTable struct {
	ID      string
	Caption string
	Period  string // the heading of the period column
	Cols    []string
	Rows    []chartTableRow
}

type chartTableRow struct {
	Label string
	Cells []int
	Total int
}

// crashChartView is one project's crash chart.
type crashChartView struct {
	ID      string // unique on the page
	Project string
	// Events counts the events charted, Signatures their signatures;
	// Older counts the events before the window, Newer those after it;
	// Cut the oldest of the window left out by chartCrashEvents.
	Events, Signatures, Older, Newer, Cut int
	Step                                  string
	// From and To bound the window the x axis spans, exactly: the last
	// Days days up to now, or, when the project had no crash in those
	// (Newest), the Days days up to its newest crash event.
	From, To string
	Days     int
	Newest   bool
	Axis     axisView
	Panels   []panelView
	Table    chartTable
}

// legendItem names a series of the stacked chart and its count now.
type legendItem struct {
	Label string
	Class string
	Now   int
}

// stateChartView is the cases-by-state chart.
type stateChartView struct {
	Empty     bool
	Cases     int // cases now
	Step      string
	From, To  string
	Truncated bool
	Axis      axisView
	Legend    []legendItem
	Rects     []stackRect
	Table     chartTable
}

// stackRect is a chartRect of a series.
type stackRect struct {
	chartRect
	Class string
}

// ---- bucketing ----

// chartBuckets split [Start, Start+N·Step) into N periods of Step.
type chartBuckets struct {
	Start time.Time
	Step  time.Duration
	N     int
}

const chartDay = 24 * time.Hour

// bucketSteps are the periods a chart may use, shortest first; past the
// last, whole multiples of a year.
var bucketSteps = []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	chartDay, 2 * chartDay, 7 * chartDay, 14 * chartDay, 30 * chartDay, 91 * chartDay, 182 * chartDay, 365 * chartDay}

// pickBuckets returns the shortest period from bucketSteps that covers
// from..to (both included) in at most maxN periods, the first starting at
// from truncated to the period: hours and days start on UTC boundaries,
// weeks on Mondays.
func pickBuckets(from, to time.Time, maxN int) chartBuckets {
	from, to = from.UTC(), to.UTC()
	if to.Before(from) {
		from, to = to, from
	}
	maxN = max(maxN, 1)
	for i := 0; ; i++ {
		step := time.Duration(i-len(bucketSteps)+2) * 365 * chartDay
		if i < len(bucketSteps) {
			step = bucketSteps[i]
		}
		start := from.Truncate(step)
		if n := int(to.Sub(start)/step) + 1; n <= maxN || step >= 100*365*chartDay {
			return chartBuckets{Start: start, Step: step, N: min(n, maxN)}
		}
	}
}

// index is the period t falls in, or -1 outside all.
func (b chartBuckets) index(t time.Time) int {
	if t.Before(b.Start) {
		return -1
	}
	i := t.Sub(b.Start) / b.Step
	if i >= time.Duration(b.N) {
		return -1
	}
	return int(i)
}

func (b chartBuckets) start(i int) time.Time { return b.Start.Add(time.Duration(i) * b.Step) }
func (b chartBuckets) end(i int) time.Time   { return b.start(i + 1) }

// label names period i by its start: to the minute for periods shorter
// than a day, else the date.
func (b chartBuckets) label(i int) string {
	if b.Step < chartDay {
		return b.start(i).Format("2006-01-02 15:04")
	}
	return b.start(i).Format("2006-01-02")
}

// labels names every period.
func (b chartBuckets) labels() []string {
	out := make([]string, b.N)
	for i := range out {
		out[i] = b.label(i)
	}
	return out
}

// stepWords says a period in words: "hour", "6 hours", "day", "2 weeks".
func stepWords(d time.Duration) string {
	unit, n := "hour", int(d/time.Hour)
	switch {
	case d%(7*chartDay) == 0:
		unit, n = "week", int(d/(7*chartDay))
	case d%chartDay == 0:
		unit, n = "day", int(d/chartDay)
	}
	if n == 1 {
		return unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// ---- series ----

// chartSeries is one line of counts over the periods.
type chartSeries struct {
	Name   string
	Counts []int
	Total  int
	// Other > 0 makes this the sum of that many series left out.
	Other int
}

// crashSeries counts events per signature and period; events outside the
// periods are left out. The series are in signature order.
func crashSeries(evs []triage.CrashEvent, b chartBuckets) []chartSeries {
	by := map[string]*chartSeries{}
	for _, e := range evs {
		i := b.index(e.Time)
		if i < 0 {
			continue
		}
		s := by[e.Signature]
		if s == nil {
			s = &chartSeries{Name: e.Signature, Counts: make([]int, b.N)}
			by[e.Signature] = s
		}
		s.Counts[i]++
		s.Total++
	}
	out := make([]chartSeries, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		out = append(out, *by[k])
	}
	return out
}

// topSeries returns the n largest series by total (ties by name), and
// when there are more, one more summing the rest.
func topSeries(all []chartSeries, n int) []chartSeries {
	sorted := slices.Clone(all)
	slices.SortStableFunc(sorted, func(a, b chartSeries) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Name, b.Name))
	})
	if len(sorted) <= n {
		return sorted
	}
	rest := sorted[n:]
	other := chartSeries{Other: len(rest)}
	for _, s := range rest {
		if other.Counts == nil {
			other.Counts = make([]int, len(s.Counts))
		}
		for i, c := range s.Counts {
			other.Counts[i] += c
		}
		other.Total += s.Total
	}
	return append(sorted[:n:n], other)
}

// stateCounts returns the cases in each state at the end of each period,
// counting back from the counts now through the changes (oldest first):
// a period's count leaves out every change at or after its end. Only
// changes no older than the first period's end matter. A count that the
// data would make negative is 0.
func stateCounts(now map[string]int, changes []signoff.StateChange, b chartBuckets) map[string][]int {
	cur := maps.Clone(now)
	if cur == nil {
		cur = map[string]int{}
	}
	out := map[string][]int{}
	j := len(changes) - 1
	for i := b.N - 1; i >= 0; i-- {
		end := b.end(i)
		for ; j >= 0 && !changes[j].Time.Before(end); j-- {
			c := changes[j]
			cur[c.To]--
			if c.From != "" {
				cur[c.From]++
			}
		}
		for st, n := range cur {
			if out[st] == nil {
				out[st] = make([]int, b.N)
			}
			out[st][i] = max(n, 0)
		}
	}
	return out
}

// stateSeries turns counts per state into series in the order given
// (states it does not name follow by name), leaving out states with no
// case in any period.
func stateSeries(counts map[string][]int, order []string) []chartSeries {
	rank := func(st string) int {
		if i := slices.Index(order, st); i >= 0 {
			return i
		}
		return len(order)
	}
	var out []chartSeries
	for _, st := range slices.Sorted(maps.Keys(counts)) {
		s := chartSeries{Name: st, Counts: counts[st]}
		for _, c := range s.Counts {
			s.Total += c
		}
		if s.Total > 0 {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b chartSeries) int { return cmp.Compare(rank(a.Name), rank(b.Name)) })
	return out
}

// seriesInOrder puts series in the order of ref by name, a sum of others last.
func seriesInOrder(ss, ref []chartSeries) []chartSeries {
	pos := map[string]int{}
	for i, s := range ref {
		pos[s.Name] = i
	}
	out := slices.Clone(ss)
	slices.SortStableFunc(out, func(a, b chartSeries) int {
		pa, pb := pos[a.Name], pos[b.Name]
		if a.Other > 0 {
			pa = len(ref)
		}
		if b.Other > 0 {
			pb = len(ref)
		}
		return cmp.Compare(pa, pb)
	})
	return out
}

// ---- geometry ----

// niceMax is the top of a y-axis for values up to v: the least of 2, 4,
// 6, 8 and 10 × 10^k not below v, so that its half is whole too.
func niceMax(v int) int {
	for p := 1; p <= math.MaxInt/100; p *= 10 {
		for _, m := range []int{2, 4, 6, 8, 10} {
			if m*p >= v {
				return m * p
			}
		}
	}
	return v
}

// round2 keeps two decimals: enough for a viewBox, short in the page.
func chartRound(x float64) float64 { return math.Round(x*100) / 100 }

// barRects draws counts as bars over n equal slots of a chartW × height
// box, scaled so that top reaches the top, each 80% of its slot. A bar
// of a count above zero is at least minH high. Zero counts draw nothing.
func barRects(counts []int, top int, height, minH float64, title func(i, n int) string) []chartRect {
	var out []chartRect
	if len(counts) == 0 || top <= 0 {
		return out
	}
	slot := chartW / float64(len(counts))
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		h := min(max(float64(n)/float64(top)*height, minH), height)
		out = append(out, chartRect{X: chartRound(slot*float64(i) + slot*0.1), Y: chartRound(height - h), W: chartRound(slot * 0.8), H: chartRound(h), Title: title(i, n)})
	}
	return out
}

// stackRects stacks the series' counts per slot, the first at the
// bottom, scaled so that top reaches the top of a chartW × height box;
// each bar is 90% of its slot.
func stackRects(ss []chartSeries, classes []string, top int, height float64, title func(s chartSeries, i, n int) string) []stackRect {
	var out []stackRect
	if len(ss) == 0 || top <= 0 {
		return out
	}
	slots := len(ss[0].Counts)
	slot := chartW / float64(slots)
	for i := range slots {
		base := 0
		for k, s := range ss {
			n := s.Counts[i]
			if n <= 0 {
				continue
			}
			y0 := height - float64(base)/float64(top)*height
			y1 := height - float64(base+n)/float64(top)*height
			base += n
			out = append(out, stackRect{Class: classes[k], chartRect: chartRect{X: chartRound(slot*float64(i) + slot*0.05), Y: chartRound(y1),
				W: chartRound(slot * 0.9), H: chartRound(y0 - y1), Title: title(s, i, n)}})
		}
	}
	return out
}

// stackTop is the largest stack: the sum of the series per slot.
func stackTop(ss []chartSeries) int {
	top := 0
	if len(ss) == 0 {
		return 0
	}
	for i := range ss[0].Counts {
		sum := 0
		for _, s := range ss {
			sum += s.Counts[i]
		}
		top = max(top, sum)
	}
	return top
}

// seriesClasses names each series' CSS class: series-0, series-1, … in
// order, series-other for a sum of others.
func seriesClasses(ss []chartSeries) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "series-" + strconv.Itoa(i)
		if s.Other > 0 {
			out[i] = "series-other"
		}
	}
	return out
}

func chartPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ---- the charts ----

// crashChart charts a project's crash log over the window the page
// claims: the last days up to now, its x axis from now-days to now and
// only the events inside plotted. A project with no crash event in that
// window is charted over the days up to its newest event instead, and
// says so (Newest): no chart claims a window it does not show.
func crashChart(idx int, project string, evs []triage.CrashEvent, days int, now time.Time) crashChartView {
	v := crashChartView{ID: "crash-" + strconv.Itoa(idx), Project: project, Days: days}
	if len(evs) == 0 {
		return v
	}
	span := time.Duration(days) * chartDay
	to := now.UTC()
	from := to.Add(-span)
	inside := func(t time.Time) bool { return !t.Before(from) && !t.After(to) }
	if !slices.ContainsFunc(evs, func(e triage.CrashEvent) bool { return inside(e.Time) }) {
		newest := evs[0].Time
		for _, e := range evs {
			if e.Time.After(newest) {
				newest = e.Time
			}
		}
		to, v.Newest = newest.UTC(), true
		from = to.Add(-span)
	}
	shown := make([]triage.CrashEvent, 0, len(evs))
	for _, e := range evs {
		switch {
		case e.Time.Before(from):
			v.Older++
		case e.Time.After(to):
			v.Newer++
		default:
			shown = append(shown, e)
		}
	}
	b := pickBuckets(from, to, chartMaxBuckets)
	all := crashSeries(shown, b)
	for _, s := range all {
		v.Events += s.Total
	}
	v.Signatures = len(all)
	v.From, v.To = from.Format("2006-01-02 15:04"), to.Format("2006-01-02 15:04")
	top := topSeries(all, chartTopSignatures)
	classes := seriesClasses(top)
	peak := 0
	for _, s := range top {
		peak = max(peak, slices.Max(s.Counts))
	}
	yTop := niceMax(peak)
	labels := b.labels()
	v.Step = stepWords(b.Step)
	v.Axis = axisView{YTop: strconv.Itoa(yTop), YMid: strconv.Itoa(yTop / 2), XFrom: v.From, XTo: v.To}
	v.Table = chartTable{ID: v.ID + "-table", Caption: fmt.Sprintf("Crash events of %s per %s, by signature", project, v.Step), Period: chartPeriodHeading(b)}
	for k, s := range top {
		name := s.Name
		if s.Other > 0 {
			name = "Other signatures (" + strconv.Itoa(s.Other) + ")"
		}
		v.Panels = append(v.Panels, panelView{Label: name, Class: classes[k], Total: s.Total, Peak: slices.Max(s.Counts),
			Summary: fmt.Sprintf("Crash events of %s per %s from %s to %s: %s in all, at most %d per %s", name, v.Step, v.From, v.To,
				chartPlural(s.Total, "event", "events"), slices.Max(s.Counts), v.Step),
			Bars: barRects(s.Counts, yTop, chartPanelH, 1, func(i, n int) string {
				return fmt.Sprintf("%s, %s: %s", name, labels[i], chartPlural(n, "event", "events"))
			})})
		v.Table.Cols = append(v.Table.Cols, name)
	}
	for i := range b.N {
		row := chartTableRow{Label: labels[i]}
		for _, s := range top {
			row.Cells = append(row.Cells, s.Counts[i])
			row.Total += s.Counts[i]
		}
		v.Table.Rows = append(v.Table.Rows, row)
	}
	return v
}

// stateChart charts the workspace's cases by state from hist.Since to
// now, stacked, in the order of states; past chartTopStates states the
// smallest are stacked as one. The table lists every state.
func stateChart(hist signoff.CaseStates, now time.Time, states []string) stateChartView {
	var v stateChartView
	for _, n := range hist.Now {
		v.Cases += n
	}
	if v.Cases == 0 && len(hist.Changes) == 0 {
		v.Empty = true
		return v
	}
	since := hist.Since
	if !since.Before(now) {
		since = now
	}
	b := pickBuckets(since, now, chartMaxBuckets)
	all := stateSeries(stateCounts(hist.Now, hist.Changes, b), states)
	top := seriesInOrder(topSeries(all, chartTopStates), all)
	classes := seriesClasses(top)
	yTop := niceMax(stackTop(top))
	labels := b.labels()
	v.Step, v.From, v.To, v.Truncated = stepWords(b.Step), when(since), when(now), hist.Truncated
	// The x axis is labelled with the window's own ends, to the minute.
	v.Axis = axisView{YTop: strconv.Itoa(yTop), YMid: strconv.Itoa(yTop / 2), XFrom: since.UTC().Format("2006-01-02 15:04"), XTo: "now"}
	names := make([]string, len(top))
	for k, s := range top {
		names[k] = s.Name
		if s.Other > 0 {
			names[k] = "other states (" + strconv.Itoa(s.Other) + ")"
		}
		v.Legend = append(v.Legend, legendItem{Label: names[k], Class: classes[k], Now: s.Counts[b.N-1]})
	}
	v.Rects = stackRects(top, classes, yTop, chartH, func(s chartSeries, i, n int) string {
		name := s.Name
		if s.Other > 0 {
			name = "other states"
		}
		return fmt.Sprintf("%s, end of %s: %s", name, labels[i], chartPlural(n, "case", "cases"))
	})
	v.Table = chartTable{ID: "state-table", Caption: "Cases in each state at the end of each " + v.Step, Period: chartPeriodHeading(b)}
	for _, s := range all {
		v.Table.Cols = append(v.Table.Cols, s.Name)
	}
	for i := range b.N {
		row := chartTableRow{Label: labels[i]}
		for _, s := range all {
			row.Cells = append(row.Cells, s.Counts[i])
			row.Total += s.Counts[i]
		}
		v.Table.Rows = append(v.Table.Rows, row)
	}
	return v
}

// chartPeriodHeading heads a table's period column.
func chartPeriodHeading(b chartBuckets) string {
	switch b.Step {
	case time.Hour:
		return "Hour (UTC)"
	case chartDay:
		return "Day (UTC)"
	case 7 * chartDay:
		return "Week from (UTC)"
	}
	return "Period from (UTC)"
}
