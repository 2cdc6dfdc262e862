package discover

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func TestRefresh(t *testing.T) {
	want, err := topology.FatTree2{Leaves: 3, Spines: 2, HostsPerLeaf: 2, Common: topology.Common{SwitchPorts: 8}}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topology.AssignLIDs(want); err != nil {
		t.Fatal(err)
	}
	if err := topology.Route(want); err != nil { // LID-routed SMPs need LFTs
		t.Fatal(err)
	}
	s, err := sim.New(want, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: -1})
	defer e.Close()
	ctx := context.Background()
	fab, err := Run(ctx, e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf2 := fab.NodesByName("leaf02")[0]
	up := leaf2.Ports[3] // to spine01
	host := fab.NodesByName("leaf03")[0].Ports[1].Remote
	if up.Rate() != (mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR}) || host == nil {
		t.Fatalf("before: leaf2 port 3 at %v, host %v", up.Rate(), host)
	}
	// The uplink degrades to 1X HDR; the host behind leaf3 port 1 dies.
	if err := s.Degrade("leaf02/3", mad.Width1X, mad.SpeedHDR); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(host.Node.Description); err != nil {
		t.Fatal(err)
	}
	for _, byLID := range []bool{false, true} {
		refreshed(t, e, up, host, byLID)
	}
}

func refreshed(t *testing.T, e *transport.Engine, up, host *fabric.Port, byLID bool) {
	t.Helper()
	bad := Refresh(context.Background(), e, []*fabric.Port{up, host}, byLID, 0)
	if got := up.Rate(); got != (mad.Rate{Width: mad.Width1X, Speed: mad.SpeedHDR}) || up.State != mad.PortStateActive {
		t.Errorf("byLID %v: leaf2 port 3 at %v %v, want 1X HDR Active", byLID, got, up.State)
	}
	if len(bad) != 1 || bad[0].FromGUID != host.Node.GUID || bad[0].What != "PortInfo 1" || bad[0].Reason != "no response after 1 attempt" {
		t.Errorf("byLID %v: unreachable: %+v", byLID, bad)
	}
	if host.Rate() != (mad.Rate{Width: mad.Width4X, Speed: mad.SpeedNDR}) {
		t.Errorf("the dead host's port kept %v, want its old rate", host.Rate())
	}
}
