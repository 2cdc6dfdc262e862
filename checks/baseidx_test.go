package checks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/fixtures"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/mad"
)

// sweepSample sweeps the built-in sample fabric with these faults (a
// faults file's text) through the in-process simulator.
func sweepSample(t *testing.T, faults string) *diagnose.Sweep {
	t.Helper()
	f, _, err := fabric.Decode(fixtures.SampleTopology(), "sample topology")
	if err != nil {
		t.Fatal(err)
	}
	return sweepSim(t, f, 0, func(s *sim.Sim) {
		fs, err := sim.ParseFaults(strings.NewReader(faults))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ApplyFaults(fs); err != nil {
			t.Fatal(err)
		}
	})
}

// baselineBothWays saves base as dir's baseline and builds the later
// sweep's Baseline both ways: decoded from baseline.json.gz and reduced
// (as every later sweep did), and read from baseline.topo; Accepted from
// baseline.idx either way.
func baselineBothWays(t *testing.T, base *fabric.Fabric, accepted bool) (decoded, read *checks.Baseline) {
	t.Helper()
	dir := t.TempDir()
	if err := snapshot.SaveBaseline(dir, base, "test", accepted); err != nil {
		t.Fatal(err)
	}
	acc, err := snapshot.LoadBaseline(dir)
	if err != nil {
		t.Fatal(err)
	}
	decoded = checks.BaselineOf(acc)
	if read, err = snapshot.LoadBaselineTopology(dir); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*checks.Baseline{decoded, read} {
		if b.Accepted, err = snapshot.BaselineAccepted(dir); err != nil {
			t.Fatal(err)
		}
	}
	if decoded.Accepted != accepted {
		t.Fatalf("Accepted %v, saved %v", decoded.Accepted, accepted)
	}
	return decoded, read
}

// findingsOf runs every check over sw against baseline and gives the
// findings as JSON.
func findingsOf(t *testing.T, sw *diagnose.Sweep, baseline *checks.Baseline, designed bool) []byte {
	t.Helper()
	snap := sw.Snapshot(checks.Expectations{}, baseline, nil)
	snap.BaselineDesigned = designed
	res, err := checks.Run(snap)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(res.Findings); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// baselineChecks are the checks that read the baseline.
var baselineChecks = []string{"topology.changed", "topology.miswired", "link.down", "link.polling", "link.loopback", "topology.missing-hca"}

// TestBaselineFromTopologyAgrees: the later sweep's baseline read from
// baseline.topo is, field by field, the one decoded from baseline.json.gz
// and reduced, and every check (those that read the baseline among them)
// finds the same with either, for the sample, the sample's faults file,
// a GUID twice, an accepted and a designed baseline and a real dump.
func TestBaselineFromTopologyAgrees(t *testing.T) {
	faults, err := os.ReadFile(filepath.Join("..", "fixtures", "sample", "faults.txt"))
	if err != nil {
		t.Fatal(err)
	}
	clean := sweepSample(t, "")
	incident := sweepSample(t, string(faults))
	changed := sweepSample(t, `miswire leaf01/33 leaf01/41
down "gpu003 mlx5_2"/1
polling "gpu005 mlx5_1"/1
degrade leaf02/40 width=1x
training leaf03/40
sweep
`)
	dup := sweepSample(t, `dupguid "gpu001 mlx5_0" "gpu002 mlx5_0"`)
	if len(dup.Fabric.DuplicateGUIDs) == 0 {
		t.Fatal("the dupguid fault left no duplicate GUID")
	}
	// A baseline from before leaf03 was cabled in: its ports are the
	// expected topology's to decide no more (link.polling).
	noLeaf := sweepSample(t, "").Fabric
	var kept []*fabric.Node
	for _, n := range noLeaf.Nodes {
		if n.Description != "leaf03" {
			kept = append(kept, n)
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				p.Remote.Remote, p.Remote = nil, nil
			}
		}
	}
	if len(kept) != len(noLeaf.Nodes)-1 {
		t.Fatal("the sample has no leaf03")
	}
	noLeaf.Nodes = kept
	noLeaf.Reindex()
	// The sweeps that each baseline is compared with.
	currents := []struct {
		name string
		sw   *diagnose.Sweep
	}{{"clean", clean}, {"incident", incident}, {"changed", changed}, {"dupguid", dup}}
	cases := []struct {
		name               string
		base               *fabric.Fabric
		accepted, designed bool
	}{
		{"sample", clean.Fabric, false, false},
		{"sample faults.txt", incident.Fabric, false, false},
		{"changed", changed.Fabric, false, false},
		{"dupguid", dup.Fabric, false, false},
		{"without leaf03", noLeaf, false, false},
		{"accepted", clean.Fabric, true, false},
		{"accepted incident", incident.Fabric, true, false},
		{"designed", clean.Fabric, false, true},
	}
	sawFindings := map[string]bool{}
	for _, c := range cases {
		decoded, read := baselineBothWays(t, c.base, c.accepted)
		if d := checks.BaselineDiff(decoded, read); d != "" {
			t.Fatalf("%s: baseline.topo's Baseline differs from the decoded one's: %s", c.name, d)
		}
		if decoded.Nodes() != len(c.base.Nodes) {
			t.Fatalf("%s: %d nodes, the fabric has %d", c.name, decoded.Nodes(), len(c.base.Nodes))
		}
		for _, cur := range currents {
			want := findingsOf(t, cur.sw, decoded, c.designed)
			got := findingsOf(t, cur.sw, read, c.designed)
			if !bytes.Equal(want, got) {
				t.Fatalf("%s against %s: findings differ:\ndecoded %s\nread    %s", c.name, cur.name, want, got)
			}
			for _, id := range baselineChecks {
				if bytes.Contains(want, []byte(fmt.Sprintf("%q", id))) {
					sawFindings[id] = true
				}
			}
		}
	}
	// The comparison must have had something to compare.
	for _, id := range []string{"topology.changed", "topology.miswired", "link.down", "link.polling", "topology.missing-hca"} {
		if !sawFindings[id] {
			t.Errorf("no case raised %s: the cases do not exercise it", id)
		}
	}
}

