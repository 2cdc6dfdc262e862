package checks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// TestRelayErrorsNameTheDownPortsFinding: a relay-error finding's next
// step said "see the link.polling or topology.missing-hca finding on it"
// whatever finding the down port had: with leaf01's uplink 33 down
// against the expected topology (a gate's ISL on the job's route) the
// finding there is a link.down, and without the expected topology no
// finding names that switch port at all. It names the finding that is
// there, by check and title, and none when there is none.
func TestRelayErrorsNameTheDownPortsFinding(t *testing.T) {
	base, _, err := sim.SampleFabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, faults string
		base         *fabric.Fabric
		route        string // in the action: the routes out of the down port
		want         string // the finding named; "" for none
	}{
		{"ISL down, expected topology", "down leaf01/33\n", base, "out of port 33, which is Down/Disabled",
			`link.down "Link spine01/1 <-> leaf01/33 from the expected topology is down"`},
		{"ISL down, no expected topology", "down leaf01/33\n", nil, "out of port 33, which is Down/Disabled", ""},
		{"the sample's missing HCA", "", nil, "LID 104 out of port 28, which is Down/Polling",
			`topology.missing-hca "gpu012 has 7 HCAs where its peers have 8: mlx5_3 missing; leaf03/28 without a link, likely where its cable belongs"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			sw, _ := sampleCheck(t, c.faults, transport.Options{Timeout: 250 * time.Millisecond, Retries: 1}, diagnose.Options{Routes: true, Counters: true, Interval: time.Second})
			res, err := checks.Run(sw.Snapshot(checks.Expectations{}, checks.BaselineOf(c.base), nil))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range byCheck(res.Findings, "counters.errors") {
				if !strings.Contains(f.Title, "PortRcvSwitchRelayErrors") || !strings.Contains(f.Action, c.route) {
					continue
				}
				n++
				if strings.Contains(f.Action, "link.polling or topology.missing-hca") {
					t.Errorf("%s: the action names findings that may not be there: %s", f.Title, f.Action)
				}
				if c.want != "" && !strings.Contains(f.Action, "Bring that link back (see "+c.want+")") {
					t.Errorf("%s: the action does not name %s: %s", f.Title, c.want, f.Action)
				}
				if c.want == "" && strings.Contains(f.Action, "(see ") {
					t.Errorf("%s: no finding names the down port, the action points at one: %s", f.Title, f.Action)
				}
			}
			if n == 0 {
				t.Fatalf("no relay-error finding routing %q (findings:%s)", c.route, titles(res.Findings))
			}
		})
	}
}
