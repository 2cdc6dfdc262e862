package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// leafDistances gives every switch's hop distances to the leaves (checked against
// a search of its own over the cables) in a fixed number of allocations,
// not a row and a queue per leaf (nor per batch of leaves).
func TestLeafDistances(t *testing.T) {
	f := fatTree(t)
	sg := newSwitchGraph(f)
	var leaves []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && leafOfSwitch(n) {
			leaves = append(leaves, n)
		}
	}
	if len(leaves) < 2 {
		t.Fatalf("%d leaves", len(leaves))
	}
	rows := sg.leafDistances(leaves)
	for i, leaf := range leaves {
		want := map[*fabric.Node]int{leaf: 0}
		frontier := []*fabric.Node{leaf}
		for len(frontier) > 0 {
			var next []*fabric.Node
			for _, n := range frontier {
				for _, p := range n.Ports {
					if p == nil || p.Num == 0 || !interSwitch(p) || !linkUp(p) {
						continue
					}
					if _, ok := want[p.Remote.Node]; !ok {
						want[p.Remote.Node] = want[n] + 1
						next = append(next, p.Remote.Node)
					}
				}
			}
			frontier = next
		}
		for sw, j := range sg.idx {
			w, ok := want[sw]
			if !ok {
				w = -1
			}
			if got := rows.row(j)[i]; int(got) != w {
				t.Errorf("%s to %s: %d hops, want %d", sw.Description, leaf.Description, got, w)
			}
		}
	}
	if a := testing.AllocsPerRun(10, func() { sg.leafDistances(leaves) }); a > 3 {
		t.Errorf("%.0f allocations for %d leaves, want at most 3", a, len(leaves))
	}
}

// leafOfSwitch: a switch with a CA cabled to it.
func leafOfSwitch(n *fabric.Node) bool {
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeCA {
			return true
		}
	}
	return false
}
