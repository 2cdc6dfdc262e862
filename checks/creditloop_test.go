package checks

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

func ring(t testing.TB, n int) *fabric.Fabric {
	t.Helper()
	f, err := topology.Routed(topology.Ring{Switches: n, HostsPerSwitch: 2})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// routeUpDown rewrites every switch's LFT for the host LIDs with up/down
// routing rooted at root: a link is "up" toward the root (lower BFS rank,
// ties broken by the lower GUID), and a route may go up and then only
// down. Each switch sends to the neighbour on a shortest legal path from
// where it stands, taking only down moves once it has gone down (what a
// packet that arrived going down needs), which is how up/down stays
// deadlock-free.
func routeUpDown(t testing.TB, f *fabric.Fabric, root *fabric.Node) {
	t.Helper()
	rank := map[*fabric.Node]int{root: 0}
	queue := []*fabric.Node{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				if _, ok := rank[p.Remote.Node]; !ok {
					rank[p.Remote.Node] = rank[n] + 1
					queue = append(queue, p.Remote.Node)
				}
			}
		}
	}
	up := func(a, b *fabric.Node) bool { // a -> b goes up
		return rank[b] < rank[a] || (rank[b] == rank[a] && b.GUID < a.GUID)
	}
	for _, dst := range f.Nodes {
		if dst.Type != mad.NodeSwitch {
			continue
		}
		// dist[phase][node]: legal hops to dst; phase 0 may still go up,
		// phase 1 only down.
		dist := [2]map[*fabric.Node]int{{dst: 0}, {dst: 0}}
		frontier := []struct {
			n     *fabric.Node
			phase int
		}{{dst, 0}, {dst, 1}}
		for len(frontier) > 0 {
			cur := frontier[0]
			frontier = frontier[1:]
			for _, p := range cur.n.Ports {
				if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
					continue
				}
				x := p.Remote.Node // x -> cur.n
				var phases []int
				switch {
				case up(x, cur.n) && cur.phase == 0:
					phases = []int{0}
				case !up(x, cur.n) && cur.phase == 1:
					phases = []int{0, 1}
				}
				for _, ph := range phases {
					if _, ok := dist[ph][x]; !ok {
						dist[ph][x] = dist[cur.phase][cur.n] + 1
						frontier = append(frontier, struct {
							n     *fabric.Node
							phase int
						}{x, ph})
					}
				}
			}
		}
		var lids []uint16
		for _, p := range dst.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeCA {
				lids = append(lids, p.Remote.LID)
			}
		}
		for _, s := range f.Nodes {
			if s.Type != mad.NodeSwitch || s == dst {
				continue
			}
			// The best first hop for a packet starting here; a down
			// first hop is also what a packet arriving going down takes.
			best, bestPort := 1<<30, uint8(0)
			for _, p := range s.Ports {
				if p == nil || p.Num == 0 || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
					continue
				}
				y := p.Remote.Node
				ph := 1
				if up(s, y) {
					ph = 0
				}
				if d, ok := dist[ph][y]; ok && d+1 < best {
					best, bestPort = d+1, p.Num
				}
			}
			if bestPort == 0 {
				t.Fatalf("up/down: %s cannot reach %s", s.Description, dst.Description)
			}
			for _, l := range lids {
				s.Switch.LFT.Set(l, bestPort)
			}
		}
	}
}

func TestCreditLoopRingMinHop(t *testing.T) {
	f := ring(t, 5)
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.credit-loop")
	if len(fs) == 0 {
		t.Fatal("min-hop ring of 5 switches: no credit loop found")
	}
	for _, fd := range fs {
		t.Logf("%s %s\n  %s", fd.Severity, fd.Title, fd.Evidence[0])
		if fd.Severity != Critical || !strings.Contains(fd.Evidence[0].Text, "over 5 switches") {
			t.Errorf("%s %q %s", fd.Severity, fd.Title, fd.Evidence[0])
		}
	}
	// Both directions round the ring are a cycle of their own.
	if len(fs) != 2 {
		t.Errorf("%d cycles, want 2 (clockwise and counter-clockwise)", len(fs))
	}
}

func TestCreditLoopRingUpDown(t *testing.T) {
	f := ring(t, 5)
	routeUpDown(t, f, node(t, f, "sw1"))
	if fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.credit-loop"); len(fs) != 0 {
		t.Errorf("up/down ring: %d credit loops, want none: %s %s", len(fs), fs[0].Title, fs[0].Evidence[0])
	}
	// Up/down still delivers everywhere (the test's routing is real).
	if fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.unreachable"); len(fs) != 0 {
		t.Errorf("up/down ring: %s", fs[0].Title)
	}
}

