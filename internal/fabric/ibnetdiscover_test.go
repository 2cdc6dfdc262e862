package fabric

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

const fixtureDir = "../../fixtures/ibnetdiscover"

func parseFixture(t testing.TB, name string) *Fabric {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseIBNetDiscover(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func TestParseIBNetDiscoverHDR(t *testing.T) {
	f := parseFixture(t, "hdr.txt")
	var sw, ca int
	for _, n := range f.Nodes {
		switch n.Type {
		case mad.NodeSwitch:
			sw++
		case mad.NodeCA:
			ca++
		}
	}
	if sw != 4 || ca != 5 {
		t.Fatalf("got %d switches %d CAs, want 4 and 5", sw, ca)
	}
	if got := len(f.Links()); got != 10 {
		t.Fatalf("got %d links, want 10", got)
	}
	leaf02 := f.NodeByGUID(0xb83fd20300b20000)
	if leaf02 == nil || leaf02.Type != mad.NodeSwitch || leaf02.Description != "MF0;leaf02:MQM8700/U1" ||
		leaf02.NumPorts() != 40 || leaf02.VendorID != 0x2c9 || leaf02.DeviceID != 0xcf08 ||
		leaf02.SystemImageGUID != 0xb83fd20300b20000 || !leaf02.Switch.EnhancedPort0 {
		t.Fatalf("leaf02 = %+v", leaf02)
	}
	if p0 := leaf02.Ports[0]; p0.LID != 5 || p0.LMC != 0 || p0.GUID != 0xb83fd20300b20000 {
		t.Fatalf("leaf02 port 0 = %+v", p0)
	}
	if f.PortByLID(5) != leaf02.Ports[0] {
		t.Fatal("LID 5 does not resolve to leaf02 port 0")
	}
	// The degraded cable: 1X HDR on both ends.
	p4 := leaf02.Ports[4]
	gpu004 := f.NodeByGUID(0x043f720300c40000)
	if p4.Remote == nil || p4.Remote.Node != gpu004 || p4.Remote.Num != 1 {
		t.Fatalf("leaf02[4] peer = %+v", p4.Remote)
	}
	for _, p := range []*Port{p4, p4.Remote} {
		if p.Rate() != (mad.Rate{Width: mad.Width1X, Speed: mad.SpeedHDR}) {
			t.Fatalf("%s[%d] rate %v, want 1X HDR", p.Node.Description, p.Num, p.Rate())
		}
	}
	if r := leaf02.Ports[5].Rate(); r.Speed != mad.SpeedEDR || r.Width != mad.Width4X {
		t.Fatalf("leaf02[5] (gpu005) rate %v, want 4X EDR", r)
	}
	gpu003 := f.NodeByGUID(0x043f720300c30000)
	if gpu003.NumPorts() != 2 || gpu003.Ports[0] != nil {
		t.Fatalf("gpu003 ports = %v", gpu003.Ports)
	}
	for i, want := range []struct {
		guid uint64
		lid  uint16
		peer uint64
		pn   uint8
	}{{0x43f720300c30001, 7, 0xb83fd20300b20000, 1}, {0x43f720300c30002, 10, 0xb83fd20300b10000, 3}} {
		p := gpu003.Ports[i+1]
		if p.GUID != want.guid || p.LID != want.lid || p.Remote.Node.GUID != want.peer || p.Remote.Num != want.pn {
			t.Errorf("gpu003[%d] = guid %#x lid %d peer %#x[%d]", i+1, p.GUID, p.LID, p.Remote.Node.GUID, p.Remote.Num)
		}
		if p.State != mad.PortStateActive || p.PhysState != mad.PhysLinkUp {
			t.Errorf("gpu003[%d] state %v/%v", i+1, p.State, p.PhysState)
		}
	}
	if leaf02.Ports[2] != nil {
		t.Error("unlisted port leaf02[2] should be nil")
	}
	// Initiated from gpu001: the local node.
	gpu001 := f.NodeByGUID(0x043f720300c10000)
	if gpu001.Path == nil || len(gpu001.Path) != 0 {
		t.Errorf("gpu001 path = %v, want empty (local node)", gpu001.Path)
	}
	if leaf02.Path != nil {
		t.Errorf("leaf02 path = %v, want nil", leaf02.Path)
	}
}

func TestParseIBNetDiscoverQDR(t *testing.T) {
	f := parseFixture(t, "qdr.txt")
	sw := f.NodeByGUID(0x2c90200400000)
	if sw == nil || sw.Switch.EnhancedPort0 || sw.Ports[0].LID != 2 {
		t.Fatalf("switch = %+v", sw)
	}
	want := map[uint8]mad.Rate{
		1: {Width: mad.Width4X, Speed: mad.SpeedQDR},
		2: {Width: mad.Width4X, Speed: mad.SpeedFDR10},
		3: {Width: mad.Width4X, Speed: mad.SpeedFDR},
		4: {Width: mad.Width1X, Speed: mad.SpeedQDR},
		9: {Width: mad.Width4X, Speed: mad.SpeedQDR},
	}
	for pn, r := range want {
		if got := sw.Ports[pn].Rate(); got != r {
			t.Errorf("port %d rate %v, want %v", pn, got, r)
		}
		if got := sw.Ports[pn].Remote.Rate(); got != r {
			t.Errorf("port %d peer rate %v, want %v", pn, got, r)
		}
	}
	rt := sw.Ports[9].Remote.Node
	if rt.Type != mad.NodeRouter || rt.GUID != 0x2c90300600000 || rt.Description != "rtr01 ib-router" || rt.Ports[1].LID != 6 {
		t.Fatalf("router = %+v port %+v", rt, rt.Ports[1])
	}
}

// -g groups nodes by chassis; it must parse to the same model.
func TestParseIBNetDiscoverGrouped(t *testing.T) {
	for _, name := range []string{"hdr", "qdr"} {
		diffText(t, name, dump(parseFixture(t, name+".txt")), dump(parseFixture(t, name+"-g.txt")))
	}
}

// Our writer prints what the real tool printed, byte for byte, apart
// from the timestamp line.
func TestWriteIBNetDiscoverMatchesTool(t *testing.T) {
	for _, name := range []string{"hdr.txt", "qdr.txt"} {
		raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := parseFixture(t, name)
		var out bytes.Buffer
		if err := WriteIBNetDiscover(&out, f); err != nil {
			t.Fatal(err)
		}
		want := dropGenerated(string(raw))
		got := dropGenerated(out.String())
		diffText(t, name, want, got)
		g, err := ParseIBNetDiscover(&out)
		if err != nil {
			t.Fatalf("%s: reparse: %v", name, err)
		}
		diffText(t, name+" reparsed", dump(f), dump(g))
	}
}

func dropGenerated(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "# Topology file: generated") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

func TestParseIBNetDiscoverErrors(t *testing.T) {
	good := "switchguid=0x10(10)\nSwitch\t4 \"S-0000000000000010\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n" +
		"[1]\t\"H-0000000000000020\"[1](21) \t\t# \"h\" lid 2 4xHDR\n\ncaguid=0x20\nCa\t1 \"H-0000000000000020\"\t\t# \"h\"\n" +
		"[1](21) \t\"S-0000000000000010\"[1]\t\t# lid 2 lmc 0 \"sw\" lid 1 4xHDR\n"
	if _, err := ParseIBNetDiscover(strings.NewReader(good)); err != nil {
		t.Fatalf("good input: %v", err)
	}
	for _, c := range []struct {
		name, in, want string
		line           int
	}{
		{"port outside block", "[1]\t\"S-0000000000000010\"[1]\n", "outside a node block", 1},
		{"bad port count", "Switch\tx \"S-0000000000000010\"\n", "port count", 1},
		{"port out of range", strings.Replace(good, "[1]\t\"H-", "[5]\t\"H-", 1), "out of range 1..4", 3},
		{"bad rate", strings.Replace(good, "lid 2 4xHDR", "lid 2 3xHDR", 1), "3 lanes", 3},
		{"bad speed", strings.Replace(good, "lid 2 4xHDR", "lid 2 4xZDR", 1), "unknown link speed", 3},
		{"missing peer", strings.Replace(good, "\"H-0000000000000020\"[1](21) \t\t#", "\"H-0000000000000030\"[1](21) \t\t#", 1), "no node block", 3},
		{"bad vendid", "vendid=zz\n", "not a number", 1},
		{"garbage", "hello world\n", "not an ibnetdiscover line", 1},
		{"duplicate id", good + "\nswitchguid=0x11\nSwitch\t4 \"S-0000000000000010\"\t\t# \"x\" base port 0 lid 3 lmc 0\n", "appears twice", 10},
		{"no guid", "Switch\t4 \"sw1\"\t\t# \"x\"\n", "no GUID", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseIBNetDiscover(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			var le *lineError
			if !errors.As(err, &le) || le.line != c.line {
				t.Fatalf("err %v: want line %d", err, c.line)
			}
		})
	}
}

func FuzzParseIBNetDiscover(f *testing.F) {
	for _, name := range []string{"hdr.txt", "qdr.txt", "hdr-g.txt", "chassis-g.txt"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, err := ParseIBNetDiscover(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteIBNetDiscover(&out, fab); err != nil {
			t.Fatal(err)
		}
		// Every link in the model is reciprocal.
		for _, l := range fab.Links() {
			if l.A.Remote != l.B || l.B.Remote != l.A {
				t.Fatal("non-reciprocal link")
			}
		}
	})
}

// BenchmarkWriteIBNetDiscover writes a two-level fat tree (64 leaves of
// 32 hosts, 32 spines: 2,144 nodes, 6,144 links) as ibnetdiscover text.
func BenchmarkWriteIBNetDiscover(b *testing.B) {
	f := fatTree(64, 32, 32)
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := WriteIBNetDiscover(&out, f); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}

// `ibnetdiscover -g` on a fabric with a chassis: "Chassis N (guid ..)",
// the "# Spine Nodes" / "# Line Nodes" sections, "# Chassis N" after
// sysimgguid, the chassis slot after switchguid and "[ext N]" after
// port numbers (both ends). No such output was found in public dumps or
// can be made on ibsim, so fixtures/ibnetdiscover/chassis-g.txt was
// written by hand from ibnetdiscover.c's printf formats, chassis.txt is
// the same fabric in the default form: both read to the same fabric.
func TestParseChassisGrouping(t *testing.T) {
	read := func(name string) *Fabric {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, info, err := Decode(b, name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Format != FormatIBNetDiscover {
			t.Errorf("%s: format %q", name, info.Format)
		}
		return f
	}
	want, got := read("chassis.txt"), read("chassis-g.txt")
	diffText(t, "-g against default", sameFacts(want), sameFacts(got))
	if len(got.Nodes) != 4 || len(got.Links()) != 3 {
		t.Errorf("%d nodes, %d links; want 4 and 3", len(got.Nodes), len(got.Links()))
	}
	line := got.NodeByGUID(0x8f10400411f56)
	if line == nil || line.Ports[14] == nil || line.Ports[14].Remote == nil || line.Ports[14].WidthActive != mad.Width1X {
		t.Errorf("line board port 14 (ext 2): %+v", line)
	}
}
