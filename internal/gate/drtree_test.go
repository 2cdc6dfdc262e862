package gate

import (
	"slices"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestDRTreeIsPathFrom: one search from a gate's switch (drTree, what
// the cable checks make their routes over) gives every node the route
// a search for that node alone gives (the search as it was before the
// tree: searchOnce), with ports to avoid and links down on the way.
func TestDRTreeIsPathFrom(t *testing.T) {
	f := build(t, topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8, Hosts: topology.Hosts{HCAsPerServer: 2}})
	var leaf, spine *fabric.Node
	for _, n := range f.Nodes {
		switch {
		case n.Description == "leaf01":
			leaf = n
		case n.Description == "spine02":
			spine = n
		}
	}
	if leaf == nil || spine == nil {
		t.Fatal("no leaf01 or spine02")
	}
	// A link down and a switch's ports avoided (silent).
	for _, p := range spine.Ports {
		if p != nil && p.Num == 1 {
			p.PhysState = mad.PhysPolling
		}
	}
	avoid := map[*fabric.Port]bool{}
	for _, n := range f.Nodes {
		if n.Description == "spine03" {
			for _, p := range n.Ports {
				if p != nil {
					avoid[p] = true
					if p.Remote != nil {
						avoid[p.Remote] = true
					}
				}
			}
		}
	}
	for _, av := range []map[*fabric.Port]bool{nil, avoid} {
		tree := searchFrom(leaf, mad.Path{0, 1}, av, nil)
		found := 0
		for _, n := range f.Nodes {
			want := searchOnce(leaf, mad.Path{0, 1}, n, av)
			if got := tree.to(n); !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("route to %s: tree %v, alone %v", n.Description, got, want)
			}
			if got := pathFrom(leaf, mad.Path{0, 1}, n, av); !slices.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("pathFrom to %s: %v, want %v", n.Description, got, want)
			}
			if want != nil {
				found++
			}
		}
		if found < len(f.Nodes)/2 {
			t.Errorf("routes to %d of %d nodes", found, len(f.Nodes))
		}
	}
}

// searchOnce is pathFrom as it was before drTree: a search for n alone.
func searchOnce(first *fabric.Node, start mad.Path, n *fabric.Node, avoid map[*fabric.Port]bool) mad.Path {
	if first == n {
		return start
	}
	if first.Type != mad.NodeSwitch {
		return nil
	}
	paths := map[*fabric.Node]mad.Path{first: start}
	queue := []*fabric.Node{first}
	for len(queue) > 0 {
		sw := queue[0]
		queue = queue[1:]
		for _, p := range sw.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || avoid[p] || p.PhysState != mad.PhysLinkUp {
				continue
			}
			next := p.Remote.Node
			if next == n {
				return paths[sw].Extend(p.Num)
			}
			if next.Type != mad.NodeSwitch || paths[next] != nil || len(paths[sw]) >= maxHops {
				continue
			}
			paths[next] = paths[sw].Extend(p.Num)
			queue = append(queue, next)
		}
	}
	return nil
}
