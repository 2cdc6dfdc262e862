package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// query sends a directed-route Get and waits for its answer.
func query(ctx context.Context, c transport.Conn, tid uint64, path mad.Path, attr mad.AttrID, mod uint32) (*mad.SMP, error) {
	smp, err := mad.NewDRGet(path, attr, mod)
	if err != nil {
		return nil, err
	}
	smp.TID = tid
	if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		p, err := c.Recv(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s over %v: %w", mad.AttrName(mad.ClassSubnDR, attr), path, err)
		}
		h, err := mad.PeekHeader(p.MAD)
		if err != nil || mad.TIDLow(h.TID) != mad.TIDLow(tid) {
			continue
		}
		if p.Status != 0 {
			return nil, fmt.Errorf("%s over %v: transport status %d", mad.AttrName(mad.ClassSubnDR, attr), path, p.Status)
		}
		return mad.UnmarshalSMP(p.MAD)
	}
}

// dump walks a fabric over directed route from c, the way discovery
// does, and records the fields both simulators must agree on, keyed by
// path and attribute.
func dump(t *testing.T, c transport.Conn) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var tid uint64 = 0x1000
	get := func(path mad.Path, attr mad.AttrID, mod uint32, a mad.Attribute) mad.Status {
		tid++
		r, err := query(ctx, c, tid, path, attr, mod)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.OK() {
			if err := r.Decode(a); err != nil {
				t.Fatal(err)
			}
		}
		return r.Status
	}
	seen := map[uint64]bool{}
	queue := []mad.Path{{}}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		var ni mad.NodeInfo
		if st := get(path, mad.AttrNodeInfo, 0, &ni); !st.OK() {
			t.Fatalf("NodeInfo over %v: %v", path, st)
		}
		key := path.String()
		out[key+" NodeInfo"] = fmt.Sprintf("type %v ports %d guid %#x sysguid %#x portguid %#x localport %d vendor %#x dev %#x",
			ni.NodeType, ni.NumPorts, ni.NodeGUID, ni.SystemImageGUID, ni.PortGUID, ni.LocalPortNum, ni.VendorID, ni.DeviceID)
		var nd mad.NodeDescription
		get(path, mad.AttrNodeDescription, 0, &nd)
		out[key+" NodeDescription"] = nd.Text
		if seen[ni.NodeGUID] {
			continue
		}
		seen[ni.NodeGUID] = true
		var si mad.SwitchInfo
		st := get(path, mad.AttrSwitchInfo, 0, &si)
		if ni.NodeType != mad.NodeSwitch {
			out[key+" SwitchInfo"] = fmt.Sprintf("status %#04x", uint16(st))
			var pi mad.PortInfo
			get(path, mad.AttrPortInfo, uint32(ni.LocalPortNum), &pi)
			out[key+" PortInfo"] = fmt.Sprintf("localport %d %v width %v/%v speed %v",
				pi.LocalPortNum, pi.PhysState, pi.LinkWidthActive, pi.WidthEnabled(), pi.SpeedActive(nil, false))
			if len(path) > 0 {
				continue // never route through a CA
			}
			queue = append(queue, path.Extend(ni.LocalPortNum))
			continue
		}
		out[key+" SwitchInfo"] = fmt.Sprintf("status %#04x enhanced0 %v", uint16(st), si.EnhancedPort0)
		var p0 mad.PortInfo
		get(path, mad.AttrPortInfo, 0, &p0)
		for port := 1; port <= int(ni.NumPorts); port++ {
			var pi mad.PortInfo
			get(path, mad.AttrPortInfo, uint32(port), &pi)
			up := pi.PhysState == mad.PhysLinkUp
			desc := fmt.Sprintf("localport %d %v", pi.LocalPortNum, pi.PhysState)
			if up {
				desc += fmt.Sprintf(" width %v/%v speed %v", pi.LinkWidthActive, pi.WidthEnabled(), pi.SpeedActive(&p0, false))
				if len(path) < 4 {
					queue = append(queue, path.Extend(uint8(port)))
				}
			}
			out[fmt.Sprintf("%s PortInfo %d", key, port)] = desc
		}
		// Status for bad modifiers.
		var junk mad.PortInfo
		out[key+" PortInfo past NumPorts"] = fmt.Sprintf("status %#04x", uint16(get(path, mad.AttrPortInfo, uint32(ni.NumPorts)+1, &junk)))
	}
	return out
}

