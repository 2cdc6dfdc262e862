package fabric

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

func TestParseNetFileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Switch 4 \"a\"\n[1] \"b\"[1]\n", `peer node "b" is not declared`},
		{"Switch 4 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[2]\n", "does not name this port back"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] w=1\n\nHca 1 \"b\"\n[1] \"a\"[1] w=2\n", "no width enabled on both ends"},
		{"Switch 4 \"a\"\n[9] \"b\"[1]\n", "bad port number"},
		{"Switch 4 \"a\"\n[1] \"b\"[1] w=99\n", "w=99"},
		{"include \"x\"\n", "not supported"},
		{"Switch 4 \"a\"\n[1] \"b\"[1]\nHca 1 \"b\"\n", "would swallow this one"},
		{"Switch 4 \"a\"\n\nSwitch 4 \"a\"\n", "already exists"},
	} {
		_, _, err := ParseNetFile(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseNetFile(%q) err = %v, want %q", c.in, err, c.want)
		}
	}
}

// ibsim's GUID counters: CAs from 0x100000 reserving 1+ports each,
// switches from 0x200000; the first node is the default attach point.
func TestParseNetFileGUIDs(t *testing.T) {
	b, err := os.ReadFile("/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca2port")
	if err != nil {
		t.Skip("ibsim-utils examples not installed (Debian package ibsim-utils)")
	}
	f, ids, err := ParseNetFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ids["Switch1"].GUID != 0x200000 || ids["Switch2"].GUID != 0x200001 || ids["Hca1"].GUID != 0x100000 || ids["Hca2"].GUID != 0x100003 {
		t.Fatalf("GUIDs: %#x %#x %#x %#x", ids["Switch1"].GUID, ids["Switch2"].GUID, ids["Hca1"].GUID, ids["Hca2"].GUID)
	}
	if ids["Hca2"].Ports[2].GUID != 0x100005 || f.Nodes[0] != ids["Switch1"] || len(f.Nodes[0].Path) != 0 || f.Nodes[0].Path == nil {
		t.Fatal("port GUID or attach node wrong")
	}
	if p := ids["Switch1"].Ports[4]; p.Remote != nil || p.State != mad.PortStateDown {
		t.Fatalf("unlinked port = %+v", p)
	}
	if r := ids["Hca1"].Ports[2].Rate(); r != (mad.Rate{Width: mad.Width4X, Speed: mad.SpeedSDR}) {
		t.Fatalf("default rate %v, want 4X SDR (ibsim defaults)", r)
	}
}

// fatTree builds a two-level fat tree with the given number of leaves,
// hosts per leaf and spines (every leaf to every spine), NDR, LIDs set.
func fatTree(leaves, hosts, spines int) *Fabric {
	f := &Fabric{}
	lid := uint16(1)
	newNode := func(t mad.NodeType, guid uint64, desc string, nports int) *Node {
		n := &Node{Type: t, GUID: guid, SystemImageGUID: guid, Description: desc, VendorID: 0x2c9, Ports: make([]*Port, nports+1)}
		first := 1
		if t == mad.NodeSwitch {
			first = 0
			n.Switch = &Switch{EnhancedPort0: true}
			n.DeviceID = 0xd2f0
		} else {
			n.DeviceID = 0x101b
		}
		for i := first; i <= nports; i++ {
			p := &Port{Node: n, Num: uint8(i), GUID: guid, State: mad.PortStateDown, PhysState: mad.PhysPolling}
			if t != mad.NodeSwitch {
				p.GUID = guid + uint64(i)
				p.LID = lid
				lid++
			}
			n.Ports[i] = p
		}
		if t == mad.NodeSwitch {
			n.Ports[0].LID = lid
			lid++
		}
		f.Nodes = append(f.Nodes, n)
		return n
	}
	link := func(a, b *Port) {
		for _, p := range []*Port{a, b} {
			p.State, p.PhysState, p.WidthActive, p.SpeedActive = mad.PortStateActive, mad.PhysLinkUp, mad.Width4X, mad.SpeedNDR
		}
		a.Remote, b.Remote = b, a
	}
	var sp []*Node
	for s := 0; s < spines; s++ {
		sp = append(sp, newNode(mad.NodeSwitch, 0xb83fd20300a00000+uint64(s)<<8, fmt.Sprintf("MF0;spine%03d:MQM9790/U1", s+1), 64))
	}
	for l := 0; l < leaves; l++ {
		leaf := newNode(mad.NodeSwitch, 0xb83fd20300b00000+uint64(l)<<8, fmt.Sprintf("MF0;leaf%03d:MQM9790/U1", l+1), 64)
		for s, spine := range sp {
			if l < 64 && s < 32 { // 64-port spines take the first 64 leaves
				link(leaf.Ports[33+s], spine.Ports[1+l])
			}
		}
		for h := 0; h < hosts; h++ {
			hn := newNode(mad.NodeCA, 0x043f720300000000+uint64(l*hosts+h)<<4, fmt.Sprintf("gpu%05d mlx5_0", l*hosts+h+1), 1)
			link(leaf.Ports[1+h], hn.Ports[1])
		}
	}
	return f
}

