package web

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/triage"
)

func chartTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestChartPickBuckets(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		from, to string
		max      int
		start    string
		step     time.Duration
		n        int
	}{
		{"one instant", "2026-09-01T10:20:00Z", "2026-09-01T10:20:00Z", 60, "2026-09-01T10:00:00Z", time.Hour, 1},
		{"ten hours", "2026-09-01T10:20:00Z", "2026-09-01T20:05:00Z", 60, "2026-09-01T10:00:00Z", time.Hour, 11},
		{"an end on a boundary is in the next period", "2026-09-01T10:00:00Z", "2026-09-01T12:00:00Z", 60, "2026-09-01T10:00:00Z", time.Hour, 3},
		{"three days in 2-hour periods", "2026-09-01T10:20:00Z", "2026-09-04T10:00:00Z", 60, "2026-09-01T10:00:00Z", 2 * time.Hour, 37},
		{"thirty days in days", "2026-09-01T10:20:00Z", "2026-10-01T09:00:00Z", 60, "2026-09-01T00:00:00Z", chartDay, 31},
		{"a year in weeks from a Monday", "2025-09-03T12:00:00Z", "2026-09-03T12:00:00Z", 60, "2025-09-01T00:00:00Z", 7 * chartDay, 53},
		{"reversed", "2026-09-01T20:05:00Z", "2026-09-01T10:20:00Z", 60, "2026-09-01T10:00:00Z", time.Hour, 11},
		{"a bound of 5", "2026-09-01T00:00:00Z", "2026-09-01T23:00:00Z", 5, "2026-09-01T00:00:00Z", 6 * time.Hour, 4},
		{"no bound is one period", "2026-09-01T00:00:00Z", "2026-09-01T00:30:00Z", 0, "2026-09-01T00:00:00Z", time.Hour, 1},
		{"other zones are UTC", "2026-09-01T01:30:00+02:00", "2026-09-01T03:30:00+02:00", 60, "2026-08-31T23:00:00Z", time.Hour, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := pickBuckets(chartTime(tt.from), chartTime(tt.to), tt.max)
			if !b.Start.Equal(chartTime(tt.start)) || b.Step != tt.step || b.N != tt.n {
				t.Fatalf("pickBuckets = %s + %d × %s, want %s + %d × %s", b.Start, b.N, b.Step, tt.start, tt.n, tt.step)
			}
			if b.Start.Location() != time.UTC {
				t.Fatalf("start in %s", b.Start.Location())
			}
			for _, at := range []string{tt.from, tt.to} {
				if i := b.index(chartTime(at)); i < 0 {
					t.Errorf("%s is in no period", at)
				}
			}
		})
	}
	// The longest spans still fit.
	b := pickBuckets(chartTime("2000-01-01T00:00:00Z"), chartTime("2026-01-01T00:00:00Z"), 60)
	if b.N > 60 || b.index(chartTime("2026-01-01T00:00:00Z")) < 0 {
		t.Fatalf("26 years: %+v", b)
	}
}

func TestChartBucketIndexAndLabels(t *testing.T) {
	t.Parallel()
	b := chartBuckets{Start: chartTime("2026-09-01T00:00:00Z"), Step: 6 * time.Hour, N: 4}
	for _, tt := range []struct {
		at   string
		want int
	}{
		{"2026-08-31T23:59:59Z", -1},
		{"2026-09-01T00:00:00Z", 0},
		{"2026-09-01T05:59:59Z", 0},
		{"2026-09-01T06:00:00Z", 1},
		{"2026-09-01T23:59:59Z", 3},
		{"2026-09-02T00:00:00Z", -1},
	} {
		if got := b.index(chartTime(tt.at)); got != tt.want {
			t.Errorf("index(%s) = %d, want %d", tt.at, got, tt.want)
		}
	}
	if got := b.labels(); !slices.Equal(got, []string{"2026-09-01 00:00", "2026-09-01 06:00", "2026-09-01 12:00", "2026-09-01 18:00"}) {
		t.Errorf("labels %q", got)
	}
	if got := (chartBuckets{Start: chartTime("2026-09-01T00:00:00Z"), Step: chartDay, N: 2}).labels(); !slices.Equal(got, []string{"2026-09-01", "2026-09-02"}) {
		t.Errorf("day labels %q", got)
	}
}

