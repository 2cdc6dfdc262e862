package perf

import (
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestComparePriorIsDelta: a reading kept as a Prior (what top holds per
// watched port) gives Compare the change delta gives from the whole
// reading, counter for counter but the packet counters, which a Prior
// does not keep: from PortCounters alone, with PortCountersExtended's
// data, with its error counters too, mixed, saturated and backwards.
func TestComparePriorIsDelta(t *testing.T) {
	dataOnly := &mad.ClassPortInfo{CapabilityMask: mad.PMCapExtendedWidth | mad.PMCapXmitWait}
	whole := &mad.ClassPortInfo{CapabilityMask: mad.PMCapExtendedWidth | mad.PMCapXmitWait, CapabilityMask2: mad.PMCap2AdditionalCountersExtended}
	port := &fabric.Port{Num: 3, WidthActive: mad.Width4X, SpeedActive: mad.SpeedHDR}
	t0 := time.Unix(1_800_000_000, 5)
	k := Key{GUID: 0x9, Port: 3}
	basic := func(sym uint16, data, wait uint32) *mad.PortCounters {
		return &mad.PortCounters{PortSelect: 3, SymbolErrorCounter: sym, LinkDownedCounter: 1, XmitDataWords: data, RcvDataWords: data / 2, PortXmitPkts: data / 8, PortXmitWait: wait}
	}
	ext := func(sym, data uint64, errs bool) *extFields {
		return keepExt(&mad.PortCountersExtended{PortSelect: 3, SymbolErrorCounter: sym, XmitDataWords: data, RcvDataWords: data / 3, PortXmitPkts: data / 9, PortXmitWait: sym * 7}, errs)
	}
	read := func(caps *mad.ClassPortInfo, b *mad.PortCounters, x *extFields, at, sent time.Duration) *PortCounters {
		sentAt := time.Time{}
		if sent >= 0 {
			sentAt = t0.Add(sent)
		}
		return stamped(&PortCounters{Key: k, Port: port, Caps: caps, Basic: b, ext: x}, &t0, t0.Add(at), sentAt)
	}
	for _, c := range []struct {
		name string
		a, b *PortCounters
	}{
		{"PortCounters", read(nil, basic(5, 1000, 40), nil, time.Second, -1), read(nil, basic(9, 5000, 90), nil, 3*time.Second, 2*time.Second)},
		{"extended data", read(dataOnly, basic(5, 1000, 40), ext(0, 1<<33, false), time.Second, 900*time.Millisecond), read(dataOnly, basic(0xFFFF, 3000, 50), ext(0, 1<<34, false), 4*time.Second, 3*time.Second)},
		{"extended errors", read(whole, basic(5, 1000, 40), ext(70, 1<<33, true), time.Second, 0), read(whole, basic(6, 3000, 50), ext(60, 1<<35, true), 2*time.Second, time.Second)},
		{"mixed", read(whole, basic(5, 1000, 40), nil, time.Second, 0), read(whole, basic(6, 3000, 50), ext(60, 1<<35, true), 2*time.Second, time.Second)},
		{"saturated", read(nil, basic(0xFFFF, 0xFFFFFFFF, 40), nil, time.Second, 0), read(nil, basic(0xFFFF, 0xFFFFFFFF, 40), nil, 2*time.Second, time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := delta(c.a, c.b, DefaultXmitWaitTick)
			base := t0.Add(-time.Hour)
			kept := c.a.Keep(base)
			res := Compare(func(i int) (*Prior, bool) { return &kept, true }, base, &Sample{Ports: []*PortCounters{c.b}}, DefaultXmitWaitTick)
			got, ok := res.DeltaAt(0)
			if !ok {
				t.Fatal("no delta")
			}
			if got.Elapsed != want.Elapsed || got.XmitBytesPerSecond != want.XmitBytesPerSecond || got.RcvBytesPerSecond != want.RcvBytesPerSecond ||
				got.XmitUtilization != want.XmitUtilization || got.RcvUtilization != want.RcvUtilization || got.XmitWaitShare != want.XmitWaitShare {
				t.Errorf("Compare %+v\ndelta %+v", got, want)
			}
			var wantCounters []DeltaValue
			for _, v := range want.Counters {
				if v.Kind != mad.KindPackets {
					wantCounters = append(wantCounters, v)
				}
			}
			if len(got.Counters) != len(wantCounters) || len(wantCounters) == 0 {
				t.Fatalf("Compare has %d counters, delta %d besides packets", len(got.Counters), len(wantCounters))
			}
			for i, v := range got.Counters {
				if v != wantCounters[i] {
					t.Errorf("%s: Compare %+v, delta %+v", v.Name, v, wantCounters[i])
				}
			}
			if res.Interval() != want.Elapsed {
				t.Errorf("interval %v, want %v", res.Interval(), want.Elapsed)
			}
		})
	}
}
