package ibsim_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// client drives a Conn one request at a time.
type client struct {
	t   *testing.T
	c   *ibsim.Conn
	tid uint32
}

func dial(t *testing.T, sock, host string) *client {
	t.Helper()
	c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: sock, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return &client{t: t, c: c}
}

// do sends m to addr and returns the packet that answers it (by TID low
// 32 bits). High TID bits are set to garbage that ibsim must overwrite.
func (cl *client) do(addr transport.Addr, m []byte) *transport.Packet {
	cl.t.Helper()
	cl.tid++
	binary.BigEndian.PutUint64(m[8:16], 0xabcd_0000_0000_0000|uint64(cl.tid))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.c.Send(ctx, &transport.Packet{Addr: addr, MAD: m}); err != nil {
		cl.t.Fatal(err)
	}
	p, err := cl.c.Recv(ctx)
	if err != nil {
		cl.t.Fatalf("no packet back for TID %d to %v: %v", cl.tid, addr, err)
	}
	tid := binary.BigEndian.Uint64(p.MAD[8:16])
	if mad.TIDLow(tid) != cl.tid {
		cl.t.Fatalf("got TID 0x%016x, want low bits %d", tid, cl.tid)
	}
	if slot := int(tid >> 48); slot != cl.c.Slot() {
		cl.t.Errorf("TID bits 63..48 = %d, want our slot %d (ibsim rewrites them)", slot, cl.c.Slot())
	}
	return p
}

// smp sends an SMP and returns the answered, validated response.
func (cl *client) smp(addr transport.Addr, req *mad.SMP) *mad.SMP {
	cl.t.Helper()
	p := cl.do(addr, req.Marshal())
	if p.Status != 0 {
		cl.t.Fatalf("%s to %v path %v: status %d", mad.AttrName(req.Class, req.AttrID), addr, req.Path(), p.Status)
	}
	resp, err := mad.UnmarshalSMP(p.MAD)
	if err != nil {
		cl.t.Fatal(err)
	}
	req.TID = resp.TID
	if err := mad.ValidateResponse(req, resp); err != nil {
		cl.t.Fatal(err)
	}
	if !resp.Status.OK() {
		cl.t.Fatalf("%s path %v: MAD status %v", mad.AttrName(req.Class, req.AttrID), req.Path(), resp.Status)
	}
	return resp
}

func (cl *client) dr(path mad.Path, attr mad.AttrID, mod uint32) []byte {
	cl.t.Helper()
	req, err := mad.NewDRGet(path, attr, mod)
	if err != nil {
		cl.t.Fatal(err)
	}
	return cl.smp(transport.DirectedRoute(), req).Data[:]
}

func (cl *client) lid(lid uint16, attr mad.AttrID, mod uint32) []byte {
	cl.t.Helper()
	return cl.smp(transport.SMPAt(lid), mad.NewLIDGet(attr, mod)).Data[:]
}

// eng drives an Engine over a second Conn: the comparisons go through the
// stack ibdoctor really uses (Engine + ibsim Conn + the mad decoders).
type eng struct {
	t *testing.T
	e *transport.Engine
}

func newEng(t *testing.T, sock, host string) *eng {
	cl := dial(t, sock, host)
	e := transport.NewEngine(cl.c, transport.Options{Timeout: 2 * time.Second})
	t.Cleanup(func() { e.Close() })
	return &eng{t: t, e: e}
}

func (x *eng) dr(path mad.Path, a mad.Attribute, mod uint32) {
	x.t.Helper()
	if _, err := x.e.GetSMP(context.Background(), path, a, mod); err != nil {
		x.t.Fatal(err)
	}
}

func (x *eng) lid(lid uint16, a mad.Attribute, mod uint32) {
	x.t.Helper()
	if _, err := x.e.GetSMPByLID(context.Background(), lid, a, mod); err != nil {
		x.t.Fatal(err)
	}
}

func (x *eng) perf(lid uint16, a mad.Attribute) {
	x.t.Helper()
	if _, err := x.e.GetPerf(context.Background(), transport.PerfAt(lid, 0, 0), a, 0); err != nil {
		x.t.Fatal(err)
	}
}

var field = regexp.MustCompile(`^([A-Za-z0-9_]+):\.*(.*)$`)

