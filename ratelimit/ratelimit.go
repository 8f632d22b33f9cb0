// Package ratelimit is token buckets per key, kept in this process: the
// public intake, the tracking pages, sign-in and chat answers each limit
// their callers with one. With several server processes each enforces its
// own share; that is a ceiling per process, not a cluster-wide guarantee.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limit is a token bucket: Rate requests per second on average, Burst at
// once.
type Limit struct {
	Rate  float64
	Burst int
}

// Limiter is a set of token buckets, one per key.
type Limiter struct {
	limit   Limit
	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a limiter whose buckets each follow l. A rate that is not
// a number, or below zero, never refills; an infinite one always does.
func New(l Limit) *Limiter {
	switch {
	case math.IsNaN(l.Rate) || l.Rate < 0:
		l.Rate = 0
	case math.IsInf(l.Rate, 1):
		l.Rate = math.MaxFloat64
	}
	return &Limiter{limit: l, buckets: map[string]*bucket{}}
}

// maxWait bounds a wait, so that a rate next to zero cannot overflow a
// time.Duration into a negative wait (which callers read as "go ahead").
const maxWait = 24 * time.Hour

// Take spends one token for key and returns 0, or how long until one is
// available.
func (l *Limiter) Take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: float64(l.limit.Burst), at: now}
		l.buckets[key] = b
	}
	b.tokens = l.refill(b, now)
	if now.After(b.at) {
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return l.until(b.tokens)
}

// refill is b's tokens at now. Callers read the clock before taking the
// lock, so now can be a little before the bucket's last update: that
// adds nothing rather than taking tokens away.
func (l *Limiter) refill(b *bucket, now time.Time) float64 {
	return min(float64(l.limit.Burst), b.tokens+max(now.Sub(b.at), 0).Seconds()*l.limit.Rate)
}

// until is how long a bucket holding tokens (less than one) waits for a
// whole one: at least a nanosecond, since 0 means a token is there, and at
// most maxWait.
func (l *Limiter) until(tokens float64) time.Duration {
	if l.limit.Rate <= 0 {
		return time.Hour
	}
	secs := (1 - tokens) / l.limit.Rate
	if !(secs < maxWait.Seconds()) {
		return maxWait
	}
	return max(time.Duration(math.Ceil(secs*float64(time.Second))), 1)
}

// Wait returns how long until key has a token, without spending one.
func (l *Limiter) Wait(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	tokens := float64(l.limit.Burst)
	if b, ok := l.buckets[key]; ok {
		tokens = l.refill(b, now)
	}
	if tokens >= 1 {
		return 0
	}
	return l.until(tokens)
}

// sweep drops buckets that have refilled completely, so that the map does
// not grow with every key ever seen. A bucket that has not refilled is
// kept however old it is: dropping it would hand its key a fresh burst
// (with a rate of zero, or one so small that the time to refill does not
// fit a time.Duration, that would reset the limit every minute).
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		if l.refill(b, now) >= float64(l.limit.Burst) {
			delete(l.buckets, k)
		}
	}
}
