package perf

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// syncOnly hides GoPerf: the sweep falls back to GetPerf.
type syncOnly struct{ g Getter }

func (s syncOnly) GetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	return s.g.GetPerf(ctx, a, at, mod)
}

func (s syncOnly) SetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	return s.g.SetPerf(ctx, a, at, mod)
}

// summary is what a sweep returns, minus pointers into the fabric, for
// comparing two sweeps.
func summary(t *testing.T, res *Result) string {
	t.Helper()
	out := ""
	for _, s := range []*Sample{res.First, res.Last} {
		for _, p := range s.Ports {
			out += fmt.Sprintf("%v lid %d t %v all %v basic %v ext %v %+v\n", p.Key, p.LID, p.Time().Sub(t0), p.FromAllPorts, p.Basic != nil, p.Extended() != nil, p.Counters())
		}
		for _, e := range s.Errors {
			out += errText(e) + "\n"
		}
		for g, c := range s.Caps {
			if !reflect.DeepEqual(c, res.First.Caps[g]) {
				out += fmt.Sprintf("caps of 0x%x differ between samples\n", g)
			}
		}
		out += fmt.Sprintf("%d caps\n", len(s.Caps))
	}
	for _, d := range res.Deltas {
		out += fmt.Sprintf("%v %+v\n", d.Key, d.Counters)
	}
	for _, e := range res.Errors {
		out += errText(e) + "\n"
	}
	return out
}

// errText is e's text without the time a timeout took.
func errText(e *PortError) string {
	return tookRE.ReplaceAllString(e.Error(), "in (time)")
}

var tookRE = regexp.MustCompile(`in [0-9.]+[mµn]?s\b`)

// TestAsyncMatchesSync sweeps the same simulated fabric through the
// engine's GoPerf and through GetPerf alone, with each option that
// changes the plan, and wants the same result (counters, errors and their
// text, order). The simulator runs on the wall clock (its counters are
// set, not grown), so that only the dead node goes unanswered: on the
// manual clock the Engine's 100 ms timer decided, and under -race at
// load 37 a live PMA's answer read late made one sweep an error longer
// ("36 lines with GoPerf, 37 with GetPerf"; TestSweepAnswerReadLate).
func TestAsyncMatchesSync(t *testing.T) {
	narrow := sim.PMACaps{Switch: sim.PMAAllPortSelect | sim.PMAExtendedWidthNoIETF | sim.PMAXmitWait, CA: sim.PMAExtendedWidth}
	for i, tc := range []struct {
		caps *sim.PMACaps
		o    Options
	}{
		{nil, Options{}},
		{nil, Options{ErrorsOnly: true}},
		{nil, Options{SkipCleanSwitches: true}},
		{nil, Options{Interval: time.Second}},
		{&narrow, Options{}},
		{&narrow, Options{ErrorsOnly: true, SkipCleanSwitches: true}},
		{&narrow, Options{NoExtended: true, Workers: 3}},
	} {
		var got [2]string
		for k := range got {
			r := newRigWith(t, sim.Options{PMA: tc.caps}, transport.Options{}, rigOptions{wall: true})
			r.must(t, r.sim.SetCounter("leaf01/3", "SymbolErrorCounter", 70000))
			r.must(t, r.sim.SetCounter("leaf02/4", "PortXmitDiscards", 4))
			r.must(t, r.sim.SetCounter("gpu002 mlx5_0/1", "PortRcvErrors", 12))
			r.must(t, r.sim.Kill("gpu003 mlx5_0"))
			var g Getter = r.g
			if k == 1 {
				g = syncOnly{r.g}
			}
			res, err := Sweep(r.ctx, g, r.f, r.opts(tc.o))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) == 0 || len(res.Last.Ports) == 0 {
				t.Fatalf("case %d: %d errors, %d ports", i, len(res.Errors), len(res.Last.Ports))
			}
			got[k] = summary(t, res)
		}
		a, b := strings.Split(got[0], "\n"), strings.Split(got[1], "\n")
		if len(a) != len(b) {
			t.Errorf("case %d (%+v): %d lines with GoPerf, %d with GetPerf", i, tc.o, len(a), len(b))
			continue
		}
		for l := range a {
			if a[l] != b[l] {
				t.Errorf("case %d (%+v) line %d:\nGoPerf:  %s\nGetPerf: %s", i, tc.o, l, a[l], b[l])
			}
		}
	}
}

// lateReader hands the Engine each packet its Conn received only after
// late: the Engine's reader waiting for a core on a loaded machine.
type lateReader struct {
	transport.Conn
	late time.Duration
}

func (l lateReader) Recv(ctx context.Context) (*transport.Packet, error) {
	p, err := l.Conn.Recv(ctx)
	if err == nil {
		time.Sleep(l.late)
	}
	return p, err
}

// NotifiesTimeouts is the wrapped Conn's.
func (l lateReader) NotifiesTimeouts() bool {
	n, ok := l.Conn.(transport.TimeoutNotifier)
	return ok && n.NotifiesTimeouts()
}