func TestChartStepWords(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		time.Hour: "hour", 6 * time.Hour: "6 hours", chartDay: "day", 2 * chartDay: "2 days",
		7 * chartDay: "week", 14 * chartDay: "2 weeks", 30 * chartDay: "30 days", 365 * chartDay: "365 days",
	} {
		if got := stepWords(d); got != want {
			t.Errorf("stepWords(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestChartDays(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		q    string
		want int
		code string
	}{
		{"", 30, ""}, {"7", 7, ""}, {"365", 365, ""}, {"1000", 365, ""}, {"1", 1, ""},
		{"0", 0, signoff.EINVALID}, {"-3", 0, signoff.EINVALID}, {"x", 0, signoff.EINVALID}, {"7.5", 0, signoff.EINVALID},
	} {
		got, err := chartDays(tt.q)
		if got != tt.want || signoff.ErrorCode(err) != tt.code {
			t.Errorf("chartDays(%q) = %d, %v; want %d, %q", tt.q, got, err, tt.want, tt.code)
		}
	}
}

func TestChartCrashSeries(t *testing.T) {
	t.Parallel()
	b := chartBuckets{Start: chartTime("2026-09-01T00:00:00Z"), Step: chartDay, N: 3}
	evs := []triage.CrashEvent{
		{Time: chartTime("2026-09-01T01:00:00Z"), Signature: "B"},
		{Time: chartTime("2026-09-01T02:00:00Z"), Signature: "A"},
		{Time: chartTime("2026-09-03T23:00:00Z"), Signature: "A"},
		{Time: chartTime("2026-09-03T23:30:00Z"), Signature: "A"},
		{Time: chartTime("2026-08-31T23:00:00Z"), Signature: "C"}, // before the periods
		{Time: chartTime("2026-09-04T00:00:00Z"), Signature: "A"}, // after them
	}
	got := crashSeries(evs, b)
	want := []chartSeries{{Name: "A", Counts: []int{1, 0, 2}, Total: 3}, {Name: "B", Counts: []int{1, 0, 0}, Total: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("crashSeries = %v, want %v", got, want)
	}
	if got := crashSeries(nil, b); len(got) != 0 {
		t.Fatalf("no events: %v", got)
	}
}

func TestChartTopSeries(t *testing.T) {
	t.Parallel()
	s := func(name string, counts ...int) chartSeries {
		out := chartSeries{Name: name, Counts: counts}
		for _, c := range counts {
			out.Total += c
		}
		return out
	}
	all := []chartSeries{s("a", 1, 0), s("b", 5, 1), s("c", 0, 6), s("d", 2, 0), s("e", 0, 1)}
	for _, tt := range []struct {
		n    int
		want []chartSeries
	}{
		// Ties go by name: b and c have 6 each.
		{5, []chartSeries{s("b", 5, 1), s("c", 0, 6), s("d", 2, 0), s("a", 1, 0), s("e", 0, 1)}},
		{9, []chartSeries{s("b", 5, 1), s("c", 0, 6), s("d", 2, 0), s("a", 1, 0), s("e", 0, 1)}},
		{2, []chartSeries{s("b", 5, 1), s("c", 0, 6), {Counts: []int{3, 1}, Total: 4, Other: 3}}},
		{0, []chartSeries{{Counts: []int{8, 8}, Total: 16, Other: 5}}},
	} {
		if got := topSeries(all, tt.n); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("topSeries(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if all[0].Name != "a" {
		t.Fatal("topSeries reordered its argument")
	}
	if got := seriesInOrder(topSeries(all, 2), all); fmt.Sprint(got) != fmt.Sprint([]chartSeries{s("b", 5, 1), s("c", 0, 6), {Counts: []int{3, 1}, Total: 4, Other: 3}}) {
		t.Errorf("seriesInOrder %v", got)
	}
	if got := seriesInOrder([]chartSeries{s("c"), {Other: 2}, s("a")}, all); fmt.Sprint(got) != fmt.Sprint([]chartSeries{s("a"), s("c"), {Other: 2}}) {
		t.Errorf("seriesInOrder %v", got)
	}
}

func TestChartStateCounts(t *testing.T) {
	t.Parallel()
	b := chartBuckets{Start: chartTime("2026-09-01T00:00:00Z"), Step: chartDay, N: 3}
	ch := func(at, from, to string) sqlstore.StateChange {
		return sqlstore.StateChange{Time: chartTime(at), From: from, To: to}
	}
	for _, tt := range []struct {
		name    string
		now     map[string]int
		changes []sqlstore.StateChange
		want    map[string][]int
	}{
		{"nothing", nil, nil, map[string][]int{}},
		{"no changes: the same counts throughout", map[string]int{"received": 2, "closed": 1}, nil,
			map[string][]int{"received": {2, 2, 2}, "closed": {1, 1, 1}}},
		{"created, then moved on", map[string]int{"received": 2, "triaging": 1, "closed": 3}, []sqlstore.StateChange{
			ch("2026-09-01T10:00:00Z", "", "received"),
			ch("2026-09-02T00:00:00Z", "", "received"), // at the end of day 1: counts from day 2
			ch("2026-09-02T12:00:00Z", "received", "triaging"),
			ch("2026-09-03T08:00:00Z", "", "received"),
		}, map[string][]int{"received": {1, 1, 2}, "triaging": {0, 1, 1}, "closed": {3, 3, 3}}},
		{"a state left entirely", map[string]int{"closed": 1}, []sqlstore.StateChange{
			ch("2026-09-02T01:00:00Z", "verified", "closed"),
		}, map[string][]int{"closed": {0, 1, 1}, "verified": {1, 0, 0}}},
		{"changes after the periods are undone for all", map[string]int{"closed": 1}, []sqlstore.StateChange{
			ch("2026-09-05T00:00:00Z", "received", "closed"),
		}, map[string][]int{"closed": {0, 0, 0}, "received": {1, 1, 1}}},
		{"inconsistent data never goes below zero", map[string]int{}, []sqlstore.StateChange{
			ch("2026-09-03T01:00:00Z", "", "received"),
		}, map[string][]int{"received": {0, 0, 0}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := stateCounts(tt.now, tt.changes, b)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("stateCounts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChartStateSeries(t *testing.T) {
	t.Parallel()
	got := stateSeries(map[string][]int{"closed": {1, 2}, "zeta": {1, 0}, "alpha": {0, 1}, "received": {3, 1}, "gone": {0, 0}},
		[]string{"received", "triaging", "closed"})
	want := []chartSeries{{Name: "received", Counts: []int{3, 1}, Total: 4}, {Name: "closed", Counts: []int{1, 2}, Total: 3},
		{Name: "alpha", Counts: []int{0, 1}, Total: 1}, {Name: "zeta", Counts: []int{1, 0}, Total: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stateSeries = %v, want %v", got, want)
	}
}

func TestChartNiceMax(t *testing.T) {
	t.Parallel()
	for v, want := range map[int]int{0: 2, 1: 2, 2: 2, 3: 4, 5: 6, 9: 10, 10: 10, 11: 20, 21: 40, 61: 80, 99: 100, 101: 200, 4001: 6000} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%d) = %d, want %d", v, got, want)
		}
		if got := niceMax(v); got%2 != 0 || got < v {
			t.Errorf("niceMax(%d) = %d: odd or too small", v, got)
		}
	}
}

func TestChartBarRects(t *testing.T) {
	t.Parallel()
	title := func(i, n int) string { return strconv.Itoa(i) + ":" + strconv.Itoa(n) }
	for _, tt := range []struct {
		name   string
		counts []int
		top    int
		minH   float64
		want   []chartRect
	}{
		{"empty", nil, 10, 0, nil},
		{"zero top draws nothing", []int{1}, 0, 0, nil},
		{"four slots", []int{10, 0, 5, 1}, 10, 0, []chartRect{
			{X: 15, Y: 0, W: 120, H: 40, Title: "0:10"},
			{X: 315, Y: 20, W: 120, H: 20, Title: "2:5"},
			{X: 465, Y: 36, W: 120, H: 4, Title: "3:1"},
		}},
		{"a small count is still seen", []int{1000, 1}, 1000, 1, []chartRect{
			{X: 30, Y: 0, W: 240, H: 40, Title: "0:1000"},
			{X: 330, Y: 39, W: 240, H: 1, Title: "1:1"},
		}},
		{"never above the top", []int{30}, 10, 0, []chartRect{{X: 60, Y: 0, W: 480, H: 40, Title: "0:30"}}},
		{"thirds are rounded", []int{1, 1, 1}, 3, 0, []chartRect{
			{X: 20, Y: 26.67, W: 160, H: 13.33, Title: "0:1"},
			{X: 220, Y: 26.67, W: 160, H: 13.33, Title: "1:1"},
			{X: 420, Y: 26.67, W: 160, H: 13.33, Title: "2:1"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := barRects(tt.counts, tt.top, chartPanelH, tt.minH, title)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("barRects = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChartStackRects(t *testing.T) {
	t.Parallel()
	ss := []chartSeries{{Name: "a", Counts: []int{1, 0}}, {Name: "b", Counts: []int{1, 2}}, {Other: 2, Counts: []int{2, 0}}}
	if got := stackTop(ss); got != 4 {
		t.Fatalf("stackTop = %d", got)
	}
	classes := seriesClasses(ss)
	if !slices.Equal(classes, []string{"series-0", "series-1", "series-other"}) {
		t.Fatalf("classes %q", classes)
	}
	got := stackRects(ss, classes, 4, 200, func(s chartSeries, i, n int) string { return s.Name + strconv.Itoa(i) + ":" + strconv.Itoa(n) })
	r := func(class string, x, y, w, h float64, title string) stackRect {
		return stackRect{Class: class, chartRect: chartRect{X: x, Y: y, W: w, H: h, Title: title}}
	}
	want := []stackRect{
		r("series-0", 15, 150, 270, 50, "a0:1"),
		r("series-1", 15, 100, 270, 50, "b0:1"),
		r("series-other", 15, 0, 270, 100, "0:2"),
		r("series-1", 315, 100, 270, 100, "b1:2"),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stackRects =\n%v, want\n%v", got, want)
	}
	if got := stackRects(nil, nil, 4, 200, nil); len(got) != 0 || stackTop(nil) != 0 {
		t.Fatal("no series draws nothing")
	}
}

func TestChartCrashChart(t *testing.T) {
	t.Parallel()
	var evs []triage.CrashEvent
	add := func(at, sig string, n int) {
		for range n {
			evs = append(evs, triage.CrashEvent{Time: chartTime(at), Signature: sig})
		}
	}
	for i := range 10 {
		add("2026-09-0"+strconv.Itoa(i%5+1)+"T12:00:00Z", "sig-"+strconv.Itoa(i), 10-i)
	}
	add("2026-07-01T00:00:00Z", "old", 2)
	// Long after the data: the page asks for the last 30 days, which hold
	// none of it, so the chart shows the 30 days up to the newest event and
	// says so; its axis spans exactly those days.
	v := crashChart(3, "game", evs, 30, chartTime("2026-12-07T09:30:00Z"))
	if v.ID != "crash-3" || v.Project != "game" || v.Events != 55 || v.Signatures != 10 || v.Older != 2 || v.Newer != 0 || !v.Newest || v.Days != 30 {
		t.Fatalf("crash chart %+v", v)
	}
	if v.Step != "day" || v.From != "2026-08-06 12:00" || v.To != "2026-09-05 12:00" || v.Axis.XFrom != v.From || v.Axis.XTo != v.To {
		t.Fatalf("periods: %s from %s to %s, axis %+v", v.Step, v.From, v.To, v.Axis)
	}
	if len(v.Panels) != chartTopSignatures+1 {
		t.Fatalf("%d panels", len(v.Panels))
	}
	if p := v.Panels[0]; p.Label != "sig-0" || p.Class != "series-0" || p.Total != 10 || p.Peak != 10 || len(p.Bars) != 1 {
		t.Fatalf("first panel %+v", p)
	}
	if p := v.Panels[chartTopSignatures]; p.Label != "Other signatures (2)" || p.Class != "series-other" || p.Total != 3 {
		t.Fatalf("other panel %+v", p)
	}
	if v.Axis.YTop != "10" || v.Axis.YMid != "5" {
		t.Fatalf("axis %+v", v.Axis)
	}
	total := 0
	for _, row := range v.Table.Rows {
		total += row.Total
	}
	if total != 55 || len(v.Table.Rows) != 31 || len(v.Table.Cols) != 9 || v.Table.ID != "crash-3-table" ||
		v.Table.Rows[0].Label != "2026-08-06" || v.Table.Rows[30].Label != "2026-09-05" {
		t.Fatalf("table: %d rows (%s…), %d columns, total %d", len(v.Table.Rows), v.Table.Rows[0].Label, len(v.Table.Cols), total)
	}

	// In the middle of the data: the last 7 days up to now are charted,
	// from now-7d to now; the days before and an event dated after now
	// (a skewed clock) are counted but not plotted.
	during := append(slices.Clone(evs), triage.CrashEvent{Time: chartTime("2026-09-11T00:00:00Z"), Signature: "future"})
	v = crashChart(0, "game", during, 7, chartTime("2026-09-10T12:00:00Z"))
	if v.Newest || v.Events != 27 || v.Signatures != 6 || v.Older != 30 || v.Newer != 1 {
		t.Fatalf("the last 7 days: %+v", v)
	}
	if v.From != "2026-09-03 12:00" || v.To != "2026-09-10 12:00" || v.Axis.XFrom != v.From || v.Axis.XTo != v.To || v.Step != "3 hours" {
		t.Fatalf("the last 7 days: %s from %s to %s, axis %+v", v.Step, v.From, v.To, v.Axis)
	}
	total = 0
	for _, row := range v.Table.Rows {
		total += row.Total
	}
	if n := len(v.Table.Rows); total != 27 || n != 57 || v.Table.Rows[0].Label != "2026-09-03 12:00" || v.Table.Rows[n-1].Label != "2026-09-10 12:00" {
		t.Fatalf("the last 7 days' table: %d rows from %s, total %d", n, v.Table.Rows[0].Label, total)
	}
	for _, p := range v.Panels {
		if p.Label == "sig-0" || p.Label == "future" || p.Label == "old" {
			t.Errorf("%s is outside the window but has a panel", p.Label)
		}
	}
	if empty := crashChart(0, "quiet", nil, 30, chartTime("2026-09-10T12:00:00Z")); empty.Events != 0 || empty.Panels != nil {
		t.Fatalf("no events: %+v", empty)
	}
}

func TestChartStateChart(t *testing.T) {
	t.Parallel()
	now := chartTime("2026-09-10T12:00:00Z")
	if v := stateChart(sqlstore.CaseStates{Now: map[string]int{}}, now, caseStates()); !v.Empty {
		t.Fatalf("no cases: %+v", v)
	}
	hist := sqlstore.CaseStates{
		Now:   map[string]int{"triaging": 1, "received": 1},
		Since: chartTime("2026-08-10T12:00:00Z"),
		Changes: []sqlstore.StateChange{
			{Time: chartTime("2026-09-08T09:00:00Z"), To: "received"},
			{Time: chartTime("2026-09-09T09:00:00Z"), From: "received", To: "triaging"},
		},
		Truncated: true,
	}
	v := stateChart(hist, now, caseStates())
	if v.Empty || v.Cases != 2 || !v.Truncated || v.Step != "day" || v.From != "2026-08-10 12:00:00 UTC" {
		t.Fatalf("state chart %+v", v)
	}
	// Workflow order: received before triaging.
	if fmt.Sprint(v.Legend) != fmt.Sprint([]legendItem{{"received", "series-0", 1}, {"triaging", "series-1", 1}}) {
		t.Fatalf("legend %v", v.Legend)
	}
	var rows []string
	for _, r := range v.Table.Rows {
		rows = append(rows, fmt.Sprint(r.Label, r.Cells, r.Total))
	}
	if len(rows) != 32 || rows[0] != "2026-08-10[1 0] 1" {
		t.Fatalf("table rows %q", rows)
	}
	if want := []string{"2026-09-07[1 0] 1", "2026-09-08[2 0] 2", "2026-09-09[1 1] 2", "2026-09-10[1 1] 2"}; !slices.Equal(rows[28:], want) {
		t.Fatalf("table rows %q, want %q", rows[28:], want)
	}
	// 29 days of one case received, then 1, 2 and 2 rectangles.
	if v.Axis.XFrom != "2026-08-10 12:00" || v.Axis.XTo != "now" {
		t.Fatalf("the x axis is labelled %s to %s, not the window's ends", v.Axis.XFrom, v.Axis.XTo)
	}
	if len(v.Rects) != 34 || v.Axis.YTop != "2" {
		t.Fatalf("%d rects, top %s", len(v.Rects), v.Axis.YTop)
	}
	// More states than the chart draws apart: the smallest are stacked
	// as one, the table keeps each.
	many := sqlstore.CaseStates{Now: map[string]int{}, Since: now.Add(-time.Hour)}
	states := caseStates()
	for i, st := range states[:chartTopStates+3] {
		many.Now[st] = i + 1
	}
	v = stateChart(many, now, states)
	if len(v.Legend) != chartTopStates+1 || v.Legend[chartTopStates].Label != "other states (3)" || v.Legend[chartTopStates].Now != 6 {
		t.Fatalf("legend %v", v.Legend)
	}
	if len(v.Table.Cols) != chartTopStates+3 {
		t.Fatalf("table columns %q", v.Table.Cols)
	}
}

// ---- the page ----

// chartSite is a store with a workspace, its people's tokens and the web
// UI over it.
type chartSite struct {
	st     *sqlstore.DB
	clock  *chartClock
	owner  signoff.Actor
	tokens map[signoff.Role]string
	srv    *httptest.Server
}

type chartClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *chartClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *chartClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newChartSite(t *testing.T) *chartSite {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two days ago at noon: tests move on from there, never back (the
	// ledger's times never run backwards).
	clock := &chartClock{t: time.Now().UTC().Truncate(24 * time.Hour).Add(12*time.Hour - 48*time.Hour)}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "charts.db"), sqlstore.Options{Signer: key, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	_, owner, err := st.CreateWorkspace(ctx, "Acme", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	site := &chartSite{st: st, clock: clock, owner: owner, tokens: map[signoff.Role]string{}}
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer, signoff.RoleReporter} {
		a := owner
		if role != signoff.RoleOwner {
			if a, err = st.CreateActor(ctx, owner, string(role)+"-one", role); err != nil {
				t.Fatal(err)
			}
		}
		if _, site.tokens[role], err = st.CreateToken(ctx, owner, a.ID, "test", nil); err != nil {
			t.Fatal(err)
		}
	}
	site.srv = httptest.NewServer(New(Options{Store: st, Now: clock.Now, LoginPerIP: Limit{Rate: 1000, Burst: 1000}}))
	t.Cleanup(site.srv.Close)
	return site
}

// chartBrowser is one browser: a cookie jar, no automatic redirects.
type chartBrowser struct {
	t    *testing.T
	site *chartSite
	c    *http.Client
}

func (s *chartSite) browser(t *testing.T) *chartBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &chartBrowser{t: t, site: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *chartBrowser) do(method, path string, form url.Values) (int, http.Header, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.site.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.site.srv.URL)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return res.StatusCode, res.Header, string(body)
}

var chartCSRFRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn posts role's token to the sign-in form and returns the status.
func (b *chartBrowser) signIn(role signoff.Role) int {
	b.t.Helper()
	_, _, page := b.do("GET", "/login", nil)
	m := chartCSRFRE.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no csrf field on the sign-in page: %s", page)
	}
	status, _, _ := b.do("POST", "/login", url.Values{"csrf": {m[1]}, "token": {b.site.tokens[role]}})
	return status
}

// chartElement returns the element with id in body, up to the first end
// tag of its name.
func chartElement(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<")
	name := body[start+1:]
	name = name[:strings.IndexAny(name, " >")]
	end := strings.Index(body[i:], "</"+name+">")
	if end < 0 {
		return body[start:]
	}
	return body[start : i+end+len(name)+3]
}

var (
	chartHeadRE = regexp.MustCompile(`<th scope="col">([^<]*)</th>`)
	chartRowRE  = regexp.MustCompile(`<tr><th scope="row">([^<]*)</th>(.*?)</tr>`)
	chartCellRE = regexp.MustCompile(`<td class="num">(\d+)</td>`)
)

// chartNumbers reads a chart's table: its column headings (HTML as
// served) and each row's label and numbers.
func chartNumbers(table string) (cols []string, rows map[string][]int, order []string) {
	for _, m := range chartHeadRE.FindAllStringSubmatch(table, -1) {
		cols = append(cols, m[1])
	}
	rows = map[string][]int{}
	for _, m := range chartRowRE.FindAllStringSubmatch(table, -1) {
		var cells []int
		for _, c := range chartCellRE.FindAllStringSubmatch(m[2], -1) {
			n, _ := strconv.Atoi(c[1])
			cells = append(cells, n)
		}
		rows[m[1]], order = cells, append(order, m[1])
	}
	return cols, rows, order
}

// columnSums adds up each column of a table's rows.
func columnSums(rows map[string][]int) []int {
	var out []int
	for _, cells := range rows {
		for i, n := range cells {
			for len(out) <= i {
				out = append(out, 0)
			}
			out[i] += n
		}
	}
	return out
}

// TestChartsPage: the crash chart of each project and the cases by state,
// as SVG and as tables with the same numbers; signatures are escaped; an
// empty project says so; only people who signed in see the page.
func TestChartsPage(t *testing.T) {
	t.Parallel()
	site := newChartSite(t)
	ctx := context.Background()
	owner := site.owner
	game, err := site.st.CreateProject(ctx, owner, signoff.ProjectInput{Name: "game"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := site.st.CreateProject(ctx, owner, signoff.ProjectInput{Name: "quiet"}); err != nil {
		t.Fatal(err)
	}
	evil := `<script>x</script>`
	var evs []triage.CrashEvent
	for _, e := range []struct {
		at, sig string
		n       int
	}{
		{"2026-09-01T10:00:00Z", "NullPointer:Cart", 2},
		{"2026-09-04T08:00:00Z", "NullPointer:Cart", 1},
		{"2026-09-04T08:30:00Z", evil, 1},
		{"2026-09-05T20:00:00Z", "NullPointer:Cart", 3},
		{"2026-09-05T20:00:00Z", evil, 1},
		{"2026-09-05T21:00:00Z", "OOM:LevelLoader", 1},
		{"2026-07-01T00:00:00Z", "NullPointer:Cart", 1}, // 66 days before the newest
	} {
		for range e.n {
			evs = append(evs, triage.CrashEvent{Time: chartTime(e.at), Signature: e.sig, AppVersion: "2.4.0"})
		}
	}
	if err := site.st.AddCrashes(ctx, owner, game.ID, evs); err != nil {
		t.Fatal(err)
	}
	// Three bugs two days ago; one moved on to triage yesterday.
	var cases []signoff.Case
	for _, title := range []string{"coupon applied twice", "negative total", "checkout hangs"} {
		c, err := site.st.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: game.ID, Kind: signoff.KindBug, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	site.clock.Advance(24 * time.Hour)
	if _, _, err := site.st.TransitionCase(ctx, owner, cases[0].ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	site.clock.Advance(24 * time.Hour)
	now := site.clock.Now()
	day := func(back int) string { return now.Add(-time.Duration(back) * 24 * time.Hour).Format("2006-01-02") }
	recent, err := site.st.CreateProject(ctx, owner, signoff.ProjectInput{Name: "recent"})
	if err != nil {
		t.Fatal(err)
	}
	var fresh []triage.CrashEvent
	for _, back := range []time.Duration{24 * time.Hour, 24 * time.Hour, 40 * 24 * time.Hour} {
		fresh = append(fresh, triage.CrashEvent{Time: now.Add(-back), Signature: "Timeout:Checkout", AppVersion: "2.4.0"})
	}
	if err := site.st.AddCrashes(ctx, owner, recent.ID, fresh); err != nil {
		t.Fatal(err)
	}

	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer} {
		b := site.browser(t)
		if st := b.signIn(role); st != http.StatusSeeOther {
			t.Fatalf("%s signs in: %d", role, st)
		}
		status, header, body := b.do("GET", "/charts", nil)
		if status != http.StatusOK {
			t.Fatalf("%s: charts %d %s", role, status, body)
		}
		if csp := header.Get("Content-Security-Policy"); csp != ContentSecurityPolicy {
			t.Errorf("CSP %q", csp)
		}
		if strings.Contains(body, evil) || strings.Contains(body, "<script") || strings.Contains(body, " style=") || strings.Contains(body, "<style") {
			t.Fatalf("%s: unescaped or inline script or style in %s", role, body)
		}

		// Cases by state: three received two days ago, then one in triage.
		svg := chartElement(body, "state-svg")
		if !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "<title>Cases by state") || !strings.Contains(svg, `viewBox="0 0 600 200"`) {
			t.Fatalf("state chart %s", svg)
		}
		for _, want := range []string{`class="series-0"`, `class="series-1"`, "<title>received, end of " + day(0) + ": 2 cases</title>",
			"<title>triaging, end of " + day(0) + ": 1 case</title>", "<title>received, end of " + day(2) + ": 3 cases</title>"} {
			if !strings.Contains(svg, want) {
				t.Errorf("state chart lacks %s: %s", want, svg)
			}
		}
		if legend := chartElement(body, "state-legend"); !strings.Contains(legend, `<span class="state">received</span> <span class="muted">2 now</span>`) ||
			!strings.Contains(legend, `<span class="state">triaging</span> <span class="muted">1 now</span>`) {
			t.Errorf("legend %s", legend)
		}
		cols, rows, order := chartNumbers(chartElement(body, "state-table"))
		if !slices.Equal(cols, []string{"Day (UTC)", "received", "triaging", "Total"}) || len(order) != 31 {
			t.Fatalf("state table columns %q, %d rows", cols, len(order))
		}
		for back, want := range map[int][]int{0: {2, 1, 3}, 1: {2, 1, 3}, 2: {3, 0, 3}, 3: {0, 0, 0}, 30: {0, 0, 0}} {
			if got := rows[day(back)]; !slices.Equal(got, want) {
				t.Errorf("state table %s: %v, want %v", day(back), got, want)
			}
		}
		if strings.Contains(body, `id="state-truncated"`) || strings.Contains(body, `id="no-cases"`) {
			t.Error("the state chart says it is cut or empty")
		}

		// Crashes of the game: per signature, most events first. None is
		// of the last 30 days, so the chart shows the 30 days up to the
		// newest event, and says so.
		summary := chartElement(body, "crash-0-summary")
		if !strings.Contains(summary, "9 crash events in 3 signatures, per day, from 2026-08-06 21:00 to 2026-09-05 21:00.") ||
			!strings.Contains(summary, "1 older event is not shown") || strings.Contains(summary, "the last 30 days") {
			t.Errorf("crash summary %s", summary)
		}
		if newest := chartElement(body, "crash-0-newest"); !strings.Contains(newest, "No crash events in the last 30 days. Shown instead: the crash events of 2026-08-06 21:00 to 2026-09-05 21:00, the newest data") {
			t.Errorf("the game's chart does not say it shows older data: %q", newest)
		}
		if !strings.Contains(chartElement(body, "chart-days"), "Showing the last 30 days, up to "+now.Format("2006-01-02 15:04")) {
			t.Errorf("page range: %s", chartElement(body, "chart-days"))
		}
		// A project with crashes of the last days: charted from 30 days
		// ago to now, the crash of 40 days ago left out.
		recent := chartElement(body, "crash-2-summary")
		if !strings.Contains(recent, "2 crash events in 1 signature, per day, from "+now.Add(-30*24*time.Hour).Format("2006-01-02 15:04")+" to "+now.Format("2006-01-02 15:04")+" (the last 30 days).") ||
			!strings.Contains(recent, "1 older event is not shown") || strings.Contains(body, `id="crash-2-newest"`) {
			t.Errorf("recent crashes: %s", recent)
		}
		if _, rows, order := chartNumbers(chartElement(body, "crash-2-table")); len(order) != 31 || !slices.Equal(rows[day(1)], []int{2, 2}) || order[0] != day(30) || order[30] != day(0) {
			t.Errorf("recent crashes' table: %v %v", order, rows)
		}
		cols, rows, _ = chartNumbers(chartElement(body, "crash-0-table"))
		if want := []string{"Day (UTC)", "NullPointer:Cart", "&lt;script&gt;x&lt;/script&gt;", "OOM:LevelLoader", "Total"}; !slices.Equal(cols, want) {
			t.Errorf("crash table columns %q, want %q", cols, want)
		}
		if got := columnSums(rows); !slices.Equal(got, []int{6, 2, 1, 9}) {
			t.Errorf("crash table sums %v", got)
		}
		if got := rows["2026-09-05"]; !slices.Equal(got, []int{3, 1, 1, 5}) {
			t.Errorf("crash table on 2026-09-05: %v", got)
		}
		for k, want := range []string{"NullPointer:Cart", "&lt;script&gt;x&lt;/script&gt;", "OOM:LevelLoader"} {
			svg := chartElement(body, "crash-0-svg-"+strconv.Itoa(k))
			if !strings.Contains(svg, `aria-label="Crash events of `+want+` per day from 2026-08-06 21:00 to 2026-09-05 21:00`) || !strings.Contains(svg, `<title>Crash events of `+want) ||
				!strings.Contains(svg, `<rect class="series-`+strconv.Itoa(k)+`"`) {
				t.Errorf("crash chart %d: %s", k, svg)
			}
		}
		if n := strings.Count(chartElement(body, "crash-0-svg-0"), "<rect "); n != 3 {
			t.Errorf("NullPointer:Cart has bars in %d periods, want 3", n)
		}
		if none := chartElement(body, "crash-1-none"); !strings.Contains(none, "No crash events yet.") {
			t.Errorf("the quiet project: %q", none)
		}
		if !strings.Contains(chartElement(body, "crash-1-h"), "quiet") {
			t.Error("the quiet project is not named")
		}
	}

	b := site.browser(t)
	b.signIn(signoff.RoleOwner)
	// A longer range takes in the old crash, in periods of 2 days.
	_, _, body := b.do("GET", "/charts?days=90", nil)
	if s := chartElement(body, "crash-0-summary"); !strings.Contains(s, "10 crash events in 3 signatures, per 2 days, from 2026-06-07 21:00 to 2026-09-05 21:00.") {
		t.Errorf("90 days: %s", s)
	}
	if !strings.Contains(body, `<a href="/charts?days=90" aria-current="page">90 days</a>`) {
		t.Error("the range links do not mark 90 days")
	}
	if _, _, body := b.do("GET", "/charts?days=5000", nil); !strings.Contains(chartElement(body, "chart-days"), "the last 365 days") {
		t.Errorf("days=5000: %s", chartElement(body, "chart-days"))
	}
	if status, _, _ := b.do("GET", "/charts?days=soon", nil); status != http.StatusUnprocessableEntity {
		t.Errorf("days=soon: %d", status)
	}

	// Nobody else: an anonymous visitor and a reporter go to sign in.
	for _, role := range []signoff.Role{"", signoff.RoleReporter} {
		b := site.browser(t)
		if role != "" {
			if st := b.signIn(role); st != http.StatusForbidden {
				t.Fatalf("a reporter signs in: %d", st)
			}
		}
		status, header, body := b.do("GET", "/charts", nil)
		if status != http.StatusSeeOther || !strings.HasPrefix(header.Get("Location"), "/login") || strings.Contains(body, "NullPointer") {
			t.Errorf("%q: charts %d %s", role, status, header.Get("Location"))
		}
	}
}

// TestChartsPageEmpty: a workspace with no cases and a project with no
// crashes says so instead of drawing empty boxes.
func TestChartsPageEmpty(t *testing.T) {
	t.Parallel()
	site := newChartSite(t)
	b := site.browser(t)
	b.signIn(signoff.RoleViewer)
	status, _, body := b.do("GET", "/charts", nil)
	if status != http.StatusOK || !strings.Contains(body, `<p id="no-cases">No cases yet.</p>`) ||
		!strings.Contains(body, `<p id="no-projects">No projects yet, so no crash events yet.</p>`) || strings.Contains(body, "<svg") {
		t.Fatalf("empty workspace: %d %s", status, body)
	}
	if _, err := site.st.CreateProject(context.Background(), site.owner, signoff.ProjectInput{Name: "new"}); err != nil {
		t.Fatal(err)
	}
	_, _, body = b.do("GET", "/charts", nil)
	if !strings.Contains(chartElement(body, "crash-0-none"), "No crash events yet.") || strings.Contains(body, "<svg") {
		t.Fatalf("a project without crashes: %s", body)
	}
}
