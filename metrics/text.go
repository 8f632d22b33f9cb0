package metrics

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every family in the text exposition format, with no
// deadline for the callbacks.
func (r *Registry) WriteText(w io.Writer) error {
	return r.WriteTextContext(context.Background(), w)
}

// WriteTextContext writes every family in the text exposition format:
// families sorted by name, each with its HELP and TYPE lines, series sorted
// by label values; a histogram's buckets are cumulative and end with
// le="+Inf", then _sum and _count. Callbacks run first, with ctx; one that
// fails (or panics) leaves its family out and is counted and reported (see
// CountScrapeErrors), so the rest of the scrape still answers. The text is
// built in memory and written at once: the only error is w's.
func (r *Registry) WriteTextContext(ctx context.Context, w io.Writer) error {
	r.mu.Lock()
	ms := make([]metric, 0, len(r.metrics))
	for _, m := range r.metrics {
		ms = append(ms, m)
	}
	errs, report := r.errs, r.report
	r.mu.Unlock()
	slices.SortFunc(ms, func(a, b metric) int { return strings.Compare(a.describe().name, b.describe().name) })

	collected := make([][]series, len(ms))
	failed := make([]bool, len(ms))
	// Callbacks first, so that this scrape's failures are in this scrape's
	// error counter.
	for pass := range 2 {
		for i, m := range ms {
			_, isFunc := m.(*funcMetric)
			if isFunc != (pass == 0) {
				continue
			}
			s, err := safeCollect(ctx, m)
			if err != nil {
				failed[i] = true
				name := m.describe().name
				if errs != nil {
					errs.Inc(name)
				}
				if report != nil {
					report(name, err)
				}
				continue
			}
			collected[i] = s
		}
	}

	var b bytes.Buffer
	for i, m := range ms {
		if failed[i] {
			continue
		}
		writeFamily(&b, m.describe(), collected[i])
	}
	_, err := w.Write(b.Bytes())
	return err
}

func safeCollect(ctx context.Context, m metric) (s []series, err error) {
	defer func() {
		if v := recover(); v != nil {
			s, err = nil, fmt.Errorf("panic: %v", v)
		}
	}()
	return m.collect(ctx)
}

func writeFamily(b *bytes.Buffer, d *desc, ss []series) {
	slices.SortFunc(ss, func(x, y series) int { return slices.Compare(x.values, y.values) })
	fmt.Fprintf(b, "# HELP %s %s\n", d.name, escapeHelp(d.help))
	fmt.Fprintf(b, "# TYPE %s %s\n", d.name, d.kind)
	for _, s := range ss {
		if s.hist == nil {
			writeLine(b, d.name, d.labels, s.values, "", "", s.value)
			continue
		}
		h := s.hist
		for j, le := range h.bounds {
			writeLine(b, d.name+"_bucket", d.labels, s.values, "le", formatFloat(le), float64(h.counts[j]))
		}
		count := h.counts[len(h.counts)-1]
		writeLine(b, d.name+"_bucket", d.labels, s.values, "le", "+Inf", float64(count))
		writeLine(b, d.name+"_sum", d.labels, s.values, "", "", h.sum)
		writeLine(b, d.name+"_count", d.labels, s.values, "", "", float64(count))
	}
}

// writeLine writes one sample line; extra is one more label (le) when not
// empty.
func writeLine(b *bytes.Buffer, name string, labels, values []string, extra, extraValue string, v float64) {
	b.WriteString(name)
	if len(labels) > 0 || extra != "" {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l)
			b.WriteString(`="`)
			b.WriteString(EscapeLabelValue(values[i]))
			b.WriteByte('"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(extra)
			b.WriteString(`="`)
			b.WriteString(extraValue)
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

// EscapeLabelValue escapes a label value as the text format requires:
// backslash, double quote and line feed. Text that is not UTF-8 is made so.
func EscapeLabelValue(v string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(v, "\uFFFD"))
}

func escapeHelp(h string) string {
	return helpEscaper.Replace(strings.ToValidUTF8(h, "\uFFFD"))
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, +1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Handler serves a scrape. Callbacks get at most timeout (none when it is
// zero or less); a callback that runs out of time fails alone.
func (r *Registry) Handler(timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		var b bytes.Buffer
		_ = r.WriteTextContext(ctx, &b) // a bytes.Buffer does not fail
		h := w.Header()
		h.Set("Content-Type", ContentType)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(b.Bytes())
	})
}
