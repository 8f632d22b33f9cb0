// Package metrics is a small Prometheus registry: counters and histograms
// with fixed label names, and gauges and counters whose values are read at
// scrape time from callbacks. WriteText writes the text exposition format
// (version 0.0.4), sorted, so the same state always gives the same output.
//
// It is pure: nothing here reads the clock for its own sake, touches a file
// or opens a socket; the only output is the io.Writer a scrape is written to.
// Every type is safe for concurrent use.
//
// Label values are the caller's to bound: a route label is a route pattern,
// never a raw path (paths carry tracking secrets). As a safety net each
// metric keeps at most MaxSeries label sets; beyond that further label sets
// are counted under one series whose every label value is "other".
package metrics

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxSeries is the most label sets one metric keeps before it folds new
// ones into the "other" series.
const MaxSeries = 1000

// Other is the label value of everything that is unknown or over the limit.
const Other = "other"

// DefaultBuckets are request-latency buckets from 5 ms to 10 s, in seconds.
var DefaultBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

type kind string

const (
	kindCounter   kind = "counter"
	kindGauge     kind = "gauge"
	kindHistogram kind = "histogram"
)

// metric is one registered family.
type metric interface {
	describe() *desc
	// collect returns the family's series, or an error when a callback
	// failed (the family is then left out of that scrape).
	collect(ctx context.Context) ([]series, error)
}

// desc is what every family has.
type desc struct {
	name, help string
	kind       kind
	labels     []string
}

func (d *desc) describe() *desc { return d }

// series is one label set's lines, ready to print.
type series struct {
	values []string // label values, in the family's label order
	// value for counters and gauges.
	value float64
	// hist for histograms.
	hist *histSnapshot
}

type histSnapshot struct {
	bounds []float64
	counts []uint64 // cumulative, one per bound, then +Inf
	sum    float64
}

// Registry holds metric families by name.
type Registry struct {
	mu      sync.Mutex
	metrics map[string]metric
	errs    *Counter
	report  func(metric string, err error)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{metrics: map[string]metric{}}
}

var (
	nameRE  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

func newDesc(name, help string, k kind, labels []string) desc {
	if !nameRE.MatchString(name) {
		panic(fmt.Sprintf("metrics: invalid metric name %q", name))
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if !labelRE.MatchString(l) || strings.HasPrefix(l, "__") || seen[l] || (k == kindHistogram && l == "le") {
			panic(fmt.Sprintf("metrics: %s: invalid or repeated label name %q", name, l))
		}
		seen[l] = true
	}
	return desc{name: name, help: help, kind: k, labels: slices.Clone(labels)}
}

// register adds m, or returns the family already registered under its name
// when it is the same kind with the same labels (so a handler built twice
// over one registry shares its counters). Any other clash is a programming
// error and panics.
func (r *Registry) register(m metric, reuse bool) metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := m.describe()
	if old, ok := r.metrics[d.name]; ok {
		od := old.describe()
		if reuse && od.kind == d.kind && slices.Equal(od.labels, d.labels) {
			if _, same := old.(interface{ funcMetric() }); !same {
				return old
			}
		}
		panic(fmt.Sprintf("metrics: %s registered twice", d.name))
	}
	r.metrics[d.name] = m
	return m
}

// CountScrapeErrors makes a failed callback count in a counter called name
// with one label, "metric" (the failed family's name), and reports each
// failure to report when it is not nil.
func (r *Registry) CountScrapeErrors(name, help string, report func(metric string, err error)) {
	c := r.Counter(name, help, "metric")
	r.mu.Lock()
	r.errs, r.report = c, report
	r.mu.Unlock()
}

// check panics unless there is one value per label name. (Values that
// are not UTF-8 are made so when written.)
func (d *desc) check(values []string) {
	if len(values) != len(d.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", d.name, len(d.labels), len(values)))
	}
}

func key(values []string) string { return strings.Join(values, "\xff") }

func otherValues(n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = Other
	}
	return v
}

// Counter is a monotonically increasing count per label set.
type Counter struct {
	desc
	mu     sync.RWMutex
	series map[string]*counterSeries
}

type counterSeries struct {
	values []string
	bits   atomic.Uint64 // a float64
}

// Counter registers (or returns the already registered) counter name with
// the given label names.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{desc: newDesc(name, help, kindCounter, labels), series: map[string]*counterSeries{}}
	return r.register(c, true).(*Counter)
}

// Inc adds one to the series of the label values.
func (c *Counter) Inc(values ...string) { c.Add(1, values...) }

