package checks

import (
	"encoding/binary"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestPortTotalsCorrected: the totals a sweep saves are what the
// switches' tables forward to every host LID by
// port (the group's load routing.ecmp-imbalance weighs), host LIDs only;
// corrected by a block the gate re-read changed, they are the changed
// table's.
func TestPortTotalsCorrected(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	res, err := Run(s, "routing.ecmp-imbalance")
	if err != nil {
		t.Fatal(err)
	}
	v := FabricWide(s, res, s.Taken)
	if v == nil || v.PortTotals == nil {
		t.Fatalf("no totals in the verdicts: %+v", v)
	}
	pt := v.PortTotals
	dests := totalsDests(routedHosts(f), nil)
	var spine *fabric.Node
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			if p := n.Ports[1]; p != nil && !pt.counted(p.LID) {
				t.Errorf("%s's LID %d not counted", n.Description, p.LID)
			}
			continue
		}
		if pt.counted(n.Ports[0].LID) {
			t.Errorf("switch %s's LID %d counted as a destination", n.Description, n.Ports[0].LID)
		}
		got, ok, err := pt.of(n.GUID)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v err %v", n.Description, ok, err)
		}
		if want := naiveTotals(n, dests); got != *want {
			t.Errorf("%s: totals %v, want %v", n.Description, got, *want)
		}
		hostPorts := 0
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type != mad.NodeSwitch {
				hostPorts++
			}
		}
		if spine == nil && hostPorts == 0 {
			spine = n
		}
	}
	if _, ok, err := pt.of(0x1234); ok || err != nil {
		t.Errorf("a GUID not swept: ok %v err %v", ok, err)
	}
	if spine == nil {
		t.Fatal("no spine")
	}
	// Send every host LID of one block out of the spine's port 1.
	lft := spine.Switch.LFT
	blk := int(dests[0]) / mad.LFTBlockSize
	was := *lft.Block(blk)
	for _, lid := range dests {
		if int(lid)/mad.LFTBlockSize == blk {
			lft.Set(lid, 1)
		}
	}
	got, ok, err := changedTotals(spine, pt, TableChange{Was: map[int]fabric.LFTBlock{blk: was}})
	if !ok || err != nil {
		t.Fatalf("changed: ok %v err %v", ok, err)
	}
	if want := naiveTotals(spine, dests); *got != *want {
		t.Errorf("corrected totals %v, want %v", *got, *want)
	}
}

// naiveTotals is the count routing.ecmp-imbalance made of a group's
// load before the totals were kept: LID by LID.
func naiveTotals(sw *fabric.Node, dests []uint16) *[256]int32 {
	var tot [256]int32
	lft := sw.Switch.LFT
	for _, lid := range dests {
		if int(lid) < lft.Len() {
			if p := portOf(sw, lft.At(lid)); p != nil {
				tot[p.Num]++
			}
		}
	}
	return &tot
}

// FuzzPortTotals: any bytes decode without a panic, and a record encoded
// decodes to what was encoded.
func FuzzPortTotals(f *testing.F) {
	rec := binary.LittleEndian.AppendUint64(nil, 7)
	rec = append(rec, 2, 1, 5, 17, 0x80, 0x01)
	f.Add(rec, uint64(7))
	f.Add([]byte{1, 2, 3}, uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, guid uint64) {
		pt := &PortTotals{Switches: b, LIDs: b}
		pt.of(guid)
		pt.counted(uint16(guid))
		var tot [256]int32
		tot[3], tot[200] = int32(guid%1000), 1
		sw := &fabric.Node{GUID: guid, Ports: make([]*fabric.Port, 256)}
		for i := range sw.Ports {
			sw.Ports[i] = &fabric.Port{Node: sw, Num: uint8(i)}
		}
		enc := newPortTotals([]totalsRec{encodeTotals(sw, &tot)}, []uint16{uint16(guid)})
		got, ok, err := enc.of(guid)
		if !ok || err != nil || got != tot || !enc.counted(uint16(guid)) {
			t.Errorf("round trip of %v: %v ok %v err %v", tot, got, ok, err)
		}
	})
}

// BenchmarkPortTotals8k counts and encodes every switch's per-port
// destination totals of a min-hop routed FatTree8k as a sweep whose
// routing.ecmp-imbalance was skipped does (the check counts them as it
// runs otherwise), and reports their size on disk per
// node of the fabric (the totals file): the state's budget is 1 KB per
// node (issue 13).
func BenchmarkPortTotals8k(b *testing.B) { benchPortTotals(b, topology.FatTree8k()) }

// BenchmarkPortTotals50k is BenchmarkPortTotals8k on FatTree50k (3,840
// switches, 45,056 hosts).
func BenchmarkPortTotals50k(b *testing.B) { benchPortTotals(b, topology.FatTree50k()) }

func benchPortTotals(b *testing.B, t topology.Builder) {
	f, err := topology.Routed(t)
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	var pt *PortTotals
	for b.Loop() {
		pt = portTotalsOf(s, nil)
	}
	// The totals file: its magic, its stamp, the LID set's length, the set and
	// the switches' records (internal/snapshot writeTotals).
	size := 8 + 8 + len(binary.AppendUvarint(nil, uint64(len(pt.LIDs)))) + len(pt.LIDs) + len(pt.Switches)
	b.ReportMetric(float64(size), "file-B")
	b.ReportMetric(float64(size)/float64(len(f.Nodes)), "file-B/node")
}
