package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSelfBaselineKeepsDisabledHostPort (trial C7, the same judgement for
// link.down and link.polling): a host port Disabled (or stuck Polling)
// at the first sweep has no link in the baseline that sweep takes by
// itself; the checks left a host the baseline describes to the
// baseline's lost links, so from the second sweep on nothing said it.
// Only the operator's word (--expect-topology, 'baseline accept') makes
// a port without a cable as built.
func TestSelfBaselineKeepsDisabledHostPort(t *testing.T) {
	for _, c := range []struct {
		check string
		phys  mad.PhysState
	}{
		{"link.down", mad.PhysDisabled},
		{"link.polling", mad.PhysPolling},
	} {
		f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 4}.Build()
		if err != nil {
			t.Fatal(err)
		}
		var host *fabric.Port
		for _, n := range f.Nodes {
			if n.Type != mad.NodeSwitch && strings.HasPrefix(n.Description, "gpu002") {
				host = n.Ports[1]
				break
			}
		}
		if host == nil || host.Remote == nil {
			t.Fatal("no gpu002 port 1 with a link")
		}
		host.Remote.Remote, host.Remote.PhysState, host.Remote.State = nil, mad.PhysPolling, mad.PortStateDown
		host.Remote, host.PhysState, host.State = nil, c.phys, mad.PortStateDown
		for _, b := range []struct {
			how               string
			base              bool
			accepted, planned bool
			want              int
		}{
			{"no baseline", false, false, false, 1},
			{"the first sweep's own baseline", true, false, false, 1},
			{"a baseline the operator accepted", true, true, false, 0},
			{"--expect-topology", true, false, true, 0},
		} {
			var bl *checks.Baseline
			if b.base {
				bl = checks.BaselineOf(f)
				bl.Accepted = b.accepted
			}
			res, err := checks.Run(&checks.Snapshot{Fabric: f, Baseline: bl, BaselineDesigned: b.planned}, c.check)
			if err != nil {
				t.Fatal(err)
			}
			var got []checks.Finding
			for _, x := range byCheck(res.Findings, c.check) {
				if strings.Contains(x.Title, "gpu002") {
					got = append(got, x)
				}
			}
			if len(got) != b.want {
				t.Errorf("%s %s: %d findings on gpu002's port, want %d:%s", c.check, b.how, len(got), b.want, titles(res.Findings))
			}
		}
	}
}