// parseDiag parses infiniband-diags "Name:.....value" output.
func parseDiag(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := field.FindStringSubmatch(line); f != nil {
			m[f[1]] = strings.TrimSpace(f[2])
		}
	}
	return m
}

func compare(t *testing.T, what string, want map[string]string, got map[string]string) {
	t.Helper()
	for k, v := range got {
		w, ok := want[k]
		if !ok {
			t.Errorf("%s: tool output has no %s", what, k)
			continue
		}
		if w != v {
			t.Errorf("%s: %s = %q from ibsim transport, %q from the tool", what, k, v, w)
		}
	}
}

// The decoded attributes printed the way smpquery/perfquery print them.

func nodeInfoFields(n *mad.NodeInfo) map[string]string {
	nt := map[mad.NodeType]string{1: "Channel Adapter", 2: "Switch", 3: "Router"}[n.NodeType]
	return map[string]string{
		"BaseVers":   strconv.Itoa(int(n.BaseVersion)),
		"ClassVers":  strconv.Itoa(int(n.ClassVersion)),
		"NodeType":   nt,
		"NumPorts":   strconv.Itoa(int(n.NumPorts)),
		"SystemGuid": fmt.Sprintf("0x%016x", n.SystemImageGUID),
		"Guid":       fmt.Sprintf("0x%016x", n.NodeGUID),
		"PortGuid":   fmt.Sprintf("0x%016x", n.PortGUID),
		"PartCap":    strconv.Itoa(int(n.PartitionCap)),
		"DevId":      fmt.Sprintf("0x%04x", n.DeviceID),
		"Revision":   fmt.Sprintf("0x%08x", n.Revision),
		"LocalPort":  strconv.Itoa(int(n.LocalPortNum)),
		"VendorId":   fmt.Sprintf("0x%06x", n.VendorID),
	}
}

func portInfoFields(p *mad.PortInfo) map[string]string {
	width := map[mad.Width]string{1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
	state := map[mad.PortState]string{1: "Down", 2: "Initialize", 3: "Armed", 4: "Active"}
	phys := map[mad.PhysState]string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "PhyTest"}
	speed := map[uint8]string{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps"}
	mtu := map[mad.MTU]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	return map[string]string{
		"GidPrefix":        fmt.Sprintf("0x%016x", p.GIDPrefix),
		"Lid":              strconv.Itoa(int(p.LID)),
		"SMLid":            strconv.Itoa(int(p.MasterSMLID)),
		"LocalPort":        strconv.Itoa(int(p.LocalPortNum)),
		"LinkWidthEnabled": width[p.LinkWidthEnabled],
		"LinkWidthActive":  width[p.LinkWidthActive],
		"LinkState":        state[p.PortState],
		"PhysLinkState":    phys[p.PhysState],
		"LMC":              strconv.Itoa(int(p.LMC)),
		"LinkSpeedActive":  speed[p.LinkSpeedActive],
		"LinkSpeedEnabled": speed[p.LinkSpeedEnabled],
		"NeighborMTU":      mtu[p.NeighborMTU],
		"MtuCap":           mtu[p.MTUCap],
		"VLHighLimit":      strconv.Itoa(int(p.VLHighLimit)),
		"VLArbHighCap":     strconv.Itoa(int(p.VLArbHighCap)),
		"VLArbLowCap":      strconv.Itoa(int(p.VLArbLowCap)),
		"VLStallCount":     strconv.Itoa(int(p.VLStallCount)),
		"HoqLife":          strconv.Itoa(int(p.HOQLife)),
		"MkeyViolations":   strconv.Itoa(int(p.MKeyViolations)),
		"PkeyViolations":   strconv.Itoa(int(p.PKeyViolations)),
		"QkeyViolations":   strconv.Itoa(int(p.QKeyViolations)),
		"SubnetTimeout":    strconv.Itoa(int(p.SubnetTimeout)),
		"RespTimeVal":      strconv.Itoa(int(p.RespTimeValue)),
	}
}

func switchInfoFields(s *mad.SwitchInfo) map[string]string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	return map[string]string{
		"LinearFdbCap":     strconv.Itoa(int(s.LinearFDBCap)),
		"RandomFdbCap":     strconv.Itoa(int(s.RandomFDBCap)),
		"McastFdbCap":      strconv.Itoa(int(s.MulticastFDBCap)),
		"LinearFdbTop":     strconv.Itoa(int(s.LinearFDBTop)),
		"DefPort":          strconv.Itoa(int(s.DefaultPort)),
		"LifeTime":         strconv.Itoa(int(s.LifeTimeValue)),
		"LidsPerPort":      strconv.Itoa(int(s.LIDsPerPort)),
		"PartEnforceCap":   strconv.Itoa(int(s.PartitionEnforcementCap)),
		"FilterRawInbound": b(s.FilterRawInboundCap),
		"EnhancedPort0":    b(s.EnhancedPort0),
		"MulticastFDBTop":  fmt.Sprintf("0x%04x", s.MulticastFDBTop),
	}
}

