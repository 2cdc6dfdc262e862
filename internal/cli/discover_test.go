package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestDiscoverTable: every node of the simulated fabric is listed with
// its type, GUID, LID, port count and description, then the summary.
func TestDiscoverTable(t *testing.T) {
	topo, model := simTopology(t)
	code, out, stderr := run("discover", "--sim="+topo, "--no-color")
	if code != ExitHealthy {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	for _, n := range model.Nodes {
		guid := fmt.Sprintf("%#016x", n.GUID)
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, guid) })
		if i < 0 {
			t.Errorf("%s %s not listed", guid, n.Description)
			continue
		}
		row := strings.TrimSpace(lines[i])
		f := strings.Fields(row)
		want := []string{n.Type.String(), guid, nodeLIDs(n), fmt.Sprint(n.NumPorts())}
		if len(f) < 6 || !slices.Equal(f[:4], want) || !strings.HasSuffix(row, n.Description) {
			t.Errorf("row %q, want %v ... %q", lines[i], want, n.Description)
		}
	}
	if !strings.Contains(out, "Discovered: 17 nodes (5 switches, 12 CAs, 0 routers), 24 links, from sim:fabric.txt") ||
		!strings.Contains(out, "Everything answered.") {
		t.Errorf("summary:\n%s", out)
	}
	if stderr != "" {
		t.Errorf("stderr is not a terminal, yet: %q", stderr)
	}
}

