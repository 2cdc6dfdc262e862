package perf

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestDeltaAcrossSourcesUnknown: a port read from the 16/32-bit
// PortCounters in one sample (its PortCountersExtended unanswered) and
// from PortCountersExtended in the other has no increase: the two fields
// count the same events, but the narrow one saturates (and a device may
// clear them apart), so their difference means nothing. Before, delta
// subtracted them: the saturated 16-bit SymbolErrorCounter (65535) against
// the 64-bit one (145535) read as "+80000", and 32-bit data against
// 64-bit as a link at several times its rate.
func TestDeltaAcrossSourcesUnknown(t *testing.T) {
	caps := &mad.ClassPortInfo{CapabilityMask: mad.PMCapExtendedWidth | mad.PMCapXmitWait, CapabilityMask2: mad.PMCap2AdditionalCountersExtended}
	port := &fabric.Port{Num: 1, WidthActive: mad.Width4X, SpeedActive: mad.SpeedNDR}
	t0 := time.Unix(1_800_000_000, 0)
	k := Key{GUID: 0x2, Port: 1}
	narrow := stamped(&PortCounters{Key: k, Port: port, Caps: caps,
		Basic: &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xFFFF, XmitDataWords: 0xFFFFFFFF, RcvDataWords: 1000, PortXmitWait: 10}}, &t0, t0, t0)
	wide := stamped(&PortCounters{Key: k, Port: port, Caps: caps,
		Basic: &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xFFFF, XmitDataWords: 0xFFFFFFFF, RcvDataWords: 2000, PortXmitWait: 20},
		ext:   keepExt(&mad.PortCountersExtended{PortSelect: 1, SymbolErrorCounter: 145535, XmitDataWords: 1 << 40, RcvDataWords: 2000, PortXmitWait: 20}, true)}, &t0, t0.Add(2*time.Second), t0.Add(2*time.Second))
	for _, c := range []struct {
		name string
		a, b *PortCounters
	}{{"narrow then extended", narrow, wide}, {"extended then narrow", wide, narrow}} {
		t.Run(c.name, func(t *testing.T) {
			a, b := *c.a, *c.b
			if at, as, bt, bs := a.Time(), a.Sent(), b.Time(), b.Sent(); at.After(bt) {
				a.stamp(&t0, bt, bs)
				b.stamp(&t0, at, as)
			}
			d := delta(&a, &b, DefaultXmitWaitTick)
			for _, name := range []string{"SymbolErrorCounter", "PortXmitData", "PortRcvData", "PortXmitWait"} {
				v, ok := d.Get(name)
				if !ok {
					t.Errorf("%s: no entry (want one marked unknown)", name)
					continue
				}
				if !v.Unknown || v.Delta != 0 || v.PerSecond != 0 {
					t.Errorf("%s: unknown %v delta %d per second %g; want unknown, no increase computed", name, v.Unknown, v.Delta, v.PerSecond)
				}
				if !strings.Contains(v.Why, "PortCounters in one sample and PortCountersExtended in the other") {
					t.Errorf("%s: reason %q", name, v.Why)
				}
				if !slices.Contains(d.Mixed, name) {
					t.Errorf("%s not in Mixed %v", name, d.Mixed)
				}
			}
			if d.XmitUtilization != -1 || d.RcvUtilization != -1 || d.XmitWaitShare != -1 {
				t.Errorf("utilization %g/%g, wait share %g: want -1 (unknown)", d.XmitUtilization, d.RcvUtilization, d.XmitWaitShare)
			}
			if len(d.Backwards) != 0 {
				t.Errorf("backwards %v: a source change is not a clear", d.Backwards)
			}
		})
	}
	// The same source both times is still a delta.
	d := delta(narrow, stamped(&PortCounters{Key: k, Port: port, Caps: caps,
		Basic: &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xFFFF, XmitDataWords: 0xFFFFFFFF, RcvDataWords: 1500, PortXmitWait: 10}}, &t0, t0.Add(2*time.Second), time.Time{}), DefaultXmitWaitTick)
	if v, _ := d.Get("PortRcvData"); v.Unknown || v.Delta != 2000 || len(d.Mixed) != 0 {
		t.Errorf("narrow both times: %+v, mixed %v", v, d.Mixed)
	}
}

// dropExtGetter leaves every PortCountersExtended Get unanswered while
// drop is set: the sweep then reads those ports from PortCounters.
type dropExtGetter struct {
	g    Getter
	drop atomic.Bool
}

func (d *dropExtGetter) GetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	if _, ok := at.(*mad.PortCountersExtended); ok && d.drop.Load() {
		return nil, &transport.TimeoutError{}
	}
	return d.g.GetPerf(ctx, a, at, mod)
}

func (d *dropExtGetter) SetPerf(ctx context.Context, a transport.Addr, at mad.Attribute, mod uint32) (*mad.GMP, error) {
	return d.g.SetPerf(ctx, a, at, mod)
}

