package checks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// sampleWith sweeps the built-in sample fabric (without its incident)
// after the faults, and runs every check against baseline (nil: none).
func sampleWith(t *testing.T, faults string, baseline bool) []checks.Finding {
	t.Helper()
	s, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	sw := sweepOf(t, s, false)
	var base *fabric.Fabric
	if baseline {
		if base, _, err = sim.SampleFabric(); err != nil {
			t.Fatal(err)
		}
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, checks.BaselineOf(base), nil))
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// TestDeadSpineNoFinding: a spine whose management agent stopped
// answering (it still forwards traffic) could not be looked at: its 64
// cables lead to a node that does not answer, which is no finding — not
// a critical, not a black hole (issue 17: before, 112 criticals). The
// report lists what was not read and check exits 2.
func TestDeadSpineNoFinding(t *testing.T) {
	fs := sampleWith(t, "dead spine02\n", false)
	if bad := atOrAbove(fs, checks.Warning); len(bad) != 0 {
		t.Errorf("want nothing at warning or above, got %d:%s", len(bad), titles(bad[:min(10, len(bad))]))
	}
}

// TestDeadLeafAgainstBaseline: a leaf whose agent stopped answering hides
// its hosts from discovery, but the spines' ports to it are up: against
// the expected topology it is not "missing" (nor its 32 hosts, nor its
// links down): could not look.
func TestDeadLeafAgainstBaseline(t *testing.T) {
	fs := sampleWith(t, "dead leaf03\n", true)
	if bad := atOrAbove(fs, checks.Warning); len(bad) != 0 {
		t.Errorf("want nothing at warning or above, got %d:%s", len(bad), titles(bad[:min(10, len(bad))]))
	}
}

// TestPoweredOffLeafNamesItsHosts: a leaf that is really gone (its links
// down at the spines) is one critical finding against the expected
// topology naming the 32 hosts behind it, not one per host.
func TestPoweredOffLeafNamesItsHosts(t *testing.T) {
	var faults strings.Builder
	faults.WriteString("dead leaf03\n")
	for p := 33; p <= 64; p++ { // its uplinks to the four spines
		fmt.Fprintf(&faults, "down leaf03/%d\n", p)
	}
	fs := sampleWith(t, faults.String(), true)
	c := byCheck(fs, "topology.changed")
	var crit []checks.Finding
	for _, f := range c {
		if f.Severity >= checks.Error {
			crit = append(crit, f)
		}
	}
	if len(crit) != 1 || !strings.Contains(crit[0].Title, "leaf03") || !strings.Contains(crit[0].Title, "32 hosts") {
		t.Fatalf("want one finding for leaf03 and its 32 hosts, got %d:%s", len(crit), titles(crit[:min(5, len(crit))]))
	}
	if ev := crit[0].Evidence; len(ev) < 2 || !strings.Contains(ev[1].Text, "gpu") {
		t.Errorf("the hosts are not named: %v", ev)
	}
}