// portCountersErrors returns PortCounters' error fields; traffic counters
// move with every LID-routed MAD and are compared separately. QP1Dropped
// is left out: perfquery 44 prints VL15Dropped's value under that name
// too (seen with VL15Dropped=3: raw bytes 20-21 are 0, perfquery shows
// QP1Dropped 3).
func portCountersErrors(p *mad.PortCounters) map[string]string {
	d := func(v any) string { return fmt.Sprint(v) }
	return map[string]string{
		"PortSelect":                   d(p.PortSelect),
		"SymbolErrorCounter":           d(p.SymbolErrorCounter),
		"LinkErrorRecoveryCounter":     d(p.LinkErrorRecoveryCounter),
		"LinkDownedCounter":            d(p.LinkDownedCounter),
		"PortRcvErrors":                d(p.PortRcvErrors),
		"PortRcvRemotePhysicalErrors":  d(p.PortRcvRemotePhysicalErrors),
		"PortRcvSwitchRelayErrors":     d(p.PortRcvSwitchRelayErrors),
		"PortXmitDiscards":             d(p.PortXmitDiscards),
		"PortXmitConstraintErrors":     d(p.PortXmitConstraintErrors),
		"PortRcvConstraintErrors":      d(p.PortRcvConstraintErrors),
		"LocalLinkIntegrityErrors":     d(p.LocalLinkIntegrityErrors),
		"ExcessiveBufferOverrunErrors": d(p.ExcessiveBufferOverrunErrors),
		"VL15Dropped":                  d(p.VL15Dropped),
	}
}

// The shared set-up: a 2x2x2 fat tree, OpenSM on h0001, our clients on
// h0002. Directed routes from h0002: leaf001 0,1; spine001 0,1,3;
// spine002 0,1,4; leaf002 0,1,3,2; h0001 0,1,1; h0003 0,1,3,2,1;
// h0004 0,1,3,2,2.
type node struct {
	name  string
	path  mad.Path
	ports []uint8 // ports to read PortInfo of
	sw    bool
}

var nodes = []node{
	{"h0002", mad.Path{}, []uint8{1}, false},
	{"leaf001", mad.Path{1}, []uint8{0, 1, 2, 3, 4}, true},
	{"spine001", mad.Path{1, 3}, []uint8{0, 1, 2}, true},
	{"spine002", mad.Path{1, 4}, []uint8{0, 1, 2}, true},
	{"leaf002", mad.Path{1, 3, 2}, []uint8{0, 1, 2, 3, 4}, true},
	{"h0001", mad.Path{1, 1}, []uint8{1}, false},
	{"h0003", mad.Path{1, 3, 2, 1}, []uint8{1}, false},
	{"h0004", mad.Path{1, 3, 2, 2}, []uint8{1}, false},
}