// TestMixedSourcesUndecidedInChecks: the first sample's
// PortCountersExtended went unanswered, the second's was answered.
// leaf01/3 has 145535 symbol errors (the 16-bit PortCounters field reads
// 65535, stuck) and none since. Before, counters.errors reported
// "SymbolErrorCounter climbing on leaf01/3: +80000" from the difference of
// the two fields; now the port is undecided for counters.errors and
// counters.utilization with the reason, and no counters.errors finding.
func TestMixedSourcesUndecidedInChecks(t *testing.T) {
	r := newRig(t, sim.Options{}, transport.Options{})
	k := r.key(t, "leaf01", 3)
	port := r.f.NodeByGUID(k.GUID).Ports[3]
	r.must(t, r.sim.SetCounter("leaf01/3", "SymbolErrorCounter", 145535))
	r.must(t, r.sim.CounterRate("leaf01/3", "PortXmitData", port.Rate().BytesPerSecond()/4/10))
	g := &dropExtGetter{g: r.eng}
	g.drop.Store(true)
	o := r.opts(Options{Interval: 2 * time.Second})
	sleep := o.Sleep
	o.Sleep = func(ctx context.Context, d time.Duration) error {
		g.drop.Store(false)
		return sleep(ctx, d)
	}
	res, err := Sweep(r.ctx, g, r.f, o)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := res.Delta(k)
	if !ok {
		t.Fatal("no delta for leaf01/3")
	}
	if !slices.Contains(d.Mixed, "SymbolErrorCounter") || !slices.Contains(d.Mixed, "PortXmitData") {
		t.Errorf("leaf01/3 mixed %v: want SymbolErrorCounter and PortXmitData", d.Mixed)
	}
	cr, err := checks.Run(&checks.Snapshot{Fabric: r.f, Counters: res}, "counters.errors", "counters.utilization")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cr.Findings {
		for _, e := range f.Entities {
			if e.NodeGUID == k.GUID && e.Port == int(k.Port) {
				t.Errorf("finding from the mixed difference: %s %s", f.Check, f.Title)
			}
		}
	}
	for _, check := range []string{"counters.errors", "counters.utilization"} {
		found := false
		for _, u := range cr.Undecided {
			if u.Check == check && u.Subject.NodeGUID == k.GUID && u.Subject.Port == int(k.Port) {
				found = true
				if !strings.Contains(u.Reason, "read from PortCounters in one sample and PortCountersExtended in the other") {
					t.Errorf("%s undecided reason %q", check, u.Reason)
				}
			}
		}
		if !found {
			t.Errorf("leaf01/3 not undecided for %s (undecided %v)", check, cr.Undecided)
		}
	}
}

// TestDeltaStuckAtMaxUnknown: a narrow counter stuck at its maximum in
// both samples (PortCountersExtended unanswered each time) grew by an
// unknown amount, not by 0: before, spine02/49's climbing symbol errors
// read "+0" once its 16-bit field had saturated, and the port was judged
// clean. A counter not saturated stays a delta.
func TestDeltaStuckAtMaxUnknown(t *testing.T) {
	caps := &mad.ClassPortInfo{CapabilityMask: mad.PMCapExtendedWidth | mad.PMCapXmitWait}
	port := &fabric.Port{Num: 1, WidthActive: mad.Width4X, SpeedActive: mad.SpeedNDR}
	t0 := time.Unix(1_800_000_000, 0)
	k := Key{GUID: 0x2, Port: 1}
	a := stamped(&PortCounters{Key: k, Port: port, Caps: caps,
		Basic: &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xFFFF, XmitDataWords: 0xFFFFFFFF, RcvDataWords: 1000, PortXmitWait: 10}}, &t0, t0, t0)
	b := stamped(&PortCounters{Key: k, Port: port, Caps: caps,
		Basic: &mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 0xFFFF, XmitDataWords: 0xFFFFFFFF, RcvDataWords: 1500, PortXmitWait: 20}}, &t0, t0.Add(2*time.Second), t0.Add(2*time.Second))
	d := delta(a, b, DefaultXmitWaitTick)
	for _, name := range []string{"SymbolErrorCounter", "PortXmitData"} {
		v, _ := d.Get(name)
		if !v.Unknown || !strings.Contains(v.Why, "maximum in both samples") {
			t.Errorf("%s: %+v; want unknown, stuck at its maximum in both samples", name, v)
		}
	}
	if d.XmitUtilization != -1 {
		t.Errorf("xmit utilization %g, want -1 (unknown)", d.XmitUtilization)
	}
	if v, _ := d.Get("PortRcvData"); v.Unknown || v.Delta != 2000 {
		t.Errorf("PortRcvData %+v: not saturated, still a delta of 2000 octets", v)
	}
}

// stamped sets pc's Time and Sent (zero: unknown) as offsets from clock.
func stamped(pc *PortCounters, clock *time.Time, at, sent time.Time) *PortCounters {
	pc.stamp(clock, at, sent)
	return pc
}