// TestSweepAnswerReadLate: TestAsyncMatchesSync's flake made
// deterministic. Every answer reaches the Engine's reader twice the
// 20 ms timeout late; only gpu003 (dead) leaves its reads unanswered. On
// the wall clock the simulator says which MADs it lost (its notices), so
// the sweep's only errors are gpu003's; on the manual clock the Engine's
// timer called live PMAs unanswered.
func TestSweepAnswerReadLate(t *testing.T) {
	r := newRigWith(t, sim.Options{}, transport.Options{Timeout: 20 * time.Millisecond},
		rigOptions{wall: true, wrap: func(c transport.Conn) transport.Conn { return lateReader{c, 40 * time.Millisecond} }})
	r.must(t, r.sim.Kill("gpu003 mlx5_0"))
	res, err := Sweep(r.ctx, r.g, r.f, r.opts(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) == 0 {
		t.Fatal("no error for the dead gpu003")
	}
	for _, e := range res.Errors {
		if !strings.Contains(e.Error(), "gpu003") {
			t.Errorf("a live PMA called unanswered: %v", e)
		}
	}
	if len(res.Last.Ports) != linkedPorts(r.f)-1 {
		t.Errorf("%d ports read, want every linked port but gpu003's (%d)", len(res.Last.Ports), linkedPorts(r.f)-1)
	}
}

// windowGetter answers like fakeGetter through GoPerf, after delay on
// another goroutine (or at once, on the caller's, with inline), and
// records the most MADs in flight overall and to one LID.
type windowGetter struct {
	fakeGetter
	delay  time.Duration
	inline bool

	mu               sync.Mutex
	inFlight         int
	perLID           map[uint16]int
	maxAll, maxOneLI int
}

func (w *windowGetter) GoPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32, done func(*mad.GMP, error)) error {
	w.mu.Lock()
	w.inFlight++
	w.perLID[a.DLID]++
	w.maxAll = max(w.maxAll, w.inFlight)
	w.maxOneLI = max(w.maxOneLI, w.perLID[a.DLID])
	w.mu.Unlock()
	answer := func() {
		gmp, err := w.GetPerf(ctx, a, at, mod)
		w.mu.Lock()
		w.inFlight--
		w.perLID[a.DLID]--
		w.mu.Unlock()
		done(gmp, err)
	}
	if w.inline {
		answer()
		return nil
	}
	go func() {
		time.Sleep(w.delay)
		answer()
	}()
	return nil
}

func bigFatTree(t *testing.T) *fabric.Fabric {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4, Common: topology.Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWindow: no more than Workers MADs in flight, no more than the
// per-destination window (2) to one PMA, and the window is filled: a
// switch's ports do not queue behind each other while other PMAs wait.
func TestWindow(t *testing.T) {
	f := bigFatTree(t)
	for _, inline := range []bool{false, true} {
		w := &windowGetter{delay: 2 * time.Millisecond, inline: inline, perLID: map[uint16]int{}}
		w.cpi = func(lid uint16, c *mad.ClassPortInfo) error {
			c.CapabilityMask = mad.PMCapExtendedWidth | mad.PMCapXmitWait
			return nil
		}
		w.pc = func(lid uint16, p *mad.PortCounters) error {
			p.SymbolErrorCounter = uint16(lid)
			return nil
		}
		res, err := Sweep(context.Background(), w, f, Options{Workers: 6})
		if err != nil || len(res.Errors) != 0 {
			t.Fatalf("%v %v", err, res.Errors)
		}
		if len(res.Last.Ports) != linkedPorts(f) {
			t.Fatalf("%d ports, want %d", len(res.Last.Ports), linkedPorts(f))
		}
		for _, pc := range res.Last.Ports {
			if v, _ := pc.Get("SymbolErrorCounter"); v.Value != uint64(pc.LID) || pc.Extended() == nil {
				t.Fatalf("%v: SymbolErrorCounter %+v ext %v", pc.Key, v, pc.Extended() != nil)
			}
		}
		// ClassPortInfo, then PortCountersExtended and PortCounters (no
		// 64-bit error counters) for every port.
		if want := int64(len(f.Nodes) + 2*linkedPorts(f)); w.gets.Load() != want {
			t.Errorf("%d reads, want %d", w.gets.Load(), want)
		}
		if w.maxOneLI > transport.DefaultPerDest {
			t.Errorf("inline %v: %d in flight to one LID", inline, w.maxOneLI)
		}
		if w.maxAll > 6 || (!inline && w.maxAll < 6) {
			t.Errorf("inline %v: %d in flight at most, want 6", inline, w.maxAll)
		}
	}
}

// TestCancelMidway cancels the sweep after some reads: it returns, with
// the error, what was read and the reads that failed; nothing new is
// started once ctx has ended.
func TestCancelMidway(t *testing.T) {
	f := bigFatTree(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &windowGetter{delay: 100 * time.Microsecond, perLID: map[uint16]int{}}
	var mu sync.Mutex
	n := 0
	w.pc = func(lid uint16, p *mad.PortCounters) error {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 10 {
			cancel()
		}
		return nil
	}
	res, err := Sweep(ctx, w, f, Options{Workers: 4})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if len(res.Last.Ports) == 0 || len(res.Last.Ports) >= linkedPorts(f) {
		t.Errorf("%d of %d ports read", len(res.Last.Ports), linkedPorts(f))
	}
	for _, e := range res.Errors {
		if !errors.Is(e, context.Canceled) {
			t.Errorf("error %v", e)
		}
	}
	// at most the reads in flight when ctx ended get through the fake
	if total := w.gets.Load(); total > int64(len(f.Nodes)+2*linkedPorts(f)) || n > 10+4 {
		t.Errorf("%d reads, %d PortCounters", total, n)
	}
}
