package metrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func text(t *testing.T, r *Registry) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMetricsText pins the exact exposition of each kind of family.
func TestMetricsText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(r *Registry)
		want  string
	}{
		{"empty registry", func(*Registry) {}, ""},
		{"unlabelled counter", func(r *Registry) {
			r.Counter("a_total", "Things.").Add(2.5)
		}, "# HELP a_total Things.\n# TYPE a_total counter\na_total 2.5\n"},
		{"registered, never counted", func(r *Registry) {
			r.Counter("a_total", "Things.", "kind")
		}, "# HELP a_total Things.\n# TYPE a_total counter\n"},
		{"series sorted by label values", func(r *Registry) {
			c := r.Counter("req_total", "Requests.", "route", "status")
			c.Inc("b", "200")
			c.Inc("a", "500")
			c.Inc("a", "200")
			c.Inc("a", "200")
		}, "# HELP req_total Requests.\n# TYPE req_total counter\n" +
			"req_total{route=\"a\",status=\"200\"} 2\nreq_total{route=\"a\",status=\"500\"} 1\nreq_total{route=\"b\",status=\"200\"} 1\n"},
		{"label values and help escaped", func(r *Registry) {
			r.Counter("esc_total", "Back\\slash and\nnewline.", "v").Inc("a\\b\"c\nd")
		}, "# HELP esc_total Back\\\\slash and\\nnewline.\n# TYPE esc_total counter\nesc_total{v=\"a\\\\b\\\"c\\nd\"} 1\n"},
		{"invalid UTF-8 made valid", func(r *Registry) {
			r.Counter("u_total", "U.", "v").Inc("a\xffb")
		}, "# HELP u_total U.\n# TYPE u_total counter\nu_total{v=\"a\uFFFDb\"} 1\n"},
		{"families sorted by name", func(r *Registry) {
			r.Counter("b_total", "B.").Inc()
			r.GaugeFunc("a", "A.", nil, func(context.Context) ([]Sample, error) { return Value(-1), nil })
		}, "# HELP a A.\n# TYPE a gauge\na -1\n# HELP b_total B.\n# TYPE b_total counter\nb_total 1\n"},
		{"gauge func with labels", func(r *Registry) {
			r.GaugeFunc("jobs", "Jobs.", []string{"queue", "state"}, func(context.Context) ([]Sample, error) {
				return []Sample{{Labels: []string{"notify", "available"}, Value: 3}, {Labels: []string{"default", "running"}, Value: 1}}, nil
			})
		}, "# HELP jobs Jobs.\n# TYPE jobs gauge\njobs{queue=\"default\",state=\"running\"} 1\njobs{queue=\"notify\",state=\"available\"} 3\n"},
		{"counter func", func(r *Registry) {
			r.CounterFunc("refusals_total", "Refusals.", nil, func(context.Context) ([]Sample, error) { return Value(7), nil })
		}, "# HELP refusals_total Refusals.\n# TYPE refusals_total counter\nrefusals_total 7\n"},
		{"special floats", func(r *Registry) {
			r.GaugeFunc("g", "G.", []string{"k"}, func(context.Context) ([]Sample, error) {
				return []Sample{{Labels: []string{"inf"}, Value: math.Inf(1)}, {Labels: []string{"nan"}, Value: math.NaN()}, {Labels: []string{"big"}, Value: 1e21}}, nil
			})
		}, "# HELP g G.\n# TYPE g gauge\ng{k=\"big\"} 1e+21\ng{k=\"inf\"} +Inf\ng{k=\"nan\"} NaN\n"},
		{"histogram cumulative with +Inf, sum and count", func(r *Registry) {
			h := r.Histogram("d_seconds", "Durations.", []float64{0.1, 1}, "route")
			h.Observe(0.05, "x")
			h.Observe(0.1, "x") // le is inclusive
			h.Observe(0.5, "x")
			h.Observe(3, "x")
		}, "# HELP d_seconds Durations.\n# TYPE d_seconds histogram\n" +
			"d_seconds_bucket{route=\"x\",le=\"0.1\"} 2\nd_seconds_bucket{route=\"x\",le=\"1\"} 3\nd_seconds_bucket{route=\"x\",le=\"+Inf\"} 4\n" +
			"d_seconds_sum{route=\"x\"} 3.65\nd_seconds_count{route=\"x\"} 4\n"},
		{"unlabelled histogram", func(r *Registry) {
			r.Histogram("h", "H.", []float64{1}).ObserveDuration(1500 * time.Millisecond)
		}, "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\nh_sum 1.5\nh_count 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			c.setup(r)
			got := text(t, r)
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			parseExposition(t, got)
		})
	}
}

