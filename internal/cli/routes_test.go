package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/report"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// simTopology writes a small fat tree (3 leaves, 2 spines, 4 hosts per
// leaf, two cables per leaf-spine pair) as ibnetdiscover text and returns
// its path and the fabric the simulator builds from it.
func simTopology(t *testing.T) (string, *fabric.Fabric) {
	t.Helper()
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fabric.WriteIBNetDiscover(&b, f); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fabric.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	model, _, err := fabric.Decode(b.Bytes(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Prepare(model, nil); err != nil {
		t.Fatal(err)
	}
	return path, model
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs ibdoctor with args and returns its exit code and outputs.
func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRoutesDumpFTS reads the simulated fabric's tables through the
// command and checks every switch's dump against the tables the simulator
// was built with, entry for entry.
func TestRoutesDumpFTS(t *testing.T) {
	topo, model := simTopology(t)
	code, out, stderr := run("routes", "--sim="+topo, "--format", "dump_fts")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	tables, err := fabric.ParseDumpFTS(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 5 {
		t.Fatalf("%d switches dumped:\n%s", len(tables), out)
	}
	for _, d := range tables {
		sw := model.NodeByGUID(d.GUID)
		if sw == nil || sw.Description != d.Description || d.Path == nil {
			t.Fatalf("dumped switch %#x %q (path %v) is not in the model", d.GUID, d.Description, d.Path)
		}
		got := d.LFT()
		for lid, want := range sw.Switch.LFT.Bytes() {
			if lid == 0 {
				continue
			}
			g := uint8(fabric.NoRoute)
			if lid < len(got) {
				g = got[lid]
			}
			if g != want {
				t.Errorf("%s LID %d: dumped %d, simulator has %d", sw.Description, lid, g, want)
			}
		}
		for _, e := range d.Entries {
			if p := model.PortByLID(e.LID); p == nil || e.PortGUID != p.GUID {
				t.Errorf("%s LID %d names port GUID %#x", sw.Description, e.LID, e.PortGUID)
			}
		}
	}
}

func TestRoutesTableAndSwitchFilter(t *testing.T) {
	topo, model := simTopology(t)
	leaf2 := model.NodesByName("leaf02")[0]
	blackholed := model.NodesByName("gpu012 mlx5_0")[0].Ports[1].LID
	faults := writeFile(t, "faults", fmt.Sprintf("blackhole leaf02 dlid=%d\n", blackholed))
	for _, sel := range []string{"leaf02", fmt.Sprintf("%#x", leaf2.GUID), fmt.Sprint(leaf2.Ports[0].LID)} {
		code, out, stderr := run("routes", "--sim="+topo, "--faults", faults, "--switch", sel, "--no-color")
		if code != 0 {
			t.Fatalf("--switch %s: exit %d: %s", sel, code, stderr)
		}
		// The topology file has no tables: the first line says they are computed.
		note, out, _ := strings.Cut(out, "\n\n")
		if !strings.HasPrefix(note, "Routes: computed") {
			t.Errorf("--switch %s: first line %q", sel, note)
		}
		if strings.Count(out, "LinearFDBTop") != 1 || !strings.HasPrefix(out, "leaf02  GUID") {
			t.Fatalf("--switch %s printed:\n%s", sel, out)
		}
		// The black hole shows as NO ROUTE on its destination's row; the
		// other rows name the destination and where the port leads.
		var hole, toSpine bool
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) >= 4 && f[0] == fmt.Sprint(blackholed) {
				hole = f[1] == "255" && strings.Contains(line, "gpu012 mlx5_0 port 1") && strings.HasSuffix(strings.TrimSpace(line), "NO ROUTE")
			}
			if strings.Contains(line, "spine0") && strings.Contains(line, "[3]") {
				toSpine = true
			}
		}
		if !hole || !toSpine || !strings.Contains(out, "1 without a route") {
			t.Fatalf("table:\n%s", out)
		}
	}
	code, _, stderr := run("routes", "--sim="+topo, "--switch", "gpu001")
	if code != ExitUndecided || !strings.Contains(stderr, "not a switch") {
		t.Fatalf("--switch gpu001: exit %d: %s", code, stderr)
	}
	code, _, stderr = run("routes", "--sim="+topo, "--switch", "spine0")
	if code != ExitUndecided || !strings.Contains(stderr, "spine01") || !strings.Contains(stderr, "spine02") {
		t.Fatalf("--switch spine0: exit %d: %s", code, stderr)
	}
	code, _, stderr = run("routes", "--sim="+topo, "--format", "xml")
	if code != ExitUndecided || !strings.Contains(stderr, "--format") {
		t.Fatalf("--format xml: exit %d: %s", code, stderr)
	}
}

// TestRoutesPartial: a switch whose agent does not answer is listed on
// stderr and the exit status is 3, and every other table is printed.
func TestRoutesPartial(t *testing.T) {
	topo, model := simTopology(t)
	faults := writeFile(t, "faults", "dead spine02\n")
	code, out, stderr := run("routes", "--sim="+topo, "--faults", faults, "--format", "dump_fts", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitPartial {
		t.Fatalf("exit %d, want %d: %s", code, ExitPartial, stderr)
	}
	tables, err := fabric.ParseDumpFTS(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 4 {
		t.Fatalf("%d tables printed, want the 4 live switches:\n%s", len(tables), out)
	}
	for _, d := range tables {
		if d.Description == "spine02" {
			t.Fatal("the dead switch's table was printed")
		}
	}
	sp := model.NodesByName("spine02")[0]
	if !strings.Contains(stderr, "Could not read") || !strings.Contains(stderr, "NodeInfo at ") {
		t.Fatalf("stderr does not list the dead switch (%#x):\n%s", sp.GUID, stderr)
	}
	for _, n := range model.Nodes {
		if n.Type == mad.NodeSwitch && n != sp && !strings.Contains(out, n.Description) {
			t.Errorf("%s missing", n.Description)
		}
	}
}

// TestRoutesIBSimLoadsIntoOpenSM: on ibsim after OpenSM routed it,
// `routes --format dump_fts` (through the ibsim transport) is loaded by
// OpenSM's file routing engine with one entry removed, and the real
// dump_fts then shows exactly the edited tables; `trace` then reports
// the pair unroutable at that switch and exits 1.
func TestRoutesIBSimLoadsIntoOpenSM(t *testing.T) {
	ibsimtest.Require(t, "opensm", "dump_fts")
	const host = "h0001"
	s := ibsimtest.Start(t, ibsimtest.FatTree(4, 4, 2))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true})
	src := []string{"--ibsim=" + s.SockName, "--ibsim-host", host}
	code, out, stderr := run(append([]string{"routes", "--format", "dump_fts"}, src...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	real := s.MustRun(host, "dump_fts")
	ours, err := fabric.ParseDumpFTS(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := fabric.ParseDumpFTS(strings.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	if tablesText(ours) != tablesText(theirs) {
		t.Fatalf("routes --format dump_fts differs from dump_fts:\n%s\nvs\n%s", out, real)
	}
	// Remove h0016's entry from the first spine's table.
	var spine fabric.DumpedLFT
	for _, d := range ours {
		if d.Description == "spine001" {
			spine = d
		}
	}
	var dst uint16
	for _, e := range spine.Entries {
		if strings.Contains(e.Dest, "h0016 HCA-1") {
			dst = e.LID
		}
	}
	if dst == 0 {
		t.Fatalf("no entry for h0016 on spine001:\n%s", out)
	}
	var edited strings.Builder
	inSpine := false
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, "Unicast lids") {
			inSpine = strings.Contains(line, "(spine001)")
		}
		if inSpine && strings.HasPrefix(line, fmt.Sprintf("0x%04x ", dst)) {
			continue
		}
		edited.WriteString(line)
	}
	file := writeFile(t, "edited.dump", edited.String())
	osm := s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, LFTFile: file, Once: true})
	if log, _ := os.ReadFile(osm.LogFile); strings.Contains(string(log), "cannot build fwd tables") {
		t.Fatalf("OpenSM did not load our dump:\n%s", log)
	}
	after, err := fabric.ParseDumpFTS(strings.NewReader(s.MustRun(host, "dump_fts")))
	if err != nil {
		t.Fatal(err)
	}
	want, err := fabric.ParseDumpFTS(strings.NewReader(edited.String()))
	if err != nil {
		t.Fatal(err)
	}
	if tablesText(after) != tablesText(want) {
		t.Fatalf("after loading, dump_fts shows\n%s\nwant\n%s", tablesText(after), tablesText(want))
	}
	// Every route from h0001 to h0016 that crosses spine001 now ends there.
	code, out, stderr = run(append([]string{"trace", "--no-color", "h0001", "h0016"}, src...)...)
	switch {
	case code == ExitFindings && strings.Contains(out, fmt.Sprintf("No route (0xFF) to LID %d at spine001", dst)):
	case code == 0 && !strings.Contains(out, "spine001"):
		// OpenSM's file engine kept our tables, which send h0001's
		// traffic for h0016 by the other spine.
	default:
		t.Fatalf("trace: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = run(append([]string{"trace", "--no-color", "spine001", fmt.Sprint(dst)}, src...)...)
	if code != ExitFindings || !strings.Contains(out, fmt.Sprintf("No route (0xFF) to LID %d at spine001", dst)) {
		t.Fatalf("trace from spine001: exit %d\n%s%s", code, out, stderr)
	}
}

// tablesText renders parsed tables by switch GUID, without the directed
// routes in their headers (each tool picks its own).
func tablesText(ds []fabric.DumpedLFT) string {
	ds = slices.Clone(ds)
	slices.SortFunc(ds, func(a, b fabric.DumpedLFT) int { return cmp.Compare(a.GUID, b.GUID) })
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%#016x %q\n", d.GUID, d.Description)
		for _, e := range d.Entries {
			fmt.Fprintf(&b, "  %d %d %#x %s\n", e.LID, e.Port, e.PortGUID, e.Dest)
		}
	}
	return b.String()
}

// A topology file has no forwarding tables: the simulator computes
// min-hop routes, and check, routes and trace say so. With --lfts the
// file's tables are used and nothing says "computed".
func TestComputedRoutesLabelled(t *testing.T) {
	topo, _ := simTopology(t)
	code, out, stderr := run("routes", "--sim="+topo)
	if code != 0 || !strings.HasPrefix(out, "Routes: computed by ibdoctor (min-hop)") {
		t.Fatalf("routes: exit %d, output does not start with the computed-routes line:\n%.300s\n%s", code, out, stderr)
	}
	code, dump, stderr := run("routes", "--sim="+topo, "--format", "dump_fts")
	if code != 0 || !strings.Contains(stderr, "computed by ibdoctor") || strings.Contains(dump, "computed") {
		t.Fatalf("routes --format dump_fts: exit %d, the note belongs on stderr only:\nstderr: %s", code, stderr)
	}
	if _, out, _ := run("trace", "--sim="+topo, "1", "2"); !strings.HasPrefix(out, "Routes: computed by ibdoctor") {
		t.Errorf("trace does not say the routes are computed:\n%.300s", out)
	}
	if _, out, _ := run("check", "--sim="+topo, "--json"); !strings.Contains(out, `"routes_computed": true`) {
		t.Errorf("check --json has no routes_computed: true")
	}
	if _, out, _ := run("check", "--sim="+topo); !strings.Contains(out, "Routes:") {
		t.Errorf("check's header has no Routes line:\n%.600s", out)
	}

	lfts := filepath.Join(t.TempDir(), "lfts.dump")
	if err := os.WriteFile(lfts, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	code, again, stderr := run("routes", "--sim="+topo, "--lfts="+lfts, "--format", "dump_fts")
	if code != 0 || strings.Contains(stderr, "computed") || again != dump {
		t.Errorf("--lfts: exit %d, stderr %q; tables equal: %v", code, stderr, again == dump)
	}
	if _, out, _ := run("check", "--sim="+topo, "--lfts="+lfts, "--json"); strings.Contains(out, "routes_computed") {
		t.Errorf("check --lfts still says routes_computed")
	}
	if code, _, stderr := run("routes", "--sim", "--lfts="+lfts); code != 2 || !strings.Contains(stderr, "--lfts") {
		t.Errorf("--lfts with the sample: exit %d %q", code, stderr)
	}
}

// deadTimeout is the --timeout of tests in which some node is meant not to
// answer. The simulator says which reads went unanswered
// (transport.TimeoutNotifier), so a live node is not "unreached" however
// late a loaded machine reads its answer; the timeout sets how long a dead
// node's read takes (and the "in 20ms" of its line). Short, as every
// unanswered try waits it in full: at 250ms those waits were most of the
// slowest tests' time (TestCheckUnderMADLoss retries ~900 lost MADs).
const deadTimeout = "20ms"

// TestRoutesPipedFits80: piped output is never cut, so a line wider than
// the reader's terminal wraps wherever the terminal breaks it (in the
// middle of a word). routes' lines are short by design: each switch's
// title fits 80 columns on the sample even piped ("leaf08  GUID ...  path
// 0,1,33,57  LinearFDBTop 268: 260 LIDs routed, 8 without a route" was
// one line of 109 columns, wrapped mid-word in an 80-column pane).
func TestRoutesPipedFits80(t *testing.T) {
	faults := writeFile(t, "holes.faults", "lft leaf08 dlid=13-20 port=none\n")
	for _, extra := range [][]string{nil, {"--faults", faults}} {
		code, out, stderr := run(append([]string{"routes", "--sim", "--no-color"}, extra...)...)
		if code != ExitHealthy {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := strings.Count(out, "LinearFDBTop"); n != 12 {
			t.Fatalf("%d switch titles, want 12:\n%s", n, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if w := report.VisibleWidth(l); w > 80 {
				t.Errorf("%d columns: %s", w, l)
			}
		}
		if extra != nil && !strings.Contains(out, "8 without a route") {
			t.Errorf("the holes are not counted:\n%s", out)
		}
	}
}
