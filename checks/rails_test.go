package checks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// railSweep sweeps a rail-optimized fabric (8 servers, 4 rails, 4 servers
// per leaf: leaf01..04 rails 0..3 of unit 1) with faults in the simulator.
func railSweep(t *testing.T, faults string) *checks.Result {
	t.Helper()
	f, err := topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 4, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRailHealthyQuiet(t *testing.T) {
	if fs := byCheck(railSweep(t, "").Findings, "topology.rail-miswired"); len(fs) != 0 {
		t.Errorf("healthy rail fabric: %s", fs[0].Title)
	}
}

// TestRailSwap: gpu003's mlx5_1 and mlx5_2 cables swapped at the host
// (the simulator's miswire of mlx5_1 onto the rail-2 leaf's port).
func TestRailSwap(t *testing.T) {
	res := railSweep(t, "miswire \"gpu003 mlx5_1/1\" leaf03/3\n")
	fs := byCheck(res.Findings, "topology.rail-miswired")
	want := "gpu003: mlx5_1 and mlx5_2 are cabled to each other's rail: mlx5_1 is on leaf03 (rail mlx5_2), mlx5_2 on leaf02 (rail mlx5_1)"
	if len(fs) != 1 || fs[0].Title != want || fs[0].Severity != checks.Error {
		logFindings(t, res.Findings)
		t.Fatalf("%d findings, want one: %q", len(fs), want)
	}
	t.Logf("%s\n    %s", fs[0].Title, fs[0].Evidence[0])
}

// TestRailTwoOnOne: gpu006's mlx5_0 moved to a free port of the rail-3
// leaf of its unit, where its mlx5_3 is.
func TestRailTwoOnOne(t *testing.T) {
	f, err := topology.RailOptimized{Servers: 6, ServersPerLeaf: 3, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}, Common: topology.Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Unplug gpu002 mlx5_0 from its rail-0 leaf and cable it to the
	// rail-3 leaf's free port 4 (unit 1: leaf01..leaf04).
	hca := f.NodesByName("gpu002 mlx5_0")[0].Ports[1]
	old := hca.Remote
	old.Remote, hca.Remote = nil, nil
	old.State, old.PhysState = 1, 2
	leaf := f.NodesByName("leaf04")[0].Ports[4]
	leaf.Remote, hca.Remote = hca, leaf
	leaf.State, leaf.PhysState, leaf.WidthActive, leaf.SpeedActive = hca.State, hca.PhysState, hca.WidthActive, hca.SpeedActive
	fs := byCheckSnap(t, f, "topology.rail-miswired")
	want := "gpu002: mlx5_0 is cabled to leaf04, a leaf of rail mlx5_3, where gpu002 mlx5_3 is: two HCAs of one host on one rail"
	if len(fs) != 1 || fs[0].Title != want {
		for _, f := range fs {
			t.Log(f.Title)
		}
		t.Fatalf("%d findings, want %q", len(fs), want)
	}
}

func byCheckSnap(t *testing.T, f *fabric.Fabric, id string) []checks.Finding {
	t.Helper()
	res, err := checks.Run(&checks.Snapshot{Fabric: f}, id)
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// TestRailNotInferredOnFatTree: one HCA per host, or all of a host's HCAs
// on one leaf: no rails, no finding.
func TestRailNotInferredOnFatTree(t *testing.T) {
	for _, b := range []topology.Builder{
		topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8},
		topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8, Hosts: topology.Hosts{HCAsPerServer: 4}},
	} {
		f, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if fs := byCheckSnap(t, f, "topology.rail-miswired"); len(fs) != 0 {
			t.Errorf("%+v: %s", b, fs[0].Title)
		}
	}
}

// TestIBSimRailSwap: the rail fabric on ibsim with gpu003's mlx5_1 and
// mlx5_2 cables exchanged in the net file, routed by OpenSM. ibdoctor
// discovers the real cabling and names the host, both HCAs and both
// leaves; the healthy fabric gives nothing.
func TestIBSimRailSwap(t *testing.T) {
	for _, swap := range []bool{false, true} {
		f, err := topology.RailOptimized{Servers: 4, ServersPerLeaf: 4, Spines: 2, Hosts: topology.Hosts{HCAsPerServer: 4}, Common: topology.Common{SwitchPorts: 8}}.Build()
		if err != nil {
			t.Fatal(err)
		}
		if swap {
			a, b := f.NodesByName("gpu003 mlx5_1")[0].Ports[1], f.NodesByName("gpu003 mlx5_2")[0].Ports[1]
			la, lb := a.Remote, b.Remote
			a.Remote, b.Remote, la.Remote, lb.Remote = lb, la, b, a
		}
		s := smIBSimFabric(t, f)
		s.StartOpenSM(ibsimtestOpts("gpu001"))
		_, res := ibsimCheck(t, s, "gpu001", 0)
		fs := byCheck(res.Findings, "topology.rail-miswired")
		if !swap {
			if len(fs) != 0 {
				t.Errorf("healthy rail fabric on ibsim: %s", fs[0].Title)
			}
			continue
		}
		want := "gpu003: mlx5_1 and mlx5_2 are cabled to each other's rail: mlx5_1 is on leaf03 (rail mlx5_2), mlx5_2 on leaf02 (rail mlx5_1)"
		if len(fs) != 1 || fs[0].Title != want {
			logFindings(t, res.Findings)
			t.Fatalf("%d rail findings, want %q", len(fs), want)
		}
		t.Logf("%s\n    %s", fs[0].Title, fs[0].Evidence[0])
	}
}
