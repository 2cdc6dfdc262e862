package sim

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func TestServiceTimeQueuesPerNode(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{ServiceTime: 10 * time.Microsecond, HopLatency: time.Microsecond})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	send := func(id uint64, path mad.Path, timeout time.Duration) {
		smp, _ := mad.NewDRGet(path, mad.AttrNodeInfo, 0)
		smp.TID = id
		if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal(), Timeout: timeout}); err != nil {
			t.Fatal(err)
		}
	}
	// Three MADs to spine01 (2 hops) at once, one to leaf01 (1 hop).
	send(1, mad.Path{1, 3}, 0)
	send(2, mad.Path{1, 3}, 0)
	send(3, mad.Path{1, 3}, 20*time.Microsecond) // will be late
	send(4, mad.Path{1}, 0)
	type arrival struct {
		tid    uint64
		at     time.Duration
		status int
	}
	var got []arrival
	for step := time.Duration(0); step <= 40*time.Microsecond; step += time.Microsecond {
		for p := poll(c); p != nil; p = poll(c) {
			h, _ := mad.PeekHeader(p.MAD)
			got = append(got, arrival{h.TID, step, p.Status})
		}
		clk.Advance(time.Microsecond)
	}
	want := []arrival{
		{4, 12 * time.Microsecond, 0}, // 1 hop + 10 + 1 hop, its own queue
		{1, 14 * time.Microsecond, 0}, // 2 + 10 + 2
		{3, 20 * time.Microsecond, transport.StatusTimedOut},
		{2, 24 * time.Microsecond, 0}, // waited for #1
	}
	if len(got) != len(want) {
		t.Fatalf("arrivals %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("arrival %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestQueueLimitDrops(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{ServiceTime: 10 * time.Microsecond, QueueLimit: 1})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	for i := range 4 {
		smp, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
		smp.TID = uint64(i + 1)
		if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Millisecond)
	n := 0
	for p := poll(c); p != nil; p = poll(c) {
		n++
	}
	// One in service, one waiting; the other two overflow.
	if n != 2 {
		t.Errorf("%d answered, want 2", n)
	}
}

func TestRealClockDelivers(t *testing.T) {
	s, err := New(fatTree(t, 2, 2, 2), Options{HopLatency: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	smp, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	smp.TID = 9
	start := time.Now()
	if err := cc.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := cc.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 2*time.Millisecond {
		t.Errorf("answer after %v, before two hops of latency", d)
	}
	if h, _ := mad.PeekHeader(p.MAD); h.TID != 9 {
		t.Errorf("TID %d", h.TID)
	}
	// Close wakes a blocked Recv.
	go func() { time.Sleep(10 * time.Millisecond); cc.Close() }()
	if _, err := cc.Recv(context.Background()); err != transport.ErrClosed {
		t.Errorf("Recv after Close: %v", err)
	}
}

// TestConcurrentUse runs directed-route, LID-routed and PerfMgt requests
// from several goroutines and Conns while faults and traffic change the
// fabric (run with -race).
func TestConcurrentUse(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{ServiceTime: time.Microsecond})
	done := make(chan struct{})
	errs := make(chan error, 8)
	leaf := lidOf(t, s, "leaf01")
	for i, host := range []string{"gpu001 mlx5_0", "gpu002 mlx5_0", "gpu003 mlx5_0", "gpu004 mlx5_0"} {
		c := attach(t, s, host, 1)
		go func(i int, c *Conn) {
			defer func() { done <- struct{}{} }()
			ctx := context.Background()
			for n := range 200 {
				var raw []byte
				addr := transport.DirectedRoute()
				switch n % 3 {
				case 0:
					smp, _ := mad.NewDRGet(mad.Path{1, 3}, mad.AttrPortInfo, 1)
					smp.TID = uint64(i<<20 | n)
					raw = smp.Marshal()
				case 1:
					smp := mad.NewLIDGet(mad.AttrNodeInfo, 0)
					smp.TID = uint64(i<<20 | n)
					raw, addr = smp.Marshal(), transport.SMPAt(leaf)
				case 2:
					g, _ := mad.NewPerfGet(mad.AttrPortCounters, 0, &mad.PortCounters{PortSelect: 0xff})
					g.TID = uint64(i<<20 | n)
					raw, addr = g.Marshal(), transport.PerfAt(leaf, 0, 0)
				}
				if err := c.Send(ctx, &transport.Packet{Addr: addr, MAD: raw}); err != nil {
					errs <- err
					return
				}
			}
		}(i, c)
	}
	go func() {
		defer func() { done <- struct{}{} }()
		for n := range 50 {
			_ = s.CounterRate("leaf01/3", "SymbolErrorCounter", float64(n))
			_ = s.Degrade("leaf02/4", mad.Width1X, 0)
			if n == 10 {
				_, _ = s.AddTraffic(Traffic{Pattern: RingAllReduce, RateGbps: 100})
			}
			clk.Advance(time.Millisecond)
			_ = s.Fabric()
		}
	}()
	for range 5 {
		<-done
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}
