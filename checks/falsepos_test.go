package checks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// sweepSim gives f LIDs and min-hop LFTs (as OpenSM's minhop engine
// would), builds the in-process simulator on it, lets prepare inject
// faults, attaches at the first CA and runs the whole diagnose pipeline:
// discovery, every LFT, every port's counters (twice, interval apart,
// when interval > 0).
func sweepSim(t *testing.T, f *fabric.Fabric, interval time.Duration, prepare func(*sim.Sim)) *diagnose.Sweep {
	t.Helper()
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
	if prepare != nil {
		prepare(s)
	}
	var attach string
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			attach = n.Description
			break
		}
	}
	c, err := s.Attach(attach, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: completeTimeout, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Complete {
		t.Fatalf("sweep incomplete: %+v", sw.Unreached)
	}
	return sw
}

func rates(t *testing.T, s ...string) []mad.Rate {
	t.Helper()
	var out []mad.Rate
	for _, x := range s {
		r, err := mad.ParseRate(x)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestNoFalsePositivesOnHealthyFabrics runs every check over healthy
// generated fabrics of each shape, routed min-hop and swept through the
// in-process simulator, and wants nothing at warning or above.
func TestNoFalsePositivesOnHealthyFabrics(t *testing.T) {
	mixed := rates(t, "4xHDR", "4xNDR")
	cases := []struct {
		name     string
		build    func() (*fabric.Fabric, error)
		interval time.Duration
		prepare  func(t *testing.T, s *sim.Sim)
		expect   checks.Expectations
	}{
		{name: "fattree2", build: topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8}.Build, interval: 50 * time.Millisecond},
		{
			// A ring all-reduce at half the link rate, sampled over an
			// interval: traffic is not congestion.
			name: "fattree2-traffic", build: topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build, interval: 100 * time.Millisecond,
			prepare: func(t *testing.T, s *sim.Sim) {
				fs, err := sim.ParseFaults(strings.NewReader("traffic ring-allreduce rate=200 stride=4\n"))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.ApplyFaults(fs); err != nil {
					t.Fatal(err)
				}
			},
		},
		{name: "fattree2-2cables", build: topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 8, LinksPerPair: 2}.Build},
		{name: "fattree3", build: topology.FatTree3{Pods: 2, LeavesPerPod: 4, SpinesPerPod: 4, HostsPerLeaf: 4, Cores: 8, Common: topology.Common{SwitchPorts: 16}}.Build},
		{name: "fattree2-oversubscribed-2to1", build: topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8, Common: topology.Common{SwitchPorts: 12, LongSwitchNames: true}}.Build},
		{name: "fattree3-2cables", build: topology.FatTree3{Pods: 3, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 4, Cores: 4, LinksLeafSpine: 2, LinksSpineCore: 2, Common: topology.Common{SwitchPorts: 16}}.Build},
		{name: "rail", build: topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 4, Hosts: topology.Hosts{HCAsPerServer: 4}}.Build},
		{name: "rail-8rails-2cables", build: topology.RailOptimized{Servers: 6, ServersPerLeaf: 3, Spines: 2, LinksPerPair: 2, Common: topology.Common{SwitchPorts: 32}}.Build},
		{name: "dragonfly", build: topology.Dragonfly{Groups: 5, SwitchesPerGroup: 4, HostsPerSwitch: 2, GlobalPerSwitch: 1}.Build},
		{name: "dragonfly-big", build: topology.Dragonfly{Groups: 9, SwitchesPerGroup: 4, HostsPerSwitch: 4, GlobalPerSwitch: 2}.Build},
		{
			// Leaf 2's hosts are HDR HCAs in an NDR fabric (their
			// hardware tops out at HDR): fine with --expect-rate
			// 4xHDR,4xNDR (which check also applies to switch links).
			name:   "mixed-hdr-ndr",
			build:  topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build,
			expect: checks.Expectations{HostRates: mixed, SwitchRates: mixed},
			prepare: func(t *testing.T, s *sim.Sim) {
				for i := 5; i <= 8; i++ {
					if err := s.Limit(fmt.Sprintf("gpu%03d mlx5_0/1", i), 0, mad.SpeedHDR); err != nil {
						t.Fatal(err)
					}
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.build()
			if err != nil {
				t.Fatal(err)
			}
			sw := sweepSim(t, f, c.interval, func(s *sim.Sim) {
				if c.prepare != nil {
					c.prepare(t, s)
				}
			})
			res, err := checks.Run(sw.Snapshot(c.expect, nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			// Everything that can run without a baseline ran.
			for _, sk := range res.Skipped {
				if sk.Check != "topology.changed" && sk.Check != "topology.miswired" && !((sk.Check == "counters.utilization" || sk.Check == "sm.stalled" || sk.Check == "routing.traffic-imbalance") && c.interval == 0) {
					t.Errorf("check %s skipped: %s", sk.Check, sk.Reason)
				}
			}
			for _, fd := range res.Findings {
				// Min-hop routing on a dragonfly has channel dependency
				// cycles on VL0 (real dragonflies route with VLs:
				// DFSSSP, dfp): a true credit loop, not a false alarm.
				if fd.Check == "routing.credit-loop" && strings.HasPrefix(c.name, "dragonfly") {
					continue
				}
				if fd.Severity >= checks.Warning {
					t.Errorf("false positive: %s %s: %s", fd.Severity, fd.Check, fd.Title)
					for _, e := range fd.Evidence {
						t.Logf("    evidence: %s", e)
					}
				}
			}
		})
	}
}

// TestMixedRatesNeedBothExpected shows the mixed fabric above is not
// quiet by accident: expecting NDR only flags exactly the four HDR hosts.
func TestMixedRatesNeedBothExpected(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		for i := 5; i <= 8; i++ {
			if err := s.Limit(fmt.Sprintf("gpu%03d mlx5_0/1", i), 0, mad.SpeedHDR); err != nil {
				t.Fatal(err)
			}
		}
	})
	ndr := rates(t, "4xNDR")
	res, err := checks.Run(sw.Snapshot(checks.Expectations{HostRates: ndr, SwitchRates: ndr}, nil, nil), "link")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, fd := range res.Findings {
		if fd.Check != "link.degraded-speed" || fd.Severity != checks.Error {
			t.Errorf("unexpected %s %s: %s", fd.Severity, fd.Check, fd.Title)
			continue
		}
		got[fd.Entities[0].Node] = true
	}
	for i := 5; i <= 8; i++ {
		if h := fmt.Sprintf("gpu%03d mlx5_0", i); !got[h] {
			t.Errorf("HDR host %s not flagged against a 4xNDR expectation (got %v)", h, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("flagged %d hosts, want the 4 HDR ones: %v", len(got), got)
	}
}

// TestFatTreeUplinkImbalanceStillFound sends all of one leaf's uplink
// traffic through one spine: what keeps min-hop dragonfly routing quiet
// must not hide a real imbalance on a fat tree's uplinks.
func TestFatTreeUplinkImbalanceStillFound(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		// leaf02's uplinks are ports 5..8: all uplink traffic via port 5.
		fs, err := sim.ParseFaults(strings.NewReader("lft leaf02 uplinks-to=5\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil), "routing.ecmp-imbalance")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("got %d imbalance findings, want 1: %+v", len(res.Findings), res.Findings)
	}
	fd := res.Findings[0]
	if fd.Severity != checks.Critical || fd.Entities[0].Node != "leaf02" || fd.Impact.Slowdown != 4 {
		t.Errorf("finding %s on %s slowdown %v: %s", fd.Severity, fd.Entities[0].Node, fd.Impact.Slowdown, fd.Title)
	}
}

// TestAsymmetricDetourWarns: equal-length asymmetry is what min-hop
// routing does and is not reported, but a route that takes a detour one way
// (leaf01 -> spine01 -> leaf02 -> spine02 -> leaf03 for gpu009, while
// gpu009 reaches gpu001 in three switches) is a warning.
func TestAsymmetricDetourWarns(t *testing.T) {
	asym := func(faults string) checks.Finding {
		t.Helper()
		f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
		if err != nil {
			t.Fatal(err)
		}
		sw := sweepSim(t, f, 0, func(s *sim.Sim) {
			fs, err := sim.ParseFaults(strings.NewReader(faults))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.ApplyFaults(fs); err != nil {
				t.Fatal(err)
			}
		})
		res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil), "routing.asymmetric")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 1 {
			t.Fatalf("%d asymmetric findings for %q", len(res.Findings), faults)
		}
		return res.Findings[0]
	}
	// Leaf ports 5..8 go to spines 1..4; spine port l to leaf l.
	detour := asym(`lft leaf01 dlid="gpu009 mlx5_0" port=5
lft spine01 dlid="gpu009 mlx5_0" port=2
lft leaf02 dlid="gpu009 mlx5_0" port=6
`)
	// (leaf04 may reach gpu009 through spine01 too: one or two pairs.)
	if detour.Severity != checks.Warning || !strings.Contains(detour.Title, "take more hops one way") {
		t.Errorf("detour: %s %q", detour.Severity, detour.Evidence[0].Text)
	}
}

// TestAsymmetricEqualLengthQuiet (trial N1): B->A moved to another spine
// at the same length is what min-hop routing does for every destination
// LID; whether a sampled pair shows it depends on the hosts sampled, so
// it is no finding (it was an info that came and went with the sample).
func TestAsymmetricEqualLengthQuiet(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw := sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader(`asym "gpu001 mlx5_0" "gpu005 mlx5_0"` + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil), "routing.asymmetric")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Errorf("equal-length asymmetry: %+v, want no finding", res.Findings)
	}
}
