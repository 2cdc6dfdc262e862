package topology

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// writeDumpFTSFmt is the dump_fts writer spelled with one fmt call per
// entry (section header and trailer shared with fabric.WriteDumpFTS), the plain reading of dump_fts' own printf formats; fabric.WriteDumpFTS
// must produce the same bytes.
func writeDumpFTSFmt(w io.Writer, f *fabric.Fabric, o fabric.DumpOptions) error {
	bw := bufio.NewWriter(w)
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch || n.Switch == nil || n.Switch.LFT == nil {
			continue
		}
		lft := n.Switch.LFT.Bytes()
		top := len(lft) - 1
		if t := int(n.Switch.LinearFDBTop); t > 0 && t < top {
			top = t
		}
		addr := "Lid 0"
		if n.Path != nil {
			addr = "DR path slid 0; dlid 0; " + n.Path.String()
		} else if p := n.Ports[0]; p != nil {
			addr = fmt.Sprintf("Lid %d", p.LID)
		}
		fmt.Fprintf(bw, "Unicast lids [0x0-0x%x] of switch %s guid 0x%016x (%s):\n", max(top, 0), addr, n.GUID, n.Description)
		fmt.Fprintf(bw, "  Lid  Out   Destination\n       Port     Info \n")
		count := 0
		for lid := 0; lid <= top; lid++ {
			out := lft[lid]
			valid := lid != 0 && int(out) < len(n.Ports)
			if !valid && !o.All {
				continue
			}
			count++
			fmt.Fprintf(bw, "0x%04x %03d ", lid, out)
			if o.NoDests {
				bw.WriteString("\n")
				continue
			}
			switch p := f.PortByLID(uint16(lid)); {
			case !valid:
				fmt.Fprintf(bw, ": (path #0 - illegal port)\n")
			case p == nil:
				fmt.Fprintf(bw, ": (unknown node and type)\n")
			case p.LMC > 0 && uint16(lid) != p.LID:
				fmt.Fprintf(bw, ": (path #%d out of %d: portguid 0x%016x)\n", uint16(lid)-p.LID+1, 1<<p.LMC, p.GUID)
			default:
				fmt.Fprintf(bw, ": (%s portguid 0x%016x: '%s')\n", typeText(p.Node.Type), p.GUID, p.Node.Description)
			}
		}
		if o.All {
			fmt.Fprintf(bw, "%d lids dumped \n", count)
		} else {
			fmt.Fprintf(bw, "%d valid lids dumped \n", count)
		}
	}
	return bw.Flush()
}

// TestDumpFTSMatchesFmt compares fabric.WriteDumpFTS with the fmt spelling on a
// routed fat tree with edits that reach every branch: an LMC port (path
// #k lines), a LID nobody has, an illegal port, NoRoute, a three-digit
// port number, a switch without a directed route, in all four option
// combinations.
func TestDumpFTSMatchesFmt(t *testing.T) {
	f, err := FatTree2{Common: Common{SwitchPorts: 16, LongSwitchNames: true}, Leaves: 4, Spines: 2, HostsPerLeaf: 8, LinksPerPair: 2,
		Hosts: Hosts{HCAsPerServer: 4}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	top := routed(t, f)
	ca := f.PortByLID(top) // the highest LID: the three above it are free
	if ca == nil || ca.Node.Type != mad.NodeCA {
		t.Fatalf("LID %d is not a CA port", top)
	}
	ca.LMC = 2 // LIDs top..top+3 are its paths #1..#4
	f.Reindex()
	leaf := f.NodesByName("MF0;leaf02:MQM9700/U1")[0]
	leaf.Switch.LFT.Set(3, 200) // no such port: illegal
	leaf.Switch.LFT.Set(top-1, fabric.NoRoute)
	leaf.Switch.LFT = fabric.LFTFromBytes(append(leaf.Switch.LFT.Bytes()[:top+1], 3, 3, 3, 5), nil) // paths #2..#4, then a LID nobody has
	leaf.Switch.LinearFDBTop = uint16(leaf.Switch.LFT.Len() - 1)
	leaf.Path = nil
	for _, o := range []fabric.DumpOptions{{}, {All: true}, {NoDests: true}, {All: true, NoDests: true}} {
		var got, want bytes.Buffer
		if err := fabric.WriteDumpFTS(&got, f, o); err != nil {
			t.Fatal(err)
		}
		if err := writeDumpFTSFmt(&want, f, o); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.String(), want.String()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%+v: output differs at byte %d:\n got %q\nwant %q", o, i, g[i:min(len(g), i+120)], w[i:min(len(w), i+120)])
		}
		for _, s := range []string{"path #2 out of 4", "path #4 out of 4", "unknown node and type", "illegal port", "switch Lid "} {
			if (o.NoDests && s != "switch Lid ") || (!o.All && s == "illegal port") {
				continue
			}
			if !bytes.Contains(want.Bytes(), []byte(s)) {
				t.Errorf("%+v: the test fabric never produces %q", o, s)
			}
		}
	}
}

