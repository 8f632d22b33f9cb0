package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in log-linear buckets, the way an HDR
// histogram does: exact below 2^subBits nanoseconds, and above that
// 2^(subBits-1) buckets per power of two, so every recorded value lands in
// a bucket whose width is at most 1/128 of the value (under 0.8 %).
//
// Its memory is fixed (about 60 KB) however many values it records, which
// is why it is used instead of keeping every sample: a one-hour run at
// 50,000 requests a second would otherwise hold 180 million durations.
// Count, min, max and sum are exact; a quantile is the upper bound of the
// bucket holding that rank, capped at the exact maximum, so it never reads
// lower than the true value and at most 0.8 % higher.
//
// A Histogram is not safe for concurrent use; Run serialises its records.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	min, max time.Duration
	sum      float64 // nanoseconds; float so that hours of samples cannot overflow
}

const (
	subBits    = 8
	subCount   = 1 << subBits       // 256 exact buckets for 0..255 ns
	halfCount  = subCount / 2       // buckets per power of two above that
	maxShift   = 63 - (subBits - 1) // values are at most 2^63-1
	numBuckets = subCount + maxShift*halfCount
)

// bucketOf is the bucket index of v >= 0.
func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits // >= 1
	top := v >> uint(shift)          // in [halfCount, subCount)
	return subCount + (shift-1)*halfCount + int(top-halfCount)
}

// upperOf is the largest value that falls in bucket i.
func upperOf(i int) uint64 {
	if i < subCount {
		return uint64(i)
	}
	j := i - subCount
	shift := j/halfCount + 1
	top := uint64(j%halfCount + halfCount)
	return (top+1)<<uint(shift) - 1
}

// Record adds one duration; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max are the exact extremes (0 when empty).
func (h *Histogram) Min() time.Duration { return h.min }
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the exact mean (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the value at quantile q in [0, 1]: the smallest bucket
// bound below which at least ceil(q*n) values lie, capped at the maximum.
// Quantile(1) is the exact maximum; an empty histogram answers 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := time.Duration(upperOf(i))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
