package arread

import (
	"context"
	"sync"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeSMA answers AdaptiveRoutingInfo by the first hop of the path.
type fakeSMA struct {
	mu    sync.Mutex
	ar    map[uint8]mad.ARInfo
	unsup map[uint8]bool
	dead  map[uint8]bool
	asked map[uint8]int
}

func (f *fakeSMA) GetSMP(_ context.Context, path mad.Path, a mad.Attribute, mod uint32) (*mad.SMP, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := path[0]
	f.asked[k]++
	switch {
	case mod != 0:
		return nil, &transport.StatusError{Class: mad.ClassSubnDR, Attr: mad.AttrARInfo, Status: 0x1c}
	case f.dead[k]:
		return nil, transport.ErrTimeout
	case f.unsup[k]:
		return nil, &transport.StatusError{Class: mad.ClassSubnDR, Attr: mad.AttrARInfo, Status: 0x0c}
	}
	*a.(*mad.ARInfo) = f.ar[k]
	return &mad.SMP{}, nil
}

// TestRead: NVIDIA switches are asked by directed route with modifier 0;
// one that answers "attribute unsupported" has no adaptive routing (read,
// GroupCap 0), one that does not answer is unread (could not decide);
// CAs and other vendors' switches are not asked.
func TestRead(t *testing.T) {
	g := &fakeSMA{
		ar:    map[uint8]mad.ARInfo{1: {Enabled: true, GroupCap: 2048}, 2: {GroupCap: 2048}},
		unsup: map[uint8]bool{3: true},
		dead:  map[uint8]bool{4: true},
		asked: map[uint8]int{},
	}
	node := func(desc string, hop uint8, typ mad.NodeType, vendor uint32) *fabric.Node {
		return &fabric.Node{Type: typ, Description: desc, VendorID: vendor, DeviceID: 0xd2f2, GUID: uint64(hop), Path: mad.Path{hop}}
	}
	f := &fabric.Fabric{Nodes: []*fabric.Node{
		node("ar-on", 1, mad.NodeSwitch, 0x0002c9),
		node("ar-off", 2, mad.NodeSwitch, 0x0002c9),
		node("old", 3, mad.NodeSwitch, 0x0002c9),
		node("silent", 4, mad.NodeSwitch, 0x0002c9),
		node("hca", 5, mad.NodeCA, 0x0002c9),
		node("qlogic", 6, mad.NodeSwitch, 0x00066a),
	}}
	v := Read(context.Background(), g, f)
	if a, ok := v.Info[f.Nodes[0]]; !ok || !a.Enabled {
		t.Errorf("ar-on: %+v %v", a, ok)
	}
	if a, ok := v.Info[f.Nodes[1]]; !ok || a.Enabled {
		t.Errorf("ar-off: %+v %v", a, ok)
	}
	if a, ok := v.Info[f.Nodes[2]]; !ok || a.GroupCap != 0 {
		t.Errorf("unsupported: %+v %v, want read with no adaptive routing", a, ok)
	}
	if v.Unread[f.Nodes[3]] == "" || len(v.Unread) != 1 || len(v.Info) != 3 {
		t.Errorf("unread %v, %d read", v.Unread, len(v.Info))
	}
	if g.asked[5] != 0 || g.asked[6] != 0 {
		t.Errorf("asked the CA %d times, the QLogic switch %d times", g.asked[5], g.asked[6])
	}
}
