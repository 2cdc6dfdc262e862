package fabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/mad"
)

// corpusFile returns the path of a public fabric dump kept outside the
// repository (../shared/external-fabrics/, SOURCES.md there): skipped
// when absent, a failure when CI=true.
func corpusFile(t testing.TB, name string) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "external-fabrics", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus file %s missing (CI=true): %v", name, err)
		}
		t.Skipf("corpus file %s not here (%v); it lives in ../shared/external-fabrics/", name, err)
	}
	return p
}

// semantic is what a topology file says, one fact a line, sorted: nodes
// by GUID, port 0 kind, LID and LMC, every listed port's GUID, LID, LMC,
// width and speed and its peer, and the initiator.
func semantic(f *Fabric) string {
	var lines []string
	for _, n := range f.Nodes {
		lines = append(lines, fmt.Sprintf("node %#x %v ports=%d sys=%#x ven=%#x dev=%#x desc=%q", n.GUID, n.Type, n.NumPorts(), n.SystemImageGUID, n.VendorID, n.DeviceID, n.Description))
		if n.Path != nil && len(n.Path) == 0 {
			lines = append(lines, fmt.Sprintf("initiator %#x", n.GUID))
		}
		if n.Switch != nil {
			lines = append(lines, fmt.Sprintf("switch %#x enhanced0=%v", n.GUID, n.Switch.EnhancedPort0))
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			peer := "-"
			if p.Remote != nil {
				peer = fmt.Sprintf("%#x[%d]", p.Remote.Node.GUID, p.Remote.Num)
			}
			lines = append(lines, fmt.Sprintf("port %#x[%d] guid=%#x lid=%d lmc=%d %v %v -> %s label=%q", n.GUID, p.Num, p.GUID, p.LID, p.LMC, p.WidthActive, p.SpeedActive, peer, f.PortLabels[p]))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func readCorpus(t *testing.T, name string) (*Fabric, *FileInfo) {
	t.Helper()
	f, info, err := ReadFile(context.Background(), corpusFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return f, info
}

// The first line of this file is ibnetdiscover's own stderr. It used to
// make the ibnetdiscover parser refuse the file and the ibsim net-file
// parser read it instead, inventing CA port GUIDs (node GUID + port).
func TestReadFileStderrLineIsNoise(t *testing.T) {
	f, info := readCorpus(t, "switchib-sx6012-mixed-2016.ibnetdiscover")
	if info.Format != FormatIBNetDiscover {
		t.Errorf("format %q, want %q", info.Format, FormatIBNetDiscover)
	}
	if info.Noise != 1 || info.FirstNoiseLine != 1 || !strings.HasPrefix(info.FirstNoise, "src/query_smp.c:195;") {
		t.Errorf("noise %d, first line %d %q", info.Noise, info.FirstNoiseLine, info.FirstNoise)
	}
	if w := info.Warning(); !strings.Contains(w, "skipped 1 line of tool messages") || !strings.Contains(w, "line 1") {
		t.Errorf("warning %q", w)
	}
	if len(f.Nodes) != 8 {
		t.Errorf("%d nodes, want 2 switches and 6 CAs", len(f.Nodes))
	}
	// "[1](2c903000a4d31) ..." on the initiator's CA: the file's port
	// GUID, not the node GUID + 1 the net-file reader made up.
	n := f.NodeByGUID(0x0002c9030004e938)
	if n == nil {
		t.Fatal("initiator node 0x0002c9030004e938 missing")
	}
	if n.Path == nil || len(n.Path) != 0 {
		t.Errorf("initiator's Path %v, want empty (the local node)", n.Path)
	}
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil && p.GUID != 0x0002c9030004e939 {
			t.Errorf("initiator port %d GUID %#x, want the file's 0x2c9030004e939", p.Num, p.GUID)
		}
	}
}

// A file the ibnetdiscover reader refuses is an error naming the file,
// the line and the format; no other reader gets a go at it.
func TestReadFileNoFallback(t *testing.T) {
	text := "#\n# Topology file: generated on Mon Jul 25 11:30:26 2016\n#\n\nvendid=0x2c9\ndevid=0xcb20\nswitchguid=0xe41d2d030003e470(e41d2d030003e470)\nSwitch 36 \"S-e41d2d030003e470\" # \"sw\" base port 0 lid 268 lmc 0\n[1] \"S-e41d2d030003e470\"[2] # \"sw\" lid 268 4xEDR\nthis line is garbage\n"
	_, err := readText(t, "bad.topo", text)
	if err == nil {
		t.Fatal("a garbage line was accepted")
	}
	for _, want := range []string{"bad.topo", "read as ibnetdiscover", "line 10", "garbage"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Format
		err  string
	}{
		{`{"schema":"ibdoctor.fabric/v1"}`, FormatJSON, ""},
		{"# c\nSwitch 24 \"sw1\"\n[1] \"h1\"[1]\n", FormatNetFile, ""},
		{"switchguid=0x1\nSwitch 24 \"S-0000000000000001\"\n[1] \"S-0000000000000002\"[3] w=19 s=7 e=15\n", FormatNetFile, ""},
		{"# ibsim net file written by ibdoctor: 2 nodes\nswitchguid=0x1\nSwitch 24 \"S-0000000000000001\"\n", FormatNetFile, ""},
		{"vendid=0x2c9\nswitchguid=0x1\nSwitch 24 \"sw1\"\n", FormatIBNetDiscover, ""},
		{"ibwarn: [123] _do_madrpc: recv failed\nSwitch 24 \"S-0000000000000001\" # x\n", FormatIBNetDiscover, ""},
		{"Switch 24 \"S-0000000000000001\"\n[1](1/1/1) \"H-0000000000000002\"[1](2)\n", FormatIBDiagnetTopo, ""},
		{"# This database file was automatically generated by IBDIAG\n\nswitchguid=0x1\nSwitch 2 \"S-0000000000000001\"\n", FormatIBDiagnetTopo, ""},
		{"CA    78  1 0x946dae0300630bfe 4x HDR - SW    51 81 0x946dae0300630bf6 ( 'a' - 'b' )\n", FormatIBNetDiscoverPorts, ""},
		{"DR path slid 0; dlid 0; 0 -> new Channel Adapter {0011750000790cd4} portnum 1 lid 0-0 \"\"\nSW    24 1 0x946dae0300618c82 4x SDR  'x'\n", FormatIBNetDiscoverPorts, ""},
		{"{ CA Ports:01 SystemGUID:5c25 } { SW Ports:41 }\n", FormatIBDiagnetLst, ""},
		{"START_RUN_INFO\n", FormatDBCSV, ""},
		{"Unicast lids [0x0-0x132] of switch Lid 1 guid 0x00066a02e8001310 (x):\n", FormatLFTs, ""},
		{"\"Quantum-2 Mellanox Technologies\", Mellanox, 0xb0cf0e0300e5b940, LID 24\n", FormatNetDump, ""},
		{"", "", "empty"},
		{"ibwarn: x\n\n# only\n", "", "empty"},
		{"hello world\n", "", `not a fabric file ibdoctor knows (line 1: "hello world")`},
		{"\x00\x00\x00", "", "binary data"},
		{"DR path slid 0; dlid 0; 0 -> new Channel Adapter {0011750000790cd4} portnum 1 lid 0-0 \"\"\n", "", "DR path"},
	} {
		got, err := detect([]byte(tc.text), "f")
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("detect(%q) = %q, %v; want %q, error containing %q", tc.text, got, err, tc.want, tc.err)
		}
	}
}

// Formats that carry no topology are refused saying what they are.
func TestReadFileForwardingTablesRefused(t *testing.T) {
	_, _, err := ReadFile(context.Background(), corpusFile(t, "avakas-qlogic-qdr.ibroute-lid1"))
	if err == nil || !strings.Contains(err.Error(), "forwarding-table dump") || !strings.Contains(err.Error(), "--lfts") {
		t.Errorf("ibroute output: %v", err)
	}
	// It said "a forwarding-table dump (forwarding tables
	// (dump_fts/ibroute))": what the file is, once, and what to give.
	if err != nil && (strings.Count(err.Error(), "forwarding") != 1 || !strings.Contains(err.Error(), "ibroute output") || !strings.Contains(err.Error(), "--sim=TOPOLOGY")) {
		t.Errorf("ibroute output: %v", err)
	}
}

// defaultFormatCorpus are the dumps in ibnetdiscover's default format.
var defaultFormatCorpus = []string{
	"dgx-ndr-2025.ibnetdiscover",
	"mt43132-sdr-2009.ibnetdiscover",
	"sun-dcs36-qdr.ibnetdiscover",
	"switchib-sx6012-mixed-2016.ibnetdiscover",
	"sx6036-fdr10-2014.ibnetdiscover",
	"voltaire-sdr-2007.ibnetdiscover",
	"quantum2-ndr-ibdiagnet2.ibnetdiscover",
}

// Each default-format dump, written back and read again, says the same
// things; so it does with an ibwarn line in front.
func TestReadFileRoundTripCorpus(t *testing.T) {
	for _, name := range defaultFormatCorpus {
		t.Run(name, func(t *testing.T) {
			f, info := readCorpus(t, name)
			var b bytes.Buffer
			if err := WriteIBNetDiscover(&b, f); err != nil {
				t.Fatal(err)
			}
			g, ginfo, err := Decode(b.Bytes(), name+" (written back)")
			if err != nil {
				t.Fatal(err)
			}
			if ginfo.Format != info.Format {
				t.Errorf("written back as %q, read as %q", ginfo.Format, info.Format)
			}
			diffText(t, "round trip", semantic(f), semantic(g))

			noisy := append([]byte("ibwarn: [4242] _do_madrpc: recv failed: Connection timed out\n"), b.Bytes()...)
			h, hinfo, err := Decode(noisy, name+" (with ibwarn)")
			if err != nil {
				t.Fatal(err)
			}
			if hinfo.Noise != 1 {
				t.Errorf("noise %d, want 1", hinfo.Noise)
			}
			diffText(t, "with an ibwarn line", semantic(f), semantic(h))

			verbose := append([]byte("DR path slid 0; dlid 0; 0 -> new Channel Adapter {0000000000000001} portnum 1 lid 0-0 \"\"\n"), b.Bytes()...)
			v, vinfo, err := Decode(verbose, name+" (ibnetdiscover -v)")
			if err != nil {
				t.Fatal(err)
			}
			if vinfo.Format != info.Format || vinfo.Noise != 0 {
				t.Errorf("with a DR path line: %q, noise %d", vinfo.Format, vinfo.Noise)
			}
			diffText(t, "with a DR path line", semantic(f), semantic(v))
		})
	}
}

// Facts the text carries survive: "base port 0", LMC, blanks around a
// description.
func TestReadFileFaithful(t *testing.T) {
	f, _ := readCorpus(t, "mt43132-sdr-2009.ibnetdiscover")
	sw := f.NodeByGUID(0x000b8cffff0053ee)
	if sw == nil || sw.Switch == nil || sw.Switch.EnhancedPort0 {
		t.Errorf("MT43132 says base port 0: %+v", sw)
	}
	f, _ = readCorpus(t, "voltaire-sdr-2007.ibnetdiscover")
	lmc1 := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.LMC == 1 {
				lmc1++
			}
		}
	}
	if lmc1 == 0 {
		t.Error("voltaire: no port with the file's lmc 1")
	}
}

func TestReadFileBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	start := time.Now()
	_, _, err := ReadFile(context.Background(), "/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "binary data") {
		t.Errorf("/dev/zero: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("/dev/zero took %v", d)
	}
	// Text without end: read to the format's cap, then refused.
	p := filepath.Join(t.TempDir(), "long")
	text := strings.Repeat("# Topology file: generated on a loop\n", 4*headSize/37)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = readBounded(context.Background(), p, func(Format) int64 { return 2 * headSize })
	if err == nil || !strings.Contains(err.Error(), "MiB ibdoctor reads of a ibnetdiscover file") {
		t.Errorf("over the cap: %v", err)
	}
	if _, _, err := readBounded(context.Background(), p, func(Format) int64 { return 8 * headSize }); err != nil {
		t.Errorf("under the cap: %v", err)
	}
}

// A FIFO with no writer, or one that never stops writing, gives way to
// the context (SIGINT/SIGTERM in the commands).
func TestReadFileFIFOInterruptible(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// No writer: blocked in open.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err := ReadFile(ctx, p)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("no writer: %v", err)
	}
	// A writer that sends a little and then stalls: blocked in read.
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte(strings.Repeat("# stalled writer\n", 200))); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	done := make(chan error, 1)
	go func() { _, _, err := ReadFile(ctx2, p); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("stalled writer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile on a stalled FIFO did not give way to its context")
	}
}

