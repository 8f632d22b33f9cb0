// Package loadgen drives open-loop load at a fixed arrival rate and
// summarises what came back.
//
// Requests are scheduled at exact instants, start + i/rate, whatever the
// server does: a slow answer never delays the next request. Each request's
// latency is measured from its scheduled instant, not from when it was
// actually sent, so a stalled server (or a stalled client) shows up as
// latency instead of silently lowering the rate ("coordinated omission").
// In-flight requests are bounded: a request whose instant comes while the
// bound is reached is not sent and counts as dropped (client saturated), so
// it is visible in the summary rather than quietly delayed.
//
// The package does no I/O of its own: requests go through a Do function
// and time through a Clock, so pacing and statistics are testable with a
// fake clock. Guard refuses targets that are not loopback.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"syscall"
	"time"
)

// Limits on a run, so a typo cannot start an unbounded one.
const (
	MaxDuration    = time.Hour
	MaxRate        = 100_000
	MaxInFlightCap = 1024  // cap of the default in-flight bound
	MaxInFlightMax = 16384 // largest bound one may ask for
	DefaultTimeout = 10 * time.Second
)

// Result is what one request came back with.
type Result struct {
	Status        int   // HTTP status; 0 without a response
	BytesSent     int64 // request bytes written (body)
	BytesReceived int64 // response bytes read (body)
	Err           error // transport error, timeout, or a failed body read
}

// DoFunc performs request number seq (0, 1, ...). ctx carries the per-
// request timeout. It must be safe for concurrent use.
type DoFunc func(ctx context.Context, seq int64) Result

// Clock is the time source: the real one, or a fake in tests.
type Clock interface {
	Now() time.Time
	// SleepUntil returns at t or later, or early with ctx's error.
	SleepUntil(ctx context.Context, t time.Time) error
}

// RealClock is the wall clock (with Go's monotonic reading).
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Config is one run.
type Config struct {
	Rate        float64       // arrivals per second, > 0 and <= MaxRate
	Duration    time.Duration // scheduling window, > 0 and <= MaxDuration
	MaxRequests int64         // 0: rate x duration; otherwise at most this many
	MaxInFlight int           // 0: DefaultInFlight(Rate)
	Timeout     time.Duration // per request; 0: DefaultTimeout
	Clock       Clock         // nil: RealClock
}

// DefaultInFlight is twice the rate, at least 1, at most MaxInFlightCap.
func DefaultInFlight(rate float64) int {
	return int(min(max(math.Ceil(2*rate), 1), MaxInFlightCap))
}

// Planned is how many requests a run schedules: rate x duration (at least
// one), cut to maxRequests when that is set.
func Planned(rate float64, d time.Duration, maxRequests int64) int64 {
	n := max(int64(math.Floor(rate*d.Seconds()+1e-9)), 1)
	if maxRequests > 0 {
		n = min(n, maxRequests)
	}
	return n
}

// Offset is when request i is due, relative to the start: i/rate, computed
// from i rather than summed, so there is no drift over a long run.
func Offset(rate float64, i int64) time.Duration {
	return time.Duration(math.Round(float64(i) * float64(time.Second) / rate))
}

