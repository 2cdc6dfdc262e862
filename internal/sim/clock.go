package sim

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the simulator's notion of time. Counters are computed from it
// when they are read, and delayed answers (per-hop latency, SMA service
// time, umad-style timeouts) are scheduled on it.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed. The
	// returned stop function cancels it and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock; it is the default. Its AfterFunc is not
// used for delayed answers: a Go timer per answer fires up to a
// millisecond late, so a Conn's Recv times them itself (deliver.go).
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc implements Clock.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// EpochClock is the wall clock for a simulator that stands for a fabric
// which ran before this process started: until Start it reads its epoch,
// so the faults and traffic set up while building the simulator date from
// then and their counters have grown since. Two runs given the same epoch
// read the same counters at the same moment, as two looks at one fabric.
type EpochClock struct {
	epoch   time.Time
	started atomic.Bool
}

// NewEpochClock returns an EpochClock that reads epoch until Start.
func NewEpochClock(epoch time.Time) *EpochClock { return &EpochClock{epoch: epoch} }

// Start makes the clock read the wall clock from now on.
func (c *EpochClock) Start() { c.started.Store(true) }

// Now implements Clock.
func (c *EpochClock) Now() time.Time {
	if c.started.Load() {
		return time.Now()
	}
	return c.epoch
}

// AfterFunc implements Clock; like RealClock's, it is not used for
// delayed answers.
func (c *EpochClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// ManualClock is a Clock that moves only when told to: tests advance it to
// make counters grow and scheduled answers arrive.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers timerHeap
	seq    uint64
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements Clock. A zero or negative d still waits for the
// next Advance (of any length, including 0).
func (c *ManualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{when: c.now.Add(d), seq: c.seq, f: f}
	heap.Push(&c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.timers, t.index)
		return true
	}
}

// Advance moves the clock forward by d and runs, in order and
// synchronously, every timer that became due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].when.After(target) {
		t := heap.Pop(&c.timers).(*manualTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}

type manualTimer struct {
	when  time.Time
	seq   uint64
	f     func()
	index int
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
