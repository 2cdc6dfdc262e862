package topology

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// ibsimNet renders f as an ibsim net file whose node ids carry the GUIDs
// ("S-<guid>", "H-<guid>") and whose switchguid=/caguid=/sysimgguid=
// lines make ibsim use them. ibsim gives CA port n the GUID node+n.
func ibsimNet(f *fabric.Fabric) string {
	var b strings.Builder
	id := func(n *fabric.Node) string {
		if n.Type == mad.NodeSwitch {
			return fmt.Sprintf("S-%016x", n.GUID)
		}
		return fmt.Sprintf("H-%016x", n.GUID)
	}
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			fmt.Fprintf(&b, "switchguid=0x%x\nSwitch %d %q # %q\n", n.GUID, n.NumPorts(), id(n), n.Description)
		} else {
			fmt.Fprintf(&b, "sysimgguid=0x%x\ncaguid=0x%x\nHca %d %q # %q\n", n.SystemImageGUID, n.GUID, n.NumPorts(), id(n), n.Description)
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				fmt.Fprintf(&b, "[%d] %q[%d]\n", p.Num, id(p.Remote.Node), p.Remote.Num)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDumpFTSLoadsIntoOpenSM writes our routes, with two hand edits, in
// dump_fts format, has OpenSM load them with its file routing engine
// (opensm -R file -U) under ibsim, reads the programmed tables back with
// the real dump_fts, and compares switch by switch. OpenSM numbers LIDs
// its own way, so the comparison goes through port GUIDs (as does
// OpenSM's loader).
func TestDumpFTSLoadsIntoOpenSM(t *testing.T) {
	ibsimtest.Require(t, "opensm", "dump_fts")
	f, err := FatTree2{Common: Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// ibsim gives a CA port the GUID node+1: space CA node GUIDs by two.
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			n.GUID = n.GUID&^0xffffffff | (n.GUID&0xffffffff)*2
			n.Ports[1].GUID = n.GUID + 1
		}
	}
	f.Reindex()
	routed(t, f)
	leaf1, leaf2 := f.NodesByName("leaf01")[0], f.NodesByName("leaf02")[0]
	far := f.NodesByName("gpu012 mlx5_0")[0].Ports[1].LID
	moved := uint8(5)
	if leaf1.Switch.LFT.At(far) == 5 {
		moved = 7
	}
	leaf1.Switch.LFT.Set(far, moved)
	dropped := f.NodesByName("gpu001 mlx5_0")[0].Ports[1].LID
	leaf2.Switch.LFT.Set(dropped, fabric.NoRoute)

	sim := ibsimtest.Start(t, ibsimNet(f))
	lfts := filepath.Join(sim.Dir, "lfts.dump")
	out, err := os.Create(lfts)
	if err != nil {
		t.Fatal(err)
	}
	if err := fabric.WriteDumpFTS(out, f, fabric.DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	host := fmt.Sprintf("H-%016x", f.NodesByName("gpu005 mlx5_0")[0].GUID)
	sim.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, LFTFile: lfts, Once: true})
	text := sim.MustRun(host, "dump_fts")
	real, err := fabric.ParseDumpFTS(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(real) != 5 {
		t.Fatalf("dump_fts shows %d switches, want 5:\n%s", len(real), text)
	}
	// OpenSM's LID of every port GUID, from the destinations it names.
	osmLID := map[uint64]uint16{}
	for _, e := range real[0].Entries {
		osmLID[e.PortGUID] = e.LID
	}
	remapped := false
	for _, r := range real {
		sw := f.NodeByGUID(r.GUID)
		if sw == nil {
			t.Fatalf("dump_fts switch %#x not in the fabric", r.GUID)
		}
		got := r.LFT()
		for lid := uint16(1); int(lid) < sw.Switch.LFT.Len(); lid++ {
			p := f.PortByLID(lid)
			ol, ok := osmLID[p.GUID]
			if !ok {
				t.Fatalf("OpenSM gave no LID to %s", p.Node.Description)
			}
			remapped = remapped || ol != lid
			want := sw.Switch.LFT.At(lid)
			g := uint8(fabric.NoRoute)
			if int(ol) < len(got) {
				g = got[ol]
			}
			if g != want {
				t.Errorf("%s: destination %s (our LID %d, OpenSM's %d): OpenSM programmed port %d, our dump said %d",
					sw.Description, p.Node.Description, lid, ol, g, want)
			}
		}
	}
	if !remapped {
		t.Log("OpenSM kept our LIDs; the GUID remapping was not exercised")
	}
}
