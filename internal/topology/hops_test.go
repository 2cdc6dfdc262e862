package topology

import (
	"fmt"
	"os"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// bfsHops is the distance matrix by one breadth-first search per
// switch, as Route computed it before hopMatrix grew all rows together.
func bfsHops(g *graph) []uint8 {
	n := len(g.sw)
	hops := make([]uint8, n*n)
	queue := make([]int32, 0, n)
	for s := range n {
		row := hops[s*n : (s+1)*n]
		for i := range row {
			row[i] = unreachable
		}
		row[s] = 0
		queue = append(queue[:0], int32(s))
		for q := 0; q < len(queue); q++ {
			u := queue[q]
			d := row[u] + 1
			if d == unreachable {
				break
			}
			for _, v := range g.adj[g.adjS[u]:g.adjS[u+1]] {
				if row[v] == unreachable {
					row[v] = d
					queue = append(queue, v)
				}
			}
		}
	}
	return hops
}

// hopFabrics are fabrics whose distances differ in kind: a fat tree with
// parallel links and one down, a part cut off, a dragonfly, and a ring
// longer than 254 hops (the farthest switches unreachable).
func hopFabrics(t *testing.T) map[string]*fabric.Fabric {
	t.Helper()
	out := map[string]*fabric.Fabric{}
	build := func(name string, b Builder) *fabric.Fabric {
		f, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := AssignLIDs(f); err != nil {
			t.Fatal(err)
		}
		out[name] = f
		return f
	}
	f := build("fattree2-down", FatTree2{Leaves: 6, Spines: 3, HostsPerLeaf: 4, LinksPerPair: 2, Common: Common{SwitchPorts: 16}})
	up := f.NodesByName("leaf01")[0].Ports[5]
	up.State, up.Remote.State = mad.PortStateDown, mad.PortStateDown
	f = build("fattree2-cut", FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4, Common: Common{SwitchPorts: 8}})
	for _, p := range f.NodesByName("leaf02")[0].Ports[5:] {
		if p != nil && p.Remote != nil {
			p.State, p.Remote.State = mad.PortStateDown, mad.PortStateDown
		}
	}
	build("dragonfly", Dragonfly{Groups: 5, SwitchesPerGroup: 4, HostsPerSwitch: 2, GlobalPerSwitch: 1})
	build("ring600", Ring{Switches: 600, HostsPerSwitch: 1})
	build("fattree8k", FatTree8k())
	if os.Getenv("IBD_HOPS_50K") != "" {
		build("fattree50k", FatTree50k())
	}
	return out
}

// TestHopMatrixIsBFS: hopMatrix's distances are a breadth-first
// search's, and the tables Route makes from them the same, switch by
// switch and LID by LID.
func TestHopMatrixIsBFS(t *testing.T) {
	for name, f := range hopFabrics(t) {
		t.Run(name, func(t *testing.T) {
			g, err := newGraph(f)
			if err != nil {
				t.Fatal(err)
			}
			n := len(g.sw)
			want := bfsHops(g)
			for _, workers := range []int{1, 3} {
				got := g.hopMatrix(workers)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%d workers: hops from %s to %s: %d, want %d", workers,
							g.sw[i/n].Description, g.sw[i%n].Description, got[i], want[i])
					}
				}
			}
			if name == "ring600" {
				if want[300] != unreachable || want[254] != 254 {
					t.Fatalf("ring: hops 0->254 %d, 0->300 %d: want 254 and unreachable", want[254], want[300])
				}
			}
			// The tables from either matrix.
			got := g.hopMatrix(2)
			lft := func(hops []uint8, s int) string {
				r := &router{g: g, hops: hops, masks: make([]portMask, n), want: make([]uint8, n), setOf: make([]int32, n)}
				b := make([]uint8, g.top+1)
				r.route(s, b)
				return fmt.Sprint(b)
			}
			for s := 0; s < n; s += max(1, n/64) {
				if a, b := lft(got, s), lft(want, s); a != b {
					t.Fatalf("%s's table differs", g.sw[s].Description)
				}
			}
		})
	}
}