// Validate checks c and fills in its defaults.
func (c *Config) Validate() error {
	switch {
	case !(c.Rate > 0) || c.Rate > MaxRate || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate must be above 0 and at most %d a second, got %v", MaxRate, c.Rate)
	case c.Duration <= 0 || c.Duration > MaxDuration:
		return fmt.Errorf("duration must be above 0 and at most %s, got %s", MaxDuration, c.Duration)
	case c.MaxRequests < 0:
		return fmt.Errorf("max requests must not be negative")
	case c.MaxInFlight < 0 || c.MaxInFlight > MaxInFlightMax:
		return fmt.Errorf("max in-flight must be between 1 and %d, got %d", MaxInFlightMax, c.MaxInFlight)
	case c.Timeout < 0:
		return fmt.Errorf("timeout must not be negative")
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultInFlight(c.Rate)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	return nil
}

// Run schedules Planned(...) requests at their instants and returns when
// every sent request has finished. If ctx ends first, no more requests are
// scheduled, the ones in flight are cancelled, and Run returns the summary
// so far with ctx's error.
func Run(ctx context.Context, c Config, do DoFunc) (Summary, error) {
	if err := c.Validate(); err != nil {
		return Summary{}, err
	}
	n := Planned(c.Rate, c.Duration, c.MaxRequests)
	rec := newRecorder()
	sem := make(chan struct{}, c.MaxInFlight)
	var wg sync.WaitGroup
	var scheduled, sent, dropped int64
	var maxLag time.Duration

	start := c.Clock.Now()
	var runErr error
	for i := range n {
		at := start.Add(Offset(c.Rate, i))
		if err := c.Clock.SleepUntil(ctx, at); err != nil {
			runErr = err
			break
		}
		scheduled++
		select {
		case sem <- struct{}{}:
		default:
			dropped++
			continue
		}
		sent++
		maxLag = max(maxLag, c.Clock.Now().Sub(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, c.Timeout)
			r := do(rctx, i)
			cancel()
			end := c.Clock.Now()
			<-sem
			rec.record(r, end.Sub(at))
		}()
	}
	schedEnd := c.Clock.Now()
	wg.Wait()
	end := c.Clock.Now()

	s := rec.summary()
	s.TargetRate = c.Rate
	s.Duration = c.Duration
	s.MaxInFlight = c.MaxInFlight
	s.Planned = n
	s.Scheduled, s.Sent, s.Dropped = scheduled, sent, dropped
	s.MaxScheduleLag = maxLag
	s.Elapsed = end.Sub(start)
	// The sending window is the planned span, or longer if the scheduler
	// itself fell behind.
	window := max(Offset(c.Rate, scheduled), schedEnd.Sub(start))
	if window > 0 {
		s.SentRate = float64(sent) / window.Seconds()
	}
	if s.Elapsed > 0 {
		s.Throughput = float64(s.Completed) / s.Elapsed.Seconds()
	}
	s.Interrupted = runErr != nil
	return s, runErr
}

// Class is what kind of outcome a request had.
type Class string

const (
	Class2xx     Class = "2xx"
	Class3xx     Class = "3xx"
	Class4xx     Class = "4xx" // 429 excluded
	Class429     Class = "429"
	Class5xx     Class = "5xx"
	ClassTimeout Class = "timeout"
	ClassConn    Class = "connection"
	ClassOther   Class = "other" // any other error or status
)

// Classify sorts a result: an error is a timeout, a connection error or
// other (even when a status came first, e.g. a broken body); otherwise the
// status family, with 429 on its own.
func Classify(r Result) Class {
	if r.Err != nil {
		var ne net.Error
		var oe *net.OpError
		switch {
		case errors.Is(r.Err, context.DeadlineExceeded), errors.Is(r.Err, syscall.ETIMEDOUT),
			errors.As(r.Err, &ne) && ne.Timeout():
			return ClassTimeout
		case errors.Is(r.Err, context.Canceled):
			return ClassOther
		case errors.As(r.Err, &oe), errors.Is(r.Err, syscall.ECONNREFUSED), errors.Is(r.Err, syscall.ECONNRESET),
			errors.Is(r.Err, syscall.EPIPE), errors.Is(r.Err, io.EOF), errors.Is(r.Err, io.ErrUnexpectedEOF):
			return ClassConn
		}
		return ClassOther
	}
	switch {
	case r.Status == 429:
		return Class429
	case r.Status >= 200 && r.Status < 300:
		return Class2xx
	case r.Status >= 300 && r.Status < 400:
		return Class3xx
	case r.Status >= 400 && r.Status < 500:
		return Class4xx
	case r.Status >= 500 && r.Status < 600:
		return Class5xx
	}
	return ClassOther
}

// recorder collects results from the request goroutines.
type recorder struct {
	mu                sync.Mutex
	all, ok           Histogram
	counts            map[Class]int64
	completed         int64
	bytesIn, bytesOut int64
	firstErr          map[Class]string
}

func newRecorder() *recorder {
	return &recorder{counts: map[Class]int64{}, firstErr: map[Class]string{}}
}

func (r *recorder) record(res Result, lat time.Duration) {
	cl := Classify(res)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[cl]++
	r.bytesIn += res.BytesReceived
	r.bytesOut += res.BytesSent
	r.all.Record(lat)
	if res.Err == nil {
		r.completed++
	} else if _, seen := r.firstErr[cl]; !seen {
		r.firstErr[cl] = res.Err.Error()
	}
	if cl == Class2xx {
		r.ok.Record(lat)
	}
}

func (r *recorder) summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Counts: map[Class]int64{}, Completed: r.completed, BytesReceived: r.bytesIn, BytesSent: r.bytesOut,
		Latency: latencyOf(&r.all), LatencyOK: latencyOf(&r.ok), FirstError: map[Class]string{}}
	for k, v := range r.counts {
		s.Counts[k] = v
	}
	for k, v := range r.firstErr {
		s.FirstError[k] = v
	}
	return s
}
