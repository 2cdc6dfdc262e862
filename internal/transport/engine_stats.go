package transport

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// Stats is a snapshot of an Engine's counters.
type Stats struct {
	Requests uint64 // requests accepted by Do (not refused up front)
	Sent     uint64 // MADs sent, every attempt counted
	Answered uint64 // requests that got a response (any status)
	Retried  uint64 // attempts after the first
	TimedOut uint64 // requests that failed after all attempts
	Errors   uint64 // responses with a non-OK status, and send failures
	Canceled uint64 // requests abandoned because their context ended
	Skipped  uint64 // requests not sent: their destination was silent (SkipSilent)

	Received     uint64 // MADs received (status 0), whatever became of them
	Late         uint64 // responses to our TIDs no longer outstanding: after a timeout or cancel, or duplicates
	Unknown      uint64 // responses to TIDs never issued, undecodable or unsolicited MADs
	StaleNotices uint64 // timeout notices from the Conn for attempts already over
	RecvErrors   uint64 // errors returned by the Conn's Recv

	BytesSent     uint64
	BytesReceived uint64

	InFlight    int // requests holding a window slot now
	MaxInFlight int // most requests ever in flight at once

	Latency Latency // round-trip times of answered attempts
}

// Latency summarises round-trip times. Percentiles come from a log-linear
// histogram and are accurate to about 6%; Max is exact.
type Latency struct {
	Count              uint64
	P50, P90, P99, Max time.Duration
}

// Stats returns a snapshot of the counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &e.st
	return Stats{
		Requests: c.requests, Sent: c.sent, Answered: c.answered, Retried: c.retried,
		TimedOut: c.timedOut, Errors: c.errors, Canceled: c.canceled, Skipped: c.skipped,
		Received: c.received, Late: c.late, Unknown: c.unknown,
		StaleNotices: c.staleNotices, RecvErrors: c.recvErrors,
		BytesSent: c.bytesSent, BytesReceived: c.bytesRecv,
		InFlight: c.inFlight, MaxInFlight: c.maxInFlight,
		Latency: Latency{
			Count: c.lat.n,
			P50:   c.lat.quantile(0.50),
			P90:   c.lat.quantile(0.90),
			P99:   c.lat.quantile(0.99),
			Max:   c.lat.max,
		},
	}
}

// String prints the stats on a few lines for a CLI's verbose output.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "requests %d, sent %d (%d retries), answered %d, timed out %d, errors %d, canceled %d\n",
		s.Requests, s.Sent, s.Retried, s.Answered, s.TimedOut, s.Errors, s.Canceled)
	fmt.Fprintf(&b, "received %d (late %d, unknown %d), bytes sent %d, received %d, max in flight %d\n",
		s.Received, s.Late, s.Unknown, s.BytesSent, s.BytesReceived, s.MaxInFlight)
	fmt.Fprintf(&b, "latency p50 %v, p90 %v, p99 %v, max %v", s.Latency.P50, s.Latency.P90, s.Latency.P99, s.Latency.Max)
	return b.String()
}

type counters struct {
	requests, sent, answered, retried, timedOut, errors, canceled, skipped uint64
	received, late, unknown, staleNotices, recvErrors                      uint64
	bytesSent, bytesRecv                                                   uint64
	inFlight, maxInFlight                                                  int
	lat                                                                    histogram
}

// histogram is a log-linear histogram of durations in nanoseconds: values
// below 16 get a bucket each; above, each power of two is split into 16
// buckets.
type histogram struct {
	counts []uint64
	n      uint64
	max    time.Duration
}

const histSub = 16

func bucketOf(v uint64) int {
	if v < histSub {
		return int(v)
	}
	e := bits.Len64(v) - 5 // v>>e is in [16, 31]
	return histSub + e*histSub + int(v>>e) - histSub
}

// bucketTop returns the largest value in bucket i.
func bucketTop(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	e := (i - histSub) / histSub
	m := uint64((i-histSub)%histSub + histSub)
	return (m+1)<<e - 1
}

func (h *histogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if h.counts == nil {
		h.counts = make([]uint64, bucketOf(1<<63-1)+1)
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			v := time.Duration(bucketTop(i))
			if v > h.max {
				v = h.max
			}
			return v
		}
	}
	return h.max
}
