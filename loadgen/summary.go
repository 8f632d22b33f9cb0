package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Latency is a latency distribution's summary.
type Latency struct {
	Count                    uint64
	Min, Mean                time.Duration
	P50, P90, P99, P999, Max time.Duration
}

func latencyOf(h *Histogram) Latency {
	return Latency{Count: h.Count(), Min: h.Min(), Mean: h.Mean(),
		P50: h.Quantile(0.50), P90: h.Quantile(0.90), P99: h.Quantile(0.99), P999: h.Quantile(0.999), Max: h.Max()}
}

// Summary is what a run did.
type Summary struct {
	TargetRate  float64
	Duration    time.Duration
	MaxInFlight int

	Planned   int64 // requests the run was to schedule
	Scheduled int64 // instants that came (fewer than Planned if interrupted)
	Sent      int64 // scheduled and sent
	Dropped   int64 // scheduled while MaxInFlight were in flight: not sent
	Completed int64 // sent and answered with a status (any status)

	Counts     map[Class]int64  // every sent request by outcome
	FirstError map[Class]string // the first error message of each error class

	SentRate   float64       // sent per second over the sending window
	Throughput float64       // completed per second from start to the last answer
	Elapsed    time.Duration // from the first instant to the last answer

	// Latency is from each sent request's scheduled instant to its end,
	// errors included (a timeout counts as the time it took); LatencyOK
	// is the 2xx answers alone. Dropped requests have no latency: when
	// any were dropped, both are lower bounds.
	Latency, LatencyOK Latency

	BytesSent, BytesReceived int64
	// MaxScheduleLag is how late the client itself sent a request; large
	// values mean the load generator, not the server, was the bottleneck.
	MaxScheduleLag time.Duration
	Interrupted    bool
}

// Errors counts every sent request that did not get a 2xx answer.
func (s Summary) Errors() int64 {
	var n int64
	for k, v := range s.Counts {
		if k != Class2xx {
			n += v
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type latencyJSON struct {
	Count  uint64  `json:"count"`
	MinMS  float64 `json:"min_ms"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p99_9_ms"`
	MaxMS  float64 `json:"max_ms"`
}

func (l Latency) MarshalJSON() ([]byte, error) {
	return json.Marshal(latencyJSON{l.Count, ms(l.Min), ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)})
}

// MarshalJSON writes durations as seconds or milliseconds, named so.
func (s Summary) MarshalJSON() ([]byte, error) {
	counts := map[string]int64{}
	for _, c := range classes {
		counts[string(c)] = s.Counts[c]
	}
	firstErr := map[string]string{}
	for k, v := range s.FirstError {
		firstErr[string(k)] = v
	}
	return json.Marshal(struct {
		TargetRate       float64           `json:"target_rate"`
		DurationS        float64           `json:"duration_s"`
		MaxInFlight      int               `json:"max_in_flight"`
		Planned          int64             `json:"planned"`
		Scheduled        int64             `json:"scheduled"`
		Sent             int64             `json:"sent"`
		Dropped          int64             `json:"dropped_client_saturated"`
		Completed        int64             `json:"completed"`
		Errors           int64             `json:"errors"`
		Counts           map[string]int64  `json:"by_class"`
		FirstError       map[string]string `json:"first_error,omitempty"`
		SentRate         float64           `json:"sent_per_s"`
		Throughput       float64           `json:"completed_per_s"`
		ElapsedS         float64           `json:"elapsed_s"`
		Latency          Latency           `json:"latency"`
		LatencyOK        Latency           `json:"latency_2xx"`
		BytesSent        int64             `json:"bytes_sent"`
		BytesReceived    int64             `json:"bytes_received"`
		MaxScheduleLagMS float64           `json:"max_schedule_lag_ms"`
		Interrupted      bool              `json:"interrupted,omitempty"`
	}{s.TargetRate, s.Duration.Seconds(), s.MaxInFlight, s.Planned, s.Scheduled, s.Sent, s.Dropped, s.Completed, s.Errors(),
		counts, firstErr, s.SentRate, s.Throughput, s.Elapsed.Seconds(), s.Latency, s.LatencyOK,
		s.BytesSent, s.BytesReceived, ms(s.MaxScheduleLag), s.Interrupted})
}

// classes in the order they are printed.
var classes = []Class{Class2xx, Class3xx, Class4xx, Class429, Class5xx, ClassTimeout, ClassConn, ClassOther}

// WriteText prints s for people.
func (s Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "requests   planned %d  scheduled %d  sent %d  dropped (client saturated) %d  in-flight bound %d\n",
		s.Planned, s.Scheduled, s.Sent, s.Dropped, s.MaxInFlight)
	fmt.Fprintf(&b, "rate       target %.1f/s  sent %.1f/s  completed %.1f/s over %.2fs\n",
		s.TargetRate, s.SentRate, s.Throughput, s.Elapsed.Seconds())
	fmt.Fprintf(&b, "answers    completed %d:  2xx %d  3xx %d  4xx %d  429 %d  5xx %d\n",
		s.Completed, s.Counts[Class2xx], s.Counts[Class3xx], s.Counts[Class4xx], s.Counts[Class429], s.Counts[Class5xx])
	fmt.Fprintf(&b, "errors     %d not 2xx;  timeouts %d  connection %d  other %d\n",
		s.Errors(), s.Counts[ClassTimeout], s.Counts[ClassConn], s.Counts[ClassOther])
	for _, c := range classes {
		if m, ok := s.FirstError[c]; ok {
			fmt.Fprintf(&b, "           first %s error: %s\n", c, m)
		}
	}
	fmt.Fprintf(&b, "latency    from the scheduled instant; every sent request (n=%d): %s\n", s.Latency.Count, s.Latency)
	fmt.Fprintf(&b, "           2xx only (n=%d): %s\n", s.LatencyOK.Count, s.LatencyOK)
	if s.Dropped > 0 {
		b.WriteString("           (requests were dropped: these latencies are lower bounds)\n")
	}
	fmt.Fprintf(&b, "bytes      sent %d  received %d\n", s.BytesSent, s.BytesReceived)
	fmt.Fprintf(&b, "client     max schedule lag %s\n", fmtDur(s.MaxScheduleLag))
	if s.Interrupted {
		b.WriteString("interrupted: the run stopped before its end\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is p50 .. max on one line.
func (l Latency) String() string {
	if l.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", fmtDur(l.P50), fmtDur(l.P90), fmtDur(l.P99), fmtDur(l.P999), fmtDur(l.Max))
}

// fmtDur prints milliseconds with three significant-ish decimals.
func fmtDur(d time.Duration) string {
	m := ms(d)
	switch {
	case m >= 100:
		return fmt.Sprintf("%.0fms", m)
	case m >= 10:
		return fmt.Sprintf("%.1fms", m)
	}
	return fmt.Sprintf("%.2fms", m)
}