// A 1,100-node fat tree with a degraded link survives WriteNetFile and
// ParseNetFile (the simulator's view) with the same nodes and links.
func TestNetFileBigRoundTrip(t *testing.T) {
	f := fatTree(34, 32, 16)
	deg := f.Nodes[20].Ports[1]
	deg.WidthEnabled, deg.Remote.WidthEnabled = mad.Width1X, mad.Width1X
	deg.WidthActive, deg.Remote.WidthActive = mad.Width1X, mad.Width1X
	var b bytes.Buffer
	if err := WriteNetFile(&b, f, NetFileOptions{MaxSpeed: mad.SpeedNDR}); err != nil {
		t.Fatal(err)
	}
	g, _, err := ParseNetFile(&b)
	if err != nil {
		t.Fatal(err)
	}
	diffText(t, "fat tree", topo(f), topo(g))
	if args := IBSimArgs(f); len(args) != 0 {
		t.Fatalf("IBSimArgs = %v for %d nodes, want none (within ibsim defaults)", args, len(f.Nodes))
	}
	// Written for ibsim 0.10 (default MaxSpeed), NDR comes out as HDR.
	b.Reset()
	if err := WriteNetFile(&b, f, NetFileOptions{}); err != nil {
		t.Fatal(err)
	}
	h, _, err := ParseNetFile(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.Nodes[20].Ports[1].Rate(); r != (mad.Rate{Width: mad.Width1X, Speed: mad.SpeedHDR}) {
		t.Fatalf("degraded link under ibsim 0.10 = %v, want 1X HDR", r)
	}
}

func TestIBSimArgs(t *testing.T) {
	f := fatTree(100, 40, 20) // 4,120 nodes, 120 switches
	got := strings.Join(IBSimArgs(f), " ")
	if !strings.HasPrefix(got, "-N 4651 ") || strings.Contains(got, "-S") || !strings.Contains(got, "-P ") {
		t.Fatalf("IBSimArgs = %q", got)
	}
}

func FuzzParseNetFile(f *testing.F) {
	for _, name := range []string{"hdr.net", "qdr.net", "hdr.txt"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, _, err := ParseNetFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, l := range fab.Links() {
			if l.A.Remote != l.B || l.B.Remote != l.A || l.A.WidthActive == 0 {
				t.Fatal("bad link")
			}
		}
	})
}

// BenchmarkFabricMemory reports the heap a 50,000-node fat tree takes in
// the model (no LFTs): 1,024 leaves x 48 hosts + 64 spines + JSON size.
func BenchmarkFabricMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f := fatTree(1024, 48, 64)
		f.NodeByGUID(0) // build the indexes too
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
		b.ReportMetric(float64(len(f.Nodes)), "nodes")
		runtime.KeepAlive(f)
	}
}
