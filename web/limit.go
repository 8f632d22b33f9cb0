package web

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
)

// limiter is a set of token buckets, one per key, in this process (as the
// API's intake limiter: with several processes each enforces its own
// share).
type limiter struct {
	limit   Limit
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(l Limit) *limiter { return &limiter{limit: l, buckets: map[string]*bucket{}} }

// take spends one token for key and returns 0, or how long until one is
// available.
func (l *limiter) take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.limit.Burst), at: now}
		l.buckets[key] = b
	}
	b.tokens = min(float64(l.limit.Burst), b.tokens+now.Sub(b.at).Seconds()*l.limit.Rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	if l.limit.Rate <= 0 {
		return time.Hour
	}
	return time.Duration((1 - b.tokens) / l.limit.Rate * float64(time.Second))
}

// sweep drops buckets that have refilled completely.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	full := time.Duration(float64(l.limit.Burst) / max(l.limit.Rate, 1e-9) * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.at) > full {
			delete(l.buckets, k)
		}
	}
}

// limitKey names one bucket of one limiter.
type limitKey struct {
	l   *limiter
	key string
}

// admit spends a token from every bucket named, answering 429 with
// Retry-After when one is empty.
func admit(w http.ResponseWriter, keys ...limitKey) error {
	for _, k := range keys {
		if wait := k.l.take(k.key, time.Now()); wait > 0 {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			return signoff.Errorf(signoff.ERATELIMIT, "Too many requests from here just now. Please wait %d seconds and try again.", secs)
		}
	}
	return nil
}
