package discover

import (
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestUnansweredIsUnreached: a MAD that goes unanswered marks what it
// would have told as unknown (fabric.Unreached), never as Down or a zero
// rate: an unanswered PortInfo, a dead switch agent behind an up link,
// and a switch whose port 0 PortInfo (the speed capabilities) is lost.
func TestUnansweredIsUnreached(t *testing.T) {
	topo := topology.FatTree2{Common: topology.Common{SwitchPorts: 8, Rate: mad.Rate{Width: mad.Width4X, Speed: mad.SpeedHDR}},
		Leaves: 4, Spines: 2, HostsPerLeaf: 4}
	fast := transport.Options{Timeout: 20 * time.Millisecond, Retries: 1}
	port := func(t *testing.T, f *fabric.Fabric, node string, num uint8) *fabric.Port {
		t.Helper()
		for _, n := range f.Nodes {
			if n.Description == node && int(num) < len(n.Ports) && n.Ports[num] != nil {
				return n.Ports[num]
			}
		}
		t.Fatalf("no port %s/%d", node, num)
		return nil
	}

	t.Run("PortInfo dropped", func(t *testing.T) {
		_, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error { return s.Drop("spine01/1", "PortInfo") }, fast, Options{})
		p := port(t, got, "spine01", 1)
		if p.Unreached&fabric.UnreachedInfo == 0 || p.StateKnown() {
			t.Errorf("spine01/1 unreached %v, want PortInfo", p.Unreached)
		}
		if p.Remote == nil || p.Remote.Node.Description != "leaf01" {
			t.Errorf("spine01/1 remote %v: the link is still known from leaf01's side", p.Remote)
		}
		if q := port(t, got, "spine01", 2); !q.Reached() {
			t.Errorf("spine01/2 unreached %v", q.Unreached)
		}
		if len(got.Unreachable) != 1 || got.Unreachable[0].What != "PortInfo 1" {
			t.Errorf("unreachable %+v", got.Unreachable)
		}
	})
	t.Run("dead switch agent", func(t *testing.T) {
		_, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error { return s.Kill("spine02") }, fast, Options{})
		for _, n := range got.Nodes {
			if n.Description == "spine02" {
				t.Fatal("spine02 discovered")
			}
		}
		p := port(t, got, "leaf02", 6) // leaf ports 5, 6 go to spine01, spine02
		if p.Remote != nil || p.Unreached != fabric.UnreachedPeer || !p.PeerUnknown() || p.PhysState != mad.PhysLinkUp {
			t.Errorf("leaf02/6: remote %v unreached %v phys %v, want an up port with an unknown far end", p.Remote, p.Unreached, p.PhysState)
		}
	})
	t.Run("switch port 0 dropped", func(t *testing.T) {
		_, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error { return s.Drop("leaf03/0", "PortInfo") }, fast, Options{})
		p := port(t, got, "leaf03", 1)
		if p.Unreached != fabric.UnreachedSpeed || p.SpeedKnown() || !p.StateKnown() {
			t.Errorf("leaf03/1 unreached %v, want speed only", p.Unreached)
		}
	})
	t.Run("NodeDescription dropped", func(t *testing.T) {
		_, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error { return s.Drop("gpu002 mlx5_0", "NodeDescription") }, fast, Options{})
		b, err := fabric.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := fabric.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		unread := 0
		for _, n := range back.Nodes {
			if n.DescriptionUnread {
				unread++
				if n.Description != "" {
					t.Errorf("unread description %q", n.Description)
				}
			}
		}
		if unread != 1 {
			t.Errorf("%d nodes with an unread description after JSON, want 1", unread)
		}
	})
	t.Run("JSON round trip", func(t *testing.T) {
		_, got := simDiscover(t, topo, sim.Options{}, func(s *sim.Sim) error { return s.Kill("spine02") }, fast, Options{})
		b, err := fabric.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := fabric.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if p := port(t, back, "leaf02", 6); p.Unreached != fabric.UnreachedPeer {
			t.Errorf("after JSON: leaf02/6 unreached %v", p.Unreached)
		}
	})
}
