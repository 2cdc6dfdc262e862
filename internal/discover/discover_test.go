package discover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func discoverFake(t testing.TB, f *fakeFabric, opts Options, eo transport.Options) (*fabric.Fabric, error) {
	t.Helper()
	if eo.Timeout == 0 {
		// Generous: under -race on a loaded 2-core machine the answers
		// of a full window queue behind one another.
		eo.Timeout = 100 * time.Millisecond
	}
	if eo.Retries == 0 {
		eo.Retries = 1
	}
	e := transport.NewEngine(f.conn(), eo)
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, e, opts)
}

// checkLinks compares every discovered link with the fake's cabling, by
// GUID and port, and returns the number of links.
func checkLinks(t *testing.T, f *fakeFabric, fab *fabric.Fabric) int {
	t.Helper()
	byDesc := map[string]*fakeNode{}
	for _, n := range f.nodes {
		byDesc[n.desc] = n
	}
	links := fab.Links()
	for _, l := range links {
		a, b := byDesc[l.A.Node.Description], byDesc[l.B.Node.Description]
		if a == nil || b == nil {
			t.Errorf("link %s[%d] - %s[%d]: unknown node", l.A.Node.Description, l.A.Num, l.B.Node.Description, l.B.Num)
			continue
		}
		if peer, ok := a.links[l.A.Num]; !ok || peer.node != b || peer.port != l.B.Num {
			t.Errorf("link %s[%d] - %s[%d] is not cabled so", a.desc, l.A.Num, b.desc, l.B.Num)
		}
	}
	return len(links)
}

func TestSmallFatTree(t *testing.T) {
	f, names := fatTree(2, 3, 2)
	f.latency = 200 * time.Microsecond
	names["leaf1"].ndr[1] = true
	names["host1-0"].ndr[1] = true
	var mu sync.Mutex
	var last Progress
	calls := 0
	fab, err := discoverFake(t, f, Options{Progress: func(p Progress) {
		mu.Lock()
		last, calls = p, calls+1
		mu.Unlock()
	}}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.noViolations(t)
	if len(fab.Nodes) != 11 || len(fab.Unreachable) != 0 || len(fab.DuplicateGUIDs) != 0 {
		t.Fatalf("%d nodes, unreachable %v, duplicates %v; want 11 nodes", len(fab.Nodes), fab.Unreachable, fab.DuplicateGUIDs)
	}
	// 6 host links + 2×3 spine-leaf links.
	if n := checkLinks(t, f, fab); n != 12 {
		t.Errorf("%d links, want 12", n)
	}
	local := fab.Nodes[0]
	if local.Description != "host0-0" || len(local.Path) != 0 {
		t.Errorf("first node %q at %v, want the local host at 0", local.Description, local.Path)
	}
	wantPaths := map[string]string{
		"leaf0": "0,1", "spine0": "0,1,3", "spine1": "0,1,4", "leaf1": "0,1,3,2",
		"leaf2": "0,1,3,3", "host0-1": "0,1,2", "host1-0": "0,1,3,2,1", "host2-1": "0,1,3,3,2",
	}
	for name, want := range wantPaths {
		ns := fab.NodesByName(name)
		if len(ns) != 1 || ns[0].Path.String() != want {
			t.Errorf("%s: %d nodes, path %v; want %s", name, len(ns), ns, want)
			continue
		}
		// The path really leads there.
		n := local
		for i, p := range ns[0].Path {
			if i > 0 && n.Type != mad.NodeSwitch {
				t.Errorf("%s: path %v goes through CA %s", name, ns[0].Path, n.Description)
			}
			n = n.Ports[p].Remote.Node
		}
		if n != ns[0] {
			t.Errorf("%s: path %v leads to %s", name, ns[0].Path, n.Description)
		}
	}
	leaf1 := fab.NodesByName("leaf1")[0]
	if leaf1.Type != mad.NodeSwitch || leaf1.Switch == nil || leaf1.Switch.LinearFDBTop != 100 || !leaf1.Switch.EnhancedPort0 || leaf1.NumPorts() != 4 {
		t.Errorf("leaf1 switch fields: %+v, %d ports", leaf1.Switch, leaf1.NumPorts())
	}
	// Switch port speeds decode with port 0's capability mask: EDR and
	// NDR, not QDR.
	if p := leaf1.Ports[1]; p.SpeedActive != mad.SpeedNDR || p.WidthActive != mad.Width4X || p.Remote.Node.Description != "host1-0" {
		t.Errorf("leaf1 port 1: %v %v to %v", p.WidthActive, p.SpeedActive, p.Remote.Node.Description)
	}
	if p := leaf1.Ports[3]; p.SpeedActive != mad.SpeedEDR || !p.SpeedSupported.Has(mad.SpeedNDR) || p.State != mad.PortStateActive {
		t.Errorf("leaf1 port 3: active %v supported %v state %v", p.SpeedActive, p.SpeedSupported, p.State)
	}
	if p := leaf1.Ports[0]; p == nil || p.LID == 0 || p.GUID != leaf1.GUID {
		t.Errorf("leaf1 port 0: %+v", p)
	}
	host := fab.NodesByName("host1-0")[0]
	if p := host.Ports[1]; p.GUID != host.GUID+1 || p.SpeedActive != mad.SpeedNDR || p.Remote.Num != 1 || p.LID == 0 {
		t.Errorf("host1-0 port 1: GUID %x speed %v remote port %d lid %d", p.GUID, p.SpeedActive, p.Remote.Num, p.LID)
	}
	if host.Ports[0] != nil || host.Switch != nil {
		t.Error("a CA has no port 0 and no switch info")
	}
	if fab.PortByLID(leaf1.Ports[0].LID) != leaf1.Ports[0] {
		t.Error("the fabric index does not find leaf1 by LID")
	}
	mu.Lock()
	if calls != 11 || last.Nodes != 11 || last.Switches != 5 || last.Sent == 0 {
		t.Errorf("progress: %d calls, last %+v", calls, last)
	}
	mu.Unlock()
}

// summary prints a fabric compactly and deterministically.
func summary(fab *fabric.Fabric) string {
	var b strings.Builder
	for _, n := range fab.Nodes {
		fmt.Fprintf(&b, "%s %x %v\n", n.Description, n.GUID, n.Path)
	}
	for _, l := range fab.Links() {
		fmt.Fprintf(&b, "%s[%d]-%s[%d]\n", l.A.Node.Description, l.A.Num, l.B.Node.Description, l.B.Num)
	}
	for _, u := range fab.Unreachable {
		fmt.Fprintf(&b, "unreachable %v from %x[%d] %s: %s\n", u.Path, u.FromGUID, u.FromPort, u.What, u.Reason)
	}
	for _, d := range fab.DuplicateGUIDs {
		fmt.Fprintf(&b, "dup %x %v %q\n", d.GUID, d.Paths, d.Descs)
	}
	return b.String()
}

func TestDeterministic(t *testing.T) {
	// Random answer latency reorders everything; the result must not
	// change.
	var first string
	for i := range 4 {
		f, names := fatTree(4, 6, 3)
		f.latency = 300 * time.Microsecond
		names["host3-1"].dead = true
		fab, err := discoverFake(t, f, Options{}, transport.Options{Window: 16})
		if err != nil {
			t.Fatal(err)
		}
		s := summary(fab)
		if i == 0 {
			first = s
		} else if s != first {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, s, first)
		}
	}
}

