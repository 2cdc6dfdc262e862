package sim

import (
	"container/heap"
	"context"
	"math"
	"runtime"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// Answers on the wall clock.
//
// A Go timer per delayed answer is not precise enough for the simulator's
// microsecond latencies: when the process is otherwise idle the runtime
// sleeps in the netpoller with millisecond granularity, so an answer due
// in 20µs arrives about 1ms late (measured: BenchmarkRealClockRTT).
// Kernel sleeps are no cure on a VM either: ppoll and nanosleep woke
// 50-150µs late on the 2-core KVM guest this was measured on.
//
// So on the wall clock a Conn keeps its delayed answers in a heap by due
// time, and the goroutine in Recv takes them out itself once they are
// due: it sleeps on a Go timer (or until Send queues an earlier answer)
// while the next answer is more than spinWindow away, and spins, yielding
// the processor at each turn, only for that last stretch. There is no
// delivery goroutine: nothing runs for a Conn nobody reads, and an idle
// Conn costs nothing.

// spinWindow is how long before an answer is due Recv stops sleeping on a
// Go timer and spins: a Go timer can fire a millisecond late.
const spinWindow = 2 * time.Millisecond

// pending is a delayed answer.
type pending struct {
	due int64 // ns since the Sim's epoch (monotonic)
	seq uint64
	p   *transport.Packet
}

type pendingHeap []pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = pending{}
	*h = old[:len(old)-1]
	return e
}

// isRealClock reports whether c is the wall clock (an EpochClock is, once
// started, and no MAD is answered before), whose delayed answers
// Recv times itself rather than c.AfterFunc.
func isRealClock(c Clock) bool {
	switch c.(type) {
	case RealClock, *RealClock, *EpochClock:
		return true
	}
	return false
}

// wallNow is the wall clock in ns since the Sim's epoch.
func (s *Sim) wallNow() int64 { return time.Since(s.epoch).Nanoseconds() }

// schedule queues p for Recv at due (ns since the Sim's epoch).
func (c *Conn) schedule(due int64, p *transport.Packet) {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return
	}
	c.seq++
	heap.Push(&c.pend, pending{due: due, seq: c.seq, p: p})
	first := c.pend[0].seq == c.seq
	if first {
		c.head.Store(due)
	}
	c.mu.Unlock()
	if first { // a Recv asleep for a later answer must wake up earlier
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// takeDue returns the earliest pending answer if it is due, or else how
// long until it is (math.MaxInt64: none pending). Callers hold c.mu.
func (c *Conn) takeDue() (*transport.Packet, int64) {
	if len(c.pend) == 0 {
		return nil, math.MaxInt64
	}
	wait := c.pend[0].due - c.s.wallNow()
	if wait > 0 {
		return nil, wait
	}
	e := heap.Pop(&c.pend).(pending)
	if len(c.pend) > 0 {
		c.head.Store(c.pend[0].due)
	} else {
		c.head.Store(math.MaxInt64)
	}
	return e.p, 0
}

// spin yields the processor until the earliest pending answer is due, it
// moved more than spinWindow away (or there is none), ctx is done or c
// closes.
func (c *Conn) spin(ctx context.Context) {
	for {
		runtime.Gosched()
		head := c.head.Load()
		if left := head - c.s.wallNow(); left <= 0 || left > spinWindow.Nanoseconds() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		default:
		}
	}
}
