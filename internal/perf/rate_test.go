package perf

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// slowGetter makes each read take time on the manual clock: before the
// device reads its counters (queued behind other MADs) or after (the
// answer's way back), as the sample asks. It has no GoPerf, so the sweep
// sends one read at a time with Workers 1.
type slowGetter struct {
	g             Getter
	clk           *sim.ManualClock
	before, after atomic.Int64 // nanoseconds
}

func (s *slowGetter) GetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	s.clk.Advance(time.Duration(s.before.Load()))
	g, err := s.g.GetPerf(ctx, a, at, mod)
	s.clk.Advance(time.Duration(s.after.Load()))
	return g, err
}

func (s *slowGetter) SetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	return s.g.SetPerf(ctx, a, at, mod)
}

// TestSaturatedLinkAtMost100: a link sending at exactly its data rate
// reads at most 100% (and close to it), although each sweep takes time
// (the second reading of a port comes later than the nominal interval
// after the first) and its answers come back after the device read its
// counters in the first sample, before in the second. Before, the checks
// divided by the nominal interval (102% on the sample fabric with
// --interval 2s) and a port's time between readings was stamped at the
// answers only (100.1% in top).
func TestSaturatedLinkAtMost100(t *testing.T) {
	r := newRig(t, sim.Options{}, transport.Options{})
	k := r.key(t, "leaf01", 3)
	var port = r.f.NodeByGUID(k.GUID).Ports[3]
	words := port.Rate().BytesPerSecond() / 4
	r.must(t, r.sim.CounterRate("leaf01/3", "PortXmitData", words))
	g := &slowGetter{g: r.eng, clk: r.clk}
	g.after.Store(int64(5 * time.Millisecond))
	o := r.opts(Options{Interval: 2 * time.Second, Workers: 1})
	sleep := o.Sleep
	o.Sleep = func(ctx context.Context, d time.Duration) error {
		g.before.Store(int64(5 * time.Millisecond))
		g.after.Store(0)
		return sleep(ctx, d)
	}
	res, err := Sweep(r.ctx, g, r.f, o)
	if err != nil || len(res.Errors) != 0 {
		t.Fatalf("%v %v", err, res.Errors)
	}
	d, ok := res.Delta(k)
	if !ok {
		t.Fatal("no delta for leaf01/3")
	}
	if d.XmitUtilization > 1 || d.XmitUtilization < 0.99 {
		t.Errorf("top's utilization of a saturated link: %.4f (over %v)", d.XmitUtilization, d.Elapsed)
	}
	if iv := res.Interval(); iv <= 2*time.Second {
		t.Errorf("interval %v: the nominal one, not the time between readings", iv)
	}
	res.Ports(func(rd checksReading) {
		if rd.Port != port {
			return
		}
		u, ok := rd.Utilization(res.Interval().Seconds())
		if !ok || u > 1 || u < 0.99 {
			t.Errorf("the checks' utilization of a saturated link: %.4f %v (interval %v)", u, ok, res.Interval())
		}
	})
}
