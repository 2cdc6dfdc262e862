package checks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// incidentWith sweeps the sample fabric with its incident and the extra
// faults, with a short timeout (the simulator answers at once or never,
// so the timeout only sets how long a dead agent costs), and runs every
// check.
func incidentWith(t *testing.T, faults string) (*checks.Result, *diagnose.Sweep) {
	t.Helper()
	s, err := sim.Sample(sim.Options{})
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
	c, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 250 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res, sw
}

// TestECMPImbalanceBesideDeadLeaf: leaf08's agent is dead (it still
// forwards), so the spines' eight ports to it lead to a far end that
// never answered. The spines' own tables were read and still pile all of
// leaf05's destinations on one port: the two critical
// routing.ecmp-imbalance findings stay. Before, a switch with any unread
// port was skipped whole and the criticals vanished without a word.
func TestECMPImbalanceBesideDeadLeaf(t *testing.T) {
	res, sw := incidentWith(t, "dead leaf08\n")
	if sw.Complete {
		t.Fatal("leaf08 is dead, yet the sweep read everything")
	}
	got := map[string]bool{}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		got[f.Entities[0].Node] = f.Severity == checks.Critical
	}
	for _, sp := range []string{"spine01", "spine02"} {
		if !got[sp] {
			t.Errorf("no critical routing.ecmp-imbalance on %s beside the dead leaf (findings:%s)", sp, titles(res.Findings))
		}
	}
}

// TestECMPImbalanceUndecided: spine01's PortInfo of port 33, the port its
// table sends all of leaf05's destinations out of, went unanswered. Whether
// the spread is uneven depends on that port (down, the routes are broken;
// up, it is the busiest of eight): the check could not decide for spine01
// and says so in Result.Undecided, while spine02, read whole, keeps its
// finding.
func TestECMPImbalanceUndecided(t *testing.T) {
	res, _ := incidentWith(t, "drop spine01/33 attr=PortInfo\n")
	got := map[string]bool{}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		got[f.Entities[0].Node] = true
	}
	if got["spine01"] || !got["spine02"] {
		t.Errorf("ecmp-imbalance findings on %v, want spine02 only", got)
	}
	var und []string
	for _, u := range res.Undecided {
		if u.Check == "routing.ecmp-imbalance" {
			und = append(und, u.String()+": "+u.Reason)
		}
	}
	if len(und) != 1 || !strings.HasPrefix(und[0], "spine01: ") || !strings.Contains(und[0], "33") {
		t.Errorf("undecided %q, want spine01 naming port 33", und)
	}
}

// TestCableUnreadAtBothEnds: the PortInfo of both ends of one cable went
// unanswered (leaf03/33 and spine01/17), so discovery never crossed it:
// nothing says whether it is there. Routes out of those ports are "not
// read", not a black hole. Before, the ports were absent from the model
// and every route over the cable "could not reach" its destinations
// (routing.unreachable, critical: "egress port is down or uncabled").
func TestCableUnreadAtBothEnds(t *testing.T) {
	fs := sampleWith(t, "drop leaf03/33 attr=PortInfo\ndrop spine01/17 attr=PortInfo\n", false)
	if bad := atOrAbove(fs, checks.Warning); len(bad) != 0 {
		t.Errorf("want nothing at warning or above, got %d:%s", len(bad), titles(bad[:min(10, len(bad))]))
	}
}
