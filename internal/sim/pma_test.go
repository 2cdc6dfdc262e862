package sim

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/mad"
)

func TestPMAClassPortInfo(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	for _, tc := range []struct {
		node string
		want uint16
	}{
		{"leaf01", PMAAllPortSelect | PMAExtendedWidth | PMAXmitWait},
		{"gpu004 mlx5_0", PMAExtendedWidth | PMAXmitWait},
	} {
		r := perf(t, c, lidOf(t, s, tc.node), mad.MethodGet, mad.AttrClassPortInfo, [mad.GMPDataSize]byte{})
		if r == nil || !r.Status.OK() {
			t.Fatalf("%s: ClassPortInfo %+v", tc.node, r)
		}
		if got := binary.BigEndian.Uint16(r.Data[2:4]); got != tc.want {
			t.Errorf("%s: CapabilityMask 0x%04x, want 0x%04x", tc.node, got, tc.want)
		}
		if got := binary.BigEndian.Uint32(r.Data[4:8]) >> 5; got != PMA2AdditionalExtended {
			t.Errorf("%s: CapabilityMask2 0x%x", tc.node, got)
		}
	}
	// Configurable: a PMA without extended counters or AllPortSelect.
	s2, _ := newSim(t, fatTree(t, 2, 2, 2), Options{PMA: &PMACaps{Switch: PMAXmitWait, CA: 0}})
	c2 := attach(t, s2, "gpu001 mlx5_0", 1)
	l := lidOf(t, s2, "leaf01")
	if r := perf(t, c2, l, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(1)); r == nil || r.Status != 0x000c {
		t.Errorf("PortCountersExtended without the capability: %+v", r)
	}
	if r := perf(t, c2, l, mad.MethodGet, mad.AttrPortCounters, portSelect(0xff)); r == nil || r.Status != 0x001c {
		t.Errorf("PortSelect 0xFF without AllPortSelect: %+v", r)
	}
}

func TestPMAWidthsSaturationAndAllPorts(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	leaf := lidOf(t, s, "leaf01")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetCounter("leaf01/3", "SymbolErrorCounter", 70000))       // > 16 bits
	must(s.SetCounter("leaf01/4", "SymbolErrorCounter", 100))         //
	must(s.SetCounter("leaf01/3", "LinkDownedCounter", 300))          // > 8 bits
	must(s.SetCounter("leaf01/3", "LocalLinkIntegrityErrors", 20))    // > 4 bits
	must(s.SetCounter("leaf01/4", "ExcessiveBufferOverrunErrors", 3)) //
	must(s.SetCounter("leaf01/3", "PortXmitData", 1<<33))             // > 32 bits

	r := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(3))
	if r == nil || !r.Status.OK() {
		t.Fatalf("PortCounters: %+v", r)
	}
	for name, want := range map[string]uint64{
		"SymbolErrorCounter": 0xffff, "LinkDownedCounter": 0xff, "LocalLinkIntegrityErrors": 0xf,
		"ExcessiveBufferOverrunErrors": 0, "PortXmitData": 0xffffffff, "PortRcvData": 0,
	} {
		if got := pcField(t, r, name); got != want {
			t.Errorf("PortCounters port 3 %s = %d, want %d", name, got, want)
		}
	}
	if r.Data[1] != 3 {
		t.Errorf("PortSelect echoed as %d", r.Data[1])
	}
	x := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(3))
	if got := pceField(t, x, "PortXmitData"); got != 1<<33 {
		t.Errorf("PortCountersExtended PortXmitData %d, want %d", got, uint64(1)<<33)
	}
	if got := pceField(t, x, "SymbolErrorCounter"); got != 70000 {
		t.Errorf("PortCountersExtended SymbolErrorCounter %d, want 70000", got)
	}
	// All ports: sums, saturating in the narrow view.
	a := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(0xff))
	if got := pcField(t, a, "SymbolErrorCounter"); got != 0xffff {
		t.Errorf("0xFF SymbolErrorCounter %d", got)
	}
	if got := pcField(t, a, "ExcessiveBufferOverrunErrors"); got != 3 {
		t.Errorf("0xFF ExcessiveBufferOverrunErrors %d", got)
	}
	ax := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(0xff))
	if got := pceField(t, ax, "SymbolErrorCounter"); got != 70100 {
		t.Errorf("0xFF extended SymbolErrorCounter %d, want 70100", got)
	}
	// A CA answers only for the port the MAD came in by.
	host := lidOf(t, s, "gpu002 mlx5_0")
	if r := perf(t, c, host, mad.MethodGet, mad.AttrPortCounters, portSelect(2)); r == nil || r.Status != 0x001c {
		t.Errorf("CA PortSelect 2: %+v", r)
	}
	if r := perf(t, c, host, mad.MethodGet, mad.AttrPortCounters, portSelect(0xff)); r == nil || r.Status != 0x001c {
		t.Errorf("CA PortSelect 0xFF: %+v", r)
	}
	if r := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(9)); r == nil || r.Status != 0x001c {
		t.Errorf("switch PortSelect 9 of 8: %+v", r)
	}
}

