package sim

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

var updateSample = flag.Bool("update-sample", false, "rewrite fixtures/sample/fabric.txt from the topology generator")

// sampleDesign is the fabric fixtures/sample/fabric.txt was generated from.
func sampleDesign(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := topology.FatTree2{
		Leaves: 8, Spines: 4, HostsPerLeaf: 32, LinksPerPair: 8,
		Hosts: topology.Hosts{HCAsPerServer: 8},
	}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSampleTopologyFile(t *testing.T) {
	want := sampleDesign(t)
	if *updateSample {
		var b bytes.Buffer
		if err := fabric.WriteIBNetDiscover(&b, want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../fixtures/sample/fabric.txt", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := fabric.Decode(fixtures.SampleTopology(), "sample")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 268 || len(got.Links()) != len(want.Links()) || len(got.Links()) != 256+8*32 {
		t.Errorf("sample has %d nodes and %d links; the design has %d and %d (regenerate with -update-sample)",
			len(got.Nodes), len(got.Links()), len(want.Nodes), len(want.Links()))
	}
}

func TestSampleIncident(t *testing.T) {
	clk := NewManualClock(t0)
	s, err := Sample(Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	c := attach(t, s, "", 0)
	if c.Local().PortNum != 1 {
		t.Errorf("default attach %+v", c.Local())
	}
	// The misrouted spines funnel leaf05's traffic into one cable each.
	for _, p := range []string{"spine01/33", "spine02/33"} {
		off, carried, capa, ok, err := s.LinkLoad(p)
		if err != nil || !ok || off <= capa || carried > capa+0.01 {
			t.Errorf("%s: offered %v carried %v of %v (ok %v, %v): want oversubscribed", p, off, carried, capa, ok, err)
		}
	}
	if _, _, _, ok, _ := s.LinkLoad("spine01/34"); ok {
		t.Error("spine01/34 still carries traffic to leaf05")
	}
	clk.Advance(10 * time.Second)
	spine := lidOf(t, s, "spine01")
	if w := pceField(t, perf(t, c, spine, mad.MethodGet, mad.AttrPortCountersExtended, portSelect(33)), "PortXmitWait"); w == 0 {
		t.Error("no PortXmitWait on spine01/33")
	}
	// The 1X uplink, seen from both ends over directed route.
	var pi mad.PortInfo
	sp2 := lidOf(t, s, "spine02")
	if r := lidGet(t, c, sp2, mad.AttrPortInfo, 49); r == nil || r.Decode(&pi) != nil || pi.LinkWidthActive != mad.Width1X {
		t.Errorf("spine02/49 width %v, want 1X", pi.LinkWidthActive)
	}
	if se := pcField(t, perf(t, c, sp2, mad.MethodGet, mad.AttrPortCounters, portSelect(49)), "SymbolErrorCounter"); se != 4817+400 {
		t.Errorf("spine02/49 SymbolErrorCounter %d after 10s, want 4817 + 40/s x 10s", se)
	}
	// The quiet faults.
	host := lidOf(t, s, "gpu027 mlx5_6")
	if r := lidGet(t, c, host, mad.AttrPortInfo, 1); r == nil || r.Decode(&pi) != nil || pi.Rate(nil, false).String() != "4X HDR" {
		t.Errorf("gpu027 mlx5_6 rate %v", pi.Rate(nil, false))
	}
	leaf := lidOf(t, s, "leaf03") // gpu012 is on leaf03 (servers 9-12)
	if r := lidGet(t, c, leaf, mad.AttrPortInfo, 28); r == nil || r.Decode(&pi) != nil || pi.PhysState != mad.PhysPolling {
		t.Errorf("leaf03/28 (gpu012 mlx5_3) %v/%v", pi.PortState, pi.PhysState)
	}
}

// TestEpochClockDatesSetup: a sample built on an EpochClock ten seconds
// back has run since then when started: spine02/49's symbol errors (4817
// planted, 40/s) read at least 4817 + 400, as they would in any other run
// with the same epoch, and a second simulator built later reads no less.
func TestEpochClockDatesSetup(t *testing.T) {
	epoch := time.Now().Add(-10 * time.Second)
	read := func() uint64 {
		clk := NewEpochClock(epoch)
		s, err := Sample(Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		clk.Start()
		c := attach(t, s, "", 0)
		return pcField(t, perf(t, c, lidOf(t, s, "spine02"), mad.MethodGet, mad.AttrPortCounters, portSelect(49)), "SymbolErrorCounter")
	}
	first := read()
	if first < 4817+400 {
		t.Errorf("spine02/49 SymbolErrorCounter %d 10s after the epoch, want at least 4817 + 40/s x 10s", first)
	}
	if second := read(); second < first {
		t.Errorf("a later simulator read %d, the first %d: cleared", second, first)
	}
}
