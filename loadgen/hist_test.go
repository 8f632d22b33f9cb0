package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestLoadBucketBounds(t *testing.T) {
	t.Parallel()
	check := func(v uint64) {
		i := bucketOf(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d, outside [0, %d)", v, i, numBuckets)
		}
		up := upperOf(i)
		if up < v {
			t.Fatalf("upperOf(bucketOf(%d)) = %d, below the value", v, up)
		}
		if i > 0 && upperOf(i-1) >= v {
			t.Fatalf("value %d also fits the bucket below (%d)", v, upperOf(i-1))
		}
		if float64(up-v) > float64(v)/128 {
			t.Fatalf("bucket of %d ends at %d: more than 1/128 above", v, up)
		}
	}
	for _, v := range []uint64{0, 1, 255, 256, 257, 511, 512, 513, 1000, 1e6, 1e9, 3.6e12, math.MaxInt64 - 1, math.MaxInt64} {
		check(v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(r.Uint64N(math.MaxInt64) >> r.UintN(62))
	}
	prev := -1
	for v := uint64(0); v < 1<<16; v++ {
		if i := bucketOf(v); i < prev || i > prev+1 {
			t.Fatalf("bucketOf is not contiguous at %d: %d after %d", v, i, prev)
		} else {
			prev = i
		}
	}
}

func TestLoadHistogramQuantiles(t *testing.T) {
	t.Parallel()
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Mean() != 0 || h.Count() != 0 {
		t.Fatal("an empty histogram must answer zeros")
	}
	// 1..10000 microseconds, shuffled.
	vals := make([]time.Duration, 10000)
	for i := range vals {
		vals[i] = time.Duration(i+1) * time.Microsecond
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	for _, v := range vals {
		h.Record(v)
	}
	slices.Sort(vals)
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{
		{0, 1 * time.Microsecond},
		{0.5, 5000 * time.Microsecond},
		{0.9, 9000 * time.Microsecond},
		{0.99, 9900 * time.Microsecond},
		{0.999, 9990 * time.Microsecond},
		{1, 10000 * time.Microsecond},
	} {
		got := h.Quantile(c.q)
		if got < c.want || float64(got-c.want) > float64(c.want)/128 {
			t.Errorf("Quantile(%v) = %s, want %s (+0.8%%)", c.q, got, c.want)
		}
	}
	if h.Min() != time.Microsecond || h.Max() != 10*time.Millisecond || h.Count() != 10000 {
		t.Errorf("min %s max %s count %d", h.Min(), h.Max(), h.Count())
	}
	if want := 5000500 * time.Nanosecond; h.Mean() != want {
		t.Errorf("mean %s, want %s", h.Mean(), want)
	}

	// Merging two halves gives the same histogram as recording all.
	var a, b Histogram
	for i, v := range vals {
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(&b)
	if a != h {
		t.Error("merged halves differ from the whole")
	}
	// A negative duration counts as zero.
	var z Histogram
	z.Record(-time.Second)
	if z.Max() != 0 || z.Count() != 1 {
		t.Errorf("negative record: max %s count %d", z.Max(), z.Count())
	}
}

func TestLoadHistogramSingleOutlier(t *testing.T) {
	t.Parallel()
	var h Histogram
	for range 999 {
		h.Record(time.Millisecond)
	}
	h.Record(3 * time.Second)
	if p := h.Quantile(0.999); p > time.Millisecond+time.Millisecond/128 {
		t.Errorf("p99.9 = %s: the 999 fast answers cover it", p)
	}
	if h.Quantile(0.9995) != 3*time.Second || h.Max() != 3*time.Second {
		t.Errorf("p99.95 = %s, max = %s, want the outlier exactly", h.Quantile(0.9995), h.Max())
	}
}
