package diagnose

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// TestDisabledPortDropsNotACable (trial G1): a leaf uplink disabled with
// no SM sweeping since (PhysState Disabled, PortState still Active, as
// ibsim's `ibportstate ... disable` leaves it) counts the packets sent
// toward it, this tool's own retried MADs among them, as PortRcvErrors
// and PortXmitDiscards (ibsim: 17 and 21 after two checks). A port with
// no link cannot receive a damaged packet over its cable: those counts
// are no cable verdict (before: error "check the cable" from the third
// run on), and the port's down link is said by its own finding.
func TestDisabledPortDropsNotACable(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := f.NodesByName("leaf01")[0]
	var up int
	for _, p := range leaf.Ports {
		if p != nil && p.Remote != nil && strings.HasPrefix(p.Remote.Node.Description, "spine") {
			up = int(p.Num)
			break
		}
	}
	port := fmt.Sprintf("leaf01/%d", up)
	if err := s.DisabledStale(port); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]uint64{"PortRcvErrors": 17, "PortXmitDiscards": 21} {
		if err := s.SetCounter(port, name, v); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200e6, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := Run(context.Background(), e, Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, fd := range res.Findings {
		if fd.Check != "counters.errors" || len(fd.Entities) == 0 || fd.Entities[0].Node != "leaf01" || fd.Entities[0].Port != up {
			continue
		}
		said = true
		if fd.Severity > checks.Info || strings.Contains(fd.Action, "check the cable") || strings.Contains(fd.Action, "replace the cable") {
			t.Errorf("%s %s: %s", fd.Severity, fd.Title, fd.Action)
		}
		// A count since the last clear (one sweep, no state) may be
		// from before the link went down: on a real port, with no link
		// nothing is received, so PortRcvErrors there were counted
		// while it was up, maybe the cable's. Not said to be nothing of
		// a cable (review R6).
		if strings.Contains(fd.Impact.Summary, "says nothing of a cable") || !strings.Contains(fd.Impact.Summary, "before the link went down") {
			t.Errorf("%s: impact %q claims what the count since the clear does not show", fd.Title, fd.Impact.Summary)
		}
	}
	if !said {
		t.Errorf("the counts on %s are not said at all (they are there: %d findings)", port, len(res.Findings))
	}
}