func TestCreditLoopFatTreesNone(t *testing.T) {
	for _, b := range []topology.Builder{
		topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8},
		topology.FatTree3{Pods: 2, LeavesPerPod: 4, SpinesPerPod: 4, HostsPerLeaf: 4, Cores: 8, Common: topology.Common{SwitchPorts: 16}},
		topology.RailOptimized{Servers: 8, ServersPerLeaf: 4, Spines: 4, Hosts: topology.Hosts{HCAsPerServer: 4}},
	} {
		f, err := topology.Routed(b)
		if err != nil {
			t.Fatal(err)
		}
		if fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.credit-loop"); len(fs) != 0 {
			t.Errorf("%T: %s", b, fs[0].Title)
		}
	}
}

// A ring of three switches routed min-hop has no transit through a middle
// switch at all (every pair is one hop apart): no loop.
func TestCreditLoopTriangleNone(t *testing.T) {
	if fs := byCheck(run(t, &Snapshot{Fabric: ring(t, 3)}), "routing.credit-loop"); len(fs) != 0 {
		t.Errorf("%s", fs[0].Title)
	}
}

// BenchmarkCreditLoops50k builds the channel dependency graph of a
// min-hop routed 3-level fat tree of 45,056 hosts and 3,840 switches
// (48,896 nodes) and searches it for cycles. Routing is outside the timer.
func BenchmarkCreditLoops50k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	// CPU time as well as wall time: on a shared machine the wall clock
	// measures the neighbours.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		if fs := s.creditLoops(); len(fs) != 0 {
			b.Fatalf("credit loop in a fat tree: %s", fs[0].Title)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}

// TestCreditLoopVLs: the VL evidence says what the ports on the cycle
// run. One data VL on every one (OperationalVLs VL0): no VL assignment
// can break the cycle. Several: an engine that spreads paths over SLs
// and VLs could, and the cycle is judged on VL0 (SL2VL and the paths'
// SLs are not read). Not read: as before.
func TestCreditLoopVLs(t *testing.T) {
	vlText := func(code uint8) string {
		f := ring(t, 5)
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p != nil {
					p.OperVLs = code
				}
			}
		}
		fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.credit-loop")
		if len(fs) == 0 {
			t.Fatal("no credit loop")
		}
		for _, e := range fs[0].Evidence {
			if e.Name == "VL" {
				return e.Text
			}
		}
		return ""
	}
	if got := vlText(1); !strings.Contains(got, "one data VL") {
		t.Errorf("VL0 only: %q", got)
	}
	if got := vlText(4); !strings.Contains(got, "VL0-7") || !strings.Contains(got, "judged on VL0") {
		t.Errorf("VL0-7: %q", got)
	}
	if got := vlText(0); !strings.Contains(got, "not read") {
		t.Errorf("not read: %q", got)
	}
}

// TestCreditCyclesKeepNoDependencies: what a sweep keeps of the credit-loop
// search (Snapshot.CreditCycles, held until the check runs) is the cycles
// and the channels, not the dependency bitmap the search walked (256 bits
// a channel), and the check judges from it as from a search of its own.
func TestCreditCyclesKeepNoDependencies(t *testing.T) {
	f := ring(t, 5)
	cc := FindCreditCycles(f)
	if cc.g.edge != nil {
		t.Fatalf("FindCreditCycles kept the dependency bitmap (%d words)", len(cc.g.edge))
	}
	if len(cc.SL2VLPairs()) == 0 {
		t.Fatal("no SL2VL pairs on the ring's cycles")
	}
	kept := byCheck(run(t, &Snapshot{Fabric: f, CreditCycles: cc}), "routing.credit-loop")
	own := byCheck(run(t, &Snapshot{Fabric: f}), "routing.credit-loop")
	if len(kept) != 2 || len(own) != len(kept) {
		t.Fatalf("%d findings from the sweep's search, %d from the check's own, want 2", len(kept), len(own))
	}
	for i := range kept {
		if kept[i].Title != own[i].Title || kept[i].Evidence[0].Text != own[i].Evidence[0].Text {
			t.Errorf("finding %d: %q / %q", i, kept[i].Title, own[i].Title)
		}
	}
}