func TestAgainstDiags(t *testing.T) {
	ibsimtest.Require(t, "opensm", "smpquery", "perfquery")
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 2))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001"})
	const host = "h0002"
	cl := dial(t, s.SockName, host) // raw Conn: status 110, drops
	x := newEng(t, s.SockName, host)

	lp, err := cl.c.RefreshLocal(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	local := parseDiag(s.MustRun(host, "smpquery", "-D", "portinfo", "0", "1"))
	ni := parseDiag(s.MustRun(host, "smpquery", "-D", "nodeinfo", "0"))
	if got := strconv.Itoa(int(lp.LID)); got != local["Lid"] || lp.LID == 0 {
		t.Errorf("Local().LID = %s, smpquery says %s", got, local["Lid"])
	}
	if got := strconv.Itoa(int(lp.SMLID)); got != local["SMLid"] {
		t.Errorf("Local().SMLID = %s, smpquery says %s", got, local["SMLid"])
	}
	if got := fmt.Sprintf("0x%016x", lp.NodeGUID); got != ni["Guid"] {
		t.Errorf("Local().NodeGUID = %s, smpquery says %s", got, ni["Guid"])
	}
	if got := fmt.Sprintf("0x%016x", lp.PortGUID); got != ni["PortGuid"] || lp.PortGUID == lp.NodeGUID {
		t.Errorf("Local().PortGUID = %s, smpquery says %s (NodeGUID %#x)", got, ni["PortGuid"], lp.NodeGUID)
	}
	if lp.PortNum != 1 || lp.Name != "ibsim:"+s.SockName+"/"+host {
		t.Errorf("Local() = %+v", lp)
	}

	lids := map[string]uint16{}
	t.Run("DirectedRoute", func(t *testing.T) {
		for _, n := range nodes {
			ps := n.path.String()
			var ni mad.NodeInfo
			x.dr(n.path, &ni, 0)
			compare(t, n.name+" NodeInfo DR "+ps, parseDiag(s.MustRun(host, "smpquery", "-D", "nodeinfo", ps)), nodeInfoFields(&ni))
			for _, port := range n.ports {
				var pi mad.PortInfo
				x.dr(n.path, &pi, uint32(port))
				compare(t, fmt.Sprintf("%s PortInfo %d DR %s", n.name, port, ps),
					parseDiag(s.MustRun(host, "smpquery", "-D", "portinfo", ps, strconv.Itoa(int(port)))), portInfoFields(&pi))
				if (n.sw && port == 0) || (!n.sw && port == 1) {
					lids[n.name] = pi.LID
				}
			}
			if n.sw {
				var si mad.SwitchInfo
				x.dr(n.path, &si, 0)
				compare(t, n.name+" SwitchInfo DR "+ps, parseDiag(s.MustRun(host, "smpquery", "-D", "switchinfo", ps)), switchInfoFields(&si))
			}
		}
	})
	if len(lids) != len(nodes) {
		t.Fatalf("LIDs read: %v", lids)
	}
	for name, lid := range lids {
		if lid == 0 {
			t.Fatalf("%s has no LID after SUBNET UP: %v", name, lids)
		}
	}

	t.Run("LIDRouted", func(t *testing.T) {
		for _, n := range nodes {
			lid := lids[n.name]
			ls := strconv.Itoa(int(lid))
			var ni mad.NodeInfo
			x.lid(lid, &ni, 0)
			compare(t, n.name+" NodeInfo lid "+ls, parseDiag(s.MustRun(host, "smpquery", "nodeinfo", ls)), nodeInfoFields(&ni))
			port := n.ports[len(n.ports)-1]
			var pi mad.PortInfo
			x.lid(lid, &pi, uint32(port))
			compare(t, fmt.Sprintf("%s PortInfo %d lid %s", n.name, port, ls),
				parseDiag(s.MustRun(host, "smpquery", "portinfo", ls, strconv.Itoa(int(port)))), portInfoFields(&pi))
			if n.sw {
				var si mad.SwitchInfo
				x.lid(lid, &si, 0)
				compare(t, n.name+" SwitchInfo lid "+ls, parseDiag(s.MustRun(host, "smpquery", "switchinfo", ls)), switchInfoFields(&si))
			}
		}
		// The raw Conn says where LID-routed answers come from.
		p := cl.do(transport.SMPAt(lids["spine002"]), mad.NewLIDGet(mad.AttrNodeInfo, 0).Marshal())
		if p.Status != 0 || p.Addr.DLID != lids["spine002"] || p.Addr.QP != transport.QP0 {
			t.Errorf("LID-routed answer: status %d from %v, want lid %d qp 0", p.Status, p.Addr, lids["spine002"])
		}
	})

	t.Run("PerfMgt", func(t *testing.T) {
		set := []string{
			`PerformanceSet "leaf001"[3] PortCounters.SymbolErrorCounter=1234`,
			`PerformanceSet "leaf001"[3] PortCounters.LinkDownedCounter=7`,
			`PerformanceSet "leaf001"[3] PortCounters.PortRcvErrors=55`,
			`PerformanceSet "leaf001"[3] PortCounters.PortXmitDiscards=99`,
			`PerformanceSet "leaf001"[4] PortCounters.LocalLinkIntegrityErrors=5`,
			`PerformanceSet "leaf001"[4] PortCounters.ExcessiveBufferOverrunErrors=6`,
			`PerformanceSet "leaf001"[4] PortCounters.VL15Dropped=3`,
			`PerformanceSet "h0004"[1] PortCounters.SymbolErrorCounter=65535`,
		}
		for _, c := range set {
			if out := s.MustConsole(c); strings.Contains(out, "#") {
				t.Fatalf("%s: %s", c, out)
			}
		}
		for _, tc := range []struct {
			node string
			port uint8
		}{{"leaf001", 3}, {"leaf001", 4}, {"leaf001", 1}, {"h0004", 1}, {"h0003", 1}} {
			lid := lids[tc.node]
			ls, ps := strconv.Itoa(int(lid)), strconv.Itoa(int(tc.port))
			var cpi mad.ClassPortInfo
			x.perf(lid, &cpi)
			pc := mad.PortCounters{PortSelect: tc.port}
			x.perf(lid, &pc)
			out := s.MustRun(host, "perfquery", ls, ps)
			want := parseDiag(out)
			compare(t, fmt.Sprintf("%s PortCounters port %d", tc.node, tc.port), want, portCountersErrors(&pc))
			if capMask := fmt.Sprintf("(CapMask: 0x%x)", cpi.CapabilityMask); !strings.Contains(out, capMask) {
				t.Errorf("%s ClassPortInfo: perfquery header lacks %s:\n%s", tc.node, capMask, out)
			}
			for name, ours := range map[string]uint32{"PortXmitData": pc.XmitDataWords, "PortRcvData": pc.RcvDataWords, "PortXmitPkts": pc.PortXmitPkts, "PortRcvPkts": pc.PortRcvPkts} {
				theirs, err := strconv.ParseUint(want[name], 10, 32)
				if err != nil || uint64(ours) > theirs || ours == 0 {
					t.Errorf("%s port %d %s: ours %d then perfquery %q (traffic counters only grow)", tc.node, tc.port, name, ours, want[name])
				}
			}
		}
		// Values the console set must come back exactly.
		pc := mad.PortCounters{PortSelect: 3}
		x.perf(lids["leaf001"], &pc)
		if pc.SymbolErrorCounter != 1234 || pc.LinkDownedCounter != 7 || pc.PortRcvErrors != 55 || pc.PortXmitDiscards != 99 {
			t.Errorf("leaf001 port 3 counters = %+v", pc)
		}
		// AllPortSelect (0xFF) sums the switch's ports, as perfquery -a does.
		all := mad.PortCounters{PortSelect: 0xff}
		x.perf(lids["leaf001"], &all)
		got := portCountersErrors(&all)
		allOut := parseDiag(s.MustRun(host, "perfquery", "-a", strconv.Itoa(int(lids["leaf001"]))))
		for _, f := range []string{"SymbolErrorCounter", "LinkDownedCounter", "PortRcvErrors", "PortXmitDiscards", "LocalLinkIntegrityErrors", "VL15Dropped"} {
			if got[f] != allOut[f] {
				t.Errorf("AllPortSelect %s = %s, perfquery -a says %s", f, got[f], allOut[f])
			}
		}
		if all.SymbolErrorCounter != 1234 || all.VL15Dropped != 3 {
			t.Errorf("AllPortSelect sums = %+v", all)
		}
	})

	t.Run("Status110", func(t *testing.T) {
		// Port 9 of leaf001 does not exist: ibsim hands the request back.
		req, _ := mad.NewDRGet(mad.Path{1, 9}, mad.AttrNodeInfo, 0)
		p := cl.do(transport.DirectedRoute(), req.Marshal())
		if p.Status != transport.StatusTimedOut {
			t.Fatalf("bad DR path: status %d, want %d", p.Status, transport.StatusTimedOut)
		}
		back, err := mad.UnmarshalSMP(p.MAD)
		if err != nil {
			t.Fatal(err)
		}
		if back.Method != mad.MethodGet || back.Direction || back.AttrID != mad.AttrNodeInfo || back.HopCount != 2 {
			t.Errorf("status-110 packet is not our request: %+v", back.Header)
		}
		if _, err := s.Run(host, "smpquery", "-D", "nodeinfo", "0,1,9"); err == nil {
			t.Error("smpquery -D nodeinfo 0,1,9 succeeded; the path should not exist")
		}
		// A LID nobody has, and an attribute ibsim does not implement
		// (SMInfo on a switch with no SM client), also come back as 110.
		p = cl.do(transport.SMPAt(999), mad.NewLIDGet(mad.AttrNodeInfo, 0).Marshal())
		if p.Status != transport.StatusTimedOut || p.Addr.DLID != 999 {
			t.Errorf("unassigned LID: status %d addr %v", p.Status, p.Addr)
		}
		p = cl.do(transport.SMPAt(lids["leaf002"]), mad.NewLIDGet(mad.AttrSMInfo, 0).Marshal())
		if p.Status != transport.StatusTimedOut {
			t.Errorf("SMInfo of a switch: status %d, want 110", p.Status)
		}
		// Through the Engine every attempt ends at once: a TimeoutError
		// after all attempts, long before one attempt's 2 s timeout.
		start := time.Now()
		_, err = x.e.GetSMP(context.Background(), mad.Path{1, 9}, &mad.NodeInfo{}, 0)
		var te *transport.TimeoutError
		if !errors.As(err, &te) || te.Attempts != 1+transport.DefaultRetries || time.Since(start) > time.Second {
			t.Errorf("Engine on a bad path: %v after %v", err, time.Since(start))
		}
		// The connection still works afterwards.
		cl.dr(mad.Path{1}, mad.AttrNodeInfo, 0)
	})

	t.Run("ErrorDrop", func(t *testing.T) {
		path := mad.Path{1, 3, 2}
		s.MustConsole(`Error "leaf002" 100 0x11`)
		req, _ := mad.NewDRGet(path, mad.AttrNodeInfo, 0)
		if p := cl.do(transport.DirectedRoute(), req.Marshal()); p.Status != transport.StatusTimedOut {
			t.Errorf("NodeInfo to leaf002 with a 100%% NodeInfo drop: status %d, want 110", p.Status)
		}
		if _, err := x.e.GetSMP(context.Background(), path, &mad.NodeInfo{}, 0); !errors.Is(err, transport.ErrTimeout) {
			t.Errorf("Engine through the drop: %v", err)
		}
		if _, err := s.Run(host, "smpquery", "-t", "100", "-D", "nodeinfo", path.String()); err == nil {
			t.Error("smpquery got through the 100% drop")
		}
		// Other attributes still pass.
		x.dr(path, &mad.PortInfo{}, 1)
		s.MustConsole(`Error "leaf002" 0`)
		var ni mad.NodeInfo
		x.dr(path, &ni, 0)
		if ni.NodeType != mad.NodeSwitch {
			t.Errorf("after clearing the drop: %+v", ni)
		}
	})
}