// BenchmarkWriteDumpFTS8k writes the LFTs of topology.FatTree8k (1,280
// switches, 12 million entries), what `ibdoctor routes --format dump_fts`
// prints after reading them.
func BenchmarkWriteDumpFTS8k(b *testing.B) {
	f, err := FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := Route(f); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		write func(io.Writer, *fabric.Fabric, fabric.DumpOptions) error
	}{{"append", fabric.WriteDumpFTS}, {"fmt", writeDumpFTSFmt}} {
		b.Run(bc.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				cw := &countWriter{}
				if err := bc.write(cw, f, fabric.DumpOptions{}); err != nil {
					b.Fatal(err)
				}
				n = cw.n
			}
			b.SetBytes(n)
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func typeText(t mad.NodeType) string {
	switch t {
	case mad.NodeCA:
		return "Channel Adapter"
	case mad.NodeSwitch:
		return "Switch"
	case mad.NodeRouter:
		return "Router"
	}
	return "Unknown"
}

// TestDumpFTSMatchesRealUnderLMC: on ibsim routed by OpenSM with LMC 2
// (each CA port answers at four LIDs), fabric.WriteDumpFTS of the tables
// read back prints every switch's section byte for byte as the real
// dump_fts does, the "(path #k out of 4 ...)" lines of the extra LIDs
// included. Sections are matched by switch GUID: the two tools list the
// switches in different orders.
func TestDumpFTSMatchesRealUnderLMC(t *testing.T) {
	ibsimtest.Require(t, "opensm", "dump_fts")
	const host = "h0001"
	sim := ibsimtest.Start(t, ibsimtest.FatTree(3, 2, 2))
	sim.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true, Extra: []string{"-l", "2"}})
	real := sim.MustRun(host, "dump_fts")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: sim.SockName, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{})
	defer e.Close()
	f, err := discover.Run(ctx, e, discover.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := route.ReadLFTs(ctx, e, f, route.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	if err := fabric.WriteDumpFTS(&ours, f, fabric.DumpOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(real, "(path #2 out of 4: ") {
		t.Fatalf("OpenSM -l 2 left no LMC paths in dump_fts:\n%s", real)
	}
	theirs, got := dumpSections(t, real), dumpSections(t, ours.String())
	if len(theirs) != len(got) {
		t.Fatalf("dump_fts shows %d switches, ours %d", len(theirs), len(got))
	}
	for guid, want := range theirs {
		if g := got[guid]; g != want {
			i := 0
			for i < len(g) && i < len(want) && g[i] == want[i] {
				i++
			}
			t.Errorf("switch %s: ours differs from dump_fts at byte %d:\n ours %q\nreal %q", guid, i, g[i:min(len(g), i+80)], want[i:min(len(want), i+80)])
		}
	}
}

// dumpSections splits dump_fts output into its switch sections, keyed by
// the header's "guid 0x..." word.
func dumpSections(t *testing.T, text string) map[string]string {
	t.Helper()
	m := map[string]string{}
	var key string
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "Unicast lids ") {
			i := strings.Index(line, " guid 0x")
			if i < 0 {
				t.Fatalf("no guid in %q", line)
			}
			key = strings.Fields(line[i:])[1]
		}
		if key == "" && line != "" {
			t.Fatalf("text before the first section: %q", line)
		}
		m[key] += line
	}
	return m
}