// TestSideBySideWithIBSim loads the same small fat tree into ibsim (via
// the net-file writer) and into the simulator, walks both over the same
// directed routes, and compares NodeInfo, NodeDescription, PortInfo and
// SwitchInfo field by field.
// sideBySideFabric is a small 4X HDR fat tree (the fastest rate ibsim
// 0.10 brings a link up at) with one link degraded to 1X on both ends,
// and the ibsim node id of its first CA.
func sideBySideFabric(t *testing.T) (*fabric.Fabric, string) {
	t.Helper()
	f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 3, Common: topology.Common{SwitchPorts: 8, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		if n.Description == "leaf02" {
			p := n.Ports[5] // to spine02
			p.WidthEnabled, p.Remote.WidthEnabled = mad.Width1X, mad.Width1X
			p.WidthActive, p.Remote.WidthActive = mad.Width1X, mad.Width1X
		}
	}
	// ibsim numbers CA port GUIDs node GUID + port; the generator gives
	// mlx5-style port GUID = node GUID. Use ibsim's scheme on both sides.
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			for i, p := range n.Ports {
				if p != nil {
					p.GUID = n.GUID + uint64(i)
				}
			}
		}
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			return f, fabric.DefaultNodeID(n)
		}
	}
	t.Fatal("no CA")
	return nil, ""
}

func TestSideBySideWithIBSim(t *testing.T) {
	ibsimtest.Require(t)
	f, hostID := sideBySideFabric(t)
	ib := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{})
	ctx := context.Background()
	ic, err := ibsim.Dial(ctx, ibsim.Options{SockName: ib.SockName, Host: hostID})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()

	s, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := s.Attach("", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if ic.Local().NodeGUID != sc.Local().NodeGUID {
		t.Fatalf("attached to different nodes: ibsim %#x, sim %#x", ic.Local().NodeGUID, sc.Local().NodeGUID)
	}

	want := dump(t, ic)
	got := dump(t, sc)
	if len(want) < 50 {
		t.Fatalf("ibsim walk found only %d answers", len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: sim has no answer; ibsim: %s", k, w)
		} else if g != w {
			t.Errorf("%s:\n  ibsim %s\n  sim   %s", k, w, g)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: only the sim answers: %s", k, g)
		}
	}
	t.Logf("compared %d answers over directed routes", len(want))
}

// perfQuery sends a PerfMgt Get to lid and waits for the answer.
func perfQuery(ctx context.Context, c transport.Conn, tid uint64, lid uint16, attr mad.AttrID, sel uint8) (*mad.GMP, error) {
	var d [mad.GMPDataSize]byte
	d[1] = sel
	g := &mad.GMP{Header: mad.Header{BaseVersion: 1, Class: mad.ClassPerfMgt, ClassVersion: 1, Method: mad.MethodGet, AttrID: attr, TID: tid}, Data: d}
	if err := c.Send(ctx, &transport.Packet{Addr: transport.PerfAt(lid, 0, 0), MAD: g.Marshal()}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		p, err := c.Recv(ctx)
		if err != nil {
			return nil, fmt.Errorf("PerfMgt %s to LID %d: %w", mad.AttrName(mad.ClassPerfMgt, attr), lid, err)
		}
		h, err := mad.PeekHeader(p.MAD)
		if err != nil || mad.TIDLow(h.TID) != mad.TIDLow(tid) {
			continue
		}
		if p.Status != 0 {
			return nil, fmt.Errorf("PerfMgt to LID %d: transport status %d", lid, p.Status)
		}
		return mad.UnmarshalGMP(p.MAD)
	}
}

// perfDump reads, for each target (a DR path and a PortSelect to try),
// the target's LID over directed route, then its PMA over LID routing:
// ClassPortInfo capabilities, and PortCounters' status and error counters.
func perfDump(t *testing.T, c transport.Conn, targets []perfTarget) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	tid := uint64(0x2000)
	for _, tg := range targets {
		tid++
		r, err := query(ctx, c, tid, tg.path, mad.AttrPortInfo, uint32(tg.lidPort))
		if err != nil {
			t.Fatal(err)
		}
		var pi mad.PortInfo
		if err := r.Decode(&pi); err != nil {
			t.Fatal(err)
		}
		key := tg.path.String()
		tid++
		g, err := perfQuery(ctx, c, tid, pi.LID, mad.AttrClassPortInfo, 0)
		if err != nil {
			t.Fatal(err)
		}
		var cpi mad.ClassPortInfo
		if err := g.Decode(&cpi); err != nil {
			t.Fatal(err)
		}
		out[key+" ClassPortInfo"] = fmt.Sprintf("status %#04x cap %#04x", uint16(g.Status), cpi.CapabilityMask)
		for _, sel := range tg.selects {
			tid++
			g, err := perfQuery(ctx, c, tid, pi.LID, mad.AttrPortCounters, sel)
			if err != nil {
				t.Fatal(err)
			}
			v := fmt.Sprintf("status %#04x", uint16(g.Status))
			if g.Status.OK() {
				var pc mad.PortCounters
				if err := g.Decode(&pc); err != nil {
					t.Fatal(err)
				}
				v += fmt.Sprintf(" select %d", pc.PortSelect)
				for _, e := range pc.Errors() {
					v += fmt.Sprintf(" %s=%d", e.Name, e.Value)
				}
			}
			out[fmt.Sprintf("%s PortCounters %d", key, sel)] = v
		}
	}
	return out
}

