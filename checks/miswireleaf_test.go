package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestMiswiredLeafToLeafOneFinding: `miswire leaf01/49 leaf02/50` on the
// sample (docs/faults.md: leaf01/49 and leaf02/50 cabled to each other,
// their spine03 ports to each other) against the clean sample as the
// expected topology. The leaf-to-leaf cable is one fault: it gets one
// finding, topology.miswired (the expected cable it belongs to, error),
// carrying topology.leaf-to-leaf's evidence, not both. Before, the
// baseline gave two miswired findings and a leaf-to-leaf warning naming
// the same cable (trial N4).
func TestMiswiredLeafToLeafOneFinding(t *testing.T) {
	s, err := sim.Sample(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := checks.BaselineOf(s.Fabric())
	fs, err := sim.ParseFaults(strings.NewReader("miswire leaf01/49 leaf02/50\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, false)
	// Without an expected topology the cable is the leaf-to-leaf finding.
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if l := byCheck(res.Findings, "topology.leaf-to-leaf"); len(l) != 1 {
		logFindings(t, res.Findings)
		t.Fatalf("%d leaf-to-leaf findings without a baseline, want 1", len(l))
	}
	res, err = checks.Run(sw.Snapshot(checks.Expectations{}, base, nil))
	if err != nil {
		t.Fatal(err)
	}
	if l := byCheck(res.Findings, "topology.leaf-to-leaf"); len(l) != 0 {
		logFindings(t, res.Findings)
		t.Errorf("%d leaf-to-leaf findings beside topology.miswired for the same cable, want them folded into it", len(l))
	}
	carrying := 0
	for _, f := range byCheck(res.Findings, "topology.miswired") {
		var folded bool
		for _, e := range f.Evidence {
			if strings.Contains(e.Text, "leaf01/49 <-> leaf02/50") && strings.Contains(e.Text, "goes to a spine") {
				folded = true
			}
		}
		if !folded {
			continue
		}
		carrying++
		if f.Severity != checks.Error {
			t.Errorf("%s: severity %s, want error (the higher of the two)", f.Title, f.Severity)
		}
		named := map[string]bool{}
		for _, e := range f.Entities {
			named[e.String()] = true
		}
		if !named["leaf01/49"] || !named["leaf02/50"] {
			t.Errorf("%s: entities %v, want both leaf ends of the cable", f.Title, f.Entities)
		}
		if !strings.Contains(f.Title, "leaf01/49") || !strings.Contains(f.Title, "leaf02/50") {
			t.Errorf("title %q does not name both leaf ends", f.Title)
		}
		uplinks := 0
		for _, e := range f.Evidence {
			if e.Name == "uplinks" && strings.Contains(e.Text, "plugged into a leaf instead") {
				uplinks++
			}
		}
		if uplinks != 2 {
			t.Errorf("%s: %d leaves' uplink counts carried over, want 2 (leaf01, leaf02): %+v", f.Title, uplinks, f.Evidence)
		}
	}
	if carrying != 1 {
		logFindings(t, res.Findings)
		t.Errorf("%d miswired findings carry the leaf-to-leaf cable's evidence, want 1", carrying)
	}
}
