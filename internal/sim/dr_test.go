package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// In fatTree(t, 2, 2, 2): leaf ports 1,2 go to hosts, 3 to spine01, 4 to
// spine02; spine port 1 to leaf01, 2 to leaf02. gpu001/gpu002 hang off
// leaf01, gpu003/gpu004 off leaf02.

func TestDRThreeHopHopPointerAndReturnPath(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	var got []drHop
	s.traceDR = func(h drHop) { got = append(got, h) }
	c := attach(t, s, "gpu001 mlx5_0", 1)

	path := mad.Path{1, 3, 2} // gpu001 -> leaf01 -> spine01 -> leaf02
	r := drGet(t, c, path, mad.AttrNodeInfo, 0)
	if r == nil {
		t.Fatal("no answer")
	}
	leaf01, spine01, leaf02, gpu001 := s.byDesc["leaf01"][0], s.byDesc["spine01"][0], s.byDesc["leaf02"][0], s.byDesc["gpu001 mlx5_0"][0]
	want := []struct {
		node   int32
		in     uint8
		dir    bool
		hp     uint8
		rpIdx  int
		rpWant uint8
	}{
		// Outbound: each switch records its arrival port at ReturnPath[hp].
		{leaf01, 1, false, 1, 1, 1},
		{spine01, 1, false, 2, 2, 1},
		{leaf02, 3, false, 3, 3, 3},
		// Returning: the hop pointer counts down, the path retraced.
		{spine01, 2, true, 3, 3, 3},
		{leaf01, 3, true, 2, 2, 1},
		{gpu001, 1, true, 1, 1, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("trace has %d hops, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Node != w.node || g.InPort != w.in || g.Direction != w.dir || g.HopPointer != w.hp || g.ReturnPath[w.rpIdx] != w.rpWant {
			t.Errorf("hop %d: node %s in %d D=%v hp %d RP[%d]=%d; want node %s in %d D=%v hp %d RP[%d]=%d",
				i, s.nodeName(g.Node), g.InPort, g.Direction, g.HopPointer, w.rpIdx, g.ReturnPath[w.rpIdx],
				s.nodeName(w.node), w.in, w.dir, w.hp, w.rpIdx, w.rpWant)
		}
	}
	// The response as the requester receives it.
	if !r.Direction || r.HopPointer != 0 || r.HopCount != 3 {
		t.Errorf("response D=%v hp=%d hc=%d, want D=1 hp=0 hc=3", r.Direction, r.HopPointer, r.HopCount)
	}
	if got := r.ReturnPath[1:4]; got[0] != 1 || got[1] != 1 || got[2] != 3 {
		t.Errorf("ReturnPath[1..3] = %v, want [1 1 3]", got)
	}
	if p := r.Path(); p.String() != "0,1,3,2" {
		t.Errorf("InitialPath changed: %v", p)
	}
	var ni mad.NodeInfo
	if err := r.Decode(&ni); err != nil {
		t.Fatal(err)
	}
	if ni.NodeGUID != s.nodes[leaf02].guid || ni.NodeType != mad.NodeSwitch || ni.LocalPortNum != 3 || ni.PortGUID != s.nodes[leaf02].guid {
		t.Errorf("NodeInfo %+v: want leaf02 entered by port 3", ni)
	}
}

func TestDRLocalAndNeighbours(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu003 mlx5_0", 1)
	var ni mad.NodeInfo
	drAttr(t, c, mad.Path{}, 0, &ni)
	if ni.NodeType != mad.NodeCA || ni.LocalPortNum != 1 || ni.NodeGUID != c.Local().NodeGUID || ni.PortGUID != c.Local().PortGUID {
		t.Errorf("local NodeInfo %+v", ni)
	}
	// gpu003 is on leaf02 port 1; its neighbour answers with port 1.
	drAttr(t, c, mad.Path{1}, 0, &ni)
	if ni.NodeType != mad.NodeSwitch || ni.LocalPortNum != 1 || ni.NumPorts != 8 {
		t.Errorf("neighbour NodeInfo %+v", ni)
	}
	// A switch attached at its management port: LocalPortNum 0, and its
	// own path 0 needs no link.
	sc := attach(t, s, "spine02", 0)
	drAttr(t, sc, mad.Path{}, 0, &ni)
	if ni.LocalPortNum != 0 || ni.NodeType != mad.NodeSwitch {
		t.Errorf("switch local NodeInfo %+v", ni)
	}
	// spine02 port 1 -> leaf01 (arrives on leaf01 port 4) -> port 2 -> gpu002.
	drAttr(t, sc, mad.Path{1, 2}, 0, &ni)
	if ni.NodeType != mad.NodeCA || ni.LocalPortNum != 1 {
		t.Errorf("NodeInfo over 0,1,2 from spine02: %+v", ni)
	}
	var nd mad.NodeDescription
	drAttr(t, sc, mad.Path{1, 2}, 0, &nd)
	if nd.Text != "gpu002 mlx5_0" {
		t.Errorf("NodeDescription %q", nd.Text)
	}
}

func TestDRBadPathsAreDropped(t *testing.T) {
	f := fatTree(t, 2, 2, 2)
	s, clk := newSim(t, f, Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	if err := s.Down("leaf01/4"); err != nil { // leaf01 -> spine02
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path mad.Path
	}{
		{"through a down port", mad.Path{1, 4, 1}},
		{"out of an uncabled port", mad.Path{1, 7}},
		{"beyond the last port", mad.Path{1, 9}},
		{"past a CA", mad.Path{1, 2, 1}}, // leaf01 port 2 is gpu002, then further
		{"to port 0 of a switch", mad.Path{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := drGet(t, c, tc.path, mad.AttrNodeInfo, 0); r != nil {
				t.Fatalf("path %v answered (%v); a real fabric drops it", tc.path, r.Status)
			}
			// With a umad-style timeout the requester hears of it.
			smp, _ := mad.NewDRGet(tc.path, mad.AttrNodeInfo, 0)
			smp.TID = 777
			if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal(), Timeout: time.Second}); err != nil {
				t.Fatal(err)
			}
			if p := poll(c); p != nil {
				t.Fatalf("timeout reported before the time passed: %+v", p)
			}
			clk.Advance(time.Second)
			p := poll(c)
			if p == nil || p.Status != transport.StatusTimedOut {
				t.Fatalf("got %+v, want a StatusTimedOut packet", p)
			}
			if h, _ := mad.PeekHeader(p.MAD); h.TID != 777 {
				t.Errorf("timed-out packet carries TID %d", h.TID)
			}
		})
	}
	// The same path through the up uplink works.
	if r := drGet(t, c, mad.Path{1, 3, 2}, mad.AttrNodeInfo, 0); r == nil {
		t.Error("path through the healthy uplink lost")
	}
}

