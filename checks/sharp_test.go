package checks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// anPort is where the test fabrics' leaves carry their SHARP Aggregation
// Node: their last port, as a Quantum-2 its port 65.
const anPort = 16

// sharpFabric is a two-level fat tree whose switches (leaf01.., and
// spine01 and spine02, as the DGX SuperPOD's) each carry a SHARP
// Aggregation Node on port anPort, but those named in without.
// The ANs are built as the Quantum-2 capture's are: a CA of device
// 0xcf09 described "Mellanox Technologies Aggregation Node", with its
// switch's system image GUID.
func sharpFabric(t *testing.T, leaves int, without ...string) *fabric.Fabric {
	t.Helper()
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: anPort}, Leaves: leaves, Spines: 2, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
	var host *fabric.Port
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			host = n.Ports[1]
			break
		}
	}
	for i, leaf := range slices.Clone(f.Nodes) {
		if leaf.Type != mad.NodeSwitch || slices.Contains(without, leaf.Description) {
			continue
		}
		an := &fabric.Node{Type: mad.NodeCA, GUID: 0x0002c9aa00000000 + uint64(i), SystemImageGUID: leaf.SystemImageGUID,
			Description: "Mellanox Technologies Aggregation Node", VendorID: 0x0002c9, DeviceID: 0xcf09}
		p := *host
		p.Node, p.GUID, p.LID = an, an.GUID, 0
		an.Ports = []*fabric.Port{nil, &p}
		lp := leaf.Ports[anPort]
		lp.State, lp.PhysState, lp.WidthActive, lp.SpeedActive = host.State, host.PhysState, host.WidthActive, host.SpeedActive
		lp.Remote, p.Remote = &p, lp
		f.Nodes = append(f.Nodes, an)
	}
	f.Reindex()
	return f
}

// sharpCheck sweeps f in the simulator with prepare's faults (complete:
// the sweep must read everything) and runs every check, with base as
// the operator's expected topology when it is not nil.
func sharpCheck(t *testing.T, f *fabric.Fabric, complete bool, base *fabric.Fabric, prepare func(*sim.Sim)) *checks.Result {
	t.Helper()
	if _, err := topology.AssignLIDs(f); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(s)
	}
	sw := sweepOf(t, s, complete)
	snap := sw.Snapshot(checks.Expectations{}, checks.BaselineOf(base), nil)
	snap.BaselineDesigned = base != nil
	res, err := checks.Run(snap)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func undecidedOf(res *checks.Result, id string) []checks.Undecided {
	var out []checks.Undecided
	for _, u := range res.Undecided {
		if u.Check == id {
			out = append(out, u)
		}
	}
	return out
}

// TestSharpANMissingOnALeaf: 5 of 6 leaves carry an AN, leaf03 none: one
// warning on leaf03 with its 5 peers; the healthy fabric (every leaf
// with one) and a fabric without ANs give none.
func TestSharpANMissingOnALeaf(t *testing.T) {
	const id = "topology.missing-sharp-an"
	res := sharpCheck(t, sharpFabric(t, 6, "leaf03"), true, nil, nil)
	fs := byCheck(res.Findings, id)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want one on leaf03:%s", len(fs), titles(fs))
	}
	f := fs[0]
	if f.Severity != checks.Warning || len(f.Entities) != 1 || f.Entities[0].Node != "leaf03" ||
		f.Title != "Leaf leaf03 has no SHARP Aggregation Node where its 5 peer leaves have one" {
		t.Errorf("got %s %q on %v", f.Severity, f.Title, f.Entities)
	}
	if ev := f.Evidence[0].Text; !strings.HasPrefix(ev, "5 of the 6 Quantum-2 leaves have a SHARP Aggregation Node, on port 16; leaf03: no Aggregation Node behind its port 16") {
		t.Errorf("evidence %q", ev)
	}
	if !strings.Contains(f.Impact.Summary, "a job with hosts on it (4 host ports) gets no SHARP tree") {
		t.Errorf("impact %q", f.Impact.Summary)
	}
	if len(res.Undecided) > 0 {
		t.Errorf("undecided on a complete sweep: %v", res.Undecided)
	}
	for name, f := range map[string]*fabric.Fabric{
		"every leaf with an AN":  sharpFabric(t, 6),
		"no AN at all":           sharpFabric(t, 6, "leaf01", "leaf02", "leaf03", "leaf04", "leaf05", "leaf06", "spine01", "spine02"),
		"ANs on the spines only": sharpFabric(t, 6, "leaf01", "leaf02", "leaf03", "leaf04", "leaf05", "leaf06"),
	} {
		if fs := byCheck(sharpCheck(t, f, true, nil, nil).Findings, id); len(fs) > 0 {
			t.Errorf("%s: want none, got:%s", name, titles(fs))
		}
	}
}