// TestMetricsRegistration: registering the same counter twice shares it;
// any clash panics.
func TestMetricsRegistration(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	a := r.Counter("x_total", "X.", "k")
	if b := r.Counter("x_total", "X.", "k"); a != b {
		t.Error("the same counter registered twice is not shared")
	}
	h := r.Histogram("h_seconds", "H.", nil, "route")
	if h2 := r.Histogram("h_seconds", "H.", nil, "route"); h != h2 {
		t.Error("the same histogram registered twice is not shared")
	}
	r.GaugeFunc("g", "G.", nil, func(context.Context) ([]Sample, error) { return nil, nil })
	for name, fn := range map[string]func(){
		"other labels":      func() { r.Counter("x_total", "X.", "j") },
		"other kind":        func() { r.Histogram("x_total", "X.", nil, "k") },
		"other buckets":     func() { r.Histogram("h_seconds", "H.", []float64{1, 2}, "route") },
		"func twice":        func() { r.GaugeFunc("g", "G.", nil, nil) },
		"counter over func": func() { r.Counter("g", "G.") },
		"bad name":          func() { r.Counter("1x", "X.") },
		"bad label":         func() { r.Counter("y_total", "Y.", "a-b") },
		"reserved label":    func() { r.Counter("y_total", "Y.", "__x") },
		"repeated label":    func() { r.Counter("y_total", "Y.", "a", "a") },
		"le on histogram":   func() { r.Histogram("z", "Z.", nil, "le") },
		"unsorted buckets":  func() { r.Histogram("z", "Z.", []float64{2, 1}) },
		"wrong label count": func() { a.Inc() },
		"negative add":      func() { a.Add(-1, "v") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}

// TestMetricsScrapeErrors: a failing, panicking or slow callback is left
// out, counted and reported; everything else is still written.
func TestMetricsScrapeErrors(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	var mu sync.Mutex
	reported := map[string]error{}
	r.CountScrapeErrors("scrape_errors_total", "Failed callbacks.", func(m string, err error) {
		mu.Lock()
		reported[m] = err
		mu.Unlock()
	})
	r.GaugeFunc("a_fails", "A.", nil, func(context.Context) ([]Sample, error) { return nil, errors.New("db down") })
	r.GaugeFunc("b_panics", "B.", nil, func(context.Context) ([]Sample, error) { panic("boom") })
	r.GaugeFunc("c_slow", "C.", nil, func(ctx context.Context) ([]Sample, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r.GaugeFunc("d_bad_labels", "D.", []string{"k"}, func(context.Context) ([]Sample, error) { return Value(1), nil })
	r.GaugeFunc("e_dup", "E.", []string{"k"}, func(context.Context) ([]Sample, error) {
		return []Sample{{Labels: []string{"x"}}, {Labels: []string{"x"}}}, nil
	})
	r.GaugeFunc("f_ok", "F.", nil, func(context.Context) ([]Sample, error) { return Value(1), nil })
	r.Counter("g_total", "G.").Inc()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var b strings.Builder
	if err := r.WriteTextContext(ctx, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	fams := parseExposition(t, out)
	for _, m := range []string{"a_fails", "b_panics", "c_slow", "d_bad_labels", "e_dup"} {
		if _, ok := fams[m]; ok {
			t.Errorf("%s written despite failing", m)
		}
		if got := fams["scrape_errors_total"].value(`metric="` + m + `"`); got != 1 {
			t.Errorf("scrape errors of %s = %v, want 1\n%s", m, got, out)
		}
		if reported[m] == nil {
			t.Errorf("%s not reported", m)
		}
	}
	if fams["f_ok"].value("") != 1 || fams["g_total"].value("") != 1 {
		t.Errorf("the working families are missing:\n%s", out)
	}
	if !errors.Is(reported["c_slow"], context.DeadlineExceeded) || !strings.Contains(reported["b_panics"].Error(), "boom") {
		t.Errorf("reported %v", reported)
	}
}

// TestMetricsSeriesLimit folds label sets beyond MaxSeries into "other".
func TestMetricsSeriesLimit(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "a", "b")
	h := r.Histogram("h", "H.", []float64{1}, "a")
	for i := range MaxSeries + 10 {
		c.Inc(strconv.Itoa(i), "x")
		h.Observe(0.5, strconv.Itoa(i))
	}
	fams := parseExposition(t, text(t, r))
	if n := len(fams["c_total"].samples); n != MaxSeries+1 {
		t.Errorf("counter series = %d, want %d", n, MaxSeries+1)
	}
	if got := c.Value(Other, Other); got != 10 {
		t.Errorf("other series = %v, want 10", got)
	}
	if got := fams["h"].value(`a="other",le="+Inf"`); got != 10 {
		t.Errorf("histogram other series = %v, want 10", got)
	}
}

// TestMetricsConcurrent counts from many goroutines while scraping; run
// under -race.
func TestMetricsConcurrent(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "route")
	h := r.Histogram("h_seconds", "H.", nil, "route")
	r.RegisterProcess()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				route := fmt.Sprintf("r%d", (w+i)%3)
				c.Inc(route)
				h.Observe(float64(i%20)/1000, route)
			}
		})
	}
	stop := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for {
			select {
			case <-stop:
				return
			default:
				var b strings.Builder
				_ = r.WriteText(&b)
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-scraped
	fams := parseExposition(t, text(t, r))
	var total, count float64
	for _, route := range []string{"r0", "r1", "r2"} {
		total += fams["c_total"].value(`route="` + route + `"`)
		count += fams["h_seconds"].value(`route="` + route + `",le="+Inf"`)
	}
	if total != workers*each || count != workers*each {
		t.Errorf("counted %v and observed %v, want %d", total, count, workers*each)
	}
	if fams["go_goroutines"].value("") < 1 || fams["process_start_time_seconds"].value("") < 1e9 {
		t.Errorf("process gauges: %+v %+v", fams["go_goroutines"], fams["process_start_time_seconds"])
	}
}

// TestMetricsHandler serves the text format with its media type, and
// bounds the callbacks by the timeout.
func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	r.CountScrapeErrors("errs_total", "E.", nil)
	r.GaugeFunc("slow", "S.", nil, func(ctx context.Context) ([]Sample, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r.Counter("ok_total", "OK.").Inc()
	rec := httptest.NewRecorder()
	start := time.Now()
	r.Handler(20*time.Millisecond).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if time.Since(start) > 5*time.Second {
		t.Error("the timeout did not bound the scrape")
	}
	if rec.Code != 200 || rec.Header().Get("Content-Type") != ContentType {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	fams := parseExposition(t, rec.Body.String())
	if fams["ok_total"].value("") != 1 || fams["errs_total"].value(`metric="slow"`) != 1 {
		t.Errorf("body:\n%s", rec.Body.String())
	}
}

// family is what parseExposition read of one family.
type family struct {
	kind    string
	help    string
	samples map[string]float64 // "name{labels}" with the family name stripped for plain samples
}

// value returns the sample with exactly these labels (as written, without
// braces); for a histogram, labels including le name a bucket.
func (f family) value(labels string) float64 {
	if f.samples == nil {
		return math.NaN()
	}
	if v, ok := f.samples["{"+labels+"}"]; ok {
		return v
	}
	if v, ok := f.samples["_bucket{"+labels+"}"]; ok {
		return v
	}
	return math.NaN()
}

// parseExposition reads the text format back line by line and checks it as
// a strict scraper would: HELP then TYPE once per family, before its
// samples; families in name order; sample names of the family; label names
// valid and escapes well formed; values parse; histogram buckets
// cumulative, ending at +Inf equal to _count.
func parseExposition(t *testing.T, text string) map[string]family {
	t.Helper()
	fams := map[string]family{}
	var cur string
	var order []string
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("line %d: "+format+"\n%s", append([]any{line}, append(args, text)...)...)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		t.Fatalf("the exposition does not end with a line feed")
	}
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# HELP "):
			name, help, _ := strings.Cut(strings.TrimPrefix(l, "# HELP "), " ")
			if _, seen := fams[name]; seen {
				fail("second HELP for %s", name)
			}
			if !nameRE.MatchString(name) {
				fail("bad name %q", name)
			}
			if len(order) > 0 && order[len(order)-1] >= name {
				fail("family %s out of order", name)
			}
			fams[name] = family{help: help, samples: map[string]float64{}}
			order = append(order, name)
			cur = name
		case strings.HasPrefix(l, "# TYPE "):
			name, kind, _ := strings.Cut(strings.TrimPrefix(l, "# TYPE "), " ")
			f, ok := fams[name]
			if !ok || name != cur || f.kind != "" {
				fail("TYPE for %s out of place", name)
			}
			if kind != "counter" && kind != "gauge" && kind != "histogram" {
				fail("type %q", kind)
			}
			f.kind = kind
			fams[name] = f
		case strings.HasPrefix(l, "#") || l == "":
			fail("unexpected line %q", l)
		default:
			f := fams[cur]
			if f.kind == "" {
				fail("sample before TYPE")
			}
			name, labels, value := splitSample(t, l, line)
			suffix, ok := strings.CutPrefix(name, cur)
			valid := suffix == "" && f.kind != "histogram" ||
				f.kind == "histogram" && (suffix == "_bucket" || suffix == "_sum" || suffix == "_count")
			if !ok || !valid {
				fail("sample %s in family %s", name, cur)
			}
			if f.kind == "counter" && value < 0 {
				fail("negative counter")
			}
			k := suffix + "{" + labels + "}"
			if suffix == "" && labels == "" {
				k = "{}"
			}
			if _, dup := f.samples[k]; dup {
				fail("duplicate sample %s", k)
			}
			f.samples[k] = value
		}
	}
	// Histograms: cumulative buckets, +Inf equal to _count.
	for name, f := range fams {
		if f.kind != "histogram" {
			continue
		}
		for k, count := range f.samples {
			base, ok := strings.CutPrefix(k, "_count")
			if !ok {
				continue
			}
			inner := strings.TrimSuffix(strings.TrimPrefix(base, "{"), "}")
			sep := ""
			if inner != "" {
				sep = ","
			}
			inf, ok := f.samples["_bucket{"+inner+sep+`le="+Inf"}`]
			if !ok || inf != count {
				t.Fatalf("%s%s: +Inf bucket %v, count %v", name, base, inf, count)
			}
			if _, ok := f.samples["_sum"+base]; !ok {
				t.Fatalf("%s%s: no _sum", name, base)
			}
			prev := -1.0
			prevLE := math.Inf(-1)
			for _, l := range strings.Split(text, "\n") {
				if !strings.HasPrefix(l, name+"_bucket{"+inner+sep+"le=") {
					continue
				}
				_, labels, v := splitSample(t, l, 0)
				le := labels[strings.LastIndex(labels, `le="`)+4 : len(labels)-1]
				bound, err := strconv.ParseFloat(le, 64)
				if err != nil || bound <= prevLE || v < prev {
					t.Fatalf("%s: bucket le=%s value %v after le=%v value %v", name, le, v, prevLE, prev)
				}
				prev, prevLE = v, bound
			}
			if !math.IsInf(prevLE, 1) {
				t.Fatalf("%s%s: buckets do not end at +Inf", name, base)
			}
		}
	}
	return fams
}

