package sim

import (
	"container/heap"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// deliveryQueue delivers delayed answers on the wall clock precisely.
//
// A Go timer per answer is not precise enough for the simulator's
// microsecond latencies: when the process is otherwise idle the runtime
// sleeps in the netpoller with millisecond granularity, so a 20µs answer
// arrives about 1ms late. Kernel sleeps are not precise either on a VM
// (tens of microseconds late, more under load). So one goroutine per Sim
// keeps the pending answers in a heap ordered by due time; it sleeps
// (interruptibly, see waker) while the next answer is more than
// spinWindow away, and spins, yielding the processor at each turn, only
// for that last stretch. It runs only while answers are pending: with
// none it exits, so an idle Sim has no goroutine and burns no CPU.
type deliveryQueue struct {
	epoch time.Time // with a monotonic reading: due times count from it

	mu       sync.Mutex
	q        pendingHeap
	seq      uint64
	running  bool  // the delivery goroutine is alive
	w        waker // its waker, while running
	sleeping bool  // it sleeps (or is about to) towards wakeAt
	wakeAt   int64

	// head is q's earliest due time (math.MaxInt64 when q is empty), for
	// the spinning goroutine to watch without taking mu.
	head atomic.Int64
}

type pending struct {
	due int64 // ns since epoch
	seq uint64
	c   *Conn
	p   *transport.Packet
}

func newDeliveryQueue(epoch time.Time) *deliveryQueue {
	d := &deliveryQueue{epoch: epoch}
	d.head.Store(math.MaxInt64)
	return d
}

// since returns t in ns since the queue's epoch.
func (d *deliveryQueue) since(t time.Time) int64 { return t.Sub(d.epoch).Nanoseconds() }

func (d *deliveryQueue) now() int64 { return time.Since(d.epoch).Nanoseconds() }

// add queues p for c, due at the given time (ns since epoch).
func (d *deliveryQueue) add(due int64, c *Conn, p *transport.Packet) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	heap.Push(&d.q, pending{due: due, seq: d.seq, c: c, p: p})
	if d.q[0].due != due || d.q[0].seq != d.seq {
		return // not the new head: the goroutine's plan stands
	}
	d.head.Store(due)
	switch {
	case !d.running:
		d.running = true
		d.w = newWaker()
		go d.run(d.w)
	case d.sleeping && due < d.wakeAt:
		d.w.wake()
	}
}

// drop forgets every answer pending for c (c is closing).
func (d *deliveryQueue) drop(c *Conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.q[:0]
	for _, e := range d.q {
		if e.c != c {
			kept = append(kept, e)
		}
	}
	clear(d.q[len(kept):])
	if len(kept) == len(d.q) {
		return
	}
	d.q = kept
	heap.Init(&d.q)
	if len(d.q) == 0 {
		d.head.Store(math.MaxInt64)
	} else {
		d.head.Store(d.q[0].due)
	}
	if d.sleeping {
		d.w.wake() // replan, or exit if nothing is left
	}
}

// spinWindow is how close to a due time the delivery goroutine stops
// sleeping and spins; waker.slack is how late its sleeps end.
func (d *deliveryQueue) run(w waker) {
	var batch []pending
	for {
		d.mu.Lock()
		d.sleeping = false
		now := d.now()
		for len(d.q) > 0 && d.q[0].due <= now {
			batch = append(batch, heap.Pop(&d.q).(pending))
		}
		next := int64(math.MaxInt64)
		if len(d.q) > 0 {
			next = d.q[0].due
		}
		d.head.Store(next)
		if len(batch) > 0 {
			d.mu.Unlock()
			for i, e := range batch {
				e.c.deliver(e.p)
				batch[i] = pending{}
			}
			batch = batch[:0]
			continue
		}
		if next == math.MaxInt64 {
			d.running = false
			d.w = nil
			d.mu.Unlock()
			w.close()
			return
		}
		if wait := next - now; wait > w.slack() {
			d.sleeping, d.wakeAt = true, next
			d.mu.Unlock()
			w.sleep(time.Duration(wait - w.slack()))
			continue
		}
		d.mu.Unlock()
		// The last stretch: spin until the head is due, or until it
		// moved far enough away (its Conn closed) to sleep again.
		for {
			runtime.Gosched()
			now := d.now()
			head := d.head.Load()
			if now >= head || head-now > w.slack() {
				break
			}
		}
	}
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

// A waker is the delivery goroutine's interruptible sleep.
type waker interface {
	// sleep returns after about d, or sooner once wake is called (a
	// wake that came before sleep makes it return at once).
	sleep(d time.Duration)
	wake()
	close()
	// slack is how late sleep may return: nearer due times are spun for.
	slack() int64
}

// chanWaker sleeps on a Go timer. A sub-millisecond Go timer can fire a
// millisecond late (the netpoller waits in whole milliseconds), so it
// spins for the last 2ms.
type chanWaker struct{ c chan struct{} }

func newChanWaker() *chanWaker { return &chanWaker{c: make(chan struct{}, 1)} }

func (w *chanWaker) sleep(d time.Duration) {
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-w.c:
		t.Stop()
	}
}

func (w *chanWaker) wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

func (w *chanWaker) close()       {}
func (w *chanWaker) slack() int64 { return (2 * time.Millisecond).Nanoseconds() }

// isRealClock reports whether c is the wall clock, whose delayed answers
// go through a deliveryQueue rather than c.AfterFunc.
func isRealClock(c Clock) bool {
	switch c.(type) {
	case RealClock, *RealClock:
		return true
	}
	return false
}
