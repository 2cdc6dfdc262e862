package sim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func writeFile(t *testing.T, name string, write func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileFormats(t *testing.T) {
	design := fatTree(t, 2, 2, 2)
	files := map[string]string{
		"ibnetdiscover": writeFile(t, "fabric.txt", func(b *bytes.Buffer) error { return fabric.WriteIBNetDiscover(b, design) }),
		"ibsim net": writeFile(t, "fabric.net", func(b *bytes.Buffer) error {
			return fabric.WriteNetFile(b, design, fabric.NetFileOptions{MaxSpeed: mad.SpeedNDR})
		}),
		"json": writeFile(t, "fabric.json", func(b *bytes.Buffer) error {
			data, err := fabric.Marshal(design)
			b.Write(data)
			return err
		}),
	}
	for name, path := range files {
		t.Run(name, func(t *testing.T) {
			s, err := LoadFile(path, "", Options{Clock: NewManualClock(t0)})
			if err != nil {
				t.Fatal(err)
			}
			if s.NumNodes() != len(design.Nodes) {
				t.Fatalf("%d nodes, want %d", s.NumNodes(), len(design.Nodes))
			}
			c := attach(t, s, "gpu001 mlx5_0", 1)
			// Routed and up: a LID-routed SMP reaches the far host.
			if r := lidGet(t, c, lidOf(t, s, "gpu004 mlx5_0"), mad.AttrNodeInfo, 0); r == nil || !r.Status.OK() {
				t.Fatal("LID-routed NodeInfo to gpu004 lost")
			}
			var pi mad.PortInfo
			drAttr(t, c, mad.Path{1, 3}, 1, &pi)
			if pi.PortState != mad.PortStateActive || pi.LinkWidthActive != mad.Width4X {
				t.Errorf("spine01/1 %v width %v", pi.PortState, pi.LinkWidthActive)
			}
		})
	}
	if _, err := LoadFile(writeFile(t, "junk", func(b *bytes.Buffer) error { b.WriteString("hello\n"); return nil }), "", Options{}); err == nil {
		t.Error("junk loaded")
	}
}

func TestLoadFileWithDumpFTS(t *testing.T) {
	design := fatTree(t, 2, 2, 2)
	top := writeFile(t, "fabric.txt", func(b *bytes.Buffer) error { return fabric.WriteIBNetDiscover(b, design) })
	// Route gpu004 the long way at leaf01 (via spine02) in the tables.
	g4 := uint16(0)
	for _, n := range design.Nodes {
		if n.Description == "gpu004 mlx5_0" {
			g4 = n.Ports[1].LID
		}
	}
	for _, n := range design.Nodes {
		if n.Description == "leaf01" {
			n.Switch.LFT.Set(g4, 4)
		}
	}
	fts := writeFile(t, "fts.txt", func(b *bytes.Buffer) error { return fabric.WriteDumpFTS(b, design, fabric.DumpOptions{}) })
	s, err := LoadFile(top, fts, Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	c := attach(t, s, "gpu001 mlx5_0", 1)
	if got := lftEntry(t, c, mad.Path{1}, g4); got != 4 {
		t.Errorf("leaf01 LFT[%d] = %d, want 4 from the dump_fts file", g4, got)
	}
}

// corpusFile returns the path of a public fabric dump kept outside the
// repository (../shared/external-fabrics/): skipped when absent, a
// failure when CI=true.
func corpusFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "external-fabrics", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus file %s missing (CI=true): %v", name, err)
		}
		t.Skipf("corpus file %s not here (%v); it lives in ../shared/external-fabrics/", name, err)
	}
	return p
}

