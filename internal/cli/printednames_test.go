package cli

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestRoutesNamesFeedBack: trial C8, on the Quantum-2 capture whose 8
// unmanaged switches are all "Quantum-2 Mellanox Technologies". check
// names each "Quantum-2 Mellanox Technologies (0xGUID)"; routes printed
// the bare description in its headers, DESTINATION and VIA columns (8
// switches looking like one) and --switch refused the printed form ("no
// node or port in the fabric has name ..."). Every switch name routes
// prints now selects that switch alone, and the bare shared description
// is a one-line error naming the candidates as printed.
func TestRoutesNamesFeedBack(t *testing.T) {
	q := corpusPath(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover")
	code, out, stderr := run("routes", "--sim="+q, "--no-color")
	if code != 0 {
		t.Fatalf("routes: exit %d: %s", code, stderr)
	}
	head := regexp.MustCompile(`(?m)^(\S.*?)  GUID (0x[0-9a-f]{16})  LID \d+  path `)
	headers := map[string]string{} // name -> its header line
	for _, m := range head.FindAllStringSubmatch(out, -1) {
		if _, dup := headers[m[1]]; dup {
			t.Errorf("two tables headed %q", m[1])
		}
		headers[m[1]] = m[0]
	}
	if len(headers) != 9 {
		t.Fatalf("%d distinct switch names in the headers, want 9 (1 MQM9700, 8 Quantum-2)", len(headers))
	}
	// The names in the DESTINATION ("NAME (switch)") and VIA ("NAME[n]")
	// columns are the headers' names.
	dest := regexp.MustCompile(`(?m)^ \d+\s+\d+\s+(.+?) \(switch\)\s+(.+)\[\d+\]$`)
	seen := 0
	for _, m := range dest.FindAllStringSubmatch(out, -1) {
		for _, name := range m[1:] {
			if _, ok := headers[name]; !ok {
				t.Fatalf("routes printed switch %q, which names no table:\n%s", name, m[0])
			}
		}
		seen++
	}
	if seen == 0 {
		t.Fatal("no switch destination routed through a switch in the output")
	}
	for name, h := range headers {
		code, out, stderr := run("routes", "--sim="+q, "--no-color", "--switch", name)
		if code != 0 || strings.Count(out, "  GUID 0x") != 1 || !strings.Contains(out, h) {
			t.Errorf("routes --switch %q: exit %d, %d tables, %s", name, code, strings.Count(out, "  GUID 0x"), stderr)
		}
	}
	const shared = "Quantum-2 Mellanox Technologies"
	code, _, stderr = run("routes", "--sim="+q, "--switch", shared)
	if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("routes --switch %q: exit %d, want a one-line error: %s", shared, code, stderr)
	}
	for name := range headers {
		if strings.HasPrefix(name, shared+" (0x") && !strings.Contains(stderr, `"`+name+`"`) {
			t.Errorf("the ambiguity does not name %q: %s", name, stderr)
		}
	}
	if !strings.Contains(stderr, "8 switches") {
		t.Errorf("the ambiguity does not say 8 switches: %s", stderr)
	}
}

// TestTraceSharedSwitchName: trial C8 on a small fat tree whose leaf02
// is described "leaf03" as leaf03 is. trace's endings named the switch by
// its bare description ("Dead end at leaf03"), one of two; they name it
// as the findings do, and that name, fed to trace and to a --faults
// file, is the one switch.
func TestTraceSharedSwitchName(t *testing.T) {
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 3, Spines: 2, HostsPerLeaf: 4, LinksPerPair: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	leaf3 := f.NodesByName("leaf03")[0]
	f.NodesByName("leaf02")[0].Description = "leaf03"
	f.Reindex()
	name := f.NameOf(leaf3)
	if !strings.HasPrefix(name, "leaf03 (0x") {
		t.Fatalf("leaf03 named %q", name)
	}
	var b bytes.Buffer
	if err := fabric.WriteIBNetDiscover(&b, f); err != nil {
		t.Fatal(err)
	}
	topo := writeFile(t, "fabric.txt", b.String())
	dst := f.NodesByName("gpu012 mlx5_0")[0].Ports[1].LID
	faults := writeFile(t, "faults", "down "+name+"/4\n")
	code, out, stderr := run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", fmt.Sprint(dst))
	if code != ExitFindings || !strings.Contains(out, "Dead end at "+name+": LID") {
		t.Fatalf("exit %d, want 'Dead end at %s':\n%s%s", code, name, out, stderr)
	}
	code, out, stderr = run("trace", "--sim="+topo, "--no-color", "gpu001", name)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("To switch leaf03 (GUID %#016x", leaf3.GUID)) {
		t.Fatalf("trace gpu001 %q: exit %d:\n%s%s", name, code, out, stderr)
	}
}

// TestHTMLNamesSharedApart: trial C8 on the Quantum-2 capture. The
// page's search names and cable cards gave the 8 switches described
// "Quantum-2 Mellanox Technologies" that bare description: a name the
// findings print ("... (0xGUID)") found nothing in the search box, and a
// card could not say which switch a cable is on. They are named as the
// findings name them.
func TestHTMLNamesSharedApart(t *testing.T) {
	q := corpusPath(t, "quantum2-ndr-ibdiagnet2.ibnetdiscover")
	page := t.TempDir() + "/page.html"
	if code, _, stderr := run("check", "--sim="+q, "--html", page); code != ExitFindings && code != 0 {
		t.Fatalf("check --html: exit %d: %s", code, stderr)
	}
	b := readFile(t, page)
	named := regexp.MustCompile(`\["Quantum-2 Mellanox Technologies \(0x[0-9a-f]{16}\)",\d+\]`).FindAllString(b, -1)
	if len(named) != 8 {
		t.Errorf("%d search names of the 8 Quantum-2 switches with their GUID, want 8", len(named))
	}
	for _, bare := range []string{`["Quantum-2 Mellanox Technologies",`, `"Quantum-2 Mellanox Technologies/`} {
		if strings.Contains(b, bare) {
			t.Errorf("the page names a shared description bare: %s", bare)
		}
	}
}
