package discover

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/transporttest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fakeNode is one node of a fake fabric that answers DR SMPs.
type fakeNode struct {
	guid     uint64
	typ      mad.NodeType
	desc     string
	numPorts uint8
	deviceID uint16
	lid      uint16
	links    map[uint8]fakePeer
	down     map[uint8]bool // cabled but not LinkUp
	dead     bool           // answers nothing
	ndr      map[uint8]bool // ports running NDR (default EDR)
}

type fakePeer struct {
	node *fakeNode
	port uint8
}

// fakeFabric walks directed routes through fake nodes like the kernel and
// the switches do, and records what a real fabric would refuse.
type fakeFabric struct {
	nodes     []*fakeNode
	local     *fakeNode
	localPort uint8
	latency   time.Duration // max random delay per answer

	mu         sync.Mutex
	violations []string
	smps       int
}

func (f *fakeFabric) add(n *fakeNode) *fakeNode {
	n.links = map[uint8]fakePeer{}
	n.down = map[uint8]bool{}
	n.ndr = map[uint8]bool{}
	f.nodes = append(f.nodes, n)
	return n
}

func connect(a *fakeNode, ap uint8, b *fakeNode, bp uint8) {
	if _, dup := a.links[ap]; dup {
		panic(fmt.Sprintf("%s port %d cabled twice", a.desc, ap))
	}
	if _, dup := b.links[bp]; dup {
		panic(fmt.Sprintf("%s port %d cabled twice", b.desc, bp))
	}
	a.links[ap] = fakePeer{b, bp}
	b.links[bp] = fakePeer{a, ap}
}

func (f *fakeFabric) violate(format string, args ...any) {
	f.mu.Lock()
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *fakeFabric) conn() *transporttest.Conn {
	return transporttest.New(transport.LocalPort{Name: "fake/1", NodeGUID: f.local.guid, PortNum: f.localPort}, f.handle)
}

func (f *fakeFabric) handle(p *transport.Packet) []transporttest.Reply {
	f.mu.Lock()
	f.smps++
	f.mu.Unlock()
	smp, err := mad.UnmarshalSMP(p.MAD)
	if err != nil || !smp.DirectedRoute() {
		f.violate("not a DR SMP: %v", err)
		return nil
	}
	if smp.Method != mad.MethodGet {
		f.violate("method %v sent", smp.Method)
		return nil
	}
	path := smp.Path()
	cur, in := f.local, f.localPort
	for i, port := range path {
		switch {
		case i == 0 && cur.typ != mad.NodeSwitch && port != f.localPort:
			f.violate("path %v: first hop %d is not the local port %d", path, port, f.localPort)
			return nil
		case i > 0 && cur.typ != mad.NodeSwitch:
			f.violate("path %v goes through CA %s", path, cur.desc)
			return nil
		}
		peer, ok := cur.links[port]
		if !ok || cur.down[port] || cur.dead {
			return nil // dropped on the way
		}
		cur, in = peer.node, peer.port
	}
	if cur.dead {
		return nil
	}
	data := make([]byte, mad.SMPDataSize)
	var a mad.Attribute
	switch smp.AttrID {
	case mad.AttrNodeInfo:
		portGUID := cur.guid
		if cur.typ != mad.NodeSwitch {
			portGUID = cur.guid + uint64(in)
		}
		a = &mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: cur.typ, NumPorts: cur.numPorts,
			SystemImageGUID: cur.guid, NodeGUID: cur.guid, PortGUID: portGUID, PartitionCap: 8,
			DeviceID: cur.deviceID, Revision: 0xa0, LocalPortNum: in, VendorID: 0x0002c9}
	case mad.AttrNodeDescription:
		a = &mad.NodeDescription{Text: cur.desc}
	case mad.AttrSwitchInfo:
		if cur.typ != mad.NodeSwitch {
			return f.status(p, mad.StatusMethodAttrUnsupported<<2)
		}
		a = &mad.SwitchInfo{LinearFDBCap: 49152, LinearFDBTop: 100, MulticastFDBCap: 4096, LIDsPerPort: 1, LifeTimeValue: 18, EnhancedPort0: true}
	case mad.AttrPortInfo:
		port := uint8(smp.AttrMod)
		if port > cur.numPorts || (port == 0 && cur.typ != mad.NodeSwitch) {
			return f.status(p, mad.StatusInvalidField<<2)
		}
		a = cur.portInfo(port)
	default:
		return f.status(p, mad.StatusMethodAttrUnsupported<<2)
	}
	if err := a.MarshalAttr(data); err != nil {
		panic(err)
	}
	return []transporttest.Reply{{Packet: &transport.Packet{Addr: p.Addr, MAD: transporttest.Respond(p.MAD, data, 0)}, Delay: f.delay()}}
}