// TestDiscoverFormatsAndDiff: the JSON and ibnetdiscover outputs read back
// into the simulator's fabric (no difference by fabric.Diff); --diff
// against them reports nothing (exit 0), and after a cable is degraded
// and another node dies, exactly those changes (exit 1).
func TestDiscoverFormatsAndDiff(t *testing.T) {
	topo, model := simTopology(t)
	saved := map[string]string{}
	for _, format := range []string{"json", "ibnetdiscover"} {
		code, out, stderr := run("discover", "--sim="+topo, "--format", format)
		if code != ExitHealthy || stderr != "" {
			t.Fatalf("--format %s: exit %d: %s", format, code, stderr)
		}
		saved[format] = writeFile(t, "fabric."+format, out)
		got, err := loadFabricFile(context.Background(), saved[format], nil)
		if err != nil {
			t.Fatalf("--format %s output does not load: %v", format, err)
		}
		if cs := fabric.Diff(model, got); len(cs) != 0 {
			t.Errorf("--format %s differs from the simulated fabric:\n%s", format, cs)
		}
		if format == "json" && (len(got.Nodes) != len(model.Nodes) || got.Nodes[0].Path == nil || got.Nodes[0].Type != mad.NodeCA) {
			t.Errorf("JSON: %d nodes, first %+v", len(got.Nodes), got.Nodes[0])
		}
	}
	for format, file := range saved {
		code, out, stderr := run("discover", "--sim="+topo, "--diff", file, "--no-color")
		if code != ExitHealthy || !strings.Contains(out, "No changes: the fabric matches") {
			t.Errorf("--diff %s: exit %d\n%s%s", format, code, out, stderr)
		}
	}

	faults := writeFile(t, "faults", "degrade leaf02/6 width=1x\ndead gpu012\n")
	leaf2 := model.NodesByName("leaf02")[0]
	gpu12 := model.NodesByName("gpu012 mlx5_0")[0]
	code, out, stderr := run("discover", "--sim="+topo, "--faults", faults, "--diff", saved["json"], "--format", "json", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1 (changes): %s", code, stderr)
	}
	var doc struct {
		Against string
		Changes []struct {
			Kind, GUID, Name, Old, New string
			Port                       *int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var got []string
	for _, c := range doc.Changes {
		port := "-"
		if c.Port != nil {
			port = fmt.Sprint(*c.Port)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s>%s", c.Kind, c.GUID, port, c.Old, c.New))
	}
	// leaf02[6] is an uplink: the link's A end is the lower GUID.
	up := leaf2.Ports[6]
	a, b := up, up.Remote
	if b.Node.GUID < a.Node.GUID {
		a, b = b, a
	}
	rateEnd := fmt.Sprintf("%#016x %d", a.Node.GUID, a.Num)
	gpuLink := gpu12.Ports[1]
	la, lb := gpuLink, gpuLink.Remote
	if lb.Node.GUID < la.Node.GUID {
		la, lb = lb, la
	}
	want := []string{
		fmt.Sprintf("node-removed %#016x - CA>", gpu12.GUID),
		fmt.Sprintf("link-removed %#016x %d %#016x[%d] %s>", la.Node.GUID, la.Num, lb.Node.GUID, lb.Num, lb.Node.Description),
		fmt.Sprintf("rate-changed %s 4X NDR>1X NDR", rateEnd),
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
	// The dead host did not answer: listed on stderr, not in the JSON.
	if !strings.Contains(stderr, "Could not read (1):") || !strings.Contains(stderr, "behind leaf03 port 4") {
		t.Errorf("stderr: %s", stderr)
	}
	// Text form of the same diff.
	code, out, _ = run("discover", "--sim="+topo, "--faults", faults, "--diff", saved["ibnetdiscover"], "--no-color", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitFindings || !strings.Contains(out, "3 changes against") || !strings.Contains(out, "rate-changed") {
		t.Errorf("table diff: exit %d\n%s", code, out)
	}
}

// TestDiscoverPartial: a dead spine is listed under "Could not read" with
// the ports it was tried from, one line; exit 3 with everything else
// printed.
func TestDiscoverPartial(t *testing.T) {
	topo, model := simTopology(t)
	faults := writeFile(t, "faults", "dead spine02\n")
	code, out, stderr := run("discover", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "1", "--no-color")
	if code != ExitPartial {
		t.Fatalf("exit %d, want 3: %s", code, stderr)
	}
	// spine02 is tried from each leaf once per cable (2 per leaf).
	if !strings.Contains(out, "Discovered: 16 nodes") || !strings.Contains(out, "Could not read (6):") {
		t.Errorf("table:\n%s", out)
	}
	// One line for the six paths (before: six lines, one per leaf port).
	if !regexp.MustCompile(`\n  NodeInfo at 6 paths behind ports \d+-\d+ of leaf01, leaf02, leaf03: no response`).MatchString(out) {
		t.Errorf("the dead spine's paths are not one line:\n%s", out)
	}
	if strings.Contains(out, fmt.Sprintf("%#016x", model.NodesByName("spine02")[0].GUID)) {
		t.Error("the dead spine is listed as found")
	}
	if !strings.Contains(stderr, "6 nodes or ports were not reached") {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestDiscoverStartMaxHops starts at the local CA's leaf ("0,1") and
// stops two hops out: the leaf, its hosts and its spines, nothing more.
func TestDiscoverStartMaxHops(t *testing.T) {
	topo, model := simTopology(t)
	var local *fabric.Node
	for _, n := range model.Nodes {
		if n.Type == mad.NodeCA {
			local = n // the simulator attaches to the first CA
			break
		}
	}
	leaf := local.Ports[1].Remote.Node
	want := []string{fmt.Sprintf("%#016x", leaf.GUID)}
	for _, p := range leaf.Ports {
		if p != nil && p.Remote != nil && !slices.Contains(want, fmt.Sprintf("%#016x", p.Remote.Node.GUID)) {
			want = append(want, fmt.Sprintf("%#016x", p.Remote.Node.GUID))
		}
	}
	code, out, stderr := run("discover", "--sim="+topo, "--start", "0,1", "--max-hops", "2", "--format", "json")
	if code != ExitHealthy {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := fabric.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range f.Nodes {
		got = append(got, fmt.Sprintf("%#016x", n.GUID))
		if len(n.Path) < 1 || n.Path[0] != 1 || len(n.Path) > 2 {
			t.Errorf("%s at path %v", n.Description, n.Path)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) != 1+4+2 {
		t.Errorf("nodes:\n got %v\nwant %v", got, want)
	}
}

func TestDiscoverBadInput(t *testing.T) {
	topo, _ := simTopology(t)
	snap := writeFile(t, "snapshot.json", `{"schema":"ibdoctor.snapshot/v1","fabric_file":"fabric-1.json"}`)
	snap2 := writeFile(t, "snapshot.json", `{"schema":"ibdoctor.snapshot/v2","fabric_file":"fabric-2.json.gz","index_file":"gate.idx"}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, `--format "xml"`},
		{[]string{"--start", "0,x"}, "--start"},
		{[]string{"--max-hops", "64"}, "--max-hops 64"},
		{[]string{"--start", "0,1,2", "--max-hops", "1"}, "more than --max-hops 1"},
		{[]string{"--diff", filepath.Join(t.TempDir(), "none.json")}, "--diff"},
		{[]string{"--diff", snap}, `its fabric is in "fabric-1.json" beside it`},
		{[]string{"--diff", snap2}, "give `zcat fabric-2.json.gz > fabric.json`"},
	} {
		code, _, stderr := run(append([]string{"discover", "--sim=" + topo}, tc.args...)...)
		if code != ExitUndecided || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)", tc.args, code, stderr, tc.want)
		}
	}
	// A start node that does not answer: nothing to print, exit 2.
	code, out, stderr := run("discover", "--sim="+topo, "--start", "0,9", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitUndecided || out != "" || !strings.Contains(stderr, "did not answer") {
		t.Errorf("dead start: exit %d, out %q, stderr %q", code, out, stderr)
	}
}

// TestDiscoverIBSim runs the command against ibsim (the ibsim transport)
// and ibnetdiscover (under libumad2sim) at the same node: the same nodes
// and links, and `--diff` of ibnetdiscover's own output finds nothing.
func TestDiscoverIBSim(t *testing.T) {
	ibsimtest.Require(t, "ibnetdiscover")
	s := ibsimtest.Start(t, ibsimtest.FatTree(3, 3, 2))
	theirs := writeFile(t, "ibnd.txt", s.MustRun("h0004", "ibnetdiscover"))
	code, out, stderr := run("discover", "--ibsim="+s.SockName, "--ibsim-host", "h0004", "--diff", theirs, "--no-color")
	if code != ExitHealthy || !strings.Contains(out, "No changes") {
		t.Fatalf("exit %d:\n%s%s", code, out, stderr)
	}
	code, out, stderr = run("discover", "--ibsim="+s.SockName, "--ibsim-host", "h0004", "--no-color")
	if code != ExitHealthy || !strings.Contains(out, "Discovered: 14 nodes (5 switches, 9 CAs, 0 routers), 15 links, from ibsim:") {
		t.Fatalf("exit %d:\n%s%s", code, out, stderr)
	}
	// A cable pulled since ibnetdiscover ran is a change (exit 1).
	s.MustConsole(`Unlink "leaf002"[3]`)
	code, out, _ = run("discover", "--ibsim="+s.SockName, "--ibsim-host", "h0004", "--diff", theirs, "--format", "ibnetdiscover")
	if code != ExitFindings || !strings.HasPrefix(out, "node-removed") || !strings.Contains(out, "h0006 HCA-1") {
		t.Errorf("after Unlink: exit %d\n%s", code, out)
	}
	_ = os.Remove(theirs)
}
