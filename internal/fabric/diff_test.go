package fabric

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

func recable(a, b *Port) {
	for _, p := range []*Port{a, b} {
		if p.Remote != nil {
			p.Remote.Remote = nil
		}
	}
	a.Remote, b.Remote = b, a
}

func portOf(t *testing.T, f *Fabric, guid uint64, num int) *Port {
	t.Helper()
	n := f.NodeByGUID(guid)
	if n == nil {
		t.Fatalf("no node %#x", guid)
	}
	if n.Ports[num] == nil {
		n.Ports[num] = &Port{Node: n, Num: uint8(num), GUID: n.GUID}
	}
	return n.Ports[num]
}

const (
	gSpine01 = 0xb83fd20300a10000
	gSpine02 = 0xb83fd20300a20000
	gLeaf01  = 0xb83fd20300b10000
	gLeaf02  = 0xb83fd20300b20000
	gGPU001  = 0x043f720300c10000
	gGPU002  = 0x043f720300c20000
	gGPU003  = 0x043f720300c30000
	gGPU005  = 0x043f720300c50000
)

func TestDiff(t *testing.T) {
	old := parseFixture(t, "hdr.txt")
	if cs := Diff(old, parseFixture(t, "hdr.txt")); len(cs) != 0 {
		t.Fatalf("identical fabrics: %v", cs)
	}
	nw := parseFixture(t, "hdr.txt")

	// gpu002 leaves the fabric.
	g2 := nw.NodeByGUID(gGPU002)
	g2.Ports[1].Remote.Remote = nil
	nw.Nodes = slices.DeleteFunc(nw.Nodes, func(n *Node) bool { return n == g2 })
	// gpu006 joins on leaf02[6].
	g6 := &Node{Type: mad.NodeCA, GUID: 0x043f720300c60000, Description: "gpu006 mlx5_0", Ports: make([]*Port, 2)}
	g6.Ports[1] = &Port{Node: g6, Num: 1, GUID: 0x043f720300c60001, LID: 12, WidthActive: mad.Width4X, SpeedActive: mad.SpeedHDR}
	nw.Nodes = append(nw.Nodes, g6)
	nw.Reindex()
	recable(portOf(t, nw, gLeaf02, 6), g6.Ports[1])
	// gpu001's cable moves from leaf01[1] to leaf01[10].
	recable(portOf(t, nw, gGPU001, 1), portOf(t, nw, gLeaf01, 10))
	// spine01[1]-leaf01[37] becomes spine01[3]-leaf01[39].
	old37 := portOf(t, nw, gSpine01, 1)
	old37.Remote.Remote, old37.Remote = nil, nil
	recable(portOf(t, nw, gSpine01, 3), portOf(t, nw, gLeaf01, 39))
	// gpu005 comes back to HDR.
	p5 := portOf(t, nw, gGPU005, 1)
	p5.SpeedActive, p5.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	// LIDs and a description.
	portOf(t, nw, gGPU003, 2).LID = 11
	portOf(t, nw, gLeaf02, 0).LID = 50
	nw.NodeByGUID(gSpine02).Description = "MF0;spine02:MQM9700/U1"

	got := Diff(old, nw).String()
	want := `node-removed gpu002 mlx5_0 (0x043f720300c20000): CA
node-added gpu006 mlx5_0 (0x043f720300c60000): CA
link-removed gpu002 mlx5_0 (0x043f720300c20000)[1]: 0xb83fd20300b10000[2] MF0;leaf01:MQM8700/U1
link-added gpu006 mlx5_0 (0x043f720300c60000)[1]: 0xb83fd20300b20000[6] MF0;leaf02:MQM8700/U1
link-moved gpu001 mlx5_0 (0x043f720300c10000)[1]: 0xb83fd20300b10000[1] MF0;leaf01:MQM8700/U1 -> 0xb83fd20300b10000[10] MF0;leaf01:MQM8700/U1
link-moved MF0;spine01:MQM8700/U1 (0xb83fd20300a10000)[1]: [1] - 0xb83fd20300b10000[37] MF0;leaf01:MQM8700/U1 -> [3] - 0xb83fd20300b10000[39] MF0;leaf01:MQM8700/U1
rate-changed gpu005 mlx5_0 (0x043f720300c50000)[1]: 4X EDR -> 4X HDR
lid-changed gpu003 mlx5_0 (0x043f720300c30000)[2]: lid 10 -> lid 11
lid-changed MF0;leaf02:MQM8700/U1 (0xb83fd20300b20000): lid 5 -> lid 50
description-changed MF0;spine02:MQM9700/U1 (0xb83fd20300a20000): "MF0;spine02:MQM8700/U1" -> "MF0;spine02:MQM9700/U1"
`
	diffText(t, "changes", want, got)
	// Reverse direction mirrors it.
	rev := Diff(nw, old)
	if rev.Count(NodeAdded) != 1 || rev.Count(NodeRemoved) != 1 || rev.Count(LinkMoved) != 2 || rev.Count(RateChanged) != 1 {
		t.Fatalf("reverse diff:\n%s", rev)
	}
	cs := Diff(old, nw)
	if rows := cs.Rows(); len(rows) != len(cs) || len(rows[0]) != len(cs.Header()) || rows[4][3] != "1" {
		t.Fatalf("rows = %q", rows)
	}
	if m := cs[4]; m.OldPeer != (End{gLeaf01, 1}) || m.NewPeer != (End{gLeaf01, 10}) {
		t.Fatalf("move peers = %+v", m)
	}
}

// A fabric compared with its JSON round trip has no changes; one cable
// swapped between two ports of a leaf shows as two moves.
func TestDiffSwap(t *testing.T) {
	old := parseFixture(t, "hdr.txt")
	b, err := Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	nw, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if cs := Diff(old, nw); len(cs) != 0 {
		t.Fatalf("round trip differs: %v", cs)
	}
	a, c := portOf(t, nw, gLeaf01, 1), portOf(t, nw, gLeaf01, 2)
	ha, hc := a.Remote, c.Remote
	recable(a, hc)
	recable(c, ha)
	cs := Diff(old, nw)
	if cs.Count(LinkMoved) != 2 || len(cs) != 2 {
		t.Fatalf("swap:\n%s", cs)
	}
	if !strings.Contains(cs.String(), "gpu001 mlx5_0 (0x043f720300c10000)[1]: 0xb83fd20300b10000[1]") {
		t.Fatalf("swap:\n%s", cs)
	}
}