// A dump's facts reach the simulator: "base port 0" stays base (it used
// to become enhanced, the text carrying no LinearFDBCap), the simulator
// attaches where ibnetdiscover ran, and the routes are said to be
// computed.
func TestLoadCorpusFaithful(t *testing.T) {
	s, info, err := Load(context.Background(), corpusFile(t, "mt43132-sdr-2009.ibnetdiscover"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != fabric.FormatIBNetDiscover || info.Routes {
		t.Errorf("format %q, routes from the file %v; want ibnetdiscover, computed", info.Format, info.Routes)
	}
	f := s.Fabric()
	sw := f.NodeByGUID(0x000b8cffff0053ee)
	if sw == nil || sw.Switch == nil || sw.Switch.EnhancedPort0 {
		t.Errorf("MT43132 switch: base port 0 in the file, simulator says %+v", sw.Switch)
	}
	// "Initiated from node 0002c9030002847c": the second CA in the file.
	c, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ni mad.NodeInfo
	drAttr(t, c.(*Conn), mad.Path{}, 0, &ni)
	if ni.NodeGUID != 0x0002c9030002847c {
		t.Errorf("attached to %#x, want the initiator 0x2c9030002847c", ni.NodeGUID)
	}
}

// --lfts with an ibroute dump of one switch: that switch routes by the
// file's table, the routes are not "computed", and a note says the other
// switches have none.
func TestLoadIBRouteLFTs(t *testing.T) {
	s, info, err := Load(context.Background(), corpusFile(t, "avakas-qlogic-qdr.ibnetdiscover-v-p"), corpusFile(t, "avakas-qlogic-qdr.ibroute-lid1"), Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	// The file ends with ibroute's own error line: skipped and said.
	if !info.Routes || len(info.Notes) != 2 || !strings.Contains(info.Notes[0], "skipped 1 line of tool messages") || !strings.Contains(info.Notes[1], "1 of the 25 switches") {
		t.Errorf("routes from the file %v, notes %q", info.Routes, info.Notes)
	}
	sw := s.Fabric().NodeByGUID(0x00066a02e8001310)
	// "0x0002 019 : (Switch portguid 0x00066a00eb002cb2: '... S201A')"
	if sw == nil || sw.Switch == nil || sw.Switch.LFT.Len() < 3 || sw.Switch.LFT.At(2) != 19 {
		t.Fatalf("L101's LFT does not say LID 2 leaves by port 19")
	}
}

// ibdiagnet's db_csv says where the SM ran (IsSM on the MQM9700's port
// 0, LID 180): the simulator's SM runs there, and no other port claims
// IsSM without answering SMInfo.
func TestLoadDBCSVSMWhereTheFileSays(t *testing.T) {
	s, _, err := Load(context.Background(), corpusFile(t, "quantum2-ndr-ibdiagnet2.db_csv"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if s.smLID != 180 || len(s.sms) != 1 {
		t.Fatalf("SM LID %d with %d SMs, want the file's 180", s.smLID, len(s.sms))
	}
	for i := range s.nodes {
		for pi := range s.nodes[i].ports {
			if s.nodes[i].ports[pi].capMask&mad.CapIsSM != 0 {
				t.Errorf("%s port %d keeps IsSM from the file", s.nodes[i].desc, pi)
			}
		}
	}
}

// OpenSM's dumps as --lfts on the ibsim net file they came from: the net
// file has no LIDs, so ibdoctor assigns its own. opensm-lfts.dump names
// each destination's port GUID and is moved onto those LIDs; opensm.fdbs
// names LIDs only, and was installed as if they matched (11 hosts could
// not reach gpu001): it is refused, saying why.
func TestLoadOpenSMDumpLFTs(t *testing.T) {
	net := filepath.Join("..", "topology", "testdata", "dump_fts_ibsim.net")
	s, info, err := Load(context.Background(), net, filepath.Join("..", "topology", "testdata", "opensm-lfts_ibsim.dump"), Options{Clock: NewManualClock(t0)})
	if err != nil || !info.Routes {
		t.Fatalf("opensm-lfts.dump: %v (routes %v)", err, info != nil && info.Routes)
	}
	f := s.Fabric()
	for _, n := range f.Nodes {
		if n.Switch == nil {
			continue
		}
		for _, m := range f.Nodes {
			if m.Switch != nil || m.Ports[1] == nil {
				continue
			}
			if out := n.Switch.LFT.At(m.Ports[1].LID); out == fabric.NoRoute {
				t.Errorf("%s has no route to %s (LID %d)", n.Description, m.Description, m.Ports[1].LID)
			}
		}
	}
	_, _, err = Load(context.Background(), net, filepath.Join("..", "topology", "testdata", "opensm_ibsim.fdbs"), Options{Clock: NewManualClock(t0)})
	if err == nil || !strings.Contains(err.Error(), "LID") || !strings.Contains(err.Error(), "opensm-lfts.dump") {
		t.Errorf("opensm.fdbs on a topology without LIDs: %v", err)
	}
}

// --sim DIR: an ibdiagnet directory's ibdiagnet2.fdbs (its forwarding
// tables, "osm_ucast_mgr_dump_ucast_routes: Switch 0x..." blocks with
// "0x0003 : UNREACHABLE" lines) is used as --lfts, and a note says so;
// the routes are then read, not computed. testdata/ibdiagnet was written
// for this test in ibdiagnet's forms.
func TestLoadIBDiagnetDirFDBs(t *testing.T) {
	s, info, err := Load(context.Background(), filepath.Join("testdata", "ibdiagnet"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Routes || !strings.Contains(strings.Join(info.Notes, "\n"), "ibdiagnet2.fdbs") {
		t.Errorf("routes read %v, notes %q", info.Routes, info.Notes)
	}
	sw := s.Fabric().NodeByGUID(1)
	if sw == nil || sw.Switch.LFT.Len() < 3 || sw.Switch.LFT.At(2) != 1 {
		t.Fatalf("switch 0x1's table does not send LID 2 out of port 1: %+v", sw)
	}
	if sw.Switch.LFT.Len() > 3 && sw.Switch.LFT.At(3) != fabric.NoRoute {
		t.Errorf("LID 3 UNREACHABLE in the file, table says port %d", sw.Switch.LFT.At(3))
	}
}

// TestLoadSaysWhatTheSweepCannotReach: treydock's -p fixture holds 8
// nodes in 4 unconnected parts (two spines without a link, a spine with
// an Aggregation Node, a leaf with a host and the other AN). A sweep
// attached to the first host reaches 3 of them, and check said "Reached:
// everything", "healthy" with nothing telling the other 5 were in the
// file. A note says so, and each other part is in info.Unread (listed as
// not reached); a connected dump has neither.
func TestLoadSaysWhatTheSweepCannotReach(t *testing.T) {
	_, info, err := Load(context.Background(), corpusFile(t, "treydock-hdr.ibnetdiscover-p"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, n := range info.Notes {
		if strings.Contains(n, "not cabled") {
			note = n
		}
	}
	if !strings.Contains(note, "the file holds 5 parts not cabled to each other") || !strings.Contains(note, "3 of the file's 8 nodes") || !strings.Contains(note, "5FB0406-spine-IB01") || !strings.Contains(note, "or the whole file if this one was cut short") {
		t.Errorf("notes %q: want one saying the file holds 5 parts, the sweep sees 3 of the file's 8 nodes, naming one of the others", info.Notes)
	}
	if len(info.Unread) != 4 || info.Unread[2].What != "2 nodes (1 link)" || !strings.Contains(info.Unread[2].Where, "5FB0406-spine-IB03") {
		t.Errorf("unread %+v: want the 4 other parts, spine-IB03's with its AN", info.Unread)
	}
	for _, name := range []string{"dgx-ndr-2025.ibnetdiscover", "qnib-netlist.clos5", "plafrim2-is5030.ibnetdiscover-p"} {
		_, info, err := Load(context.Background(), corpusFile(t, name), "", Options{Clock: NewManualClock(t0)})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range info.Notes {
			if strings.Contains(n, "not cabled") {
				t.Errorf("%s: %s", name, n)
			}
		}
		if len(info.Unread) > 0 {
			t.Errorf("%s: unread %+v", name, info.Unread)
		}
	}
}

// TestLoadCutFileSaysSo: the Quantum-2 .lst cut at a line boundary
// (its first half) falls apart into parts not cabled to each other; each
// part listed as not read says, as the note does, that the file may have
// been cut short, not only that each subnet should be its own file.
func TestLoadCutFileSaysSo(t *testing.T) {
	data, err := os.ReadFile(corpusFile(t, "quantum2-ndr-ibdiagnet2.lst"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := filepath.Join(t.TempDir(), "cut.lst")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, info, err := Load(context.Background(), cut, "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Unread) == 0 {
		t.Fatalf("notes %q: want the parts not cabled to the first listed as not read", info.Notes)
	}
	for _, u := range info.Unread {
		if !strings.Contains(u.Reason, "give each subnet as its own file, or the whole file if this one was cut short") {
			t.Errorf("%s at %s: %s", u.What, u.Where, u.Reason)
		}
	}
}

// TestLoadEnabledNotInFileIsUnknown (trial C1): ibnetdiscover text gives
// each link's active rate only; the simulator answered LinkWidthEnabled
// and LinkSpeed(Ext)Enabled set to it, which the checks read as a port
// configured down ("has only 1X enabled ... the cable is not at fault").
// A loaded file's port without enabled masks answers 0 (unknown) while
// its link still runs the recorded rate; a db_csv (PORTS LinkWidthEn,
// LinkSpeedEn) answers its own; the built-in sample keeps the
// simulator's (it is the simulator's fabric, no dump).
func TestLoadEnabledNotInFileIsUnknown(t *testing.T) {
	s, _, err := Load(context.Background(), corpusFile(t, "voltaire-sdr-2007.ibnetdiscover"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	up := 0
	for _, n := range s.Fabric().Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			up++
			if p.WidthEnabled != 0 || p.SpeedEnabled != 0 || p.WidthActive == 0 || p.SpeedActive == 0 {
				t.Errorf("%s/%d: enabled %v %v, active %v %v: want enabled unknown (0), active as read", n.Description, p.Num, p.WidthEnabled, p.SpeedEnabled, p.WidthActive, p.SpeedActive)
			}
		}
	}
	if up == 0 {
		t.Fatal("no cabled port")
	}
	q, _, err := Load(context.Background(), corpusFile(t, "quantum2-ndr-ibdiagnet2.db_csv"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := Sample(Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*fabric.Fabric{"db_csv": q.Fabric(), "sample": smp.Fabric()} {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil && (p.WidthEnabled == 0 || p.SpeedEnabled == 0) {
					t.Fatalf("%s: %s/%d lost its enabled masks", name, n.Description, p.Num)
				}
			}
		}
	}
}

// TestLoadPeerlessPortKeepsItsRate (trial H5): ibnetdiscover -p lists
// TS-…76ab's ports 15 and 23 at "4x QDR" with no neighbour, where its
// free ports read "1x SDR": a link trained there. PortInfo answers the
// speed the file gives (QDR), not the SDR a port without a link reads;
// a free port still answers SDR.
func TestLoadPeerlessPortKeepsItsRate(t *testing.T) {
	s, _, err := Load(context.Background(), corpusFile(t, "plafrim2-qlogic-ts.ibnetdiscover-p"), "", Options{Clock: NewManualClock(t0)})
	if err != nil {
		t.Fatal(err)
	}
	host := ""
	for _, n := range s.Fabric().Nodes {
		if n.Type == mad.NodeCA && len(n.Ports) > 1 && n.Ports[1] != nil && n.Ports[1].Remote != nil && n.Ports[1].Remote.Node.GUID == 0x00066a00e30076ab {
			host = fmt.Sprintf("0x%016x", n.GUID)
			break
		}
	}
	if host == "" {
		t.Fatal("no host on TS-…76ab")
	}
	c := attach(t, s, host, 1)
	for port, want := range map[uint32]mad.Speed{15: mad.SpeedQDR, 23: mad.SpeedQDR, 26: mad.SpeedSDR} {
		pi := portInfo(t, c, mad.Path{1}, port)
		if pi.PortState != mad.PortStateDown || mad.Speed(pi.LinkSpeedActive) != want {
			t.Errorf("TS-…76ab/%d: %v at speed %v, want Down at %v (as the file lists it)", port, pi.PortState, mad.Speed(pi.LinkSpeedActive), want)
		}
	}
}