// TestBaselineFromTopologyCorpus: the same on a real dump, against its
// own sweep and a sweep with one of its HCA links down.
func TestBaselineFromTopologyCorpus(t *testing.T) {
	p := corpusFile(t, "treydock-hdr.ibnetdiscover-p")
	base, _, err := fabric.ReadFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var ca string
	for _, n := range base.Nodes {
		if n.Type == mad.NodeCA && n.Description != "" {
			for _, q := range n.Ports {
				if q != nil && q.Remote != nil {
					ca = fmt.Sprintf("down 0x%016x/%d\n", n.GUID, q.Num)
					break
				}
			}
		}
		if ca != "" {
			break
		}
	}
	if ca == "" {
		t.Fatal("no cabled HCA in the dump")
	}
	own := corpusSweep(t, p)
	s, _, err := sim.Load(context.Background(), p, "", sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(ca))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	down := sweepOf(t, s, false)
	for _, accepted := range []bool{false, true} {
		decoded, read := baselineBothWays(t, base, accepted)
		if d := checks.BaselineDiff(decoded, read); d != "" {
			t.Fatalf("accepted %v: baseline.topo's Baseline differs from the decoded one's: %s", accepted, d)
		}
		for _, sw := range []*diagnose.Sweep{own, down} {
			sw.RoutesComputed = true
			want, got := findingsOf(t, sw, decoded, false), findingsOf(t, sw, read, false)
			if !bytes.Equal(want, got) {
				t.Fatalf("findings differ:\ndecoded %s\nread    %s", want, got)
			}
		}
		if want := findingsOf(t, down, decoded, false); !bytes.Contains(want, []byte(`"link.down"`)) && !bytes.Contains(want, []byte(`"topology.changed"`)) {
			t.Fatalf("%s gave neither link.down nor topology.changed: the case compares nothing", strings.TrimSpace(ca))
		}
	}
}

// TestNewBaselineFromColumns: a Baseline given back from its columns is
// the same, on the shapes BaselineOf keeps links for (a gate's part of
// the baseline, cabled to switches it leaves out; a one-sided cable; a
// port cabled to itself) and with a GUID twice.
func TestNewBaselineFromColumns(t *testing.T) {
	sample := func() *fabric.Fabric {
		f, _, err := fabric.Decode(fixtures.SampleTopology(), "sample topology")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	part := &fabric.Fabric{}
	for _, n := range sample().Nodes {
		if n.Type != mad.NodeSwitch || !strings.HasPrefix(n.Description, "spine") {
			part.Nodes = append(part.Nodes, n)
		}
	}
	malformed := sample()
	var ends []*fabric.Port
	for _, n := range malformed.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				ends = append(ends, p)
			}
		}
	}
	ends[0].Remote.Remote = nil
	ends[len(ends)-1].Remote = ends[len(ends)-1]
	dup := sample()
	dup.Nodes[3].GUID = dup.Nodes[7].GUID
	dup.Reindex()
	for name, f := range map[string]*fabric.Fabric{"sample": sample(), "part": part, "malformed": malformed, "dup": dup} {
		b := checks.BaselineOf(f)
		b.Accepted = true
		c := b.Columns()
		switch name {
		case "part":
			if c.In == len(c.GUID) {
				t.Fatal("the part reaches no node outside it")
			}
		case "malformed":
			if !c.KeptLinks {
				t.Fatal("the malformed fabric's links are not kept")
			}
		}
		got, err := checks.NewBaseline(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got.Accepted = true
		if d := checks.BaselineDiff(b, got); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
	}
}