// FuzzDecode: any bytes give a fabric with its format, or an error, never
// a panic; a fabric read is consistent (peers point back).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("ibwarn: x\nvendid=0x2c9\nswitchguid=0x1(1)\nSwitch 2 \"S-0000000000000001\" # \"s\" base port 0 lid 1 lmc 0\n[1](1/1/1) \"H-0000000000000002\"[1](3) # \"h\" lid 2 4xNDR\n\ncaguid=0x2\nCa 1 \"H-0000000000000002\" # \"h\"\n[1](1)(3) \"S-0000000000000001\"[1] # lid 2 lmc 0 \"s\" lid 1 4xNDR\n"))
	f.Add([]byte("Switch 2 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n"))
	f.Add([]byte(`{"schema":"ibdoctor.fabric/v1","nodes":[],"links":[]}`))
	f.Add([]byte("src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1 Attr 0x11:0) bad status 110\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, info, err := Decode(data, "fuzz")
		if err != nil {
			return
		}
		if fab == nil || info == nil || info.Format == "" {
			t.Fatalf("no fabric or format without an error: %v %+v", fab, info)
		}
		for _, n := range fab.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil && p.Remote.Remote != p {
					t.Fatalf("%#x[%d]: peer does not point back", n.GUID, p.Num)
				}
			}
		}
	})
}

func rateOf(t *testing.T, f *Fabric, desc string) string {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Description != desc {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				return fmt.Sprintf("%v %v", p.WidthActive, p.SpeedActive)
			}
		}
	}
	t.Fatalf("no cabled node %q", desc)
	return ""
}