// TestSlots checks that Close frees the slot, that a full simulator and an
// unknown node are refused by name, and that a missing ibsim is reported.
func TestSlots(t *testing.T) {
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 1))
	ctx := context.Background()
	for i := range 12 {
		c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "h0003"})
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if c.Slot() != 0 {
			t.Errorf("dial %d got slot %d, want 0 (earlier Close did not free its slot)", i, c.Slot())
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if cs, err := s.Attached(); err != nil || len(cs) != 0 {
		t.Fatalf("after closing all: Attached = %+v, %v", cs, err)
	}

	var held []*ibsim.Conn
	for i := range 10 {
		c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "leaf001"})
		if err != nil {
			t.Fatalf("dial %d of 10: %v", i, err)
		}
		held = append(held, c)
	}
	cs, err := s.Attached()
	if err != nil || len(cs) != 10 {
		t.Fatalf("Attached = %d clients (%v), want 10", len(cs), err)
	}
	for _, c := range cs {
		if c.Node != "leaf001" {
			t.Errorf("client %+v attached elsewhere", c)
		}
	}
	_, err = ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "h0001"})
	if !errors.Is(err, ibsim.ErrRefused) || !strings.Contains(err.Error(), `"h0001"`) || !strings.Contains(err.Error(), "slots") {
		t.Errorf("11th client: %v", err)
	}
	held[3].Close()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "h0001"})
	if err != nil {
		t.Fatalf("after freeing one slot: %v", err)
	}
	if c.Slot() != held[3].Slot() {
		t.Errorf("new client got slot %d, want the freed slot %d", c.Slot(), held[3].Slot())
	}
	held[3] = c
	for _, c := range held {
		c.Close()
	}

	_, err = ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: "no-such-node"})
	if !errors.Is(err, ibsim.ErrRefused) || !strings.Contains(err.Error(), `"no-such-node"`) {
		t.Errorf("unknown node: %v", err)
	}
	_, err = ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName + "-absent"})
	if !errors.Is(err, ibsim.ErrNotListening) || !strings.Contains(err.Error(), s.SockName+"-absent") {
		t.Errorf("no ibsim: %v", err)
	}
	// Send and Recv after Close.
	if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: make([]byte, 256)}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if _, err := c.Recv(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
}