func TestDRRejectedAtSend(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	// InitialPath[1] must be the CA's own port.
	smp, _ := mad.NewDRGet(mad.Path{2, 3}, mad.AttrNodeInfo, 0)
	err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()})
	if !errors.Is(err, ErrInvalidRoute) {
		t.Errorf("InitialPath[1]=2 from port 1: err %v, want ErrInvalidRoute", err)
	}
	// More than 63 hops (built by hand: the encoder refuses it).
	smp, _ = mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	b := smp.Marshal()
	b[7] = 64
	for i := 1; i < 64; i++ {
		b[128+i] = 3
	}
	err = c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: b})
	if !errors.Is(err, ErrInvalidRoute) {
		t.Errorf("hop count 64: err %v, want ErrInvalidRoute", err)
	}
	if p := poll(c); p != nil {
		t.Errorf("rejected SMPs produced a packet: %+v", p)
	}
}

func TestDRSixtyThreeHops(t *testing.T) {
	// 63 hops bouncing leaf01 <-> spine01 is the longest legal path.
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	p := mad.Path{1}
	for range 30 {
		p = append(p, 3, 1) // leaf01 -> spine01 -> leaf01
	}
	p = append(p, 3, 2) // -> spine01 -> leaf02
	if len(p) != 63 {
		t.Fatalf("built %d hops", len(p))
	}
	var ni mad.NodeInfo
	drAttr(t, c, p, 0, &ni)
	if ni.NodeGUID != s.nodes[s.byDesc["leaf02"][0]].guid || ni.LocalPortNum != 3 {
		t.Errorf("63-hop path reached %+v, want leaf02 by port 3", ni)
	}
}

func TestSMAStatuses(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	for _, tc := range []struct {
		name string
		path mad.Path
		attr mad.AttrID
		mod  uint32
		want mad.Status
	}{
		{"SwitchInfo of a CA", mad.Path{}, mad.AttrSwitchInfo, 0, 0x000c},
		{"LFT of a CA", mad.Path{}, mad.AttrLinearForwardingTable, 0, 0x000c},
		{"PortInfo of a CA port beyond NumPorts", mad.Path{}, mad.AttrPortInfo, 2, 0x001c},
		{"PortInfo of switch port 9 of 8", mad.Path{1}, mad.AttrPortInfo, 9, 0x001c},
		{"LFT block 768", mad.Path{1}, mad.AttrLinearForwardingTable, 768, 0x001c},
		{"unknown attribute", mad.Path{1}, mad.AttrSMInfo, 0, 0x000c},
		{"SwitchInfo of a switch", mad.Path{1}, mad.AttrSwitchInfo, 0, 0},
		{"PortInfo 0 of a CA is its own port", mad.Path{}, mad.AttrPortInfo, 0, 0},
		{"PortInfoExtended (advertised in CapabilityMask2)", mad.Path{1}, mad.AttrPortInfoExtended, 3, 0},
		{"PortInfoExtended past NumPorts", mad.Path{1}, mad.AttrPortInfoExtended, 9, 0x001c},
	} {
		r := drGet(t, c, tc.path, tc.attr, tc.mod)
		if r == nil {
			t.Errorf("%s: no answer", tc.name)
			continue
		}
		if r.Status != tc.want {
			t.Errorf("%s: status 0x%04x, want 0x%04x", tc.name, uint16(r.Status), uint16(tc.want))
		}
	}
	// A method the SMA does not know.
	smp, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	smp.Method = mad.MethodSend
	if r := sendSMP(t, c, transport.DirectedRoute(), smp); r == nil || r.Status != 0x0008 {
		t.Errorf("Send method: %+v", r)
	}
}