func TestDeadNodes(t *testing.T) {
	f, names := fatTree(2, 3, 2)
	names["spine0"].dead = true
	names["host2-1"].dead = true
	fab, err := discoverFake(t, f, Options{}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.noViolations(t)
	// Everything but the two dead nodes is found through spine1.
	if len(fab.Nodes) != 9 {
		t.Errorf("%d nodes, want 9:\n%s", len(fab.Nodes), summary(fab))
	}
	leaf0, leaf2 := fab.NodesByName("leaf0")[0], fab.NodesByName("leaf2")[0]
	var got []string
	for _, u := range fab.Unreachable {
		got = append(got, fmt.Sprintf("%v %x[%d] %s %s", u.Path, u.FromGUID, u.FromPort, u.What, u.Reason))
	}
	// spine0 is tried from each leaf's port 3; the dead host from leaf2.
	want := []string{
		fmt.Sprintf("0,1,3 %x[3] NodeInfo no response after 2 attempts", leaf0.GUID),
		fmt.Sprintf("0,1,4,2,3 %x[3] NodeInfo no response after 2 attempts", fab.NodesByName("leaf1")[0].GUID),
		fmt.Sprintf("0,1,4,3,2 %x[2] NodeInfo no response after 2 attempts", leaf2.GUID),
		fmt.Sprintf("0,1,4,3,3 %x[3] NodeInfo no response after 2 attempts", leaf2.GUID),
	}
	if !slices.Equal(got, want) {
		t.Errorf("unreachable:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if leaf0.Ports[3].Remote != nil || leaf0.Ports[3].PhysState != mad.PhysLinkUp {
		t.Error("leaf0 port 3 leads to the dead spine: LinkUp, no remote")
	}
}

func TestDeadLocalNode(t *testing.T) {
	f, names := fatTree(1, 1, 1)
	names["host0-0"].dead = true
	_, err := discoverFake(t, f, Options{}, transport.Options{Timeout: 5 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not answer NodeInfo") {
		t.Errorf("err = %v", err)
	}
}

func TestDownPortAndMaxHops(t *testing.T) {
	f, names := fatTree(2, 3, 2)
	names["leaf1"].down[1] = true // host1-0's cable is in, but the link is not up
	names["host1-0"].down[1] = true
	fab, err := discoverFake(t, f, Options{}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fab.Nodes) != 10 || fab.NodesByName("host1-0") != nil {
		t.Errorf("%d nodes; host1-0 behind a down link must not be found", len(fab.Nodes))
	}
	if p := fab.NodesByName("leaf1")[0].Ports[1]; p.PhysState != mad.PhysPolling || p.Remote != nil {
		t.Errorf("leaf1 port 1: %v remote %v", p.PhysState, p.Remote)
	}

	f2, _ := fatTree(2, 3, 2)
	fab, err = discoverFake(t, f2, Options{MaxHops: 2}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 0 host, 0,1 leaf0, 0,1,x its hosts and spines; no leaf beyond.
	var names2 []string
	for _, n := range fab.Nodes {
		names2 = append(names2, n.Description)
		if len(n.Path) > 2 {
			t.Errorf("%s at %v beyond 2 hops", n.Description, n.Path)
		}
	}
	if len(fab.Nodes) != 5 {
		t.Errorf("max hops 2: %v", names2)
	}
}

func TestStartPath(t *testing.T) {
	f, _ := fatTree(2, 3, 2)
	// Start at spine1 (0,1,4): paths in the result include the prefix.
	fab, err := discoverFake(t, f, Options{Start: mad.Path{1, 4}}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.noViolations(t)
	if fab.Nodes[0].Description != "spine1" || fab.Nodes[0].Path.String() != "0,1,4" {
		t.Errorf("first node %s at %v", fab.Nodes[0].Description, fab.Nodes[0].Path)
	}
	if len(fab.Nodes) != 11 {
		t.Errorf("%d nodes, want 11", len(fab.Nodes))
	}
	if n := fab.NodesByName("host2-0"); len(n) != 1 || n[0].Path.String() != "0,1,4,3,1" {
		t.Errorf("host2-0: %v", n)
	}
}

func TestDuplicateSwitchGUID(t *testing.T) {
	f, names := fatTree(2, 4, 2)
	names["leaf3"].guid = names["leaf1"].guid // a cloned switch
	fab, err := discoverFake(t, f, Options{}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.noViolations(t)
	// Both switches and all hosts behind both are found.
	if len(fab.Nodes) != 2+4+8 {
		t.Errorf("%d nodes, want 14:\n%s", len(fab.Nodes), summary(fab))
	}
	if len(fab.DuplicateGUIDs) != 1 {
		t.Fatalf("duplicates: %+v", fab.DuplicateGUIDs)
	}
	d := fab.DuplicateGUIDs[0]
	if d.GUID != names["leaf1"].guid || len(d.Paths) != 2 || !slices.Equal(d.Descs, []string{"leaf1", "leaf3"}) {
		t.Errorf("duplicate %+v", d)
	}
	if d.Paths[0].String() != "0,1,3,2" || d.Paths[1].String() != "0,1,3,4" {
		t.Errorf("duplicate paths %v", d.Paths)
	}
	if n := checkLinks(t, f, fab); n != 8+8 {
		t.Errorf("%d links, want 16", n)
	}
}

func TestDuplicateCAGUID(t *testing.T) {
	f, names := fatTree(2, 3, 2)
	names["host2-1"].guid = names["host1-0"].guid
	fab, err := discoverFake(t, f, Options{}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fab.Nodes) != 11 || len(fab.DuplicateGUIDs) != 1 || len(fab.DuplicateGUIDs[0].Paths) != 2 {
		t.Errorf("nodes %d, duplicates %+v", len(fab.Nodes), fab.DuplicateGUIDs)
	}
	if n := checkLinks(t, f, fab); n != 12 {
		t.Errorf("%d links, want 12", n)
	}
}

func TestDualPortCA(t *testing.T) {
	// host0-1 gets a second port cabled to leaf1: one node, two links,
	// not a duplicate.
	f, names := fatTree(2, 3, 2)
	h := names["host0-1"]
	h.numPorts = 2
	leaf1 := names["leaf1"]
	leaf1.numPorts = 5
	connect(leaf1, 5, h, 2)
	fab, err := discoverFake(t, f, Options{}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fab.Nodes) != 11 || len(fab.DuplicateGUIDs) != 0 {
		t.Fatalf("nodes %d, duplicates %+v", len(fab.Nodes), fab.DuplicateGUIDs)
	}
	n := fab.NodesByName("host0-1")[0]
	if n.Ports[1].Remote == nil || n.Ports[2].Remote == nil || n.Ports[2].Remote.Node.Description != "leaf1" || n.Ports[2].GUID != n.GUID+2 {
		t.Errorf("dual-port host: %+v %+v", n.Ports[1], n.Ports[2])
	}
	if n.Ports[2].State != mad.PortStateActive {
		t.Error("second port's PortInfo was not read through its own path")
	}
	checkLinks(t, f, fab)
}

func TestCancel(t *testing.T) {
	f, _ := fatTree(4, 8, 4)
	f.latency = time.Millisecond
	e := transport.NewEngine(f.conn(), transport.Options{Timeout: time.Second})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, cancel)
	fab, err := Run(ctx, e, Options{})
	if err == nil || fab == nil {
		t.Fatalf("err %v, fabric %v: want a partial fabric and an error", err, fab)
	}
	if len(fab.Nodes) >= 2+8+32 {
		t.Errorf("found all %d nodes despite the cancel", len(fab.Nodes))
	}
}