// TestSharpANMissingAboveTheLeaves (trial H2): every leaf carries an AN;
// with spine02 without one its peer spine01 still joins them (a warning
// on spine02 naming spine01); with neither spine carrying one no SHARP
// tree can span two leaves: one warning naming both spines, the leaves'
// host ports as its impact. Leaves short of the leaf rule's quorum (2 of
// 6 with an AN) judge no spine either.
func TestSharpANMissingAboveTheLeaves(t *testing.T) {
	const id = "topology.missing-sharp-an"
	fs := byCheck(sharpCheck(t, sharpFabric(t, 6, "spine02"), true, nil, nil).Findings, id)
	if len(fs) != 1 || len(fs[0].Entities) != 1 || fs[0].Entities[0].Node != "spine02" ||
		fs[0].Title != "Spine spine02 has no SHARP Aggregation Node where 1 peer above the leaves joining switches with one has one" {
		t.Fatalf("want spine02 against spine01:%s", titles(fs))
	}
	if ev := fs[0].Evidence[0].Text; !strings.HasPrefix(ev, "spine02 joins 6 leaves with a SHARP Aggregation Node: no Aggregation Node behind its port 16; 1 of the 2 switches above the leaves joining two or more with an AN have one: spine01") {
		t.Errorf("evidence %q", ev)
	}
	if im := fs[0].Impact.Summary; !strings.Contains(im, "builds them on spine01 alone") {
		t.Errorf("impact %q", im)
	}

	fs = byCheck(sharpCheck(t, sharpFabric(t, 6, "spine01", "spine02"), true, nil, nil).Findings, id)
	if len(fs) != 1 || len(fs[0].Entities) != 2 || fs[0].Group != "spine01, spine02" ||
		fs[0].Title != "2 switches above the leaves (spine01, spine02) have no SHARP Aggregation Node, and no switch above the leaves has one: SHARP trees cannot span the 6 leaves below them that have one" {
		t.Fatalf("want both spines in one finding:%s", titles(fs))
	}
	if im := fs[0].Impact.Summary; !strings.Contains(im, "every SHARP job with hosts on more than one leaf (the 24 host ports under them) gets no SHARP tree") {
		t.Errorf("impact %q", im)
	}

	if fs := byCheck(sharpCheck(t, sharpFabric(t, 6, "spine01", "spine02", "leaf01", "leaf02", "leaf03", "leaf04"), true, nil, nil).Findings, id); len(fs) > 0 {
		t.Errorf("2 of 6 leaves with an AN: want none, got:%s", titles(fs))
	}
}

// TestSharpANFolds: two of 8 leaves without an AN are one finding naming
// both; three of 8 (5 with one: under three quarters) and 1 of 3 (2 with
// one: too few peers) are not judged.
func TestSharpANFolds(t *testing.T) {
	const id = "topology.missing-sharp-an"
	fs := byCheck(sharpCheck(t, sharpFabric(t, 8, "leaf07", "leaf02"), true, nil, nil).Findings, id)
	if len(fs) != 1 || len(fs[0].Entities) != 2 || fs[0].Title != "2 leaves have no SHARP Aggregation Node where 6 of the 8 Quantum-2 leaves have one: leaf02, leaf07" {
		t.Fatalf("want one finding naming leaf02 and leaf07:%s", titles(fs))
	}
	if pl := fs[0].Place(); fs[0].Group != "leaf02, leaf07" || pl.Node != "leaf02, leaf07" {
		t.Errorf("group %q, placed at %q: want both leaves (the textfile's node label)", fs[0].Group, pl.Node)
	}
	if !strings.Contains(fs[0].Evidence[0].Text, "leaf02: no Aggregation Node behind its port 16; leaf07: no Aggregation Node behind its port 16") {
		t.Errorf("evidence %q: want each leaf", fs[0].Evidence[0].Text)
	}
	for name, f := range map[string]*fabric.Fabric{
		"3 of 8 without":        sharpFabric(t, 8, "leaf01", "leaf02", "leaf03"),
		"1 of 3 leaves without": sharpFabric(t, 3, "leaf02"),
	} {
		if fs := byCheck(sharpCheck(t, f, true, nil, nil).Findings, id); len(fs) > 0 {
			t.Errorf("%s: want none, got:%s", name, titles(fs))
		}
	}
}