type perfTarget struct {
	path    mad.Path
	lidPort uint8 // PortInfo to read the LID from (0 for a switch)
	selects []uint8
}

// TestSideBySidePerfMgtWithIBSim runs OpenSM on ibsim to give LIDs and
// routes, sets the same error counters in both fabrics (ibsim's console
// PerformanceSet, the simulator's SetCounter), and compares what the PMAs
// answer over LID routing: capabilities, PortSelect statuses, error
// counters including a 16-bit field set past its range.
func TestSideBySidePerfMgtWithIBSim(t *testing.T) {
	ibsimtest.Require(t, "opensm")
	f, hostID := sideBySideFabric(t)
	ib := ibsimtest.StartFabric(t, f, fabric.NetFileOptions{})
	ib.StartOpenSM(ibsimtest.OpenSMOptions{Host: hostID, Once: true})

	var leaf01, gpu005 *fabric.Node
	for _, n := range f.Nodes {
		switch n.Description {
		case "leaf01":
			leaf01 = n
		case "gpu005 mlx5_0":
			gpu005 = n
		}
	}
	ib.MustConsole(fmt.Sprintf("PerformanceSet %q[2] PortCounters.SymbolErrorCounter=70000", fabric.DefaultNodeID(leaf01)))
	ib.MustConsole(fmt.Sprintf("PerformanceSet %q[3] PortCounters.PortXmitDiscards=1200", fabric.DefaultNodeID(leaf01)))
	ib.MustConsole(fmt.Sprintf("PerformanceSet %q[1] PortCounters.LinkDownedCounter=7", fabric.DefaultNodeID(gpu005)))

	ctx := context.Background()
	ic, err := ibsim.Dial(ctx, ibsim.Options{SockName: ib.SockName, Host: hostID})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()

	if _, err := Prepare(f, nil); err != nil {
		t.Fatal(err)
	}
	s, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		port, name string
		v          uint64
	}{{"leaf01/2", "SymbolErrorCounter", 70000}, {"leaf01/3", "PortXmitDiscards", 1200}, {"gpu005 mlx5_0/1", "LinkDownedCounter", 7}} {
		if err := s.SetCounter(e.port, e.name, e.v); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := s.Attach("", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()

	targets := []perfTarget{
		{path: mad.Path{1}, selects: []uint8{2, 3, 0xff, 9}},             // leaf01
		{path: mad.Path{1, 4}, selects: []uint8{1}},                      // spine01
		{path: mad.Path{1, 4, 2, 2}, lidPort: 1, selects: []uint8{1, 2}}, // gpu005
	}
	want := perfDump(t, ic, targets)
	got := perfDump(t, sc, targets)
	// Observed ibsim 0.10 divergence: summing all ports (PortSelect 0xFF)
	// it clamps PortXmitDiscards to 8 bits (255) although the field is 16
	// bits wide and port 3 alone reports 1200. The simulator follows IBA
	// (saturate at the field's width, 65535).
	const allPorts = "0,1 PortCounters 255"
	if w := want[allPorts]; strings.Contains(w, "PortXmitDiscards=255 ") && strings.Contains(got[allPorts], "PortXmitDiscards=1200 ") {
		t.Logf("known ibsim divergence on %s: ibsim PortXmitDiscards=255, sim 1200", allPorts)
		want[allPorts] = strings.Replace(w, "PortXmitDiscards=255 ", "PortXmitDiscards=1200 ", 1)
	}
	for k, w := range want {
		if g := got[k]; g != w {
			t.Errorf("%s:\n  ibsim %s\n  sim   %s", k, w, g)
		}
	}
	if len(got) != len(want) {
		t.Errorf("sim %d answers, ibsim %d", len(got), len(want))
	}
	t.Logf("compared %d PerfMgt answers; e.g. %s", len(want), want["0,1 PortCounters 2"])
}
