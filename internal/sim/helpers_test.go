package sim

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

var t0 = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// fatTree builds a routed two-level fat tree: leaves "leaf01".., spines
// "spine01".., hosts "gpu001 mlx5_0".. (one HCA per server). Leaf ports
// 1..hosts go to HCAs, then one uplink per spine.
func fatTree(t testing.TB, leaves, spines, hosts int) *fabric.Fabric {
	t.Helper()
	f, err := topology.FatTree2{Leaves: leaves, Spines: spines, HostsPerLeaf: hosts, Common: topology.Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		t.Fatal(err)
	}
	return f
}

// newSim builds a Sim on a manual clock.
func newSim(t testing.TB, f *fabric.Fabric, opts Options) (*Sim, *ManualClock) {
	t.Helper()
	clk := NewManualClock(t0)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	s, err := New(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func attach(t testing.TB, s *Sim, node string, port uint8) *Conn {
	t.Helper()
	c, err := s.Attach(node, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Conn)
}

var tid uint64

// poll returns the packet queued on c, or nil when there is none. With
// zero latency every answer is queued by the time Send returns.
func poll(c *Conn) *transport.Packet {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := c.Recv(ctx)
	if err != nil {
		return nil
	}
	return p
}

// sendSMP sends smp on c and returns the answer, or nil when it was lost.
func sendSMP(t testing.TB, c *Conn, addr transport.Addr, smp *mad.SMP) *mad.SMP {
	t.Helper()
	tid++
	smp.TID = tid
	if err := c.Send(context.Background(), &transport.Packet{Addr: addr, MAD: smp.Marshal()}); err != nil {
		t.Fatalf("send: %v", err)
	}
	p := poll(c)
	if p == nil {
		return nil
	}
	if p.Status != 0 {
		t.Fatalf("packet status %d", p.Status)
	}
	resp, err := mad.UnmarshalSMP(p.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if smp.Method == mad.MethodSet {
		// IBA: a Set is answered by a GetResp.
		if resp.Method != mad.MethodGetResp || resp.TID != smp.TID || resp.AttrID != smp.AttrID || resp.AttrMod != smp.AttrMod {
			t.Fatalf("response %+v does not answer the Set", resp.Header)
		}
	} else if err := mad.ValidateResponse(smp, resp); err != nil {
		t.Fatalf("response does not match: %v", err)
	}
	return resp
}

func drGet(t testing.TB, c *Conn, path mad.Path, attr mad.AttrID, mod uint32) *mad.SMP {
	t.Helper()
	smp, err := mad.NewDRGet(path, attr, mod)
	if err != nil {
		t.Fatal(err)
	}
	return sendSMP(t, c, transport.DirectedRoute(), smp)
}

// drAttr reads attr over path into a and fails on loss or a bad status.
func drAttr(t testing.TB, c *Conn, path mad.Path, mod uint32, a mad.Attribute) {
	t.Helper()
	r := drGet(t, c, path, a.AttributeID(), mod)
	if r == nil {
		t.Fatalf("%s over %v: no answer", mad.AttrName(mad.ClassSubnDR, a.AttributeID()), path)
	}
	if !r.Status.OK() {
		t.Fatalf("%s over %v: status %v", mad.AttrName(mad.ClassSubnDR, a.AttributeID()), path, r.Status)
	}
	if err := r.Decode(a); err != nil {
		t.Fatal(err)
	}
}

func lidGet(t testing.TB, c *Conn, lid uint16, attr mad.AttrID, mod uint32) *mad.SMP {
	t.Helper()
	return sendSMP(t, c, transport.SMPAt(lid), mad.NewLIDGet(attr, mod))
}

// perf sends a PerfMgt MAD and returns the answer, or nil when lost.
func perf(t testing.TB, c *Conn, lid uint16, m mad.Method, attr mad.AttrID, data [mad.GMPDataSize]byte) *mad.GMP {
	t.Helper()
	tid++
	g := &mad.GMP{Header: mad.Header{BaseVersion: 1, Class: mad.ClassPerfMgt, ClassVersion: 1, Method: m, AttrID: attr, TID: tid}, Data: data}
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.PerfAt(lid, 0, 0), MAD: g.Marshal()}); err != nil {
		t.Fatal(err)
	}
	p := poll(c)
	if p == nil {
		return nil
	}
	r, err := mad.UnmarshalGMP(p.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if r.TID != tid || r.Method != mad.ResponseMethod(m) || r.AttrID != attr {
		t.Fatalf("bad response header %+v", r.Header)
	}
	return r
}

func portSelect(sel uint8) (d [mad.GMPDataSize]byte) {
	d[1] = sel
	return d
}

// pcField decodes a PortCounters answer with the mad package and returns
// the named counter.
func pcField(t testing.TB, g *mad.GMP, name string) uint64 {
	t.Helper()
	var pc mad.PortCounters
	if err := g.Decode(&pc); err != nil {
		t.Fatal(err)
	}
	for _, c := range pc.Counters(nil) {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("%s is not in PortCounters", name)
	return 0
}

// pceField decodes a PortCountersExtended answer and returns the named
// counter.
func pceField(t testing.TB, g *mad.GMP, name string) uint64 {
	t.Helper()
	var p mad.PortCountersExtended
	if err := g.Decode(&p); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Counters(&mad.ClassPortInfo{CapabilityMask: mad.PMCapExtendedWidth, CapabilityMask2: mad.PMCap2AdditionalCountersExtended}) {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("%s is not in PortCountersExtended", name)
	return 0
}

// lidOf returns the LID of a node's port (switch: port 0).
func lidOf(t testing.TB, s *Sim, ref string) uint16 {
	t.Helper()
	ni, pi, err := s.resolvePort(ref)
	if err != nil {
		ni, err = s.resolveNode(ref)
		if err != nil {
			t.Fatal(err)
		}
		pi = 0
	}
	if s.nodes[ni].typ == mad.NodeSwitch {
		pi = 0
	}
	return s.nodes[ni].ports[pi].lid
}