// TestFloodWithoutRecv sends far more requests than a unix socket queue
// holds without calling Recv: the Conn's reader must keep draining, so
// ibsim keeps serving (its console answers) and every answer is kept.
func TestFloodWithoutRecv(t *testing.T) {
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 1))
	cl := dial(t, s.SockName, "h0001")
	ctx, cancel0 := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel0()
	const n = 3000
	req, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	for i := range n {
		m := req.Marshal()
		binary.BigEndian.PutUint64(m[8:16], uint64(i+1))
		if err := cl.c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: m}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if out, err := s.Console("Attached"); err != nil || !strings.Contains(out, "Client ") {
		t.Fatalf("console after the flood: %q, %v", out, err)
	}
	seen := make([]bool, n+1)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for range n {
		p, err := cl.c.Recv(rctx)
		if err != nil {
			t.Fatalf("after %d answers: %v (stats %+v)", countTrue(seen), err, cl.c.Stats())
		}
		tid := mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16]))
		if p.Status != 0 || tid == 0 || tid > n || seen[tid] {
			t.Fatalf("unexpected answer: status %d tid %d", p.Status, tid)
		}
		seen[tid] = true
	}
	if st := cl.c.Stats(); st != (ibsim.Stats{}) {
		t.Errorf("stats = %+v", st)
	}
}

