package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestCorpusSwitchIBLoopbackFinding: the SwitchIB of the 2016 dump has
// three cables that come back to itself (1<->2, 19<->21, 29<->30).
// 'links' listed them and check said nothing; an operator expects one
// warning naming the switch and each cable's two ports.
func TestCorpusSwitchIBLoopbackFinding(t *testing.T) {
	res := corpusCheck(t, "switchib-sx6012-mixed-2016.ibnetdiscover", false)
	got := byCheck(res.Findings, "link.loopback")
	if len(got) != 1 {
		t.Fatalf("want one link.loopback finding, got:%s", titles(got))
	}
	f := got[0]
	if f.Severity != checks.Warning {
		t.Errorf("severity %v, want warning", f.Severity)
	}
	// Each cable's two ports written as a cable ("19<->21"), not as a
	// range ("19-21" read as ports 19, 20 and 21, trial N8).
	want := "SwitchIB Mellanox Technologies has 3 loopback cables (ports 1<->2, 19<->21, 29<->30): each comes back to the same switch"
	if f.Title != want {
		t.Errorf("title:\n%s\nwant:\n%s", f.Title, want)
	}
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.String())
	}
	for _, w := range []string{
		"SwitchIB Mellanox Technologies/1 <-> SwitchIB Mellanox Technologies/2",
		"SwitchIB Mellanox Technologies/19 <-> SwitchIB Mellanox Technologies/21",
		"SwitchIB Mellanox Technologies/29 <-> SwitchIB Mellanox Technologies/30",
	} {
		if !strings.Contains(strings.Join(ev, "\n"), w) {
			t.Errorf("evidence does not name %q:\n%s", w, strings.Join(ev, "\n"))
		}
	}
	if len(f.Entities) != 6 {
		t.Errorf("want the 6 ports as entities, got %+v", f.Entities)
	}
	for _, w := range []string{"6 ports", "routes nothing"} {
		if !strings.Contains(f.Impact.Summary, w) {
			t.Errorf("impact %q does not say %q", f.Impact.Summary, w)
		}
	}
	if !strings.Contains(f.Action, "cabling plan") || !strings.Contains(f.Action, "remove") {
		t.Errorf("action does not say to recable or remove: %q", f.Action)
	}
	// No other check mistakes a loopback for something else.
	for _, x := range res.Findings {
		if x.Check == "link.loopback" {
			continue
		}
		for _, e := range x.Entities {
			if e.Node == "SwitchIB Mellanox Technologies" && (e.Port == 1 || e.Port == 2 || e.Port == 19 || e.Port == 21 || e.Port == 29 || e.Port == 30) {
				t.Errorf("%s names loopback port %s: %s", x.Check, e, x.Title)
			}
		}
	}
}

// TestCorpusLoopbackQuietElsewhere: no other public dump has a cable
// back to its own node, so none gets the finding.
func TestCorpusLoopbackQuietElsewhere(t *testing.T) {
	for _, name := range topologyCorpus {
		if name == "switchib-sx6012-mixed-2016.ibnetdiscover" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res := corpusCheck(t, name, false)
			if got := byCheck(res.Findings, "link.loopback"); len(got) > 0 {
				t.Errorf("false loopback:%s", titles(got))
			}
		})
	}
}

// cableBack cables ports a and b of node n to each other, up and Active at
// the node's rate (a loopback cable or test plug).
func cableBack(t *testing.T, n *fabric.Node, a, b int) {
	t.Helper()
	x, y := n.Ports[a], n.Ports[b]
	if x.Remote != nil || y.Remote != nil {
		t.Fatalf("%s ports %d, %d already cabled", n.Description, a, b)
	}
	x.Remote, y.Remote = y, x
	up := n.Ports[1]
	for _, p := range []*fabric.Port{x, y} {
		p.State, p.PhysState = mad.PortStateActive, mad.PhysLinkUp
		p.WidthActive, p.SpeedActive = up.WidthActive, up.SpeedActive
	}
}

// TestLoopbacksLiveNoFalseAlarm: loopback cables on a spine and on a leaf
// of a swept fat tree (the simulator's own tables, read as the SM's; the
// fabric itself as the expected topology) give exactly one link.loopback
// warning per switch, and no other finding at all: not an extra or
// missing uplink, not a slower sibling, no routing, congestion or
// topology-change finding.
func TestLoopbacksLiveNoFalseAlarm(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*fabric.Node{}
	for _, n := range f.Nodes {
		byName[n.Description] = n
	}
	cableBack(t, byName["spine01"], 40, 41)
	cableBack(t, byName["leaf02"], 50, 51)
	cableBack(t, byName["leaf02"], 60, 62)
	sw := sweepSim(t, f, 0, nil)
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, checks.BaselineOf(f), nil))
	if err != nil {
		t.Fatal(err)
	}
	var titlesGot []string
	for _, x := range res.Findings {
		if x.Check != "link.loopback" {
			t.Errorf("unexpected %s %s: %s", x.Severity, x.Check, x.Title)
			continue
		}
		if x.Severity != checks.Warning {
			t.Errorf("%s: severity %v, want warning", x.Title, x.Severity)
		}
		titlesGot = append(titlesGot, x.Title)
	}
	want := []string{
		"leaf02 has 2 loopback cables (ports 50<->51, 60<->62): each comes back to the same switch",
		"Port spine01/40 is cabled back to spine01/41 (a loopback cable)",
	}
	if strings.Join(titlesGot, "\n") != strings.Join(want, "\n") {
		t.Errorf("loopback findings:\n%s\nwant:\n%s", strings.Join(titlesGot, "\n"), strings.Join(want, "\n"))
	}
	for _, u := range res.Undecided {
		t.Errorf("undecided: %+v", u)
	}
}

// TestHCALoopback: two ports of one adapter cabled to each other (a
// loopback test between the ports of a dual-port HCA) is the same
// finding, named for the adapter.
func TestHCALoopback(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 2, Spines: 1, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	hca := &fabric.Node{Type: mad.NodeCA, GUID: 0x1234, SystemImageGUID: 0x1234, Description: "lab01 mlx5_0"}
	hca.Ports = []*fabric.Port{nil, {Node: hca, Num: 1, GUID: 0x1235, LID: 900}, {Node: hca, Num: 2, GUID: 0x1236, LID: 901}}
	for _, p := range hca.Ports[1:] {
		p.WidthActive, p.SpeedActive = mad.Width4X, mad.SpeedHDR
	}
	f.Nodes = append(f.Nodes, hca)
	cableBack(t, hca, 1, 2)
	f.Reindex()
	res, err := checks.Run(&checks.Snapshot{Fabric: f}, "link.loopback")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("want one finding, got:%s", titles(res.Findings))
	}
	want := "Port lab01 mlx5_0/1 is cabled back to lab01 mlx5_0/2 (a loopback cable)"
	if got := res.Findings[0].Title; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if !strings.Contains(res.Findings[0].Impact.Summary, "adapter") {
		t.Errorf("impact does not speak of the adapter: %q", res.Findings[0].Impact.Summary)
	}
}
