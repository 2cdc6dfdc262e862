package fabric

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// iblinkinfo's output, captured on ibsim (testdata/README.md), gives the
// fabric ibsim was loaded with: every switch port with its state (the
// two unconnected leaf01 ports Down/Polling, as iblinkinfo printed
// them), links port to port, gpu001's link at 1X, LIDs. The default form
// does not print CA node GUIDs (each CA is named by its port's GUID, a
// note says so); -l prints them and gives the same fabric otherwise.
func TestReadIBLinkInfo(t *testing.T) {
	net, err := os.ReadFile(filepath.Join("testdata", "iblinkinfo_ibsim.net"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := ParseNetFile(bytes.NewReader(net))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"iblinkinfo_ibsim.txt", "iblinkinfo_l_ibsim.txt"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			f, info, err := Decode(data, name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != FormatIBLinkInfo {
				t.Errorf("format %q", info.Format)
			}
			if len(f.Nodes) != len(want.Nodes) || len(f.Links()) != len(want.Links()) {
				t.Errorf("%d nodes %d links, want %d and %d", len(f.Nodes), len(f.Links()), len(want.Nodes), len(want.Links()))
			}
			leaf := f.NodesByName("leaf01")
			if len(leaf) != 1 || leaf[0].GUID != 0x200002 || leaf[0].NumPorts() != 10 {
				t.Fatalf("leaf01: %+v", leaf)
			}
			p9 := leaf[0].Ports[9]
			if p9 == nil || p9.State != mad.PortStateDown || p9.PhysState != mad.PhysPolling || p9.Remote != nil {
				t.Errorf("leaf01/9: %+v, want Down/Polling without a link", p9)
			}
			p1 := leaf[0].Ports[1]
			if p1 == nil || p1.Remote == nil || p1.Remote.Node.Description != "gpu001 mlx5_0" || p1.WidthActive != mad.Width1X || p1.SpeedActive != mad.SpeedSDR {
				t.Errorf("leaf01/1: %+v, want gpu001 at 1X SDR", p1)
			}
			if p1.Remote.LID != 1 || leaf[0].Ports[0] == nil || leaf[0].Ports[0].LID != 4 {
				t.Errorf("LIDs: gpu001 %d, leaf01 %+v", p1.Remote.LID, leaf[0].Ports[0])
			}
			for _, l := range want.Links() {
				a := f.NodesByName(l.A.Node.Description)
				b := f.NodesByName(l.B.Node.Description)
				if len(a) != 1 || len(b) != 1 || a[0].Ports[l.A.Num] == nil || a[0].Ports[l.A.Num].Remote != b[0].Ports[l.B.Num] {
					t.Errorf("link %s/%d - %s/%d missing", l.A.Node.Description, l.A.Num, l.B.Node.Description, l.B.Num)
				}
			}
		})
	}
}

// FuzzParseIBLinkInfo: any bytes give a consistent fabric or an error.
func FuzzParseIBLinkInfo(f *testing.F) {
	for _, name := range []string{"iblinkinfo_ibsim.txt", "iblinkinfo_l_ibsim.txt", "iblinkinfo_qdr_ibsim.txt", "iblinkinfo_l_qdr_ibsim.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, _, err := ParseIBLinkInfo(data)
		if err != nil {
			return
		}
		for _, n := range fab.Nodes {
			for i, p := range n.Ports {
				if p != nil && (int(p.Num) != i || p.Node != n || p.Remote != nil && p.Remote.Remote != p) {
					t.Fatalf("%#x[%d]: inconsistent port", n.GUID, i)
				}
			}
		}
	})
}

// iblinkinfo on fixtures/ibnetdiscover/qdr.net (captured on ibsim): a
// "Router:" block, FDR10 printed "4X  10.0 Gbps (FDR10)", FDR "14.0625
// Gbps", a 1X link. The router header and the FDR10 form were errors.
func TestReadIBLinkInfoQDR(t *testing.T) {
	for _, name := range []string{"iblinkinfo_qdr_ibsim.txt", "iblinkinfo_l_qdr_ibsim.txt"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := Decode(data, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Nodes) != 6 || len(f.Links()) != 5 {
				t.Errorf("%d nodes, %d links; want 6 and 5", len(f.Nodes), len(f.Links()))
			}
			port := func(desc string) *Port {
				ns := f.NodesByName(desc)
				if len(ns) != 1 || ns[0].Ports[1] == nil {
					t.Fatalf("%s: %+v", desc, ns)
				}
				return ns[0].Ports[1]
			}
			if p := port("node02 mlx4_0"); p.SpeedActive != mad.SpeedFDR10 || p.WidthActive != mad.Width4X {
				t.Errorf("node02: %v %v, want 4X FDR10", p.WidthActive, p.SpeedActive)
			}
			if p := port("node03 mlx5_0"); p.SpeedActive != mad.SpeedFDR {
				t.Errorf("node03: %v, want FDR", p.SpeedActive)
			}
			if p := port("node04 mlx4_0"); p.WidthActive != mad.Width1X {
				t.Errorf("node04: %v, want 1X", p.WidthActive)
			}
			if p := port("rtr01 ib-router"); name == "iblinkinfo_qdr_ibsim.txt" && p.Node.Type != mad.NodeRouter {
				t.Errorf("rtr01: type %v, want a router", p.Node.Type)
			}
		})
	}
}