func countTrue(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

var ftsHeader = regexp.MustCompile(`^Unicast lids .* \((.*)\):$`)
var ftsEntry = regexp.MustCompile(`^0x([0-9a-f]+) (\d{3}) : \(.*'(.*)'\)`)

// parseDumpFTS maps switch description → LID → egress port, plus LID →
// destination description.
func parseDumpFTS(out string) (map[string]map[uint16]uint8, map[string]uint16) {
	lfts := map[string]map[uint16]uint8{}
	lidOf := map[string]uint16{}
	var cur map[uint16]uint8
	for _, line := range strings.Split(out, "\n") {
		if m := ftsHeader.FindStringSubmatch(line); m != nil {
			cur = map[uint16]uint8{}
			lfts[m[1]] = cur
			continue
		}
		if m := ftsEntry.FindStringSubmatch(line); m != nil && cur != nil {
			lid, _ := strconv.ParseUint(m[1], 16, 16)
			port, _ := strconv.Atoi(m[2])
			cur[uint16(lid)] = uint8(port)
			lidOf[m[3]] = uint16(lid)
		}
	}
	return lfts, lidOf
}

// TestEditedLFT routes the fabric from an edited dump_fts file (OpenSM's
// file routing engine) and reads the LFTs back through the ibsim
// transport, comparing every entry with dump_fts.
func TestEditedLFT(t *testing.T) {
	ibsimtest.Require(t, "opensm", "dump_fts")
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 2))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001", Once: true})
	const host = "h0002"
	before := s.MustRun(host, "dump_fts")
	lfts, lidOf := parseDumpFTS(before)
	target := lidOf["h0003 HCA-1"]
	old := lfts["leaf001"][target]
	if target == 0 || (old != 3 && old != 4) {
		t.Fatalf("leaf001 routes h0003 (lid %d) via port %d; dump_fts:\n%s", target, old, before)
	}
	edited := 7 - old // the other spine
	// Rewrite that one line in leaf001's section.
	var b strings.Builder
	section := ""
	for _, line := range strings.SplitAfter(before, "\n") {
		if m := ftsHeader.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			section = m[1]
		}
		if section == "leaf001" && strings.HasPrefix(line, fmt.Sprintf("0x%04x %03d ", target, old)) {
			line = fmt.Sprintf("0x%04x %03d ", target, edited) + line[len("0x0000 000 "):]
		}
		b.WriteString(line)
	}
	file := s.Dir + "/edited.fts"
	if err := writeFile(file, b.String()); err != nil {
		t.Fatal(err)
	}
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001", LFTFile: file})

	after := s.MustRun(host, "dump_fts")
	lfts, _ = parseDumpFTS(after)
	if got := lfts["leaf001"][target]; got != edited {
		t.Fatalf("after loading the edited table leaf001 routes lid %d via %d, want %d", target, got, edited)
	}
	cl := dial(t, s.SockName, host)
	for sw, path := range map[string]mad.Path{"leaf001": {1}, "leaf002": {1, 3, 2}, "spine001": {1, 3}, "spine002": {1, 4}} {
		want := lfts[sw]
		if len(want) == 0 {
			t.Fatalf("no LFT for %s in dump_fts", sw)
		}
		block := cl.dr(path, mad.AttrLinearForwardingTable, 0) // LIDs 0..63
		for lid, port := range want {
			if block[lid] != port {
				t.Errorf("%s LFT[%d] = %d via ibsim transport, dump_fts says %d", sw, lid, block[lid], port)
			}
		}
	}
}

