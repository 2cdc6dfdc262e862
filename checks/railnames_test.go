package checks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// swapCables exchanges the cables of two one-port HCAs at the host.
func swapCables(a, b *fabric.Port) {
	ra, rb := a.Remote, b.Remote
	a.Remote, b.Remote = rb, ra
	ra.Remote, rb.Remote = b, a
}

// TestRailCountAcrossNamings: a rail-optimized fabric whose second unit's
// hosts name their adapters HCA-1..HCA-4 where the first unit's say
// mlx5_0..mlx5_3 has 4 rails, not 8: each unit has one leaf per rail, and
// the names are two namings of the same rails (trial C10: the DGX file
// said "31 leaves, 8 rails" of a fabric with 4). The miswire is still
// judged in the host's own naming.
func TestRailCountAcrossNamings(t *testing.T) {
	f, err := topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	for s := 5; s <= 8; s++ {
		for k := 0; k < 4; k++ {
			n := f.NodesByName(fmt.Sprintf("gpu%03d mlx5_%d", s, k))[0]
			n.Description = fmt.Sprintf("gpu%03d HCA-%d", s, k+1)
		}
	}
	f.Reindex()
	swapCables(f.NodesByName("gpu002 mlx5_0")[0].Ports[1], f.NodesByName("gpu002 mlx5_1")[0].Ports[1])
	fs := byCheckSnap(t, f, "topology.rail-miswired")
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Title, "gpu002: mlx5_0 and mlx5_1 are cabled to each other's rail") {
		for _, x := range fs {
			t.Log(x.Title)
		}
		t.Fatalf("%d findings, want gpu002's swap", len(fs))
	}
	ev := fs[0].Evidence[0].Text
	want := "8 leaves, 4 rails: HCA-1, HCA-2, HCA-3, HCA-4 on 4 leaves and mlx5_0, mlx5_1, mlx5_2, mlx5_3 on 4, taken in device order as the same rails"
	if !strings.Contains(ev, want) {
		t.Errorf("evidence:\n%s\nwant it to say %q", ev, want)
	}
}

// TestRailCountNamingsDisagree: when the namings do not have as many
// rails each, no total is claimed: the rails of each naming are listed.
func TestRailCountNamingsDisagree(t *testing.T) {
	f, err := topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Unit 2's hosts call rails 0 and 1 HCA-1 and HCA-2 and keep mlx5_2
	// and mlx5_3: the HCA-n naming has 2 rails, the mlx5_n one 4.
	for s := 5; s <= 8; s++ {
		for k := 0; k < 2; k++ {
			n := f.NodesByName(fmt.Sprintf("gpu%03d mlx5_%d", s, k))[0]
			n.Description = fmt.Sprintf("gpu%03d HCA-%d", s, k+1)
		}
	}
	f.Reindex()
	swapCables(f.NodesByName("gpu002 mlx5_0")[0].Ports[1], f.NodesByName("gpu002 mlx5_1")[0].Ports[1])
	fs := byCheckSnap(t, f, "topology.rail-miswired")
	if len(fs) != 1 {
		t.Fatalf("%d findings, want gpu002's swap", len(fs))
	}
	ev := fs[0].Evidence[0].Text
	want := "8 leaves; rails named in 2 ways that do not pair up: mlx5_0, mlx5_1, mlx5_2, mlx5_3 on 6 leaves and HCA-1, HCA-2 on 2"
	if !strings.Contains(ev, want) {
		t.Errorf("evidence:\n%s\nwant it to say %q", ev, want)
	}
}

// TestCorpusRailCount: the DGX SuperPOD file's hosts name their four rail
// adapters HCA-1, HCA-2, HCA-5, HCA-6 in seven units and mlx5_0, mlx5_1,
// mlx5_4, mlx5_5 in one (a08-p1-dgx-04-c*, on leaves IBLEAF-01-04 ..
// IBLEAF-04-04): 4 rails, as its leaves' names say, not 8 (trial C10).
func TestCorpusRailCount(t *testing.T) {
	res := corpusCheck(t, "dgx-ndr-2025.ibnetdiscover", false)
	fs := byCheck(res.Findings, "topology.rail-miswired")
	if len(fs) != 1 {
		t.Fatalf("%d rail-miswired findings, want the swap of b08-p1-dgx-08-c01:%s", len(fs), titles(fs))
	}
	ev := fs[0].Evidence[0].Text
	want := "31 leaves, 4 rails: HCA-1, HCA-2, HCA-5, HCA-6 on 27 leaves and mlx5_0, mlx5_1, mlx5_4, mlx5_5 on 4, taken in device order as the same rails"
	if !strings.Contains(ev, want) || strings.Contains(ev, "8 rails") {
		t.Errorf("evidence:\n%s\nwant it to say %q", ev, want)
	}
}

// TestCorpusMissingRailOtherNaming: the DGX SuperPOD file's one unit
// naming its adapters mlx5_0, mlx5_1, mlx5_4, mlx5_5 (a08-p1-dgx-04-c*)
// loses its mlx5_1 rail: every host's mlx5_1 cable down. No other unit
// names its adapters that way, yet the six units with all of HCA-1,
// HCA-2, HCA-5, HCA-6 show the unit runs without a rail: the namings are
// joined in device order as topology.rail-miswired joins them (C10 gap).
func TestCorpusMissingRailOtherNaming(t *testing.T) {
	p := corpusFile(t, "dgx-ndr-2025.ibnetdiscover")
	s, _, err := sim.Load(context.Background(), p, "", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var faults strings.Builder
	for c := 1; c <= 17; c++ {
		fmt.Fprintf(&faults, "down \"a08-p1-dgx-04-c%02d mlx5_1\"/1\n", c)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, false)
	sw.RoutesComputed = true
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []checks.Finding
	for _, f := range byCheck(res.Findings, "topology.missing-hca") {
		if strings.Contains(f.Title, "a08-p1-dgx-04-c*") {
			got = append(got, f)
		}
	}
	want := "a08-p1-dgx-04-c* hosts have no mlx5_1 where the hosts of 6 other groups have it (as HCA-2): a rail missing for the whole group"
	if len(got) != 1 || !strings.Contains(got[0].Title, want) {
		t.Fatalf("a08-p1-dgx-04-c* findings:%s\nwant one saying %q", titles(got), want)
	}
	if ev := got[0].Evidence[0].Text; !strings.Contains(ev, "device order") {
		t.Errorf("evidence %q does not say how the namings were joined", ev)
	}
	// Trial H4: the unit's leaves are IBLEAF-0n-04 and the others'
	// HCA-2 land on IBLEAF-02-0n: the naming ties the rail's leaf,
	// which is there (only the hosts' cables are down).
	if want := "The leaf the naming puts mlx5_1 of this group on, MF0;A09-P1-IBLEAF-02-04:MQM9701/U1, is in the fabric but none of the group's hosts has mlx5_1 cabled to it"; !strings.HasPrefix(got[0].Action, want) {
		t.Errorf("action %q: want it to start %q", got[0].Action, want)
	}
}