func TestPMAResetWithCounterSelect(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	leaf := lidOf(t, s, "leaf02")
	if err := s.SetCounter("leaf02/1", "SymbolErrorCounter", 500); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounter("leaf02/1", "PortRcvErrors", 7); err != nil {
		t.Fatal(err)
	}
	if err := s.CounterRate("leaf02/1", "PortXmitWait", 1000); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	// Clear SymbolErrorCounter (bit 0) and PortXmitWait (CounterSelect2 bit 0).
	d := portSelect(1)
	binary.BigEndian.PutUint16(d[2:4], 0x0001)
	d[18] = 1
	r := perf(t, c, leaf, mad.MethodSet, mad.AttrPortCounters, d)
	if r == nil || !r.Status.OK() {
		t.Fatalf("Set: %+v", r)
	}
	if got := pcField(t, r, "SymbolErrorCounter"); got != 0 {
		t.Errorf("SymbolErrorCounter after reset %d", got)
	}
	if got := pcField(t, r, "PortRcvErrors"); got != 7 {
		t.Errorf("PortRcvErrors not selected but now %d", got)
	}
	if got := pcField(t, r, "PortXmitWait"); got != 0 {
		t.Errorf("PortXmitWait after reset %d", got)
	}
	// It keeps growing from zero.
	clk.Advance(time.Second)
	g := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(1))
	if got := pcField(t, g, "PortXmitWait"); got != 1000 {
		t.Errorf("PortXmitWait a second after reset %d, want 1000", got)
	}
	// Extended reset: CounterSelect2 bit 3 = PortRcvErrors.
	d = portSelect(1)
	binary.BigEndian.PutUint32(d[4:8], 1<<3)
	x := perf(t, c, leaf, mad.MethodSet, mad.AttrPortCountersExtended, d)
	if got := pceField(t, x, "PortRcvErrors"); got != 0 {
		t.Errorf("extended reset left PortRcvErrors %d", got)
	}
}

func TestTrafficMovesCounters(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	// gpu001 -> gpu003 -> gpu001 ...: a ring of two hosts on different
	// leaves, 100 Gb/s each way.
	if _, err := s.AddTraffic(Traffic{Hosts: []string{"gpu001 mlx5_0", "gpu003 mlx5_0"}, Pattern: RingAllReduce, RateGbps: 100}); err != nil {
		t.Fatal(err)
	}
	host := lidOf(t, s, "gpu001 mlx5_0")
	read := func() (xmit, rcv, pkts uint64) {
		g := perf(t, c, host, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(1))
		return pceField(t, g, "PortXmitData"), pceField(t, g, "PortRcvData"), pceField(t, g, "PortXmitPkts")
	}
	x0, r0, _ := read()
	clk.Advance(10 * time.Millisecond)
	x1, r1, p1 := read()
	// 100 Gb/s for 10 ms = 125 MB = 31.25M dwords.
	if d := x1 - x0; d != 31_250_000 {
		t.Errorf("PortXmitData grew %d dwords in 10ms, want 31250000", d)
	}
	if d := r1 - r0; d != 31_250_000 {
		t.Errorf("PortRcvData grew %d dwords in 10ms, want 31250000", d)
	}
	if p1 != 125_000_000/4096 {
		t.Errorf("PortXmitPkts %d", p1)
	}
	// The leaf's uplink carries it too (whichever spine the LFT picked).
	var up uint64
	leaf := lidOf(t, s, "leaf01")
	for _, p := range []uint8{3, 4} {
		g := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(p))
		up += pceField(t, g, "PortXmitData")
	}
	if up != 31_250_000 {
		t.Errorf("leaf01 uplinks sent %d dwords, want 31250000", up)
	}
	// No congestion: no XmitWait anywhere on the path.
	g := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(0xff))
	if w := pcField(t, g, "PortXmitWait"); w != 0 {
		t.Errorf("XmitWait %d without congestion", w)
	}
}

func TestCongestionGrowsXmitWait(t *testing.T) {
	s, clk := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	// Everything leaf01 sends up goes through port 3 (spine01), and
	// both hosts of leaf01 send 300 Gb/s to leaf02: 600 offered on a
	// 400 Gb/s link.
	if err := s.UplinksTo("leaf01", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTraffic(Traffic{Hosts: []string{"gpu001 mlx5_0", "gpu002 mlx5_0", "gpu003 mlx5_0", "gpu004 mlx5_0"}, Pattern: RingAllReduce, Stride: 2, RateGbps: 300}); err != nil {
		t.Fatal(err)
	}
	off, carried, capa, ok, err := s.LinkLoad("leaf01/3")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if off != 600 || capa != 400 || carried < 399.99 || carried > 400.01 {
		t.Errorf("leaf01/3 offered %v carried %v capacity %v", off, carried, capa)
	}
	clk.Advance(time.Second)
	leaf := lidOf(t, s, "leaf01")
	g := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(3))
	// 1/3 of the time without credits, in 64ns ticks.
	want := uint64(1e9) / 64 / 3
	if w := pceField(t, g, "PortXmitWait"); w < want-2 || w > want+2 {
		t.Errorf("PortXmitWait %d after 1s, want ~%d", w, want)
	}
	if w := pceField(t, perf(t, c, leaf, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(4)), "PortXmitWait"); w != 0 {
		t.Errorf("unused uplink has XmitWait %d", w)
	}
	// The 32-bit field sticks at all-ones after long enough.
	clk.Advance(2000 * time.Second)
	pc := perf(t, c, leaf, mad.MethodGet, mad.AttrPortCounters, portSelect(3))
	if w := pcField(t, pc, "PortXmitWait"); w != 0xffffffff {
		t.Errorf("PortXmitWait after 2000s %d, want saturated", w)
	}
}
