package diagnose

import (
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestLoadsLazy: the host-pair loads (every host to every other, the
// costliest analysis at 49k nodes) are followed only when a finding's
// impact asks for them, and then equal route.HostPaths' and LIDLoads'.
func TestLoadsLazy(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	// a black hole, so the loads are not those of a healthy tree
	var sw *fabric.Node
	var lids []uint16
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && sw == nil {
			sw = n
		}
		if n.Type != mad.NodeSwitch {
			lids = append(lids, n.Ports[1].LID)
		}
	}
	sw.Switch.LFT.Set(lids[20], fabric.NoRoute)
	l := NewLoads(f)
	if l.paths != nil {
		t.Fatal("host-pair loads followed before anything asked for them")
	}
	a := route.NewAnalyzer(f)
	hp, err := a.HostPaths(lids, 0)
	if err != nil {
		t.Fatal(err)
	}
	dl := a.LIDLoads()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || n.Type != mad.NodeSwitch {
				continue
			}
			if got, ok := l.PortPaths(p); !ok || int64(got) != hp.Loads.Of(p) {
				t.Fatalf("%s/%d: %d paths (%v), HostPaths %d", n.Description, p.Num, got, ok, hp.Loads.Of(p))
			}
			if got := l.PortDLIDs(p); int64(got) != dl.Of(p) {
				t.Fatalf("%s/%d: %d destinations, LIDLoads %d", n.Description, p.Num, got, dl.Of(p))
			}
		}
	}
}

// TestECMPBalancedFollowsNoHostPaths: routing.ecmp-imbalance on a
// balanced fat tree judges every group by its destination counts alone
// (none above the best split), so it does not make the host-pair loads be
// followed, which at 49k nodes cost more CPU than all the other checks.
func TestECMPBalancedFollowsNoHostPaths(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLoads(f)
	res, err := checks.Run(&checks.Snapshot{Fabric: f, Loads: l}, "routing.ecmp-imbalance")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 {
		t.Fatalf("finding on a balanced tree: %s", res.Findings[0].Title)
	}
	if l.paths != nil {
		t.Error("host-pair loads followed for groups balanced by their destinations")
	}
}

// BenchmarkECMPImbalanceLoads50k is routing.ecmp-imbalance on a min-hop
// routed FatTree50k with the route analysis `check` gives it (fresh
// each run, so the host-pair loads are followed whenever the check asks).
func BenchmarkECMPImbalanceLoads50k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		res, err := checks.Run(&checks.Snapshot{Fabric: f, Loads: NewLoads(f)}, "routing.ecmp-imbalance")
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Findings) != 0 {
			b.Fatalf("finding on min-hop routes: %s", res.Findings[0].Title)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}
