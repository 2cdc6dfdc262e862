package topology

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

func parseFile(t *testing.T, name string) []fabric.DumpedLFT {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := fabric.ParseDumpFTS(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseRealDumpFTS(t *testing.T) {
	for _, file := range []string{"testdata/dump_fts_ibsim.txt", "testdata/dump_fts_a_ibsim.txt", "testdata/dump_fts_n_ibsim.txt"} {
		t.Run(file, func(t *testing.T) {
			d := parseFile(t, file)
			if len(d) != 5 {
				t.Fatalf("%d switches, want 5", len(d))
			}
			leaf3 := d[0]
			if leaf3.GUID != 0x200004 || leaf3.Description != "leaf03" || !slices.Equal(leaf3.Path, mad.Path{1, 5, 5}) {
				t.Fatalf("first switch %#x %q %v", leaf3.GUID, leaf3.Description, leaf3.Path)
			}
			lft := leaf3.LFT()
			if len(lft) != 0x12 {
				t.Fatalf("LFT length %d, want 18", len(lft))
			}
			// leaf03 owns LID 7, delivers gpu009..gpu012 (LIDs 0xe..0x11)
			// on ports 1..4 and sends LID 1 (gpu001) up port 5.
			want := map[int]uint8{0: fabric.NoRoute, 1: 5, 7: 0, 0xe: 1, 0xf: 2, 0x10: 3, 0x11: 4}
			if strings.Contains(file, "_a_") {
				want[0] = 255
			}
			for lid, port := range want {
				if lft[lid] != port {
					t.Errorf("leaf03 LID %#x -> %d, want %d", lid, lft[lid], port)
				}
			}
			e := leaf3.Entries[len(leaf3.Entries)-1]
			if e.LID != 0x11 || e.Port != 4 {
				t.Errorf("last entry %+v", e)
			}
			if !strings.Contains(file, "_n_") && (e.PortGUID != 0x100017 || e.Dest != "Channel Adapter portguid 0x0000000000100017: 'gpu012 mlx5_0'") {
				t.Errorf("last entry %+v", e)
			}
		})
	}
}

// ibsimTwin builds the Go model of testdata/dump_fts_ibsim.net with the
// GUIDs ibsim gives it (switches 0x200000 up in file order; CA i node GUID
// 0x100000+2i, port GUID one more).
func ibsimTwin(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := FatTree2{Common: Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	sw, ca := 0, 0
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			n.GUID = 0x200000 + uint64(sw)
			for _, p := range n.Ports {
				p.GUID = n.GUID
			}
			sw++
			continue
		}
		n.GUID = 0x100000 + 2*uint64(ca)
		n.Ports[1].GUID = n.GUID + 1
		ca++
	}
	f.Reindex()
	return f
}

// TestLoadRealOpenSMRoutes loads OpenSM's routes for the fixture fabric
// into its Go twin and checks them with the same walkers used on our own
// routes: every switch reaches every CA on a shortest path, balanced.
func TestLoadRealOpenSMRoutes(t *testing.T) {
	d := parseFile(t, "testdata/dump_fts_ibsim.txt")
	f := ibsimTwin(t)
	// OpenSM's LIDs, from the destinations named in the dump.
	byGUID := map[uint64][]*fabric.Port{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil {
				byGUID[p.GUID] = append(byGUID[p.GUID], p)
			}
		}
	}
	for _, e := range d[0].Entries {
		ps := byGUID[e.PortGUID]
		if len(ps) == 0 {
			t.Fatalf("dump names port GUID %#x not in the twin", e.PortGUID)
		}
		for _, p := range ps {
			p.LID = e.LID
		}
	}
	f.Reindex()
	if err := fabric.LoadLFTs(f, d); err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, f, 0x11)
	checkBalance(t, f, tierByName)
}

