package checks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestLoopToSwitchLID: a loop in the tables on a switch's own LID (the
// trial's `loop leaf01 spine01 dlid=leaf02`) is a routing.loop: the
// tables were read and they loop, whether or not a host's route crosses
// it. trace reports the same loop; check used to walk host LIDs only.
func TestLoopToSwitchLID(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "leaf02")
	lid := dst.Ports[0].LID
	leaf := node(t, f, "leaf01")
	up := leaf.Switch.LFT.At(lid)
	spine := leaf.Ports[up].Remote
	spine.Node.Switch.LFT.Set(lid, spine.Num) // straight back down to leaf01
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.loop")
	if len(fs) != 1 {
		t.Fatalf("got %d routing.loop findings, want 1: %+v", len(fs), fs)
	}
	l := fs[0]
	if l.Severity != Critical || !strings.Contains(l.Title, "leaf02") || !strings.Contains(l.Title, "leaf01") || !strings.Contains(l.Title, spine.Node.Description) {
		t.Errorf("finding %s %q: want critical naming leaf02 and the loop leaf01 <-> %s", l.Severity, l.Title, spine.Node.Description)
	}
}

// TestSwitchLoopsOnWorkers: the walk to switch LIDs split between
// workers finds the loops one walker finds, recorded in the same order
// (loops in the order first met, each one's destinations in LID order),
// however the destinations fall between the workers.
func TestSwitchLoopsOnWorkers(t *testing.T) {
	f, err := topology.Routed(topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 4, LeavesPerPod: 4, SpinesPerPod: 4, HostsPerLeaf: 4, Cores: 16})
	if err != nil {
		t.Fatal(err)
	}
	// Loops on several switch LIDs, at different switches: each leaf's
	// route to the destination goes up, and its spine sends it back.
	var sws []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			sws = append(sws, n)
		}
	}
	loops := 0
	for i, dst := range sws {
		if i%3 != 0 {
			continue
		}
		src := sws[(i*7+5)%len(sws)]
		lid := dst.Ports[0].LID
		out := src.Switch.LFT.At(lid)
		if src == dst || int(out) >= len(src.Ports) || src.Ports[out] == nil || src.Ports[out].Remote == nil {
			continue
		}
		next := src.Ports[out].Remote
		if next.Node.Type != mad.NodeSwitch {
			continue
		}
		next.Node.Switch.LFT.Set(lid, next.Num) // straight back
		loops++
	}
	if loops < 4 {
		t.Fatalf("made %d loops, want several", loops)
	}
	s := &Snapshot{Fabric: f}
	g := s.routeGraph()
	var rsws []route.Switch
	var swNodes []*fabric.Node
	var dsts []*fabric.Port
	for _, n := range sws {
		if sw, ok := g.a.Switch(n); ok {
			rsws = append(rsws, sw)
			swNodes = append(swNodes, n)
		}
		dsts = append(dsts, n.Ports[0])
	}
	want := describeLoops(switchLoops(g, rsws, swNodes, dsts, 1, len(dsts)))
	if len(want) < 4 {
		t.Fatalf("one walker found %d loops, want at least 4: %v", len(want), want)
	}
	for _, c := range [][2]int{{2, 1}, {3, 1}, {2, 5}, {4, 3}, {7, 2}} {
		got := describeLoops(switchLoops(g, rsws, swNodes, dsts, c[0], c[1]))
		if !slices.Equal(got, want) {
			t.Errorf("%d workers, %d destinations each:\n got %v\nwant %v", c[0], c[1], got, want)
		}
	}
}

// describeLoops writes each loop as its switch, path, destinations and
// sources (sorted: a set).
func describeLoops(ls []*switchLoop) []string {
	var out []string
	for _, l := range ls {
		var b strings.Builder
		fmt.Fprintf(&b, "at %s via", l.at.Description)
		for _, p := range l.loop {
			fmt.Fprintf(&b, " %s/%d", p.Node.Description, p.Num)
		}
		b.WriteString(" to")
		for _, d := range l.dsts {
			fmt.Fprintf(&b, " %d", d.LID)
		}
		var srcs []string
		for n := range l.srcs {
			srcs = append(srcs, n.Description)
		}
		slices.Sort(srcs)
		fmt.Fprintf(&b, " from %v", srcs)
		out = append(out, b.String())
	}
	return out
}
