package sim

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// A packet the simulator did not make is never taken into its pool, even
// when it looks like one of its answers (status 0, from a directed route,
// 256 bytes): the next answers would be written over memory its owner
// still reads.
func TestRecycleOnlyOwnAnswers(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)

	foreign := make([]byte, mad.Size)
	for i := range foreign {
		foreign[i] = 0xA5
	}
	keep := bytes.Clone(foreign)
	p := &transport.Packet{Addr: transport.DirectedRoute(), MAD: foreign}
	c.Recycle(p)
	if p.MAD == nil {
		t.Fatal("Recycle cleared a packet it did not make")
	}
	// A copy of a real answer is not the answer either.
	if r := drGetPacket(t, c, mad.Path{1}); r != nil {
		dup := *r
		dup.MAD = foreign
		c.Recycle(&dup)
		c.Recycle(r)
	}
	for range 64 {
		if r := drGetPacket(t, c, mad.Path{1, 3}); r != nil {
			c.Recycle(r)
		}
	}
	if !bytes.Equal(foreign, keep) {
		t.Fatal("the simulator wrote an answer into a packet's MAD it did not make and was handed to Recycle")
	}
}

// drGetPacket sends a NodeInfo Get over path and returns the answer's
// packet as Recv gave it.
func drGetPacket(t *testing.T, c *Conn, path mad.Path) *transport.Packet {
	t.Helper()
	smp, err := mad.NewDRGet(path, mad.AttrNodeInfo, 0)
	if err != nil {
		t.Fatal(err)
	}
	tid++
	smp.TID = tid
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
		t.Fatal(err)
	}
	return poll(c)
}

// Answers that arrive after their attempt timed out (late, for a request
// retried or failed meanwhile) are recycled by the engine like any
// other, and never reach a read that reuses the request: every read gets
// its own answer or an error.
func TestRecycleLateAnswersConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("wall clock")
	}
	f := fatTree(t, 4, 2, 4)
	s, err := New(f, Options{Concurrent: true, ServiceTime: 150 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	// Without the engine's timeout, the simulator answers however late
	// (not a timeout notice instead): answers then come after their
	// attempt timed out.
	eng := transport.NewEngine(lateConn{conn.(*Conn)}, transport.Options{Timeout: 200 * time.Microsecond, Retries: 2, Window: 16, PerDest: 4})
	defer eng.Close()
	// Leaf ports 1-4 go to hosts, 5 and 6 to the spines; spine port k
	// to leaf k.
	paths := []mad.Path{{1}, {1, 5}, {1, 6}, {1, 5, 2}, {1, 6, 3}, {1, 5, 4}, {1, 6, 2, 3}}
	want := make([]uint64, len(paths))
	warm, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	weng := transport.NewEngine(warm, transport.Options{})
	defer weng.Close()
	for i, p := range paths {
		var ni mad.NodeInfo
		if _, err := weng.GetSMP(context.Background(), p, &ni, 0); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		want[i] = ni.NodeGUID
	}
	var bad atomic.Int32
	done := make(chan struct{}, 1)
	const n = 3000
	var left atomic.Int32
	left.Store(n)
	for k := range n {
		i := k % len(paths)
		var ni mad.NodeInfo
		err := eng.GoSMP(context.Background(), paths[i], &ni, 0, func(_ *mad.SMP, err error) {
			if err == nil && ni.NodeGUID != want[i] {
				bad.Add(1)
			}
			if left.Add(-1) == 0 {
				done <- struct{}{}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if b := bad.Load(); b != 0 {
		t.Fatalf("%d reads got another read's answer", b)
	}
	if st := eng.Stats(); st.Retried == 0 || st.Late == 0 {
		t.Fatalf("no answer came late (%+v): the test did not test it", st)
	}
}

// lateConn sends without the timeout hint; Recycle is *Conn's, promoted.
type lateConn struct{ *Conn }

// NotifiesTimeouts: without the hint the simulator sends no notice, so
// the Engine's own timer must end the attempts.
func (lateConn) NotifiesTimeouts() bool { return false }

func (c lateConn) Send(ctx context.Context, p *transport.Packet) error {
	q := *p
	q.Timeout = 0
	return c.Conn.Send(ctx, &q)
}
