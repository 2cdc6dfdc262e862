package discover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Side by side with ibnetdiscover (Issue 5 §4): on one ibsim fabric after
// OpenSM has assigned LIDs, ibnetdiscover (infiniband-diags, under
// libumad2sim) and ibdoctor's discovery (ibsim transport) attach at the
// same node; ibnetdiscover's output is read with fabric.ParseIBNetDiscover
// and both fabrics must agree on every node (GUID, type, description,
// LIDs), every link (both ends' GUID and port) and every link's width and
// speed, and on what could not be reached. TestAgainstIbnetdiscover
// (ibsim_test.go) compares nodes and links only, without an SM.

// ibndTimeout matches ibnetdiscover's (libibnetdisc's) report of a
// NodeInfo (attribute 0x11) that was not answered, e.g. "umad (DR path
// slid 0; dlid 0; 0,1,7,1,8 Attr 0x11:0) bad status 110".
var ibndTimeout = regexp.MustCompile(`DR path [^)]*; ([0-9,]+) Attr 0x11:0\) bad status`)

// sideBySide is one comparison's two results.
type sideBySide struct {
	theirs, ours *fabric.Fabric
	stderr       string // ibnetdiscover's
	stats        transport.Stats
}

// runBoth runs ibnetdiscover and discovery at host, one after the other.
func runBoth(t *testing.T, s *ibsimtest.Sim, host string) sideBySide {
	t.Helper()
	var r sideBySide
	errFile := filepath.Join(t.TempDir(), "ibnetdiscover.err")
	start := time.Now()
	// sh only to split ibnetdiscover's stderr (its errors) from its
	// topology on stdout; a non-zero exit is tolerated (a partial
	// discovery), its output is still checked.
	out, err := s.Run(host, "sh", "-c", `exec ibnetdiscover 2>"$0"`, errFile)
	var te *ibsimtest.ToolError
	if err != nil && !errors.As(err, &te) {
		t.Fatal(err)
	}
	took := time.Since(start)
	b, _ := os.ReadFile(errFile)
	r.stderr = string(b)
	if r.theirs, err = fabric.ParseIBNetDiscover(strings.NewReader(out)); err != nil {
		t.Fatalf("parsing ibnetdiscover's output: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Options{SockName: s.SockName, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{})
	defer e.Close()
	start = time.Now()
	if r.ours, err = Run(ctx, e, Options{}); err != nil {
		t.Fatal(err)
	}
	r.stats = e.Stats()
	t.Logf("ibnetdiscover: %d nodes in %v; ibdoctor: %d nodes in %v (%d SMPs sent)",
		len(r.theirs.Nodes), took.Round(time.Millisecond), len(r.ours.Nodes), time.Since(start).Round(time.Millisecond), r.stats.Sent)
	return r
}

// nodeFacts is what both tools report of a node.
func nodeFacts(n *fabric.Node) string {
	var lids []string
	for _, p := range n.Ports {
		if p == nil || (n.Type == mad.NodeSwitch) != (p.Num == 0) || (n.Type != mad.NodeSwitch && p.Remote == nil) {
			continue // ibnetdiscover lists a CA's LIDs only on cabled ports
		}
		lids = append(lids, fmt.Sprintf("%d:%d", p.Num, p.LID))
	}
	return fmt.Sprintf("%v %d ports %q lids %v", n.Type, n.NumPorts(), n.Description, lids)
}

// linkFacts keys every link by both ends and gives each end's rate.
func linkFacts(f *fabric.Fabric) map[string]string {
	m := make(map[string]string)
	for _, l := range f.Links() {
		m[linkKey(l.A.Node.GUID, l.A.Num, l.B.Node.GUID, l.B.Num)] = l.A.Rate().String() + " / " + l.B.Rate().String()
	}
	return m
}

// compare fails t on every difference between ibnetdiscover's fabric and
// ours, and returns the number of links compared.
func (r sideBySide) compare(t *testing.T) int {
	t.Helper()
	var diffs []string
	theirs := make(map[uint64]*fabric.Node)
	for _, n := range r.theirs.Nodes {
		theirs[n.GUID] = n
	}
	for _, n := range r.ours.Nodes {
		tn := theirs[n.GUID]
		switch {
		case tn == nil:
			diffs = append(diffs, fmt.Sprintf("node %#016x %q: only ibdoctor found it", n.GUID, n.Description))
		case nodeFacts(tn) != nodeFacts(n):
			diffs = append(diffs, fmt.Sprintf("node %#016x: ibnetdiscover %s, ibdoctor %s", n.GUID, nodeFacts(tn), nodeFacts(n)))
		}
		delete(theirs, n.GUID)
	}
	for g, n := range theirs {
		diffs = append(diffs, fmt.Sprintf("node %#016x %q: only ibnetdiscover found it", g, n.Description))
	}
	tl, ol := linkFacts(r.theirs), linkFacts(r.ours)
	for k, v := range ol {
		if tv, ok := tl[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("link %s: only ibdoctor found it", k))
		} else if tv != v {
			diffs = append(diffs, fmt.Sprintf("link %s: ibnetdiscover %s, ibdoctor %s", k, tv, v))
		}
		delete(tl, k)
	}
	for k := range tl {
		diffs = append(diffs, fmt.Sprintf("link %s: only ibnetdiscover found it", k))
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%d differences between ibnetdiscover and ibdoctor, first ones:\n%s", len(diffs), strings.Join(diffs[:min(len(diffs), 15)], "\n"))
	}
	if len(r.ours.DuplicateGUIDs) != 0 {
		t.Errorf("duplicate GUIDs: %+v", r.ours.DuplicateGUIDs)
	}
	return len(ol)
}

// withLIDs checks that OpenSM assigned every node a LID (so the LID
// comparison compares something).
func withLIDs(t *testing.T, f *fabric.Fabric) {
	t.Helper()
	for _, n := range f.Nodes {
		if !strings.Contains(nodeFacts(n), ":") || strings.Contains(nodeFacts(n), ":0") {
			t.Fatalf("%s has no LID: %s", n.Description, nodeFacts(n))
		}
	}
}

// TestSideBySideSmall is case (a): a small two-level fat tree (4 leaves,
// 4 hosts each, 2 spines) routed by OpenSM.
func TestSideBySideSmall(t *testing.T) {
	ibsimtest.Require(t, "ibnetdiscover", "opensm")
	s := ibsimtest.Start(t, ibsimtest.FatTree(4, 4, 2))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001", Once: true})
	r := runBoth(t, s, "h0006")
	if len(r.ours.Nodes) != 16+4+2 || len(r.ours.Unreachable) != 0 || r.stderr != "" {
		t.Fatalf("%d nodes, unreachable %v, ibnetdiscover stderr %q", len(r.ours.Nodes), r.ours.Unreachable, r.stderr)
	}
	withLIDs(t, r.ours)
	if n := r.compare(t); n != 16+4*2 {
		t.Errorf("%d links", n)
	}
}

// TestSideBySide1k is case (b): 32 leaves × 32 hosts and 16 spines, 1,072
// nodes, routed by OpenSM.
func TestSideBySide1k(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1,072-node ibsim fabric")
	}
	ibsimtest.Require(t, "ibnetdiscover", "opensm")
	s := ibsimtest.Start(t, ibsimtest.FatTree(32, 32, 16))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001", Once: true})
	r := runBoth(t, s, "h0517")
	if len(r.ours.Nodes) != 1072 || len(r.ours.Unreachable) != 0 || r.stderr != "" {
		t.Fatalf("%d nodes, unreachable %v, ibnetdiscover stderr %q", len(r.ours.Nodes), r.ours.Unreachable, r.stderr)
	}
	withLIDs(t, r.ours)
	if n := r.compare(t); n != 1024+32*16 {
		t.Errorf("%d links", n)
	}
}

