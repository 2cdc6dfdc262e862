package diagnose

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// readOnly is a Fresh that has read everything but one port.
type readOnly struct{ not *fabric.Port }

func (r readOnly) Port(p *fabric.Port) bool     { return p != r.not }
func (r readOnly) Block(*fabric.Node, int) bool { return true }

// TestSilenceWhy: the cause of a silent PMA is said only from what was
// read: the LID route to it leaving by a port read down, its switch
// silent to PortInfo too, or the reading port's LID shared; what was not
// read in this run (a gate's snapshot beyond its job) and a clean route
// say nothing.
func TestSilenceWhy(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	from := f.NodesByName("gpu001 mlx5_0")[0].Ports[1]
	spine := f.NodesByName("spine02")[0]
	lid := spine.Ports[0].LID
	s := Silence{Fabric: f, From: from}
	if why := s.Why(spine, lid); why != "" {
		t.Fatalf("healthy fabric: %q", why)
	}
	tr, err := route.TraceRoute(f, from.LID, lid)
	if err != nil || len(tr.Hops) == 0 {
		t.Fatalf("trace: %v %+v", err, tr)
	}
	leaf := tr.Hops[0].Switch
	up := leaf.Ports[tr.Hops[0].Out]
	up.State, up.PhysState = mad.PortStateDown, mad.PhysDisabled
	want := "; the LID route to it from this port (gpu001 mlx5_0/1) leaves " + leaf.Description + " by port " + strconv.Itoa(int(up.Num)) + ", which is down"
	if why := s.Why(spine, lid); why != want {
		t.Errorf("down uplink:\n got %q\nwant %q", why, want)
	}
	s.Read = readOnly{not: up}
	if why := s.Why(spine, lid); why != "" {
		t.Errorf("down uplink not read in this run: %q, want nothing", why)
	}
	up.State, up.PhysState = mad.PortStateActive, mad.PhysLinkUp
	s.Read = nil
	spine.Ports[5].Unreached |= fabric.UnreachedInfo
	if why, want := s.Why(spine, lid), "; spine02 did not answer PortInfo either (port 5): its management agent is silent, not only its PMA"; why != want {
		t.Errorf("switch silent to SMPs too:\n got %q\nwant %q", why, want)
	}
	s.Read = readOnly{not: spine.Ports[5]}
	if why := s.Why(spine, lid); why != "" {
		t.Errorf("PortInfo unanswered in an earlier run: %q, want nothing", why)
	}
	spine.Ports[5].Unreached = 0
	s.Read = nil
	other := f.NodesByName("gpu009 mlx5_0")[0].Ports[1]
	other.LID = from.LID
	f.Reindex()
	if why := s.Why(spine, lid); !strings.Contains(why, "which gpu009 mlx5_0/1 has too (addr.duplicate-lid)") {
		t.Errorf("shared reading LID: %q", why)
	}
}

// TestSilenceWhyNamesSharedApart: trial C8. A cause names the switch it
// happens at as the findings do: where another switch shares its
// description, with its GUID ("leaves leaf02 (0x...) by port 9").
func TestSilenceWhyNamesSharedApart(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	from := f.NodesByName("gpu001 mlx5_0")[0].Ports[1]
	spine := f.NodesByName("spine02")[0]
	lid := spine.Ports[0].LID
	s := Silence{Fabric: f, From: from}
	tr, err := route.TraceRoute(f, from.LID, lid)
	if err != nil || len(tr.Hops) == 0 {
		t.Fatalf("trace: %v %+v", err, tr)
	}
	leaf := tr.Hops[0].Switch
	for _, n := range f.Nodes {
		if n != leaf && n.Type == mad.NodeSwitch {
			n.Description = leaf.Description // another switch shares it
			break
		}
	}
	f.Reindex()
	up := leaf.Ports[tr.Hops[0].Out]
	up.State, up.PhysState = mad.PortStateDown, mad.PhysDisabled
	want := " leaves " + f.NameOf(leaf) + " by port " + strconv.Itoa(int(up.Num)) + ", which is down"
	if why := s.Why(spine, lid); !strings.Contains(f.NameOf(leaf), " (0x") || !strings.Contains(why, want) {
		t.Errorf("down uplink:\n got %q\nwant it to say %q", why, want)
	}
}
