package transport_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

func TestLateResponseNeverReachesNextRequest(t *testing.T) {
	// Request A (modifier 1) gives up before its answer comes; request B
	// (modifier 2) is sent right after. A's late answer arrives while B
	// waits and must be dropped, not handed to B. No timing margins: A is
	// never answered on its own; B's handler first delivers A's answer,
	// then B's, so the order on the wire is fixed.
	gated := func() transporttest.Handler {
		var mu sync.Mutex
		var heldA []byte
		return func(p *transport.Packet) []transporttest.Reply {
			mu.Lock()
			defer mu.Unlock()
			mod := binary.BigEndian.Uint32(p.MAD[20:24])
			if mod == 1 {
				heldA = append([]byte(nil), p.MAD...)
				return nil
			}
			var replies []transporttest.Reply
			if heldA != nil {
				late := transporttest.Respond(heldA, []byte{0, 0, 0, 1}, 0)
				replies = append(replies, transporttest.Reply{Packet: &transport.Packet{Addr: p.Addr, MAD: late}})
			}
			data := make([]byte, 4)
			copy(data, p.MAD[20:24])
			return append(replies, transporttest.Reply{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, 0)}})
		}
	}
	t.Run("after timeout", func(t *testing.T) {
		e, _ := newEngine(t, gated(), transport.Options{Timeout: 20 * time.Millisecond, Retries: -1})
		if _, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(1)); !errors.Is(err, transport.ErrTimeout) {
			t.Fatalf("A: %v, want a timeout", err)
		}
		r, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(2))
		if err != nil {
			t.Fatalf("B: %v", err)
		}
		if got := modOf(t, r); got != 2 {
			t.Errorf("B got the answer to %d", got)
		}
		if s := e.Stats(); s.Late != 1 || s.Answered != 1 || s.TimedOut != 1 {
			t.Errorf("late %d (want 1), answered %d, timed out %d", s.Late, s.Answered, s.TimedOut)
		}
	})
	t.Run("after cancel", func(t *testing.T) {
		e, _ := newEngine(t, gated(), transport.Options{Timeout: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := e.Do(ctx, transport.SMPAt(1), lidGet(1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("A: %v, want its context's deadline", err)
		}
		r, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(2))
		if err != nil {
			t.Fatalf("B: %v", err)
		}
		if got := modOf(t, r); got != 2 {
			t.Errorf("B got the answer to %d", got)
		}
		if s := e.Stats(); s.Late != 1 || s.Canceled != 1 || s.Answered != 1 {
			t.Errorf("late %d (want 1), canceled %d, answered %d", s.Late, s.Canceled, s.Answered)
		}
	})
}

func TestUnknownAndUnsolicited(t *testing.T) {
	e, c := newEngine(t, echo(nil), transport.Options{})
	// A response whose TID was never issued, a request (a trap) from the
	// fabric, and garbage.
	stray := transporttest.Respond(lidGet(0), nil, 0)
	binary.BigEndian.PutUint64(stray[8:16], 0x12345678)
	c.Inject(&transport.Packet{MAD: stray}, 0)
	trap := lidGet(0)
	trap[3] = byte(mad.MethodTrap)
	c.Inject(&transport.Packet{MAD: trap}, 0)
	c.Inject(&transport.Packet{MAD: []byte{1, 2, 3}}, 0)
	// A request after them still works; its answer is queued after the
	// strays, so by then they have been counted.
	if _, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(3)); err != nil {
		t.Fatal(err)
	}
	if s := e.Stats(); s.Unknown != 3 || s.Late != 0 || s.Answered != 1 {
		t.Errorf("unknown %d (want 3), late %d, answered %d", s.Unknown, s.Late, s.Answered)
	}
}

func TestCancelNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	c := transporttest.New(transport.LocalPort{Name: "fake/1"}, silent)
	e := transport.NewEngine(c, transport.Options{Timeout: time.Minute, Window: 4, PerDest: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 { // 4 in flight, 16 waiting for a window slot
		wg.Go(func() {
			_, err := e.Do(ctx, transport.SMPAt(uint16(i%8+1)), lidGet(uint32(i)))
			errs <- err
		})
	}
	deadline := time.Now().Add(2 * time.Second)
	for e.Stats().InFlight < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	if s := e.Stats(); s.InFlight != 4 {
		t.Errorf("in flight before cancel: %d, want 4", s.InFlight)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	}
	if s := e.Stats(); s.Canceled != 20 || s.InFlight != 0 {
		t.Errorf("canceled %d (want 20), in flight %d", s.Canceled, s.InFlight)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestCloseUnblocks(t *testing.T) {
	silent := func(*transport.Packet) []transporttest.Reply { return nil }
	e, _ := newEngine(t, silent, transport.Options{Timeout: time.Minute})
	done := make(chan error)
	go func() {
		_, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(0))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	e.Close()
	if err := <-done; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if _, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(0)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Do after Close: %v, want ErrClosed", err)
	}
}

func TestReadOnly(t *testing.T) {
	set, err := mad.NewDRSet(mad.Path{1}, &mad.NodeInfo{NodeType: mad.NodeCA}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e, c := newEngine(t, echo(nil), transport.Options{})
	if _, err := e.Do(context.Background(), transport.DirectedRoute(), set.Marshal()); !errors.Is(err, transport.ErrReadOnly) {
		t.Errorf("Set without AllowWrites: %v, want ErrReadOnly", err)
	}
	if c.Sent() != 0 {
		t.Errorf("a refused Set reached the Conn")
	}
	if _, err := e.SetSMP(context.Background(), mad.Path{1}, &mad.NodeInfo{}, 0); !errors.Is(err, transport.ErrReadOnly) {
		t.Errorf("SetSMP without AllowWrites: %v", err)
	}
	w, wc := newEngine(t, echo(nil), transport.Options{AllowWrites: true})
	if _, err := w.Do(context.Background(), transport.DirectedRoute(), set.Marshal()); err != nil {
		t.Errorf("Set with AllowWrites: %v", err)
	}
	if wc.Sent() != 1 {
		t.Errorf("Set with AllowWrites: %d sends", wc.Sent())
	}
	// Responses are not requests.
	if _, err := e.Do(context.Background(), transport.SMPAt(1), transporttest.Respond(lidGet(0), nil, 0)); err == nil {
		t.Error("Do sent a response MAD")
	}
}

func TestStatusError(t *testing.T) {
	// The responder answers with the status the request's modifier names.
	h := func(p *transport.Packet) []transporttest.Reply {
		st := mad.Status(binary.BigEndian.Uint32(p.MAD[20:24]))
		return []transporttest.Reply{{Packet: &transport.Packet{MAD: transporttest.Respond(p.MAD, nil, st)}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	// Status 0 with the D bit set is OK.
	if _, err := e.Do(context.Background(), transport.DirectedRoute(), drGet(t, mad.Path{1}, 0)); err != nil {
		t.Errorf("DR response with only the D bit: %v", err)
	}
	// Code 7 (invalid field) on a DR SMP: the D bit is not part of it.
	r, err := e.Do(context.Background(), transport.DirectedRoute(), drGet(t, mad.Path{1, 5}, 7<<2))
	var se *transport.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *StatusError", err)
	}
	if se.Status != 7<<2 || se.Status.Code() != mad.StatusInvalidField || se.Path.String() != "0,1,5" {
		t.Errorf("status error %+v", se)
	}
	if r == nil || r.MAD[4]&0x80 == 0 {
		t.Error("the response should come with the status error")
	}
	// A class-specific status on a LID-routed SMP.
	_, err = e.Do(context.Background(), transport.SMPAt(4), lidGet(0x0100))
	if !errors.As(err, &se) || se.Status != 0x0100 {
		t.Errorf("LID-routed status 0x0100: %v", err)
	}
	if s := e.Stats(); s.Errors != 2 || s.Answered != 3 {
		t.Errorf("errors %d (want 2), answered %d (want 3)", s.Errors, s.Answered)
	}
}

func TestConnClosedUnderEngine(t *testing.T) {
	c := transporttest.New(transport.LocalPort{Name: "fake/1"}, echo(nil))
	e := transport.NewEngine(c, transport.Options{})
	c.Close() // the Conn dies under the engine
	_, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(0))
	if !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Do on a closed Conn: %v, want ErrClosed", err)
	}
	e.Close()
}

func TestGetSMP(t *testing.T) {
	want := mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeSwitch, NumPorts: 36,
		NodeGUID: 0x0002c90300a1b2c3, PortGUID: 0x0002c90300a1b2c3, LocalPortNum: 7, VendorID: 0x0002c9}
	var lastPath atomic.Value
	h := func(p *transport.Packet) []transporttest.Reply {
		if mad.Class(p.MAD[1]) == mad.ClassSubnDR {
			lastPath.Store(transporttest.DestKey(p))
		}
		data := make([]byte, mad.SMPDataSize)
		if err := want.MarshalAttr(data); err != nil {
			t.Error(err)
		}
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, 0)}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	var ni mad.NodeInfo
	smp, err := e.GetSMP(context.Background(), mad.Path{1, 7}, &ni, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ni != want || !smp.Direction || smp.HopCount != 2 {
		t.Errorf("GetSMP decoded %+v (D %v, hops %d), want %+v", ni, smp.Direction, smp.HopCount, want)
	}
	if lastPath.Load() != "dr:0,1,7" {
		t.Errorf("sent along %v", lastPath.Load())
	}
	ni = mad.NodeInfo{}
	if _, err := e.GetSMPByLID(context.Background(), 12, &ni, 0); err != nil || ni != want {
		t.Errorf("GetSMPByLID: %v, %+v", err, ni)
	}
}

func TestGetSMPRejectsMismatch(t *testing.T) {
	// A response for another attribute with our TID is not accepted.
	h := func(p *transport.Packet) []transporttest.Reply {
		b := transporttest.Respond(p.MAD, nil, 0)
		binary.BigEndian.PutUint16(b[16:18], uint16(mad.AttrPortInfo))
		return []transporttest.Reply{{Packet: &transport.Packet{MAD: b}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	var ni mad.NodeInfo
	_, err := e.GetSMP(context.Background(), mad.Path{1}, &ni, 0)
	var fe *mad.FieldError
	if !errors.As(err, &fe) || fe.Field != "SMP.AttributeID" {
		t.Errorf("mismatched attribute: %v", err)
	}
}

// portSel is a minimal PerfMgt attribute for the helper tests: byte 1 is
// PortSelect, bytes 8..15 a counter.
type portSel struct {
	Port    uint8
	Counter uint64
}

func (*portSel) AttributeID() mad.AttrID { return mad.AttrPortCountersExtended }
func (a *portSel) MarshalAttr(b []byte) error {
	b[1] = a.Port
	binary.BigEndian.PutUint64(b[8:16], a.Counter)
	return nil
}
func (a *portSel) UnmarshalAttr(b []byte) error {
	if len(b) < 16 {
		return &mad.FieldError{Field: "portSel", Msg: "short"}
	}
	a.Port, a.Counter = b[1], binary.BigEndian.Uint64(b[8:16])
	return nil
}

func TestPerf(t *testing.T) {
	var gotAddr atomic.Value
	h := func(p *transport.Packet) []transporttest.Reply {
		gotAddr.Store(p.Addr)
		data := make([]byte, mad.GMPDataSize)
		copy(data, p.MAD[64:])
		// The PMA answers the selected port's counter: port*1000.
		binary.BigEndian.PutUint64(data[8:16], uint64(data[1])*1000)
		return []transporttest.Reply{{Packet: &transport.Packet{MAD: transporttest.Respond(p.MAD, data, 0)}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	a := &portSel{Port: 17}
	addr := transport.PerfAt(9, 0, 0)
	g, err := e.GetPerf(context.Background(), addr, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Counter != 17000 || g.Method != mad.MethodGetResp {
		t.Errorf("GetPerf decoded %+v, method %v", a, g.Method)
	}
	if gotAddr.Load().(transport.Addr) != addr {
		t.Errorf("sent to %v", gotAddr.Load())
	}
	if _, err := e.SetPerf(context.Background(), addr, a, 0); !errors.Is(err, transport.ErrReadOnly) {
		t.Errorf("SetPerf read-only: %v", err)
	}
	w, _ := newEngine(t, h, transport.Options{AllowWrites: true})
	if _, err := w.SetPerf(context.Background(), addr, &portSel{Port: 2}, 0); err != nil {
		t.Errorf("SetPerf: %v", err)
	}
}

type tapRec struct {
	mu         sync.Mutex
	sent, recv int
	bad        string
}

func (r *tapRec) Record(sent bool, _ transport.Addr, b []byte, _ time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(b) != mad.Size {
		r.bad = fmt.Sprintf("tap got %d bytes", len(b))
	}
	if sent {
		r.sent++
	} else {
		r.recv++
	}
}

func TestTap(t *testing.T) {
	// The first attempt is dropped. The conn's own count is the truth: under
	// load the 5ms timeout may fire again before the answer, and the tap may
	// record a send just after Do has returned, so wait for the two to agree.
	h, sends := dropFirst(1)
	tap := &tapRec{}
	e, _ := newEngine(t, h, transport.Options{Tap: tap, Timeout: 5 * time.Millisecond})
	if _, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(1)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := sends(1)
		tap.mu.Lock()
		sent, recv, bad := tap.sent, tap.recv, tap.bad
		tap.mu.Unlock()
		// Every attempt but the dropped first is answered.
		if n >= 2 && sent == n && recv == n-1 && bad == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tap saw %d sent, %d received (%s); the conn saw %d sends, answered %d", sent, recv, bad, n, n-1)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestStatsLatency(t *testing.T) {
	// Delays of 1..20ms: each request's latency lies between its delay
	// and how long its Do took, which the test measures; so do the
	// percentiles (the histogram's buckets round up by at most 1/16,
	// TestHistogramQuantiles). A fixed upper bound (P50 <= 16ms) failed
	// at load 20, where the reader waited for a core: 3 runs in 10.
	var i atomic.Int32
	e, _ := newEngine(t, echo(func(*transport.Packet) time.Duration {
		return time.Duration(i.Add(1)) * time.Millisecond
	}), transport.Options{})
	took := make([]time.Duration, 0, 20)
	for range 20 {
		start := time.Now()
		if _, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(0)); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	upTo := func(d time.Duration) time.Duration { return d + d/16 }
	l := e.Stats().Latency
	if l.Count != 20 || l.P50 < 10*time.Millisecond || l.P50 > upTo(took[9]) ||
		l.Max < 20*time.Millisecond || l.Max > took[19] || l.P99 > l.Max || l.P90 < l.P50 {
		t.Errorf("latency %+v; the calls took %v", l, took)
	}
}

func BenchmarkDo(b *testing.B) {
	c := transporttest.New(transport.LocalPort{Name: "fake/1"}, echo(nil))
	e := transport.NewEngine(c, transport.Options{Window: 64, PerDest: 64})
	defer e.Close()
	req := lidGet(0)
	b.SetBytes(mad.Size)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Do(context.Background(), transport.SMPAt(1), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
