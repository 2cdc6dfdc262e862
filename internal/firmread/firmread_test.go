package firmread

import (
	"context"
	"sync"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeVendor answers GeneralInfo from a per-LID version; a LID in dead
// does not answer.
type fakeVendor struct {
	mu    sync.Mutex // Read asks from several goroutines
	fw    map[uint16]mad.GeneralInfo
	dead  map[uint16]bool
	asked map[uint16]int
}

func (f *fakeVendor) GetVendor(_ context.Context, lid uint16, a mad.Attribute, _ uint32) (*mad.GMP, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked[lid]++
	if f.dead[lid] {
		return nil, &transport.TimeoutError{Class: mad.ClassMlnxVendor, Attempts: 1} // as the Engine says it
	}
	*a.(*mad.GeneralInfo) = f.fw[lid]
	return &mad.GMP{}, nil
}

// TestRead: NVIDIA switches and HCAs are asked, by the switch's port-0
// LID and the HCA's active port; an old firmware's 8-bit version is read
// when the extended one is zero. A node that does not answer is unread
// (could not decide), one without a LID is unread with NoLID, and other
// vendors' devices, Bull devices that are not Mellanox-based and SHARP
// aggregation nodes are not asked at all.
func TestRead(t *testing.T) {
	g := &fakeVendor{
		fw: map[uint16]mad.GeneralInfo{
			1: {ExtMajor: 31, ExtMinor: 2012, ExtSubMinor: 1068, PSID: "MT_0000000579"},
			2: {Major: 9, Minor: 4, SubMinor: 200}, // SwitchX-era firmware: 8-bit fields only
			5: {ExtMajor: 28, ExtMinor: 39, ExtSubMinor: 1002},
			8: {ExtMajor: 12, ExtMinor: 28, ExtSubMinor: 2006},
		},
		dead:  map[uint16]bool{3: true},
		asked: map[uint16]int{},
	}
	sw := func(desc string, lid uint16, vendor uint32) *fabric.Node {
		n := &fabric.Node{Type: mad.NodeSwitch, Description: desc, VendorID: vendor, DeviceID: 0xd2f2, GUID: uint64(lid)}
		n.Ports = []*fabric.Port{{Node: n, LID: lid}}
		return n
	}
	ca := func(desc string, lid uint16, vendor uint32, dev uint16) *fabric.Node {
		n := &fabric.Node{Type: mad.NodeCA, Description: desc, VendorID: vendor, DeviceID: dev, GUID: 0x100 + uint64(lid)}
		n.Ports = []*fabric.Port{nil,
			{Node: n, Num: 1, State: mad.PortStateDown}, // cable out: not this one
			{Node: n, Num: 2, LID: lid, State: mad.PortStateActive}}
		return n
	}
	f := &fabric.Fabric{Nodes: []*fabric.Node{
		sw("q2-new", 1, VendorMellanox),
		sw("sx-old", 2, VendorMellanox),
		sw("q2-silent", 3, VendorMellanox),
		sw("q2-nolid", 0, VendorMellanox),
		ca("gpu01 mlx5_0", 5, VendorMellanox, 0x1021),
		ca("qlogic", 6, 0x001175, 0x7322),
		ca("Mellanox Technologies Aggregation Node", 7, VendorMellanox, 0xcf09),
		ca("bull-cx4", 8, VendorBull, 0x1bb4),
		ca("bull-other", 9, VendorBull, 0x1234),
	}}
	v := Read(context.Background(), g, f)
	want := map[string]string{"q2-new": "31.2012.1068", "sx-old": "9.4.0200", "gpu01 mlx5_0": "28.39.1002", "bull-cx4": "12.28.2006"}
	for _, n := range f.Nodes {
		fw, ok := v.Versions[n]
		switch w := want[n.Description]; {
		case w != "" && (!ok || fw.String() != w):
			t.Errorf("%s: %v (read %v), want %s", n.Description, fw, ok, w)
		case w == "" && ok:
			t.Errorf("%s: read %v, want not read", n.Description, fw)
		}
	}
	if fw := v.Versions[f.Nodes[0]]; fw.PSID != "MT_0000000579" {
		t.Errorf("PSID %q", fw.PSID)
	}
	if v.Unread[f.Nodes[2]] == "" || v.Unread[f.Nodes[3]] != NoLID || len(v.Unread) != 2 {
		t.Errorf("unread %v, want q2-silent (no answer) and q2-nolid (%s)", v.Unread, NoLID)
	}
	// The one that went unanswered, with the LID asked: its line can say
	// why (diagnose.Silence); one without a LID was not sent anything.
	if len(v.NoAnswer) != 1 || v.NoAnswer[f.Nodes[2]] != 3 {
		t.Errorf("no answer %v, want q2-silent at LID 3", v.NoAnswer)
	}
	if v.NotAsked != 3 || g.asked[6] != 0 || g.asked[7] != 0 || g.asked[9] != 0 {
		t.Errorf("not asked %d (asked LIDs 6, 7, 9: %d, %d, %d times), want the QLogic HCA, the aggregation node and Bull's non-Mellanox device not asked", v.NotAsked, g.asked[6], g.asked[7], g.asked[9])
	}
}