func writeFile(name, text string) error { return os.WriteFile(name, []byte(text), 0o644) }

// TestDeliver: after Deliver every answer goes to the function, in one
// goroutine, and none is left for Recv, which still reports the Conn's
// end (ErrClosed). A packet the function keeps (returns false for) is
// never overwritten by later ones; the others' buffers are reused.
func TestDeliver(t *testing.T) {
	s := ibsimtest.Start(t, ibsimtest.FatTree(2, 2, 1))
	c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: s.SockName, Host: "h0001"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	got := make(chan uint32, n)
	var kept []*transport.Packet
	var inside atomic.Int32
	c.Deliver(func(p *transport.Packet) bool {
		if inside.Add(1) != 1 {
			t.Error("Deliver's function called concurrently")
		}
		defer inside.Add(-1)
		if p.Status != 0 {
			return true
		}
		tid := mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16]))
		got <- tid
		if tid%2 == 0 {
			kept = append(kept, p)
			return false
		}
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := mad.NewDRGet(mad.Path{1}, mad.AttrNodeInfo, 0)
	for i := range n {
		m := req.Marshal()
		binary.BigEndian.PutUint64(m[8:16], uint64(i+1))
		if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: m}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	seen := make([]bool, n+1)
	for range n {
		select {
		case tid := <-got:
			if tid == 0 || tid > n || seen[tid] {
				t.Fatalf("unexpected answer TID %d", tid)
			}
			seen[tid] = true
		case <-ctx.Done():
			t.Fatalf("%d of %d answers delivered", countTrue(seen), n)
		}
	}
	rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer rcancel()
	if p, err := c.Recv(rctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv after Deliver: packet %v, error %v; want nothing queued", p, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Recv(ctx)
		done <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Recv after Close: %v, want ErrClosed", err)
	}
	// The reader has ended: kept is ours alone now.
	if len(kept) != n/2 {
		t.Fatalf("kept %d packets, want %d", len(kept), n/2)
	}
	for _, p := range kept {
		if tid := mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16])); tid%2 != 0 {
			t.Fatalf("a kept packet now holds TID %d: its buffer was reused", tid)
		}
	}
	seenKept := map[*transport.Packet]bool{}
	for _, p := range kept {
		if seenKept[p] {
			t.Fatal("the same kept Packet was delivered twice")
		}
		seenKept[p] = true
	}
}
