package pump

import (
	"sync"
	"testing"
)

// TestRunOneAtATime starts Runs from inside send, as completions do, and
// from other goroutines: every queued item is sent exactly once, never by
// two goroutines at once, and nothing is left behind.
func TestRunOneAtATime(t *testing.T) {
	var (
		mu      sync.Mutex
		p       Pump[int]
		queue   []int
		sent    = map[int]int{}
		sending int
		maxSend int
	)
	fill := func(b []int) []int {
		b = append(b, queue...)
		queue = queue[:0]
		return b
	}
	var send func(int)
	send = func(v int) {
		mu.Lock()
		sending++
		maxSend = max(maxSend, sending)
		sent[v]++
		if v < 1000 {
			queue = append(queue, v+1000) // a completion that queues more
		}
		mu.Unlock()
		p.Run(&mu, fill, send) // returns at once: this goroutine is pumping
		mu.Lock()
		sending--
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				mu.Lock()
				queue = append(queue, g*50+i)
				mu.Unlock()
				p.Run(&mu, fill, send)
			}
		})
	}
	wg.Wait()
	p.Run(&mu, fill, send)
	if len(queue) != 0 {
		t.Fatalf("%d items left queued", len(queue))
	}
	if len(sent) != 800 {
		t.Fatalf("%d distinct items sent, want 800", len(sent))
	}
	for v, n := range sent {
		if n != 1 {
			t.Errorf("item %d sent %d times", v, n)
		}
	}
	if maxSend != 1 {
		t.Errorf("%d goroutines sent at once, want 1", maxSend)
	}
}