func TestDumpFTSRoundTrip(t *testing.T) {
	f, err := FatTree2{Common: Common{SwitchPorts: 16, LongSwitchNames: true}, Leaves: 4, Spines: 2, HostsPerLeaf: 8, LinksPerPair: 2,
		Hosts: Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	top := routed(t, f)
	// An edited entry survives; a NoRoute entry stays NoRoute.
	leaf := f.NodesByName("MF0;leaf02:MQM9700/U1")[0]
	leaf.Switch.LFT.Set(3, 12)
	leaf.Switch.LFT.Set(top, fabric.NoRoute)
	for _, o := range []fabric.DumpOptions{{}, {All: true}, {NoDests: true}, {All: true, NoDests: true}} {
		var buf bytes.Buffer
		if err := fabric.WriteDumpFTS(&buf, f, o); err != nil {
			t.Fatal(err)
		}
		d, err := fabric.ParseDumpFTS(&buf)
		if err != nil {
			t.Fatal(err)
		}
		g, err := FatTree2{Common: Common{SwitchPorts: 16, LongSwitchNames: true}, Leaves: 4, Spines: 2, HostsPerLeaf: 8, LinksPerPair: 2,
			Hosts: Hosts{HCAsPerServer: 4}}.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := AssignLIDs(g); err != nil {
			t.Fatal(err)
		}
		if err := fabric.LoadLFTs(g, d); err != nil {
			t.Fatal(err)
		}
		for i, n := range f.Nodes {
			if n.Type != mad.NodeSwitch {
				continue
			}
			if got := g.Nodes[i].Switch.LFT; !got.Equal(n.Switch.LFT) {
				t.Fatalf("%+v: %s: LFT after round trip\n%v\nwant\n%v", o, n.Description, got.Bytes(), n.Switch.LFT.Bytes())
			}
		}
	}
	var buf bytes.Buffer
	if err := fabric.WriteSwitchLFT(&buf, f, leaf, fabric.DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Unicast lids [0x0-0x26] of switch Lid 4 guid 0xb83fd20400000004 (MF0;leaf02:MQM9700/U1):\n  Lid  Out   Destination\n       Port     Info \n",
		"0x0003 012 : (Switch portguid 0xb83fd20400000003: 'MF0;leaf01:MQM9700/U1')\n",
		"0x0004 000 : (Switch portguid 0xb83fd20400000004: 'MF0;leaf02:MQM9700/U1')\n",
		"0x000f 001 : (Channel Adapter portguid 0xb83fd20300000009: 'gpu003 mlx5_0')\n",
		" valid lids dumped \n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, hex16(top)+" ") {
		t.Errorf("NoRoute LID %d listed", top)
	}
}

func hex16(v uint16) string {
	const digits = "0123456789abcdef"
	b := []byte("0x0000")
	for i := 5; i >= 2; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

func TestParseDumpFTSErrors(t *testing.T) {
	for _, in := range []string{
		"0x0001 005 : (x)\n",
		"Unicast lids [0x0-0x1] of switch Lid 1 (x):\n",
		"Unicast lids [0x0-0x1] of switch Lid 1 guid 0xzz (x):\n",
		"Unicast lids [0x0-0x1] of switch Lid 1 guid 0x1 (x):\n0x0001 300 : (x)\n",
		"Unicast lids [0x0-0x1] of switch Lid 1 guid 0x1 (x):\n0xg001 001\n",
		"Multicast mlids [0xc000-0xc3ff] of switch Lid 1 guid 0x1 (x):\n",
	} {
		if _, err := fabric.ParseDumpFTS(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	// A line that is not dump_fts/ibroute output was skipped silently;
	// it is an error naming its line.
	in := "Unicast lids [0x0-0x1] of switch Lid 1 guid 0x1 (x):\n  Lid  Out   Destination\n       Port     Info \n0x0001 000 : (x)\nsomething else\n1 valid lids dumped\n"
	if _, err := fabric.ParseDumpFTS(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "line 5") || !strings.Contains(err.Error(), "something else") {
		t.Errorf("an unknown line: %v", err)
	}
}

func FuzzParseDumpFTS(f *testing.F) {
	for _, name := range []string{"testdata/dump_fts_ibsim.txt", "testdata/dump_fts_a_ibsim.txt"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := fabric.ParseDumpFTS(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := range d {
			lft := d[i].LFT()
			last := map[uint16]uint8{}
			for _, e := range d[i].Entries {
				last[e.LID] = e.Port
			}
			for lid, port := range last {
				if lft[lid] != port {
					t.Fatalf("LID %d: table %d, last line %d", lid, lft[lid], port)
				}
			}
		}
	})
}

// OpenSM's own dumps of the tables it wrote (opensm-lfts.dump, the form
// `opensm -U` reads, and opensm.fdbs), captured on ibsim with dump_fts
// run after the same sweep: all three give the same table per switch.
// The fdbs form ("dump_ucast_routes: Switch 0x...", "0x000F : 006 : 03 :
// yes") was refused; the lfts form's quoted description was kept with
// its quotes.
func TestParseOpenSMDumps(t *testing.T) {
	want := map[uint64][]uint8{}
	for _, d := range parseFile(t, "testdata/dump_fts_same_run_ibsim.txt") {
		want[d.GUID] = d.LFT()
	}
	if len(want) != 5 {
		t.Fatalf("dump_fts: %d switches", len(want))
	}
	for _, name := range []string{"testdata/opensm-lfts_ibsim.dump", "testdata/opensm_ibsim.fdbs"} {
		got := parseFile(t, name)
		if len(got) != len(want) {
			t.Errorf("%s: %d switches, want %d", name, len(got), len(want))
		}
		for _, d := range got {
			if w, ok := want[d.GUID]; !ok || !slices.Equal(d.LFT(), w) {
				t.Errorf("%s: switch %#x: %v, dump_fts has %v", name, d.GUID, d.LFT(), w)
			}
			if strings.Contains(d.Description, "'") {
				t.Errorf("%s: description %q keeps its quotes", name, d.Description)
			}
		}
	}
}
