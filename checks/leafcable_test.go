package checks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// leafCableTree is a 6-leaf, 4-spine fat tree (8 hosts a leaf, one cable
// to each spine) with leaf01's and leaf02's cables to spine01 swapped
// into one leaf-to-leaf cable (leaf01/a <-> leaf02/b) and a loopback on
// spine01: docs/faults.md's `miswire leaf01/a leaf02/b` when both went
// to the same spine. It returns the fabric, the clean one, and the two
// leaf ports.
func leafCableTree(t *testing.T) (f, base *fabric.Fabric, a, b *fabric.Port) {
	t.Helper()
	build := func() *fabric.Fabric {
		f, err := topology.Routed(topology.FatTree2{Leaves: 6, Spines: 4, HostsPerLeaf: 8})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f, base = build(), build()
	spine := node(t, f, "spine01")
	for _, name := range []string{"leaf01", "leaf02"} {
		for _, p := range node(t, f, name).Ports {
			if p != nil && p.Remote != nil && p.Remote.Node == spine {
				if a == nil {
					a = p
				} else {
					b = p
				}
			}
		}
	}
	ra, rb := a.Remote, b.Remote
	a.Remote, b.Remote, ra.Remote, rb.Remote = b, a, rb, ra
	return f, base, a, b
}

// TestShortUplinksCountsSpineCables: a leaf whose cable to a spine is
// plugged into another leaf has 3 cables to the spines where its peers
// have 4. Before, the leaf-to-leaf cable was counted as an uplink: "has 4
// uplinks where its spines' other leaves have 5", a figure no leaf has,
// beside evidence "to spine01 0 of 1" (trial N4).
func TestShortUplinksCountsSpineCables(t *testing.T) {
	f, _, _, _ := leafCableTree(t)
	for _, fd := range byCheck(run(t, &Snapshot{Fabric: f}), "topology.oversubscribed") {
		for _, e := range fd.Evidence {
			if e.Name != "uplinks" {
				continue
			}
			if e.Value != 3 || e.Threshold != 4 || !strings.Contains(fd.Title, "has 3 uplinks where its spines' other leaves have 4") {
				t.Errorf("%q: uplinks %v of %v, want 3 of 4 (cables to spines only)", fd.Title, e.Value, e.Threshold)
			}
		}
	}
}

// TestLeafToLeafCable: the cable leaf01/a <-> leaf02/b, where every other
// leaf's port a goes to a spine, is named as the cable to move, and the
// two leaves' "fewer uplinks than their peers" is folded into it instead
// of calling a cable "missing or down" (it is up, in the wrong place).
// Before, no finding named the leaf-to-leaf cable (trial N4).
func TestLeafToLeafCable(t *testing.T) {
	f, _, a, b := leafCableTree(t)
	fs := run(t, &Snapshot{Fabric: f})
	l := byCheck(fs, "topology.leaf-to-leaf")
	if len(l) != 1 {
		t.Fatalf("%d leaf-to-leaf findings, want 1: %+v", len(l), fs)
	}
	want := fmt.Sprintf("leaf01/%d is cabled to another leaf (leaf02/%d); its peers' port %d goes to a spine", a.Num, b.Num, a.Num)
	if l[0].Title != want {
		t.Errorf("title %q, want %q", l[0].Title, want)
	}
	folds := 0
	for _, e := range l[0].Evidence {
		if e.Name == "uplinks" {
			folds++
			if strings.Contains(e.Text, "missing or down") {
				t.Errorf("folded count still says missing or down: %s", e.Text)
			}
		}
	}
	if folds != 2 {
		t.Errorf("%d uplink counts folded into it, want 2 (leaf01, leaf02): %+v", folds, l[0].Evidence)
	}
	for _, fd := range byCheck(fs, "topology.oversubscribed") {
		t.Errorf("left beside it: %s", fd.Title)
	}
	// The clean fabric says nothing (leaves cabled to each other by
	// design: TestCorpusLeafToLeafQuiet on the corpus).
	_, base, _, _ := leafCableTree(t)
	if l := byCheck(run(t, &Snapshot{Fabric: base}), "topology.leaf-to-leaf"); len(l) != 0 {
		t.Errorf("clean fabric: %+v", l)
	}
}

// TestMiswiredNamesBothEnds: against the clean fabric, the expected
// cables leaf01/a <-> spine01 and leaf02/b <-> spine01 are reported
// naming the leaf ends too (each now on the leaf-to-leaf cable), not
// only the spine ports that became a loopback (trial N4c).
func TestMiswiredNamesBothEnds(t *testing.T) {
	f, base, a, b := leafCableTree(t)
	named := map[string]bool{}
	for _, fd := range byCheck(run(t, &Snapshot{Fabric: f, Baseline: BaselineOf(base)}), "topology.miswired") {
		for _, e := range fd.Entities {
			named[e.String()] = true
		}
		if !strings.Contains(fd.Evidence[0].Text, fmt.Sprintf("leaf01/%d <-> leaf02/%d", a.Num, b.Num)) &&
			!strings.Contains(fd.Evidence[0].Text, fmt.Sprintf("leaf02/%d <-> leaf01/%d", b.Num, a.Num)) {
			t.Errorf("%q: evidence %q does not name the leaf-to-leaf cable", fd.Title, fd.Evidence[0].Text)
		}
	}
	for _, p := range []string{fmt.Sprintf("leaf01/%d", a.Num), fmt.Sprintf("leaf02/%d", b.Num)} {
		if !named[p] {
			t.Errorf("%s not named by topology.miswired (named: %v)", p, named)
		}
	}
}

// TestMiswiredTitleNamesBothEnds: the title of the swap names the two
// ends to exchange first (a table cut at 80 columns keeps them) and where
// each cable goes now: the leaf end on the leaf-to-leaf cable, not only
// the spine end on its loopback. Before trial N4c the title was "Cable at
// spine01/N goes to spine01/M, expected leaf01/a"; until the swap was one
// finding, each expected cable had its own (TestSwapIsOneFinding).
func TestMiswiredTitleNamesBothEnds(t *testing.T) {
	f, base, a, b := leafCableTree(t)
	m := byCheck(run(t, &Snapshot{Fabric: f, Baseline: BaselineOf(base)}), "topology.miswired")
	if len(m) != 1 {
		t.Fatalf("%d miswired findings, want 1 (one swap): %+v", len(m), m)
	}
	if want := fmt.Sprintf("leaf01/%d and spine01/", a.Num); !strings.HasPrefix(m[0].Title, want) {
		t.Errorf("title %q, want it to start %q", m[0].Title, want)
	}
	if want := fmt.Sprintf("cable at leaf01/%d goes to leaf02/%d (expected spine01/", a.Num, b.Num); !strings.Contains(m[0].Title, want) {
		t.Errorf("title %q does not say where the leaf end goes now (%q)", m[0].Title, want)
	}
}