// ibnetdiscover -v -p: node GUIDs from the DR path lines (a ConnectX's
// port GUID is not its node GUID), the initiator, the slow links the
// files hold, unconnected ports kept.
func TestReadFilePorts(t *testing.T) {
	f, info := readCorpus(t, "avakas-qlogic-qdr.ibnetdiscover-v-p")
	if info.Format != FormatIBNetDiscoverPorts || len(info.Notes) != 0 {
		t.Errorf("format %q notes %q", info.Format, info.Notes)
	}
	if len(f.Nodes) != 25+281 {
		t.Errorf("%d nodes, want 25 switches and 281 CAs", len(f.Nodes))
	}
	if got := rateOf(t, f, "node008 HCA-1"); got != "4X DDR" {
		t.Errorf("avakas node008: %s, want the file's 4X DDR", got)
	}
	if n := f.NodeByGUID(0x0011750000790cd4); n == nil || n.Path == nil || len(n.Path) != 0 {
		t.Errorf("initiator 0x11750000790cd4 (DR path 0): %+v", n)
	}

	f, info = readCorpus(t, "plafrim2-is5030.ibnetdiscover-p")
	if got := rateOf(t, f, "bright mlx4_0"); got != "4X SDR" {
		t.Errorf("bright mlx4_0: %s, want the file's 4X SDR", got)
	}
	// "DR path ... 0,1,3 -> new Channel Adapter {f452140300135ae0}" and
	// the -p line's port GUID 0xf452140300135ae1: the node is the DR's.
	n := f.NodeByGUID(0xf452140300135ae0)
	if n == nil || n.Ports[1] == nil || n.Ports[1].GUID != 0xf452140300135ae1 {
		t.Fatalf("node 0xf452140300135ae0 with port GUID 0xf452140300135ae1: %+v", n)
	}
	sw := f.NodeByGUID(0x0002c90200493108)
	unconnected := 0
	for _, p := range sw.Ports {
		// Listed without a link: Down, its physical state unknown (-p
		// does not print it), never an invented Polling.
		if p != nil && p.Num != 0 && p.Remote == nil && p.State == mad.PortStateDown && p.PhysState == mad.PhysNoChange {
			unconnected++
		}
	}
	if sw.NumPorts() != 36 || unconnected == 0 {
		t.Errorf("IS5030: %d ports, %d listed unconnected", sw.NumPorts(), unconnected)
	}

	// -p without -v: descriptions with blanks kept; CA node GUIDs unknown
	// and said so; one GUID at two LIDs is two nodes, recorded.
	f, info = readCorpus(t, "treydock-hdr.ibnetdiscover-p")
	descs := map[string]bool{}
	for _, n := range f.Nodes {
		descs[n.Description] = true
	}
	for _, d := range []string{"5FB0405-leaf-IB01 ", " 5FB0406-spine-IB02 ", " 5FB0406-spine-IB03 "} {
		if !descs[d] {
			t.Errorf("description %q not kept (have %v)", d, descs)
		}
	}
	if len(f.DuplicateGUIDs) != 1 || len(info.Notes) != 2 {
		t.Errorf("duplicates %+v notes %q", f.DuplicateGUIDs, info.Notes)
	}
}

