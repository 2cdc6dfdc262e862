package sim

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BenchmarkRealClockRTT measures how late the wall-clock simulator
// delivers answers: window SMPs in flight to leaf01 (one hop, 20µs of
// service, 1µs per cable), each answer due 22µs after its agent starts
// it. late-p50/p99-µs is the round trip beyond what the simulated
// queueing explains (the requests' own queueing at the agent included).
func BenchmarkRealClockRTT(b *testing.B) {
	for _, window := range []int{1, 8} {
		b.Run("window"+string(rune('0'+window)), func(b *testing.B) {
			s, err := New(fatTree(b, 2, 2, 2), Options{ServiceTime: 20 * time.Microsecond, HopLatency: time.Microsecond})
			if err != nil {
				b.Fatal(err)
			}
			c, err := s.Attach("gpu001 mlx5_0", 1)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			sent := map[uint64]time.Time{}
			var rtts []time.Duration
			var tid uint64
			send := func() {
				tid++
				smp, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
				smp.TID = tid
				sent[tid] = time.Now()
				if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range window {
				send()
			}
			for b.Loop() {
				p, err := c.Recv(ctx)
				if err != nil {
					b.Fatal(err)
				}
				h, _ := mad.PeekHeader(p.MAD)
				rtts = append(rtts, time.Since(sent[h.TID]))
				delete(sent, h.TID)
				send()
			}
			for range window {
				if _, err := c.Recv(ctx); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(rtts)
			// Unloaded: 22µs; with window in flight each waits behind
			// the others at the single agent: window×20µs + 2µs.
			ideal := time.Duration(window)*20*time.Microsecond + 2*time.Microsecond
			b.ReportMetric(float64(rtts[len(rtts)/2]-ideal)/1e3, "late-p50-µs")
			b.ReportMetric(float64(rtts[len(rtts)*99/100]-ideal)/1e3, "late-p99-µs")
		})
	}
}

// realSim is a wall-clock Sim of a small fat tree with hop latency hop
// and gpu001's Conn; the Conn is closed when the test ends.
func realSim(t *testing.T, opts Options) (*Sim, *Conn) {
	t.Helper()
	s, err := New(fatTree(t, 2, 2, 2), opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c.(*Conn)
}

func sendDR(t *testing.T, c *Conn, tid uint64, path mad.Path, timeout time.Duration) {
	t.Helper()
	smp, _ := mad.NewDRGet(path, mad.AttrNodeInfo, 0)
	smp.TID = tid
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal(), Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
}

func recvTID(t *testing.T, c *Conn) (uint64, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := c.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := mad.PeekHeader(p.MAD)
	return h.TID, p.Status
}

// On the wall clock answers come in the order they are due, not the
// order they were sent, and not before they are due.
func TestRealClockDeliversInDueOrder(t *testing.T) {
	const hop = 2 * time.Millisecond
	_, c := realSim(t, Options{HopLatency: hop})
	start := time.Now()
	sendDR(t, c, 1, mad.Path{1, 3}, 0) // spine01: 2 hops each way
	sendDR(t, c, 2, mad.Path{1}, 0)    // leaf01: 1 hop each way
	sendDR(t, c, 3, mad.Path{1, 3}, 0)
	want := []struct {
		tid uint64
		at  time.Duration
	}{{2, 2 * hop}, {1, 4 * hop}, {3, 4 * hop}}
	for _, w := range want {
		tid, st := recvTID(t, c)
		if d := time.Since(start); tid != w.tid || st != 0 || d < w.at {
			t.Errorf("TID %d status %d after %v, want TID %d after %v or later", tid, st, d, w.tid, w.at)
		}
	}
}

// A lost MAD sent with a Timeout comes back as a StatusTimedOut notice
// once the timeout has passed, also on the wall clock.
func TestRealClockTimeoutNotice(t *testing.T) {
	s, c := realSim(t, Options{HopLatency: time.Microsecond})
	if err := s.Kill("leaf01"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sendDR(t, c, 7, mad.Path{1}, 3*time.Millisecond)
	tid, st := recvTID(t, c)
	if d := time.Since(start); tid != 7 || st != transport.StatusTimedOut || d < 3*time.Millisecond {
		t.Errorf("TID %d status %d after %v, want TID 7 timed out after 3ms or later", tid, st, d)
	}
}

// The delivery goroutine runs only while answers are pending: it exits
// once they are delivered, and when the Conn they are for closes.
func TestRealClockDeliveryGoroutineExits(t *testing.T) {
	base := runtime.NumGoroutine()
	s, c := realSim(t, Options{HopLatency: time.Microsecond})
	if deliveryRunning(s) {
		t.Fatal("delivery goroutine running with nothing pending")
	}
	sendDR(t, c, 1, mad.Path{1}, 0)
	if tid, _ := recvTID(t, c); tid != 1 {
		t.Fatalf("TID %d", tid)
	}
	waitGoroutines(t, base)

	// An answer a minute away keeps it (asleep) until the Conn closes.
	if err := s.Kill("leaf01"); err != nil {
		t.Fatal(err)
	}
	sendDR(t, c, 2, mad.Path{1}, time.Minute)
	if !deliveryRunning(s) {
		t.Error("no delivery goroutine with an answer pending")
	}
	c.Close()
	waitGoroutines(t, base)
	if deliveryRunning(s) {
		t.Error("delivery goroutine still running after the Conn closed")
	}

	// Another Conn's pending answers keep it going after one closes.
	c2, err := s.Attach("gpu002 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c3, err := s.Attach("gpu003 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	sendDR(t, c2.(*Conn), 3, mad.Path{1}, 2*time.Millisecond)
	sendDR(t, c3.(*Conn), 4, mad.Path{1}, time.Minute)
	c3.Close()
	if tid, st := recvTID(t, c2.(*Conn)); tid != 3 || st != transport.StatusTimedOut {
		t.Errorf("TID %d status %d, want 3 timed out", tid, st)
	}
	waitGoroutines(t, base)
}

func deliveryRunning(s *Sim) bool {
	s.dq.mu.Lock()
	defer s.dq.mu.Unlock()
	return s.dq.running
}

// waitGoroutines waits until the number of goroutines drops to n (or
// below).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want %d", runtime.NumGoroutine(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
