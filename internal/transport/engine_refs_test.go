package transport

import (
	"context"
	"sync"
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