// FuzzParseIBNetDiscoverPorts: any bytes give a consistent fabric or an
// error, never a panic.
func FuzzParseIBNetDiscoverPorts(f *testing.F) {
	f.Add([]byte("CA    78  1 0x946dae0300630bfe 4x HDR - SW    51 81 0x946dae0300630bf6 ( 'a' - 'b ' )\nSW    24 1 0x946dae0300618c82 4x SDR                                    ' c '\n"))
	f.Add([]byte("DR path slid 0; dlid 0; 0 -> new Channel Adapter {0000000000000010} portnum 1 lid 0-0 \"\"\nDR path slid 0; dlid 0; 0,1 -> new Switch {0000000000000001} portnum 0 lid 0-0 \"\"\nCA 2 1 0x0000000000000011 4x QDR - SW 1 3 0x0000000000000001 ( 'h' - 's' )\nSW 1 3 0x0000000000000001 4x QDR - CA 2 1 0x0000000000000011 ( 's' - 'h' )\nSW 1 4 0x0000000000000001 4x ???                                    's'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, _, err := ParseIBNetDiscoverPorts(bytes.NewReader(data))
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

// sameFacts is semantic without what one of two formats cannot carry:
// port labels, port 0's kind and the initiator.
func sameFacts(f *Fabric) string {
	var keep []string
	for _, l := range strings.Split(semantic(f), "\n") {
		if strings.HasPrefix(l, "switch ") || strings.HasPrefix(l, "initiator ") {
			continue
		}
		if i := strings.Index(l, " label="); i >= 0 {
			l = l[:i]
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// The Quantum-2 ibdiagnet set holds one fabric in several forms: the
// .lst gives the same nodes, ports, LIDs, rates and cables as the
// .ibnetdiscover.
func TestReadFileLstMatchesSibling(t *testing.T) {
	want, _ := readCorpus(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover")
	got, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.lst")
	if info.Format != FormatIBDiagnetLst {
		t.Errorf("format %q", info.Format)
	}
	diffText(t, ".lst against .ibnetdiscover", sameFacts(want), sameFacts(got))
}

// FuzzParseIBDiagnetLst: any bytes give a consistent fabric or an error.
func FuzzParseIBDiagnetLst(f *testing.F) {
	f.Add([]byte("{ CA Ports:01 SystemGUID:5c257303009ab1c0 NodeGUID:5c257303009ab1c0 PortGUID:5c257303009ab1c0 VenID:000002c9 DevID:1021 Rev:00000000 {h mlx5_0} LID:00b5 PN:01 } { SW Ports:41 SystemGUID:fc6a1c030091f9c0 NodeGUID:fc6a1c030091f9c0 PortGUID:fc6a1c030091f9c0 VenID:000002c9 DevID:d2f2 Rev:000000a0 {Quantum-2 Mellanox Technologies} LID:00b6 PN:0c } PHY=4x LOG=ACT SPD=100\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, err := ParseIBDiagnetLst(bytes.NewReader(data))
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

// cabled keeps sameFacts' node lines and the ports that have a peer.
func cabled(f *Fabric) string {
	var keep []string
	for _, l := range strings.Split(sameFacts(f), "\n") {
		if strings.HasPrefix(l, "port ") && strings.HasSuffix(l, "-> -") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// The db_csv of the Quantum-2 set: the same nodes, cables, LIDs and
// rates as its .ibnetdiscover, plus unconnected ports and what PortInfo
// says beyond the text (enabled and supported rates, MTUs).
func TestReadFileDBCSVMatchesSibling(t *testing.T) {
	want, _ := readCorpus(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover")
	got, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	if info.Format != FormatDBCSV {
		t.Errorf("format %q", info.Format)
	}
	diffText(t, ".db_csv against .ibnetdiscover", cabled(want), cabled(got))
	p := got.NodeByGUID(0xb0cf0e0300d33fc0).Ports[1]
	if p.SpeedSupported&mad.SpeedNDR == 0 || p.MTUCap == 0 {
		t.Errorf("PortInfo beyond the text not kept: %+v", p)
	}
}

// FuzzParseDBCSV: any bytes give a consistent fabric or an error.
func FuzzParseDBCSV(f *testing.F) {
	f.Add([]byte("START_NODES\nNodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,PortGUID,DeviceID,PartitionCap,revision,VendorID,LocalPortNum\n\"s\",2,2,1,1,0x1,0x1,0x1,54002,8,160,713,0\n\"h\",1,1,1,1,0x2,0x2,0x2,4129,8,0,713,1\nEND_NODES\nSTART_PORTS\nNodeGuid,PortGuid,PortNum,LID,LMC,LinkWidthActv,LinkWidthEn,LinkWidthSup,LinkSpeedActv,LinkSpeedEn,LinkSpeedSup,PortState,PortPhyState,NMTU,MTUCap,CapMsk,CapMsk2\n0x1,0x1,0,1,0,2,3,3,1,1,1,4,5,5,5,0,0\n0x1,0x1,1,0,0,2,3,3,2052,3845,3845,4,5,5,5,0,0\n0x2,0x2,1,2,0,2,3,3,2052,3845,3845,4,5,5,5,0,0\nEND_PORTS\nSTART_LINKS\nNodeGuid1,PortNum1,NodeGuid2,PortNum2\n0x1,1,0x2,1\nEND_LINKS\n"))
	for _, name := range []string{"pm.db_csv", "pmdelta.db_csv", "nodesinfo.db_csv", "smpkey.db_csv"} {
		if pm, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(pm)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, _, err := ParseDBCSV(data)
		if err != nil {
			return
		}
		for n, fw := range fab.Firmware {
			if n == nil || fab.NodeByGUID(n.GUID) != n || fw == (Firmware{PSID: fw.PSID}) {
				t.Fatalf("firmware %v of a node not in the fabric, or version 0.0.0: %+v", fw, n)
			}
		}
		for p := range fab.CounterIncreases {
			if p == nil || p.Node == nil || int(p.Num) >= len(p.Node.Ports) || p.Node.Ports[p.Num] != p {
				t.Fatalf("increases of a port not in the fabric: %+v", p)
			}
			for name, v := range fab.CounterIncreases[p] {
				if v >= implausible {
					t.Fatalf("%s increase %d read as a count", name, v)
				}
			}
		}
		for p := range fab.Counters {
			if p == nil || p.Node == nil || int(p.Num) >= len(p.Node.Ports) || p.Node.Ports[p.Num] != p || fab.NodeByGUID(p.Node.GUID) == nil {
				t.Fatalf("counters of a port not in the fabric: %+v", p)
			}
			for name, v := range fab.Counters[p] {
				if v >= implausible {
					t.Fatalf("%s = %d read as a count", name, v)
				}
			}
		}
		for _, n := range fab.Nodes {
			for i, p := range n.Ports {
				if p != nil && (int(p.Num) != i || p.Node != n || p.Remote != nil && p.Remote.Remote != p) {
					t.Fatalf("%#x[%d]: inconsistent port", n.GUID, i)
				}
				if p != nil && (p.VLCap > 15 || p.OperVLs > 15 || p.MKeyProtect > 3 || p.PKeyEnforce > PKeyEnforceIn|PKeyEnforceOut) {
					t.Fatalf("%#x[%d]: PortInfo field out of its bits: %+v", n.GUID, i, p)
				}
			}
		}
		if (fab.SMs != nil) != fab.Recorded.SMInfo || (fab.PKeys != nil) != fab.Recorded.PKeys {
			t.Fatalf("SMs %v / P_Keys %v read, recorded %+v", fab.SMs != nil, fab.PKeys != nil, fab.Recorded)
		}
		seen := map[*Port]bool{}
		for _, sm := range fab.SMs {
			p := sm.Port
			if p == nil || fab.NodeByGUID(p.Node.GUID) != p.Node || p.Node.Ports[p.Num] != p || seen[p] || sm.State > mad.SMMaster || sm.Priority > 15 {
				t.Fatalf("SM %+v: not a port of the fabric, listed twice, or out of range", sm)
			}
			seen[p] = true
		}
		entries := 0
		for p, keys := range fab.PKeys {
			if p == nil || fab.NodeByGUID(p.Node.GUID) != p.Node || p.Node.Ports[p.Num] != p || len(keys) == 0 {
				t.Fatalf("P_Keys %v of a port not in the fabric, or none", keys)
			}
			entries += len(keys)
		}
		if entries > maxPKeyEntries {
			t.Fatalf("%d P_Key entries kept, more than the bound %d", entries, maxPKeyEntries)
		}
	})
}

// A db_csv's SM_INFO, PKEY and the PORTS columns the SM sets are read as
// recorded (testdata/smpkey.db_csv): the SMs behind their ports, each
// port's MSMLID, VLCap/OpVLs, M_Key bits and enforcement, the P_Key
// entries at their indexes with the membership bit put back.
func TestParseDBCSVRecordedSMPKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "smpkey.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := ParseDBCSV(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Recorded != (Recorded{SMInfo: true, VLs: true, MKey: true, PKeys: true}) {
		t.Errorf("recorded %+v, want all four", f.Recorded)
	}
	sw, h, h2 := f.NodeByGUID(1), f.NodeByGUID(2), f.NodeByGUID(3)
	want := []RecordedSM{
		{Port: sw.Ports[0], GUID: 1, State: mad.SMMaster, Priority: 12, ActCount: 4202301},
		{Port: h2.Ports[1], GUID: 3, State: mad.SMStandby, Priority: 14, ActCount: 77},
	}
	if fmt.Sprint(f.SMs) != fmt.Sprint(want) {
		t.Errorf("SMs %+v, want %+v", f.SMs, want)
	}
	for _, c := range []struct {
		p                       *Port
		msm                     uint16
		vlCap, operVLs, protect uint8
		lease                   uint16
		enforce                 uint8
	}{
		{sw.Ports[0], 1, 1, 1, 1, 15, 0},
		{sw.Ports[1], 0, 4, 3, 0, 0, PKeyEnforceIn | PKeyEnforceOut},
		{sw.Ports[2], 0, 4, 3, 0, 0, PKeyEnforceIn},
		{h.Ports[1], 1, 3, 3, 1, 15, 0},
		{h2.Ports[1], 1, 3, 2, 1, 15, 0},
	} {
		p := c.p
		if p.MasterSMLID != c.msm || p.VLCap != c.vlCap || p.OperVLs != c.operVLs || p.MKeyProtect != c.protect || p.MKeyLease != c.lease || p.PKeyEnforce != c.enforce {
			t.Errorf("%s/%d: MSMLID %d VLs %d/%d M_Key %d/%d enforce %d; want %+v", p.Node.Description, p.Num, p.MasterSMLID, p.VLCap, p.OperVLs, p.MKeyProtect, p.MKeyLease, p.PKeyEnforce, c)
		}
	}
	for p, want := range map[*Port][]mad.PKey{h.Ports[1]: {0xffff, 0, 0x0001}, h2.Ports[1]: {0x7fff}, sw.Ports[1]: {0xffff}} {
		if fmt.Sprint(f.PKeys[p]) != fmt.Sprint(want) {
			t.Errorf("%s/%d P_Keys %v, want %v", p.Node.Description, p.Num, f.PKeys[p], want)
		}
	}
	if len(f.PKeys) != 3 {
		t.Errorf("%d ports with P_Keys, want the 3 the file lists", len(f.PKeys))
	}
	// A table the file does not have is not recorded: a db_csv without
	// SM_INFO records no SM (not "none ran").
	noSM := bytes.Replace(data, []byte("START_SM_INFO"), []byte("START_SM_INFO_X"), 1)
	noSM = bytes.Replace(noSM, []byte("END_SM_INFO"), []byte("END_SM_INFO_X"), 1)
	if f, _, err := ParseDBCSV(noSM); err != nil || f.Recorded.SMInfo || f.SMs != nil || f.NodeByGUID(2).Ports[1].MasterSMLID != 0 {
		t.Errorf("without SM_INFO: %v, recorded %+v", err, f.Recorded)
	}
	for _, bad := range []struct{ from, to, says string }{
		{"0x3,0x3,1,0x3,0x0000000000000000,77,2,14", "0x3,0x3,1,0x3,0x0000000000000000,77,4,14", "line 31"},
		{"0x1,0x1,1,0,0,0x7fff,1", "0x1,0x1,1,0,32,0x7fff,1", "line 39"},
		{"0x3,0x3,1,0,0,0x7fff,0", "0x3,0x3,1,0,0,0x7fff,0\n0x3,0x3,1,0,0,0x7fff,0", "listed twice"},
		{"0x1,0x1,0,1,1,0,2,3,3,1,1,1,4,5,5,5,0,0,1,1,1,15,0,0", "0x1,0x1,0,1,1,0,2,3,3,1,1,1,4,5,5,5,0,0,1,1,4,15,0,0", "MKeyProtBits 4"},
	} {
		_, _, err := ParseDBCSV(bytes.Replace(data, []byte(bad.from), []byte(bad.to), 1))
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%q: error %v, want one saying %q", bad.to, err, bad.says)
		}
	}
}

// Every public dump in ../shared/external-fabrics/ (docs/schema-fabric.md
// lists them) loads as its format, or is refused saying what it is.
func TestReadFileCorpus(t *testing.T) {
	for _, tc := range []struct {
		name          string
		format        Format
		nodes, links  int
		noise, notes  int
		refusedSaying string
	}{
		{"avakas-qlogic-qdr.ibnetdiscover-v-p", FormatIBNetDiscoverPorts, 306, 569, 0, 0, ""},
		{"avakas-qlogic-qdr.ibroute-lid1", "", 0, 0, 0, 0, "forwarding-table dump"},
		{"dgx-ndr-2025.ibnetdiscover", FormatIBNetDiscover, 622, 1114, 0, 0, ""},
		{"ibsim-net.2sw2path4hca2port", FormatNetFile, 4, 6, 0, 0, ""},
		{"mt43132-sdr-2009.ibnetdiscover", FormatIBNetDiscover, 3, 2, 0, 0, ""},
		{"plafrim-voltaire-qdr.ibnetdiscover-p", FormatIBNetDiscoverPorts, 134, 201, 0, 0, ""},
		{"plafrim2-is5030.ibnetdiscover-p", FormatIBNetDiscoverPorts, 24, 23, 0, 0, ""},
		{"plafrim2-qlogic-ts.ibnetdiscover-p", FormatIBNetDiscoverPorts, 103, 155, 0, 0, ""},
		{"qnib-netlist.clos5", FormatNetFile, 23, 22, 0, 0, ""},
		{"quantum2-ndr-ibdiagnet2.db_csv", FormatDBCSV, 272, 271, 0, 2, ""},
		{"quantum2-ndr-ibdiagnet2.ibnetdiscover", FormatIBDiagnetTopo, 272, 271, 0, 0, ""},
		{"quantum2-ndr-ibdiagnet2.lst", FormatIBDiagnetLst, 272, 271, 0, 0, ""},
		{"quantum2-ndr-ibdiagnet2.net_dump", "", 0, 0, 0, 0, "ibdiagnet2.net_dump"},
		{"sun-dcs36-qdr.ibnetdiscover", FormatIBNetDiscover, 2, 1, 0, 0, ""},
		{"switchib-sx6012-mixed-2016.ibnetdiscover", FormatIBNetDiscover, 8, 10, 1, 0, ""},
		{"sx6036-fdr10-2014.ibnetdiscover", FormatIBNetDiscover, 152, 192, 0, 0, ""},
		{"treydock-hdr.ibnetdiscover-p", FormatIBNetDiscoverPorts, 8, 3, 0, 2, ""},
		{"voltaire-sdr-2007.ibnetdiscover", FormatIBNetDiscover, 6, 7, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, info, err := ReadFile(context.Background(), corpusFile(t, tc.name))
			if tc.refusedSaying != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refusedSaying) {
					t.Errorf("want a refusal saying %q, got %v", tc.refusedSaying, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != tc.format || len(f.Nodes) != tc.nodes || len(f.Links()) != tc.links || info.Noise != tc.noise || len(info.Notes) != tc.notes {
				t.Errorf("%s, %d nodes, %d links, %d noise lines, notes %q; want %s, %d, %d, %d, %d notes",
					info.Format, len(f.Nodes), len(f.Links()), info.Noise, info.Notes, tc.format, tc.nodes, tc.links, tc.noise, tc.notes)
			}
		})
	}
}

// --sim DIR: an ibdiagnet output directory gives its db_csv.
func TestReadFileIBDiagnetDir(t *testing.T) {
	src := corpusFile(t, "quantum2-ndr-ibdiagnet2.lst")
	dir := t.TempDir()
	if err := os.Symlink(src, filepath.Join(dir, "ibdiagnet2.lst")); err != nil {
		t.Skip(err)
	}
	f, info, err := ReadFile(context.Background(), dir)
	if err != nil || info.Format != FormatIBDiagnetLst || len(f.Nodes) != 272 || len(info.Notes) != 1 {
		t.Errorf("%v %+v", err, info)
	}
	if _, _, err := ReadFile(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "ibdiagnet output directory") {
		t.Errorf("empty directory: %v", err)
	}
}

// The Quantum-2 db_csv carries PM_INFO: every port's counters as
// ibdiagnet read them. They are kept (64-bit values from the extended
// counters where the file has them) and FileInfo says so.
func TestReadFileDBCSVCounters(t *testing.T) {
	f, info := readCorpus(t, "quantum2-ndr-ibdiagnet2.db_csv")
	if !info.Counters {
		t.Errorf("FileInfo.Counters false; notes %q", info.Notes)
	}
	sw := f.NodeByGUID(0xb0cf0e0300d33fc0)
	for _, c := range []struct {
		port  int
		name  string
		value uint64
	}{
		{1, "PortXmitData", 299195507523}, // PortXmitData 4294967295 (saturated), PortXmitDataExtended 299195507523
		{1, "PortXmitWait", 9463628588},
		{2, "PortRcvSwitchRelayErrors", 158},
		{2, "PortXmitDiscards", 0},
		{2, "PortRcvPkts", 1321729},
		{2, "SymbolErrorCounter", 0},
	} {
		got, ok := f.Counters[sw.Ports[c.port]][c.name]
		if !ok || got != c.value {
			t.Errorf("port %d %s = %d (present %v), want %d", c.port, c.name, got, ok, c.value)
		}
	}
	n := 0
	for range f.Counters {
		n++
	}
	if n < 500 {
		t.Errorf("counters of %d ports kept, want every PM_INFO row's (546)", n)
	}
}

// A small db_csv written for this test (testdata/pm.db_csv): PM_INFO of
// an older ibdiagnet without the extended columns, an N/A value (not
// read by ibdiagnet: left out, not zero), and a row for a port that
// START_PORTS does not list (an error naming the line).
func TestParseDBCSVCountersSynthetic(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "pm.db_csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, info, err := Decode(data, "pm.db_csv")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Counters {
		t.Error("FileInfo.Counters false")
	}
	h := f.NodeByGUID(0x2).Ports[1]
	if got := f.Counters[h]; got["SymbolErrorCounter"] != 7 || got["PortXmitData"] != 1000 {
		t.Errorf("host counters %v", got)
	}
	if _, ok := f.Counters[h]["PortXmitWait"]; ok {
		t.Error("an N/A counter was kept as a value")
	}
	bad := bytes.Replace(data, []byte("0x2,0x2,1,7,"), []byte("0x2,0x2,9,7,"), 1)
	if _, _, err := Decode(bad, "pm.db_csv"); err == nil || !strings.Contains(err.Error(), "line ") {
		t.Errorf("a PM_INFO row for a port not in START_PORTS: %v", err)
	}
}

// `ibnetdiscover -s` (--show) prints its DR path progress before the
// topology (fixtures/ibnetdiscover/hdr-s.txt, captured by generate.sh):
// read as ibnetdiscover, it gives exactly the default form's fabric,
// initiator included.
func TestReadFileShowForm(t *testing.T) {
	read := func(name string) (*Fabric, *FileInfo) {
		t.Helper()
		f, info, err := ReadFile(context.Background(), filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return f, info
	}
	want, _ := read("hdr.txt")
	got, info := read("hdr-s.txt")
	if info.Format != FormatIBNetDiscover {
		t.Errorf("format %q", info.Format)
	}
	diffText(t, "-s against default", sameFacts(want), sameFacts(got))
}

// The routes a tool's error lines name are kept (once each, with the
// attribute and the line), so a fabric read from the file is not taken
// as complete; a message naming no route adds none.
func TestToolErrorLinesUnread(t *testing.T) {
	text := "src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0) bad status 110; Connection timed out\n" +
		"ibwarn: [77] _do_madrpc: recv failed: Connection timed out\n" +
		"ibwarn: [77] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,4 Attr 0x15:2)\n" +
		"ibwarn: [77] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0)\n" +
		"vendid=0x2c9\nswitchguid=0x1(1)\nSwitch 2 \"S-0000000000000001\" # \"s\" base port 0 lid 1 lmc 0\n"
	_, info, err := Decode([]byte(text), "t")
	if err != nil {
		t.Fatal(err)
	}
	if info.Noise != 4 || len(info.Unread) != 2 {
		t.Fatalf("noise %d, unread %+v; want 4 lines, 2 routes", info.Noise, info.Unread)
	}
	if u := info.Unread[0]; u.Path.String() != "0,1,1,31" || u.What != "NodeInfo" || !strings.Contains(u.Reason, "per the file's own error line (line 1:") {
		t.Errorf("first: %+v", u)
	}
	if u := info.Unread[1]; u.Path.String() != "0,1,4" || u.What != "PortInfo" || !strings.Contains(u.Reason, "(line 3:") {
		t.Errorf("second: %+v", u)
	}
}

// An ibsim net file gives rates by width=/speed=/extspeed=, w=/s=/e= or
// ibnetdiscover's connection data; without any, FileInfo.NoRates says the
// links run the simulator's default.
func TestNetFileNoRates(t *testing.T) {
	const body = "Switch 2 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]%s\n"
	for _, c := range []struct {
		head, port string
		none       bool
	}{
		{"", "", true},
		{"width=2\n", "", false},
		{"", " w=2", false},
		{"", " e=4", false},
	} {
		text := c.head + fmt.Sprintf(body, c.port)
		_, info, err := Decode([]byte(text), "net")
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if info.Format != FormatNetFile || info.NoRates != c.none {
			t.Errorf("%q: format %q, NoRates %v, want %v", text, info.Format, info.NoRates, c.none)
		}
	}
}

// FuzzIsNoise: isNoise's filter before the regexp never changes its
// answer.
func FuzzIsNoise(f *testing.F) {
	for _, s := range []string{
		"ibwarn: [123] _do_madrpc: recv failed",
		"ibnetdiscover: iberror: failed: discover failed",
		"src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,1 Attr 0x11:0) bad status 110",
		"  x.c:12; y",
		`Switch	36 "S-b83fd20300a10000"		# "MF0;leaf01:MQM9700/U1" enhanced port 0 lid 2 lmc 0`,
		"ibdebugging", "libibwarn: x", "a.c:1;\t", "ibib",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if got, want := isNoise(line), noiseRE.Match(line); got != want {
			t.Fatalf("%q: isNoise %v, regexp %v", line, got, want)
		}
	})
}