// TestSharpANNotAnswering: a switch's AN is dead (its link up, its agent
// silent): could not look, so undecided, never missing; leaf03's among
// the leaves, spine02's above them.
func TestSharpANNotAnswering(t *testing.T) {
	const id = "topology.missing-sharp-an"
	for _, sw := range []string{"leaf03", "spine02"} {
		f := sharpFabric(t, 6)
		dead := f.Nodes[slices.IndexFunc(f.Nodes, func(n *fabric.Node) bool { return n.Type == mad.NodeSwitch && n.Description == sw })].Ports[anPort].Remote.Node
		res := sharpCheck(t, f, false, nil, func(s *sim.Sim) {
			if err := s.Kill(fmt.Sprintf("0x%016x", dead.GUID)); err != nil {
				t.Fatal(err)
			}
		})
		if fs := byCheck(res.Findings, id); len(fs) > 0 {
			t.Errorf("%s: a silent AN reported missing:%s", sw, titles(fs))
		}
		u := undecidedOf(res, id)
		if len(u) != 1 || u[0].Subject.Node != sw || !strings.Contains(u[0].Reason, "the far end of its port 16 (up) did not answer") {
			t.Errorf("want %s undecided, got %v", sw, u)
		}
	}
}

// TestSharpANLinkFaults: an AN whose link is down or degraded is the link
// checks' to report. Disabled, the AN is gone from the sweep: with the
// fabric as expected topology link.down names the cable and this check
// says nothing; without one this check names the leaf and says its port
// is Disabled. At 1X the AN is there: link.degraded-width, not this.
func TestSharpANLinkFaults(t *testing.T) {
	const id = "topology.missing-sharp-an"
	down := func(s *sim.Sim) {
		if err := s.Down("leaf03/16"); err != nil {
			t.Fatal(err)
		}
	}
	res := sharpCheck(t, sharpFabric(t, 6), true, sharpFabric(t, 6), down)
	if fs := byCheck(res.Findings, id); len(fs) > 0 {
		t.Errorf("with the expected topology, the AN's down link reported as a missing AN:%s", titles(fs))
	}
	if !slices.ContainsFunc(byCheck(res.Findings, "link.down"), func(f checks.Finding) bool {
		return slices.ContainsFunc(f.Entities, func(e checks.Entity) bool { return e.Node == "leaf03" && e.Port == anPort })
	}) {
		t.Errorf("link.down does not name leaf03/16:%s", titles(res.Findings))
	}
	res = sharpCheck(t, sharpFabric(t, 6), true, nil, down)
	fs := byCheck(res.Findings, id)
	if len(fs) != 1 || !strings.Contains(fs[0].Evidence[0].Text, "leaf03: its port 16 is Disabled and has no Aggregation Node behind it") {
		t.Errorf("without an expected topology want leaf03 with its port Disabled:%s", titles(fs))
	}

	res = sharpCheck(t, sharpFabric(t, 6), true, nil, func(s *sim.Sim) {
		if err := s.Degrade("leaf03/16", mad.Width1X, 0); err != nil {
			t.Fatal(err)
		}
	})
	if fs := byCheck(res.Findings, id); len(fs) > 0 {
		t.Errorf("a degraded AN link reported as a missing AN:%s", titles(fs))
	}
	if !slices.ContainsFunc(byCheck(res.Findings, "link.degraded-width"), func(f checks.Finding) bool {
		return slices.ContainsFunc(f.Entities, func(e checks.Entity) bool { return e.Node == "leaf03" && e.Port == anPort })
	}) {
		t.Errorf("link.degraded-width does not name leaf03/16:%s", titles(res.Findings))
	}
}

