package checks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// baselineAgrees fails unless BaselineOf(f) answers what the checks ask
// of an expected topology (nodes, NodeByGUID, Links, each port's far end)
// as f itself does.
func baselineAgrees(t testing.TB, f *fabric.Fabric) {
	t.Helper()
	b := BaselineOf(f)
	if b.Nodes() != len(f.Nodes) {
		t.Fatalf("%d nodes, fabric has %d", b.Nodes(), len(f.Nodes))
	}
	same := func(what string, j int32, n *fabric.Node) {
		t.Helper()
		if j < 0 || int(j) >= len(b.guid) {
			t.Fatalf("%s: node %d of %d", what, j, len(b.guid))
		}
		if b.guid[j] != n.GUID || b.descOf(j) != n.Description || b.typ[j] != n.Type {
			t.Fatalf("%s: %#x %q %v, fabric's %#x %q %v", what, b.guid[j], b.descOf(j), b.typ[j], n.GUID, n.Description, n.Type)
		}
		if int(j) < b.in && f.Nodes[j] != n {
			// a node of f is named by its place in f.Nodes
			for i, m := range f.Nodes {
				if m == n {
					t.Fatalf("%s: node %d, fabric's is its node %d", what, j, i)
				}
			}
		}
	}
	for i, n := range f.Nodes {
		same("node", int32(i), n)
		if e, be := (&Snapshot{Fabric: f}).nodeEntity(n, "x"), (&Snapshot{Fabric: f, Baseline: b}).baseEntity(int32(i), "x"); e != be {
			t.Fatalf("node %d: entity %+v, nodeEntity's %+v", i, be, e)
		}
		j, ok := b.nodeByGUID(n.GUID)
		if !ok {
			t.Fatalf("nodeByGUID(%#x): none", n.GUID)
		}
		same("nodeByGUID", j, f.NodeByGUID(n.GUID))
		if int(j) >= b.in {
			t.Fatalf("nodeByGUID(%#x) = %d, a node outside the fabric's", n.GUID, j)
		}
		for num := 0; num < 256; num++ {
			q, ok := b.peerAt(int32(i), uint8(num))
			p := portOf(n, uint8(num))
			if want := p != nil && p.Remote != nil && p.Remote.Node != nil; ok != want {
				t.Fatalf("%s port %d: cabled %v, fabric says %v", n.Description, num, ok, want)
			}
			if ok {
				same("peer", q.node, p.Remote.Node)
				if q.num != p.Remote.Num {
					t.Fatalf("%s port %d: peer port %d, fabric's %d", n.Description, num, q.num, p.Remote.Num)
				}
			}
		}
	}
	for _, g := range []uint64{0, 1, ^uint64(0)} {
		if _, ok := b.nodeByGUID(g); ok != (f.NodeByGUID(g) != nil) {
			t.Fatalf("nodeByGUID(%#x): %v", g, ok)
		}
	}
	ls := f.Links()
	var bls []baseLink
	for l := range b.allLinks() {
		bls = append(bls, l)
	}
	if len(ls) != len(bls) {
		t.Fatalf("%d links, fabric has %d", len(bls), len(ls))
	}
	for i, l := range ls {
		got := bls[i]
		same("link A", got.a.node, l.A.Node)
		same("link B", got.b.node, l.B.Node)
		if got.a.num != l.A.Num || got.b.num != l.B.Num {
			t.Fatalf("link %d: ports %d-%d, fabric's %d-%d", i, got.a.num, got.b.num, l.A.Num, l.B.Num)
		}
	}
	// Every node of f has the cables its fabric node has, in the order
	// of its Ports (a node outside f is checked where it is reached).
	for j, n := range f.Nodes {
		var want []*fabric.Port
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node != nil {
				want = append(want, p.Remote)
			}
		}
		k := 0
		for peer, num := range b.cables(int32(j)) {
			if k >= len(want) {
				t.Fatalf("node %d: more than the %d cabled ports the fabric has", j, len(want))
			}
			same("cables", peer, want[k].Node)
			if num != want[k].Num {
				t.Fatalf("node %d cable %d: peer port %d, fabric's %d", j, k, num, want[k].Num)
			}
			k++
		}
		if k != len(want) {
			t.Fatalf("node %d: %d cabled ports, fabric has %d", j, k, len(want))
		}
	}
}

func sampleFabric(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, _, err := fabric.Decode(fixtures.SampleTopology(), "sample topology")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBaselineOfAgrees: the compact baseline answers as the fabric it was
// made from, on well-formed fabrics and on the shapes Links takes its
// other way for (a gate's part of the baseline cabled to switches it
// leaves out, a GUID twice, a one-sided cable, a port cabled to itself).
func TestBaselineOfAgrees(t *testing.T) {
	if BaselineOf(nil) != nil {
		t.Fatal("BaselineOf(nil) is not nil")
	}
	baselineAgrees(t, sampleFabric(t))
	if b := BaselineOf(sampleFabric(t)); b.links != nil {
		t.Error("the sample's links are kept, not derived from its cables")
	}
	for _, name := range []string{"ibnetdiscover/hdr.txt", "ibnetdiscover/qdr.net", "ring/ring5.net"} {
		data, err := os.ReadFile(filepath.Join("..", "fixtures", name))
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := fabric.Decode(data, name)
		if err != nil {
			t.Fatal(err)
		}
		baselineAgrees(t, f)
	}

	// A gate's part: hosts and leaves, the spines they are cabled to
	// left out of Nodes.
	f := sampleFabric(t)
	part := &fabric.Fabric{}
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch || hostPorts(n) > 0 {
			part.Nodes = append(part.Nodes, n)
		}
	}
	if len(part.Nodes) == len(f.Nodes) {
		t.Fatal("the sample has no switch without hosts")
	}
	baselineAgrees(t, part)

	// Two nodes with one GUID.
	f = sampleFabric(t)
	f.Nodes[3].GUID = f.Nodes[7].GUID
	f.Reindex()
	baselineAgrees(t, f)

	// A one-sided cable and a port cabled to itself.
	f = sampleFabric(t)
	var ends []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				ends = append(ends, p)
			}
		}
	}
	ends[0].Remote.Remote = nil
	ends[len(ends)-1].Remote = ends[len(ends)-1]
	baselineAgrees(t, f)
}

// FuzzBaselineOf: whatever fabric a file decodes to, the compact baseline
// answers as it does.
func FuzzBaselineOf(f *testing.F) {
	f.Add(fixtures.SampleTopology())
	for _, name := range []string{"ibnetdiscover/qdr.net", "ring/ring5.net"} {
		if data, err := os.ReadFile(filepath.Join("..", "fixtures", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[{"guid":"0x1","type":"switch","ports":[{"num":1,"remote":{"guid":"0x2","port":1}}]},{"guid":"0x2","type":"ca","ports":[{"num":1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, _, err := fabric.Decode(data, "fuzz")
		if err != nil {
			return
		}
		baselineAgrees(t, fab)
	})
}
