package checks_test

import (
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
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, base, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// TestDeadSpineOneFinding: a spine whose management agent stopped
// answering (it still forwards traffic) is one finding: its 64 cables
// lead to a node that does not answer. Routes through it could not be
// looked at, which is not a black hole: no routing.unreachable.
func TestDeadSpineOneFinding(t *testing.T) {
	fs := sampleWith(t, "dead spine02\n", false)
	u := byCheck(fs, "topology.unreachable-node")
	if len(u) != 1 || u[0].Severity != checks.Critical {
		t.Errorf("want one critical topology.unreachable-node, got:%s", titles(u[:min(5, len(u))]))
	}
	if r := byCheck(fs, "routing.unreachable"); len(r) > 0 {
		t.Errorf("could not look is not a black hole, got %d routing.unreachable:%s", len(r), titles(r[:min(5, len(r))]))
	}
	if bad := atOrAbove(fs, checks.Warning); len(bad) != 1 {
		t.Errorf("want only the dead spine at warning or above, got %d:%s", len(bad), titles(bad[:min(10, len(bad))]))
	}
}

// TestDeadLeafNamesItsHosts: a leaf that stopped answering hides its
// hosts from discovery. Against the expected topology it is one critical
// finding naming the 32 hosts behind it, not one per host.
func TestDeadLeafNamesItsHosts(t *testing.T) {
	fs := sampleWith(t, "dead leaf03\n", true)
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
	if u := byCheck(fs, "topology.unreachable-node"); len(u) != 1 {
		t.Errorf("want one topology.unreachable-node, got %d:%s", len(u), titles(u[:min(5, len(u))]))
	}
	if d := byCheck(fs, "link.down"); len(d) > 0 {
		t.Errorf("links to a missing node are its finding, got %d link.down:%s", len(d), titles(d[:min(5, len(d))]))
	}
}
