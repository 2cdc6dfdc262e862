package transport

import (
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	// Every value lies in its bucket, buckets are ordered, and a bucket
	// spans at most 1/16 of its values.
	prevTop := uint64(0)
	for i := 1; i < bucketOf(1<<63-1); i++ {
		top := bucketTop(i)
		if top <= prevTop {
			t.Fatalf("bucket %d top %d not above bucket %d top %d", i, top, i-1, prevTop)
		}
		if bucketOf(top) != i || bucketOf(prevTop+1) != i {
			t.Fatalf("bucket %d: values %d..%d map to %d..%d", i, prevTop+1, top, bucketOf(prevTop+1), bucketOf(top))
		}
		if lo := prevTop + 1; lo >= 16 && (top-lo+1)*16 > lo {
			t.Fatalf("bucket %d (%d..%d) wider than 1/16", i, lo, top)
		}
		prevTop = top
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Error("empty histogram")
	}
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.9, 900 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {1, time.Millisecond}} {
		got := h.quantile(c.q)
		if got < c.want || float64(got) > float64(c.want)*1.0625 {
			t.Errorf("q%v = %v, want %v within 6.25%%", c.q, got, c.want)
		}
	}
	if h.max != time.Millisecond || h.n != 1000 {
		t.Errorf("max %v n %d", h.max, h.n)
	}
}
