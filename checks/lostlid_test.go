package checks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// smallTreeWith sweeps a two-level fat tree (4 leaves, 2 spines, 4
// single-HCA hosts per leaf) from gpu001 after the faults and runs every
// check.
func smallTreeWith(t *testing.T, faults string) []checks.Finding {
	t.Helper()
	f, err := topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4}.Build()
	if err != nil {
		t.Fatal(err)
	}
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
	fs, err := sim.ParseFaults(strings.NewReader(faults))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(fs); err != nil {
		t.Fatal(err)
	}
	conn, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(conn, transport.Options{Timeout: 250 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close(); conn.Close() })
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// TestLostLIDAtDisabledPort: leaf03's port facing gpu009 is Disabled
// (ibportstate disable, trial A4), or gpu009's own port is (the leaf port
// then polls), and the host vanished from discovery; no SM swept since,
// so every switch still forwards its LID into the leaf port.
// routing.lost-lid names the port, its state, the LID and how many
// switches route it there, at error. Before, check said nothing: the host
// was not "live" for routing.unreachable, and link.down judges a
// Disabled switch port only against an expected topology.
func TestLostLIDAtDisabledPort(t *testing.T) {
	for _, tc := range []struct{ fault, state string }{
		{"down leaf03/1\n", "is Disabled"},                // the switch side disabled
		{"down \"gpu009 mlx5_0\"/1\n", "is Down/Polling"}, // the host side disabled: the leaf port polls
	} {
		fs := smallTreeWith(t, tc.fault)
		lost := byCheck(fs, "routing.lost-lid")
		if len(lost) != 1 {
			t.Errorf("%s: routing.lost-lid %s, want one", strings.TrimSpace(tc.fault), titles(fs))
			continue
		}
		f := lost[0]
		if f.Severity != checks.Error || !strings.HasPrefix(f.Title, "leaf03/1 "+tc.state+": 6 switches still forward LID ") || f.Entities[0].Node != "leaf03" || f.Entities[0].Port != 1 {
			t.Errorf("%s: %s %q %+v", strings.TrimSpace(tc.fault), f.Severity, f.Title, f.Entities)
		}
	}
}

// TestLostLIDHealthy: a healthy fabric, and one with a cable to a spine
// down (its routes are routing.unreachable's: every LID is held), have
// no routing.lost-lid; on the sample's incident the Polling HCA port's
// LID is still routed to its leaf port, which topology.missing-hca names:
// folded into it (evidence "lost LIDs"), not a second finding.
func TestLostLIDHealthy(t *testing.T) {
	for _, faults := range []string{"", "down leaf03/5\n"} {
		if lost := byCheck(smallTreeWith(t, faults), "routing.lost-lid"); len(lost) != 0 {
			t.Errorf("%q: %s", faults, titles(lost))
		}
	}
	res, _ := incidentWith(t, "")
	if lost := byCheck(res.Findings, "routing.lost-lid"); len(lost) != 0 {
		t.Errorf("incident: %s", titles(lost))
	}
	folded := false
	for _, f := range byCheck(res.Findings, "topology.missing-hca") {
		for _, e := range f.Evidence {
			folded = folded || (e.Name == "lost LIDs" && strings.Contains(e.Text, "LID 104"))
		}
	}
	if !folded {
		t.Errorf("topology.missing-hca does not carry the lost LID 104")
	}
}
