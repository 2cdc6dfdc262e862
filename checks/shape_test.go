package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSwitchTiers: leaves, spines and cores of a 3-level fat tree get
// tiers 0, 1 and 2; a SHARP Aggregation Node cabled to a core does not make
// it a leaf; a switch cut off from every leaf is -1.
func TestSwitchTiers(t *testing.T) {
	f, err := topology.FatTree3{Common: topology.Common{SwitchPorts: 8}, Pods: 2, LeavesPerPod: 2, SpinesPerPod: 2, HostsPerLeaf: 2, Cores: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// An Aggregation Node on core01's last (free) port.
	var core *fabric.Node
	for _, n := range f.Nodes {
		if n.Description == "core01" {
			core = n
		}
	}
	an := &fabric.Node{Type: mad.NodeCA, GUID: 0xa1, SystemImageGUID: 0xa1, Description: "Mellanox Technologies Aggregation Node"}
	an.Ports = []*fabric.Port{nil, {Node: an, Num: 1, State: mad.PortStateActive, PhysState: mad.PhysLinkUp}}
	cp := core.Ports[len(core.Ports)-1]
	cp.State, cp.PhysState = mad.PortStateActive, mad.PhysLinkUp
	cp.Remote, an.Ports[1].Remote = an.Ports[1], cp
	lone := &fabric.Node{Type: mad.NodeSwitch, GUID: 0xb1, Description: "lone", Switch: &fabric.Switch{}}
	lone.Ports = []*fabric.Port{{Node: lone}}
	f.Nodes = append(f.Nodes, an, lone)
	f.Reindex()

	tiers := SwitchTiers(f)
	want := map[string]int{"leaf01": 0, "leaf04": 0, "spine01": 1, "spine04": 1, "core01": 2, "core02": 2, "lone": -1}
	for _, n := range f.Nodes {
		if w, ok := want[n.Description]; ok && tiers[n] != w {
			t.Errorf("%s: tier %d, want %d", n.Description, tiers[n], w)
		}
	}
	if IsHost(an) || !IsAggregationNode(an) {
		t.Errorf("the Aggregation Node is taken for a host")
	}
}
