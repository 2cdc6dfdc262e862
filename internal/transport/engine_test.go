package transport_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// echo answers every request with its attribute modifier in the first
// four data bytes, so a test can tell which request a response belongs to.
func echo(delay func(p *transport.Packet) time.Duration) transporttest.Handler {
	return func(p *transport.Packet) []transporttest.Reply {
		data := make([]byte, 4)
		copy(data, p.MAD[20:24])
		var d time.Duration
		if delay != nil {
			d = delay(p)
		}
		return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, 0)}, Delay: d}}
	}
}

func drGet(t testing.TB, path mad.Path, mod uint32) []byte {
	t.Helper()
	s, err := mad.NewDRGet(path, mad.AttrNodeInfo, mod)
	if err != nil {
		t.Fatal(err)
	}
	return s.Marshal()
}

func lidGet(mod uint32) []byte { return mad.NewLIDGet(mad.AttrNodeInfo, mod).Marshal() }

func modOf(t testing.TB, r *transport.Response) uint32 {
	t.Helper()
	return binary.BigEndian.Uint32(r.MAD[64:68])
}

func newEngine(t testing.TB, h transporttest.Handler, o transport.Options) (*transport.Engine, *transporttest.Conn) {
	t.Helper()
	c := transporttest.New(transport.LocalPort{Name: "fake/1", PortNum: 1}, h)
	e := transport.NewEngine(c, o)
	t.Cleanup(func() { e.Close() })
	return e, c
}