// splitSample parses `name{l="v",...} value`, checking label names and
// escapes, and returns the labels as written.
func splitSample(t *testing.T, l string, line int) (name, labels string, value float64) {
	t.Helper()
	i := strings.IndexAny(l, "{ ")
	if i < 0 {
		t.Fatalf("line %d: no value: %q", line, l)
	}
	name = l[:i]
	if !nameRE.MatchString(name) {
		t.Fatalf("line %d: bad sample name %q", line, name)
	}
	rest := l[i:]
	if rest[0] == '{' {
		j := 1
		for {
			eq := strings.IndexByte(rest[j:], '=')
			if eq < 0 || !labelRE.MatchString(rest[j:j+eq]) || rest[j+eq+1] != '"' {
				t.Fatalf("line %d: bad label at %q", line, rest[j:])
			}
			j += eq + 2
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' {
					j++
					if j >= len(rest) || !strings.ContainsRune(`\"n`, rune(rest[j])) {
						t.Fatalf("line %d: bad escape", line)
					}
				}
				if rest[j] == '\n' {
					t.Fatalf("line %d: raw line feed in a label", line)
				}
			}
			if j >= len(rest) {
				t.Fatalf("line %d: unterminated label value", line)
			}
			j++
			if rest[j] == '}' {
				break
			}
			if rest[j] != ',' {
				t.Fatalf("line %d: expected , or } at %q", line, rest[j:])
			}
			j++
		}
		labels = rest[1:j]
		rest = rest[j+1:]
	}
	v, ok := strings.CutPrefix(rest, " ")
	if !ok {
		t.Fatalf("line %d: no space before the value", line)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("line %d: value %q: %v", line, v, err)
	}
	return name, labels, f
}