// TestCorpusDGXSharpANDown: the DGX SuperPOD's leaves all carry an AN,
// and the check is silent there (TestCorpusSharpANNoFalseAlarm); with one
// leaf's port 65 disabled in the simulator that leaf, and only it, is
// reported against its 30 peers.
func TestCorpusDGXSharpANDown(t *testing.T) {
	p := corpusFile(t, "dgx-ndr-2025.ibnetdiscover")
	s, _, err := sim.Load(context.Background(), p, "", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Down("MF0;A09-P1-IBLEAF-02-03:MQM9701/U1/65"); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, true)
	sw.RoutesComputed = true
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	fs := byCheck(res.Findings, "topology.missing-sharp-an")
	if len(fs) != 1 || len(fs[0].Entities) != 1 || fs[0].Entities[0].Node != "MF0;A09-P1-IBLEAF-02-03:MQM9701/U1" ||
		!strings.Contains(fs[0].Title, "where its 30 peer leaves have one") {
		t.Errorf("want IBLEAF-02-03 against its 30 peers:%s", titles(fs))
	}
}

// TestGateSharpANFromTheSweep: a gate's part holds the job's leaves, not
// every leaf of their model, so it takes the sweep's verdict on them: the
// finding on leaf03 for a job on leaf03's hosts (with whose verdict it
// is), nothing for a job on leaf01's; verdicts that did not judge it
// (an older ibdoctor's) make the gate skip it, saying why.
func TestGateSharpANFromTheSweep(t *testing.T) {
	const id = "topology.missing-sharp-an"
	f := sharpFabric(t, 6, "leaf03")
	s := &checks.Snapshot{Fabric: f}
	res, err := checks.Run(s)
	if err != nil {
		t.Fatal(err)
	}
	v := checks.FabricWide(s, res, time.Unix(1e9, 0))
	if !v.Judged(id) {
		t.Fatalf("the sweep's verdicts judged %q", v.Checks)
	}
	// As a gate reads them: JSON, which drops the entities' NodeGUID.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var read checks.FabricVerdicts
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	gate := func(host string, v *checks.FabricVerdicts) *checks.Result {
		i := slices.IndexFunc(f.Nodes, func(n *fabric.Node) bool { return strings.HasPrefix(n.Description, host+" ") })
		res, err := checks.Run(&checks.Snapshot{Fabric: f, Scope: checks.ScopeFor(f, []*fabric.Node{f.Nodes[i]}), FabricRouting: v}, id)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// FatTree2 cables hosts to leaves in order: 4 a leaf.
	fs := gate("gpu009", &read).Findings
	if len(fs) != 1 || fs[0].Entities[0].Node != "leaf03" || !slices.ContainsFunc(fs[0].Evidence, func(e checks.Evidence) bool { return e.Name == "judged" }) {
		t.Errorf("a job on leaf03: %s", titles(fs))
	}
	if fs := gate("gpu001", &read).Findings; len(fs) != 0 {
		t.Errorf("a job on leaf01: %s", titles(fs))
	}
	old := read
	old.Checks = []string{"routing.ecmp-imbalance"}
	if r := gate("gpu009", &old); len(r.Findings) != 0 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "run 'ibdoctor sweep'") {
		t.Errorf("verdicts without it: findings %s, skipped %+v; want it skipped with the reason", titles(r.Findings), r.Skipped)
	}
}

// TestSharpANAboveOtherModelNotAnswering (review R1): the spines are of
// another model than the leaves, and no switch of theirs shows an AN, so
// no port number says where one would be; spine01's AN is dead (its link
// up, its agent silent). Whether spine01 has one could not be looked at:
// undecided, never missing. spine02, every port read, is missing.
func TestSharpANAboveOtherModelNotAnswering(t *testing.T) {
	const id = "topology.missing-sharp-an"
	f := sharpFabric(t, 6, "spine02")
	var dead *fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && strings.HasPrefix(n.Description, "spine") {
			n.DeviceID = 0xbeef
			if n.Description == "spine01" {
				dead = n.Ports[anPort].Remote.Node
			}
		}
	}
	res := sharpCheck(t, f, false, nil, func(s *sim.Sim) {
		if err := s.Kill(fmt.Sprintf("0x%016x", dead.GUID)); err != nil {
			t.Fatal(err)
		}
	})
	fs := byCheck(res.Findings, id)
	if len(fs) != 1 || len(fs[0].Entities) != 1 || fs[0].Entities[0].Node != "spine02" {
		t.Errorf("want spine02 alone missing:%s", titles(fs))
	}
	u := undecidedOf(res, id)
	if len(u) != 1 || u[0].Subject.Node != "spine01" || !strings.Contains(u[0].Reason, "the far end of its port 16 (up) did not answer") {
		t.Errorf("want spine01 undecided, got %v", u)
	}
}