// Add adds v (which must not be negative) to the series of the label
// values.
func (c *Counter) Add(v float64, values ...string) {
	if v < 0 || math.IsNaN(v) {
		panic(fmt.Sprintf("metrics: %s: a counter cannot add %v", c.name, v))
	}
	c.check(values)
	s := c.get(values)
	for {
		old := s.bits.Load()
		if s.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Value returns the count of the label values (0 for a series never
// counted).
func (c *Counter) Value(values ...string) float64 {
	c.check(values)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if s, ok := c.series[key(values)]; ok {
		return math.Float64frombits(s.bits.Load())
	}
	return 0
}

func (c *Counter) get(values []string) *counterSeries {
	return seriesFor(&c.mu, c.series, values, func(v []string) *counterSeries { return &counterSeries{values: v} })
}

func (c *Counter) collect(context.Context) ([]series, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]series, 0, len(c.series))
	for _, s := range c.series {
		out = append(out, series{values: s.values, value: math.Float64frombits(s.bits.Load())})
	}
	return out, nil
}

// Histogram counts observations into cumulative buckets per label set.
type Histogram struct {
	desc
	bounds []float64
	mu     sync.RWMutex
	series map[string]*histSeries
}

type histSeries struct {
	values []string
	mu     sync.Mutex
	counts []uint64 // per bucket (not cumulative), the last for +Inf
	sum    float64
}

// Histogram registers (or returns the already registered) histogram name
// with the given upper bounds (nil: DefaultBuckets) and label names.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *Histogram {
	if buckets == nil {
		buckets = DefaultBuckets
	}
	b := slices.Clone(buckets)
	b = slices.DeleteFunc(b, func(f float64) bool { return math.IsInf(f, +1) })
	if len(b) == 0 || !slices.IsSorted(b) || slices.ContainsFunc(b, math.IsNaN) || len(slices.Compact(slices.Clone(b))) != len(b) {
		panic(fmt.Sprintf("metrics: %s: buckets must be increasing", name))
	}
	h := &Histogram{desc: newDesc(name, help, kindHistogram, labels), bounds: b, series: map[string]*histSeries{}}
	got := r.register(h, true).(*Histogram)
	if !slices.Equal(got.bounds, b) {
		panic(fmt.Sprintf("metrics: %s registered twice with different buckets", name))
	}
	return got
}

// Observe records v in the series of the label values.
func (h *Histogram) Observe(v float64, values ...string) {
	h.check(values)
	s := h.get(values)
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound >= v: le is inclusive
	s.mu.Lock()
	s.counts[i]++
	s.sum += v
	s.mu.Unlock()
}

// ObserveDuration records d in seconds.
func (h *Histogram) ObserveDuration(d time.Duration, values ...string) {
	h.Observe(d.Seconds(), values...)
}

func (h *Histogram) get(values []string) *histSeries {
	return seriesFor(&h.mu, h.series, values, func(v []string) *histSeries {
		return &histSeries{values: v, counts: make([]uint64, len(h.bounds)+1)}
	})
}

// seriesFor returns the series of values in m (guarded by mu), made with
// mk (given its own copy of the values) on first use. Past MaxSeries
// label sets, new ones share the "other" series.
func seriesFor[T any](mu *sync.RWMutex, m map[string]*T, values []string, mk func(values []string) *T) *T {
	k := key(values)
	mu.RLock()
	s, ok := m[k]
	mu.RUnlock()
	if ok {
		return s
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := m[k]; ok {
		return s
	}
	if len(m) >= MaxSeries {
		values = otherValues(len(values))
		k = key(values)
		if s, ok := m[k]; ok {
			return s
		}
	}
	s = mk(slices.Clone(values))
	m[k] = s
	return s
}

func (h *Histogram) collect(context.Context) ([]series, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make([]series, 0, len(h.series))
	for _, s := range h.series {
		snap := &histSnapshot{bounds: h.bounds, counts: make([]uint64, len(s.counts))}
		s.mu.Lock()
		var cum uint64
		for i, n := range s.counts {
			cum += n
			snap.counts[i] = cum
		}
		snap.sum = s.sum
		s.mu.Unlock()
		out = append(out, series{values: s.values, hist: snap})
	}
	return out, nil
}

// Sample is one value a callback reports, with its label values in the
// family's label order.
type Sample struct {
	Labels []string
	Value  float64
}

// Func reads a family's samples at scrape time. ctx carries the scrape's
// deadline.
type Func func(ctx context.Context) ([]Sample, error)

type funcMetric struct {
	desc
	fn Func
}

func (*funcMetric) funcMetric() {}

func (f *funcMetric) collect(ctx context.Context) ([]series, error) {
	samples, err := f.fn(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]series, 0, len(samples))
	seen := map[string]bool{}
	for _, s := range samples {
		if len(s.Labels) != len(f.labels) {
			return nil, fmt.Errorf("a sample has %d label values, want %d", len(s.Labels), len(f.labels))
		}
		if k := key(s.Labels); seen[k] {
			return nil, fmt.Errorf("two samples with labels %q", s.Labels)
		} else {
			seen[k] = true
		}
		out = append(out, series{values: s.Labels, value: s.Value})
	}
	return out, nil
}

// GaugeFunc registers a gauge whose samples fn reads at every scrape. A
// failing fn leaves the family out of that scrape and counts in the scrape
// error counter (CountScrapeErrors); the rest of the scrape goes on.
func (r *Registry) GaugeFunc(name, help string, labels []string, fn Func) {
	r.register(&funcMetric{desc: newDesc(name, help, kindGauge, labels), fn: fn}, false)
}

// CounterFunc is GaugeFunc for a value that only grows, such as a count
// kept elsewhere (a database table).
func (r *Registry) CounterFunc(name, help string, labels []string, fn Func) {
	r.register(&funcMetric{desc: newDesc(name, help, kindCounter, labels), fn: fn}, false)
}

// Value is the one sample of an unlabelled family.
func Value(v float64) []Sample { return []Sample{{Value: v}} }

// processStart is when this package was initialized: near enough to the
// process's start for a "when did it restart" graph.
var processStart = time.Now()

// RegisterProcess adds the standard process_start_time_seconds and
// go_goroutines gauges.
func (r *Registry) RegisterProcess() {
	start := float64(processStart.UnixNano()) / 1e9
	r.GaugeFunc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", nil,
		func(context.Context) ([]Sample, error) { return Value(start), nil })
	r.GaugeFunc("go_goroutines", "Number of goroutines that currently exist.", nil,
		func(context.Context) ([]Sample, error) { return Value(float64(runtime.NumGoroutine())), nil })
}