func TestDoAnswers(t *testing.T) {
	e, c := newEngine(t, echo(nil), transport.Options{})
	req := drGet(t, mad.Path{1, 3}, 42)
	orig := append([]byte(nil), req...)
	r, err := e.Do(context.Background(), transport.DirectedRoute(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(req) != string(orig) {
		t.Error("Do modified the request")
	}
	if got := modOf(t, r); got != 42 {
		t.Errorf("answer carries modifier %d, want 42", got)
	}
	if r.Attempts != 1 {
		t.Errorf("Attempts = %d, want 1", r.Attempts)
	}
	if r.MAD[5]&0 != 0 || r.MAD[4]&0x80 == 0 {
		t.Error("response lost its D bit")
	}
	if tid := binary.BigEndian.Uint64(r.MAD[8:16]); tid == 0 || tid>>32 != 0 {
		t.Errorf("engine TID 0x%x: want a non-zero low-32-bit TID", tid)
	}
	s := e.Stats()
	if s.Requests != 1 || s.Sent != 1 || s.Answered != 1 || s.BytesSent != 256 || s.BytesReceived != 256 || s.Latency.Count != 1 {
		t.Errorf("stats after one request: %+v", s)
	}
	if c.Sent() != 1 {
		t.Errorf("conn saw %d sends", c.Sent())
	}
}

func TestTIDsUniqueAndHighBitsIgnored(t *testing.T) {
	// The kernel rewrites the TID's high 32 bits: responses must match on
	// the low 32 only.
	var seen sync.Map
	h := func(p *transport.Packet) []transporttest.Reply {
		tid := binary.BigEndian.Uint64(p.MAD[8:16])
		if _, dup := seen.LoadOrStore(uint32(tid), true); dup {
			t.Errorf("TID 0x%x reused", tid)
		}
		resp := transporttest.Respond(p.MAD, nil, 0)
		binary.BigEndian.PutUint64(resp[8:16], tid|0xdeadbeef<<32)
		return []transporttest.Reply{{Packet: &transport.Packet{MAD: resp}}}
	}
	e, _ := newEngine(t, h, transport.Options{})
	for i := range 50 {
		if _, err := e.Do(context.Background(), transport.SMPAt(uint16(i+1)), lidGet(0)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWindows(t *testing.T) {
	for _, tc := range []struct {
		name          string
		window, per   int
		dests, reqs   int
		dr            bool
		wantAll, want int
	}{
		{name: "lid", window: 8, per: 2, dests: 10, reqs: 200, dr: false, wantAll: 8, want: 2},
		{name: "dr", window: 6, per: 1, dests: 12, reqs: 120, dr: true, wantAll: 6, want: 1},
		{name: "one-dest", window: 64, per: 3, dests: 1, reqs: 60, wantAll: 3, want: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := newEngine(t, echo(func(*transport.Packet) time.Duration { return 2 * time.Millisecond }),
				transport.Options{Window: tc.window, PerDest: tc.per})
			var wg sync.WaitGroup
			for i := range tc.reqs {
				wg.Go(func() {
					d := i % tc.dests
					addr, req := transport.SMPAt(uint16(d+1)), lidGet(uint32(i))
					if tc.dr {
						addr, req = transport.DirectedRoute(), drGet(t, mad.Path{1, uint8(d + 1)}, uint32(i))
					}
					r, err := e.Do(context.Background(), addr, req)
					if err != nil {
						t.Error(err)
						return
					}
					if modOf(t, r) != uint32(i) {
						t.Errorf("request %d got the answer to %d", i, modOf(t, r))
					}
				})
			}
			wg.Wait()
			all, per := c.MaxInFlight()
			if all > tc.window || per > tc.per {
				t.Errorf("in flight at the conn: %d overall (window %d), %d per destination (window %d)", all, tc.window, per, tc.per)
			}
			// The windows should also have been used, not just respected.
			if all < tc.wantAll || per < tc.want {
				t.Errorf("windows underused: %d overall (want %d), %d per destination (want %d)", all, tc.wantAll, per, tc.want)
			}
			if s := e.Stats(); s.MaxInFlight > tc.window || s.InFlight != 0 || s.Answered != uint64(tc.reqs) {
				t.Errorf("engine stats: %+v", s)
			}
		})
	}
}

// dropFirst drops the first n sends of each request (keyed by attribute
// modifier) and answers the rest.
func dropFirst(n int) (transporttest.Handler, func(mod uint32) int) {
	var mu sync.Mutex
	count := map[uint32]int{}
	h := func(p *transport.Packet) []transporttest.Reply {
		mod := binary.BigEndian.Uint32(p.MAD[20:24])
		mu.Lock()
		count[mod]++
		k := count[mod]
		mu.Unlock()
		if k <= n {
			return nil
		}
		return echo(nil)(p)
	}
	return h, func(mod uint32) int { mu.Lock(); defer mu.Unlock(); return count[mod] }
}

func TestRetries(t *testing.T) {
	h, sends := dropFirst(2)
	e, _ := newEngine(t, h, transport.Options{Timeout: 10 * time.Millisecond, Retries: 3})
	r, err := e.Do(context.Background(), transport.DirectedRoute(), drGet(t, mad.Path{1}, 7))
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 3 || sends(7) != 3 {
		t.Errorf("Attempts = %d, sends = %d; want 3 and 3", r.Attempts, sends(7))
	}
	if r.RTT >= 10*time.Millisecond {
		t.Errorf("RTT %v should time only the answered attempt", r.RTT)
	}
	s := e.Stats()
	if s.Sent != 3 || s.Retried != 2 || s.Answered != 1 || s.TimedOut != 0 {
		t.Errorf("stats: %+v", s)
	}
}

func TestTimeout(t *testing.T) {
	e, c := newEngine(t, func(*transport.Packet) []transporttest.Reply { return nil },
		transport.Options{Timeout: 5 * time.Millisecond, Retries: 2})
	_, err := e.Do(context.Background(), transport.DirectedRoute(), drGet(t, mad.Path{1, 4, 2}, 0))
	var te *transport.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("err = %v, want a *TimeoutError matching ErrTimeout", err)
	}
	if te.Attempts != 3 || c.Sent() != 3 {
		t.Errorf("attempts %d, sends %d; want 3", te.Attempts, c.Sent())
	}
	if te.Path.String() != "0,1,4,2" || te.Attr != mad.AttrNodeInfo || te.Class != mad.ClassSubnDR {
		t.Errorf("timeout error names %v %v path %v", te.Class, te.Attr, te.Path)
	}
	if te.Waited < 15*time.Millisecond {
		t.Errorf("waited %v for 3 attempts of 5ms", te.Waited)
	}
	// No retries at all.
	e2, c2 := newEngine(t, func(*transport.Packet) []transporttest.Reply { return nil },
		transport.Options{Timeout: 2 * time.Millisecond, Retries: -1})
	if _, err := e2.Do(context.Background(), transport.SMPAt(3), lidGet(0)); !errors.Is(err, transport.ErrTimeout) || c2.Sent() != 1 {
		t.Errorf("Retries -1: err %v, %d sends; want a timeout after 1 send", err, c2.Sent())
	}
	if s := e.Stats(); s.TimedOut != 1 || s.Retried != 2 || s.Sent != 3 {
		t.Errorf("stats: %+v", s)
	}
}

func TestTimedOutNotice(t *testing.T) {
	// The Conn reports status 110 for the first attempt at once: the
	// engine must retry without waiting for its own (long) timer.
	var n atomic.Int32
	h := func(p *transport.Packet) []transporttest.Reply {
		if n.Add(1) == 1 {
			return []transporttest.Reply{{Packet: transporttest.TimedOut(p.MAD)}}
		}
		return echo(nil)(p)
	}
	e, _ := newEngine(t, h, transport.Options{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := e.Do(ctx, transport.DirectedRoute(), drGet(t, mad.Path{1}, 9))
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 2 {
		t.Errorf("Attempts = %d, want 2", r.Attempts)
	}
	// Notices on every attempt: a TimeoutError without waiting a minute.
	e2, _ := newEngine(t, func(p *transport.Packet) []transporttest.Reply {
		return []transporttest.Reply{{Packet: transporttest.TimedOut(p.MAD)}}
	}, transport.Options{Timeout: time.Minute, Retries: 2})
	_, err = e2.Do(ctx, transport.SMPAt(1), lidGet(0))
	var te *transport.TimeoutError
	if !errors.As(err, &te) || te.Attempts != 3 {
		t.Fatalf("err = %v, want a timeout after 3 attempts", err)
	}
}

func TestStaleNoticeIgnored(t *testing.T) {
	// Attempt 1 goes unanswered and its timer fires at 1s; the Conn's
	// status-110 notice for it arrives at 1.3s, while attempt 2 waits;
	// attempt 2's answer arrives at 1.6s. The stale notice must not end
	// attempt 2. The 300ms gaps outlast a timer firing late on a loaded
	// machine (30ms did not, at load 15).
	var n atomic.Int32
	h := func(p *transport.Packet) []transporttest.Reply {
		if n.Add(1) == 1 {
			return []transporttest.Reply{{Packet: transporttest.TimedOut(p.MAD), Delay: 1300 * time.Millisecond}}
		}
		return echo(func(*transport.Packet) time.Duration { return 600 * time.Millisecond })(p)
	}
	e, _ := newEngine(t, h, transport.Options{Timeout: time.Second, Retries: 1})
	r, err := e.Do(context.Background(), transport.DirectedRoute(), drGet(t, mad.Path{2}, 5))
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 2 || modOf(t, r) != 5 {
		t.Errorf("attempts %d, answer %d", r.Attempts, modOf(t, r))
	}
	if s := e.Stats(); s.StaleNotices != 1 {
		t.Errorf("StaleNotices = %d, want 1", s.StaleNotices)
	}
}

func TestOutOfOrder(t *testing.T) {
	// Request i is answered after (N-i) ms: the last sent comes back first.
	const n = 40
	e, _ := newEngine(t, echo(func(p *transport.Packet) time.Duration {
		mod := binary.BigEndian.Uint32(p.MAD[20:24])
		return time.Duration(n-mod) * time.Millisecond
	}), transport.Options{Window: n, PerDest: n})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(uint32(i)))
			if err != nil {
				t.Error(err)
				return
			}
			if got := modOf(t, r); got != uint32(i) {
				t.Errorf("request %d got the answer to %d", i, got)
			}
		})
	}
	wg.Wait()
}

func TestDuplicates(t *testing.T) {
	h := func(p *transport.Packet) []transporttest.Reply {
		r := echo(nil)(p)
		return append(r, transporttest.Reply{Packet: r[0].Packet, Delay: time.Millisecond})
	}
	e, c := newEngine(t, h, transport.Options{})
	for i := range 10 {
		r, err := e.Do(context.Background(), transport.SMPAt(1), lidGet(uint32(i)))
		if err != nil {
			t.Fatal(err)
		}
		if modOf(t, r) != uint32(i) {
			t.Fatalf("request %d got the answer to %d", i, modOf(t, r))
		}
	}
	if c.Sent() != 10 {
		t.Errorf("%d sends for 10 requests", c.Sent())
	}
	deadline := time.Now().Add(2 * time.Second)
	for e.Stats().Late < 10 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s := e.Stats()
	if s.Late != 10 || s.Answered != 10 || s.Unknown != 0 {
		t.Errorf("duplicates: late %d (want 10), answered %d, unknown %d", s.Late, s.Answered, s.Unknown)
	}
}