func (f *fakeFabric) status(p *transport.Packet, st mad.Status) []transporttest.Reply {
	return []transporttest.Reply{{Packet: &transport.Packet{MAD: transporttest.Respond(p.MAD, nil, st)}, Delay: f.delay()}}
}

func (f *fakeFabric) delay() time.Duration {
	if f.latency <= 0 {
		return 0
	}
	return rand.N(f.latency)
}

// portInfo describes a port. Switch external ports carry no capability
// mask (as on real switches): their speeds decode only with port 0's.
func (n *fakeNode) portInfo(port uint8) *mad.PortInfo {
	pi := &mad.PortInfo{LocalPortNum: port, LinkWidthEnabled: 3, LinkWidthSupported: 3,
		LinkSpeedSupported: 7, LinkSpeedEnabled: 7, MTUCap: mad.MTU4096, NeighborMTU: mad.MTU4096,
		LinkSpeedExtSupported: 0xf, LinkSpeedExtEnabled: 0xf}
	if n.typ != mad.NodeSwitch || port == 0 {
		pi.CapabilityMask = mad.CapIsExtendedSpeedsSupported | mad.CapIsCapabilityMask2Supported
		pi.LID = n.lid
	}
	_, cabled := n.links[port]
	switch {
	case port == 0:
		pi.PortState, pi.PhysState = mad.PortStateActive, mad.PhysLinkUp
		pi.LinkWidthActive, pi.LinkSpeedActive = mad.Width4X, 4
	case cabled && !n.down[port]:
		pi.PortState, pi.PhysState = mad.PortStateActive, mad.PhysLinkUp
		pi.LinkWidthActive, pi.LinkSpeedActive, pi.LinkSpeedExtActive = mad.Width4X, 4, 2 // EDR
		if n.ndr[port] {
			pi.LinkSpeedExtActive = 8
		}
	case cabled:
		pi.PortState, pi.PhysState = mad.PortStateDown, mad.PhysPolling
	default:
		pi.PortState, pi.PhysState = mad.PortStateDown, mad.PhysDisabled
	}
	return pi
}

// fatTree builds a two-level fat tree: spines × leaves, hosts per leaf,
// each leaf cabled to every spine. The local port is host 0 of leaf 0.
// Leaf port h+1 goes to host h; leaf port hosts+1+s to spine s; spine
// port l+1 to leaf l.
func fatTree(spines, leaves, hosts int) (*fakeFabric, map[string]*fakeNode) {
	f := &fakeFabric{localPort: 1}
	byName := map[string]*fakeNode{}
	var sp, lf []*fakeNode
	guid := uint64(0x0002c90000000000)
	lid := uint16(1)
	mk := func(name string, typ mad.NodeType, ports int) *fakeNode {
		guid += 0x100
		n := f.add(&fakeNode{guid: guid, typ: typ, desc: name, numPorts: uint8(ports), deviceID: 0x101b, lid: lid})
		lid++
		byName[name] = n
		return n
	}
	for s := range spines {
		sp = append(sp, mk(fmt.Sprintf("spine%d", s), mad.NodeSwitch, leaves))
	}
	for l := range leaves {
		leaf := mk(fmt.Sprintf("leaf%d", l), mad.NodeSwitch, hosts+spines)
		lf = append(lf, leaf)
		for s := range spines {
			connect(leaf, uint8(hosts+1+s), sp[s], uint8(l+1))
		}
		for h := range hosts {
			host := mk(fmt.Sprintf("host%d-%d", l, h), mad.NodeCA, 1)
			connect(leaf, uint8(h+1), host, 1)
		}
	}
	f.local = byName["host0-0"]
	return f, byName
}

func (f *fakeFabric) noViolations(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range f.violations {
		t.Error(v)
	}
}