// TestSideBySideDegradedAndSilent is case (c): links whose enabled widths
// or speeds are lowered on both ends in the net file (they come up 1X, 2X
// or at EDR), and, after OpenSM's sweep, a spine that drops every
// NodeInfo (console `Error "spine02" 100 0x11`). Both tools must agree on
// the rates, and both must miss exactly that spine: its GUID is absent from
// both, ibnetdiscover says so on stderr, and every one of our Unreachable
// entries is a NodeInfo through a cable that leads to it.
func TestSideBySideDegradedAndSilent(t *testing.T) {
	ibsimtest.Require(t, "ibnetdiscover", "opensm")
	model, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 12, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}},
		Leaves: 4, Spines: 3, HostsPerLeaf: 6}.Build()
	if err != nil {
		t.Fatal(err)
	}
	lower := func(node string, port uint8, w mad.Width, sp mad.Speed) {
		p := model.NodesByName(node)[0].Ports[port]
		for _, q := range []*fabric.Port{p, p.Remote} {
			if w != 0 {
				q.WidthEnabled, q.WidthActive = w, w
			}
			if sp != 0 {
				q.SpeedEnabled, q.SpeedActive = sp|mad.SpeedSDR|mad.SpeedDDR|mad.SpeedQDR, sp
			}
		}
	}
	lower("leaf01", 2, mad.Width1X, 0)             // a host cable at 1X
	lower("leaf02", 5, 0, mad.SpeedEDR)            // a host cable at EDR
	lower("leaf03", 8, mad.Width1X, mad.SpeedEDR)  // an uplink at 1X EDR
	lower("leaf04", 7, mad.Width1X|mad.Width2X, 0) // an uplink at 2X
	ids := func(n *fabric.Node) string {
		if n.Type == mad.NodeSwitch {
			return n.Description
		}
		return strings.Fields(n.Description)[0]
	}
	s := ibsimtest.StartFabric(t, model, fabric.NetFileOptions{NodeID: ids})
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "gpu001", Once: true})
	s.MustConsole(`Error "spine02" 100 0x11`)

	r := runBoth(t, s, "gpu009")
	withLIDs(t, r.ours)
	r.compare(t)

	spine := model.NodesByName("spine02")[0]
	for name, f := range map[string]*fabric.Fabric{"ibnetdiscover": r.theirs, "ibdoctor": r.ours} {
		var missing []string
		for _, n := range model.Nodes {
			if f.NodeByGUID(n.GUID) == nil {
				missing = append(missing, n.Description)
			}
		}
		if !slices.Equal(missing, []string{"spine02"}) {
			t.Errorf("%s misses %v, want [spine02]", name, missing)
		}
	}
	// ibnetdiscover names each NodeInfo that timed out by its directed
	// route; both tools must have tried the same cables into spine02.
	local := model.NodesByName("gpu009 mlx5_0")[0]
	var theirTries, ourTries []string
	for _, m := range ibndTimeout.FindAllStringSubmatch(r.stderr, -1) {
		path, err := mad.ParsePath(m[1])
		if err != nil || len(path) == 0 {
			t.Fatalf("ibnetdiscover stderr path %q: %v", m[1], err)
		}
		from := local
		for _, port := range path[:len(path)-1] {
			from = from.Ports[port].Remote.Node
		}
		last := path[len(path)-1]
		if from.Ports[last].Remote.Node != spine {
			t.Errorf("ibnetdiscover's timeout at %v does not lead to spine02", path)
		}
		theirTries = append(theirTries, fmt.Sprintf("%s[%d]", from.Description, last))
	}
	for _, u := range r.ours.Unreachable {
		from := model.NodeByGUID(u.FromGUID)
		if u.What != "NodeInfo" || from == nil || from.Ports[u.FromPort].Remote.Node != spine {
			t.Errorf("unreachable %+v does not lead to spine02", u)
			continue
		}
		ourTries = append(ourTries, fmt.Sprintf("%s[%d]", from.Description, u.FromPort))
	}
	slices.Sort(theirTries)
	slices.Sort(ourTries)
	// One cable from each leaf leads to spine02.
	if len(ourTries) != 4 || !slices.Equal(theirTries, ourTries) {
		t.Errorf("NodeInfo timeouts: ibnetdiscover %v, ibdoctor %v", theirTries, ourTries)
	}
	// The rates we compared are the lowered ones (in ibsim's terms).
	want := map[string]mad.Rate{
		"leaf01/2": {Width: mad.Width1X, Speed: mad.SpeedHDR},
		"leaf02/5": {Width: mad.Width4X, Speed: mad.SpeedEDR},
		"leaf03/8": {Width: mad.Width1X, Speed: mad.SpeedEDR},
		"leaf04/7": {Width: mad.Width2X, Speed: mad.SpeedHDR},
	}
	for ref, w := range want {
		node, port, _ := strings.Cut(ref, "/")
		var num uint8
		fmt.Sscan(port, &num)
		p := r.ours.NodeByGUID(model.NodesByName(node)[0].GUID).Ports[num]
		if p.Rate() != w {
			t.Errorf("%s runs %v, want %v", ref, p.Rate(), w)
		}
	}
}
