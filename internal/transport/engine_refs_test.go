package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// silentConn takes every request and answers none; Recv fails with
// ErrClosed once fail is closed.
type silentConn struct {
	fail chan struct{}
	mu   sync.Mutex
	sent int
}

func (c *silentConn) Send(ctx context.Context, p *Packet) error {
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
	return nil
}

func (c *silentConn) Recv(ctx context.Context) (*Packet, error) {
	select {
	case <-c.fail:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *silentConn) Local() LocalPort { return LocalPort{Name: "silent/1", PortNum: 1} }
func (c *silentConn) Close() error     { return nil }

// When the reader stops, every request fails, and what the failures let
// through the windows on the way (attempts queued, never sent) releases
// its reference too: each pooled read ends with none left, as when it
// completes normally.
func TestReaderStopReleasesQueuedSends(t *testing.T) {
	c := &silentConn{fail: make(chan struct{})}
	e := NewEngine(c, Options{Window: 2, PerDest: 1})
	defer e.Close()
	var wg sync.WaitGroup
	const n = 6
	wg.Add(n)
	for i := range n {
		// Two destinations, three reads each: one in flight per
		// destination, the others waiting for its slot.
		path := mad.Path{1, uint8(2 + i%2)}
		var ni mad.NodeInfo
		if err := e.GoSMP(context.Background(), path, &ni, 0, func(_ *mad.SMP, err error) {
			if err == nil {
				t.Error("a read succeeded on a Conn that answers nothing")
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	e.mu.Lock()
	all := e.pendingLocked(func(*request) bool { return true })
	e.mu.Unlock()
	if len(all) != n {
		t.Fatalf("%d requests pending, want %d", len(all), n)
	}
	close(c.fail)
	wg.Wait()
	<-e.readerDone
	for i, r := range all {
		if got := r.refs.Load(); got != 0 {
			t.Errorf("request %d (state %d) holds %d references after the reader stopped, want 0", i, r.state, got)
		}
	}
}

// answerConn hands each request it is sent to the test (sent) and
// returns what the test puts in answers.
type answerConn struct {
	sent    chan []byte
	answers chan *Packet
}

func (c *answerConn) Send(ctx context.Context, p *Packet) error {
	c.sent <- append([]byte(nil), p.MAD...)
	return nil
}

func (c *answerConn) Recv(ctx context.Context) (*Packet, error) {
	select {
	case p := <-c.answers:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *answerConn) Local() LocalPort { return LocalPort{Name: "answer/1", PortNum: 1} }
func (c *answerConn) Close() error     { return nil }

// endedCtx is a context that reports it ended (Err) before its Done
// channel says so, as a cancelled context does until its AfterFunc runs.
type endedCtx struct {
	context.Context
	done  chan struct{}
	ended atomic.Bool
}

func (c *endedCtx) Done() <-chan struct{} { return c.done }
func (c *endedCtx) Err() error {
	if c.ended.Load() {
		return context.Canceled
	}
	return nil
}

// A request abandoned while waiting for its destination's slot, found
// when the request ahead of it completes, frees the destination once:
// freed twice, two later destinations would share one window.
func TestAbandonedWaiterFreesDestOnce(t *testing.T) {
	c := &answerConn{sent: make(chan []byte, 4), answers: make(chan *Packet, 4)}
	e := NewEngine(c, Options{Window: 4, PerDest: 1})
	defer e.Close()
	req := func() []byte {
		s, err := mad.NewDRGet(mad.Path{1, 2}, mad.AttrNodeInfo, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s.Marshal()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	if err := e.Go(context.Background(), DirectedRoute(), req(), func(*Response, error) { wg.Done() }); err != nil {
		t.Fatal(err)
	}
	ctx := &endedCtx{Context: context.Background(), done: make(chan struct{})}
	if err := e.Go(ctx, DirectedRoute(), req(), func(_ *Response, err error) {
		if err == nil {
			t.Error("the abandoned request was answered")
		}
		wg.Done()
	}); err != nil {
		t.Fatal(err)
	}
	ctx.ended.Store(true)
	m := <-c.sent
	m[3] = byte(mad.MethodGetResp)
	m[4] |= 0x80 // D bit: a response
	c.answers <- &Packet{Addr: DirectedRoute(), MAD: m}
	wg.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	seen := map[*dest]bool{}
	for _, d := range e.freeDests {
		if seen[d] {
			t.Fatalf("destination freed twice: %d free destinations, %d distinct", len(e.freeDests), len(seen))
		}
		seen[d] = true
	}
}

// The TID table finds every outstanding attempt, also those whose slot an
// older one held when they were put, and forgets each deleted one.
func TestTIDTableCollisions(t *testing.T) {
	tt := newTIDTable(1)
	n := uint32(len(tt.slots))
	rs := make([]request, 4)
	tids := []uint32{5, 5 + n, 5 + 2*n, 6}
	for i, tid := range tids {
		tt.put(tid, entry{r: &rs[i], attempt: i})
	}
	check := func(live map[uint32]int) {
		t.Helper()
		for i, tid := range tids {
			en, ok := tt.get(tid)
			want, isLive := live[tid]
			if ok != isLive || (ok && (en.r != &rs[want] || en.attempt != i)) {
				t.Fatalf("get(%d) = %v, %v; want live %v", tid, en.r, ok, isLive)
			}
		}
	}
	check(map[uint32]int{5: 0, 5 + n: 1, 5 + 2*n: 2, 6: 3})
	tt.del(5) // the slot's own
	check(map[uint32]int{5 + n: 1, 5 + 2*n: 2, 6: 3})
	tt.put(5+3*n, entry{r: &rs[0], attempt: 0})
	tids[0] = 5 + 3*n
	check(map[uint32]int{5 + 3*n: 0, 5 + n: 1, 5 + 2*n: 2, 6: 3})
	tt.del(5 + n) // one in the map
	tt.del(6)
	check(map[uint32]int{5 + 3*n: 0, 5 + 2*n: 2})
}
