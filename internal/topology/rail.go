package topology

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// RailOptimized is a DGX SuperPOD-like fabric: Servers servers with
// HCAsPerServer one-port HCAs each; HCA i of every server is cabled to a
// leaf of rail i (ServersPerLeaf servers per leaf, so a "scalable unit" of
// ServersPerLeaf servers has one leaf per rail), and every leaf of every
// rail is cabled to every spine of one shared spine layer, so all rails
// form one subnet.
//
// Leaves are named in scalable-unit order, rail within unit: leaf01 is
// unit 1 rail 0, leaf02 unit 1 rail 1, ... Leaf ports 1..ServersPerLeaf go
// to the unit's servers in order, then Spines×LinksPerPair uplinks.
type RailOptimized struct {
	Common
	Hosts
	Servers        int
	ServersPerLeaf int // zero means SwitchPorts/2
	Spines         int
	LinksPerPair   int // zero means 1
}

// Build generates the fabric: spines, leaves, then HCAs server by server.
func (r RailOptimized) Build() (*fabric.Fabric, error) {
	r.Common = r.Common.withDefaults()
	if r.HCAsPerServer == 0 {
		r.HCAsPerServer = 8
	}
	r.Hosts = r.Hosts.withDefaults()
	if r.ServersPerLeaf == 0 {
		r.ServersPerLeaf = r.SwitchPorts / 2
	}
	if r.LinksPerPair == 0 {
		r.LinksPerPair = 1
	}
	if err := r.Common.validate(); err != nil {
		return nil, err
	}
	if r.Servers < 1 || r.ServersPerLeaf < 1 || r.Spines < 0 {
		return nil, fmt.Errorf("topology: rail-optimized fabric needs servers and servers per leaf ≥ 1 (got %d, %d)", r.Servers, r.ServersPerLeaf)
	}
	units := (r.Servers + r.ServersPerLeaf - 1) / r.ServersPerLeaf
	rails := r.HCAsPerServer
	nLeaves := units * rails
	if need := r.ServersPerLeaf + r.Spines*r.LinksPerPair; need > r.SwitchPorts {
		return nil, fmt.Errorf("topology: a rail leaf needs %d ports (%d servers + %d spines × %d links) but switches have %d", need, r.ServersPerLeaf, r.Spines, r.LinksPerPair, r.SwitchPorts)
	}
	if need := nLeaves * r.LinksPerPair; r.Spines > 0 && need > r.SwitchPorts {
		return nil, fmt.Errorf("topology: a spine needs %d ports (%d leaves × %d links) but switches have %d; add a core layer or use bigger switches", need, nLeaves, r.LinksPerPair, r.SwitchPorts)
	}
	b := newBuilder(r.Common, r.Spines+nLeaves+r.Servers*rails)
	spines := make([]*fabric.Node, r.Spines)
	for i := range spines {
		spines[i] = b.addSwitch(name("spine", i+1, r.Spines, 2))
	}
	leaves := make([]*fabric.Node, nLeaves)
	for i := range leaves {
		leaves[i] = b.addSwitch(name("leaf", i+1, nLeaves, 2))
	}
	hcas := b.addHCAs(r.Hosts, r.Servers*rails)
	for s := 0; s < r.Servers; s++ {
		u, slot := s/r.ServersPerLeaf, s%r.ServersPerLeaf
		for rail := 0; rail < rails; rail++ {
			if err := b.connect(leaves[u*rails+rail], slot+1, hcas[s*rails+rail], 1); err != nil {
				return nil, err
			}
		}
	}
	for l, leaf := range leaves {
		for s, spine := range spines {
			for k := 0; k < r.LinksPerPair; k++ {
				if err := b.connect(leaf, r.ServersPerLeaf+s*r.LinksPerPair+k+1, spine, l*r.LinksPerPair+k+1); err != nil {
					return nil, err
				}
			}
		}
	}
	return b.f, nil
}

// Dragonfly is a small dragonfly: Groups groups of SwitchesPerGroup
// switches, the switches of a group fully connected, and one global link
// between every pair of groups, spread round-robin over the groups'
// switches (each switch has GlobalPerSwitch global ports).
//
// Switch ports: HostsPerSwitch hosts, then SwitchesPerGroup-1 local links
// (to the group's other switches in order), then global ports. Switches
// are named "g02s03" (group 2, switch 3).
type Dragonfly struct {
	Common
	Hosts
	Groups, SwitchesPerGroup, HostsPerSwitch, GlobalPerSwitch int
}

// Build generates the fabric: switches group by group, then HCAs.
func (d Dragonfly) Build() (*fabric.Fabric, error) {
	d.Common = d.Common.withDefaults()
	d.Hosts = d.Hosts.withDefaults()
	if err := d.Common.validate(); err != nil {
		return nil, err
	}
	a := d.SwitchesPerGroup
	if d.Groups < 1 || a < 1 || d.HostsPerSwitch < 0 || d.GlobalPerSwitch < 0 {
		return nil, fmt.Errorf("topology: dragonfly needs groups and switches per group ≥ 1 (got %d, %d)", d.Groups, a)
	}
	if need := d.HostsPerSwitch + a - 1 + d.GlobalPerSwitch; need > d.SwitchPorts {
		return nil, fmt.Errorf("topology: a dragonfly switch needs %d ports but switches have %d", need, d.SwitchPorts)
	}
	if d.Groups-1 > a*d.GlobalPerSwitch {
		return nil, fmt.Errorf("topology: %d groups need %d global links per group but a group has %d global ports", d.Groups, d.Groups-1, a*d.GlobalPerSwitch)
	}
	b := newBuilder(d.Common, d.Groups*a*(1+d.HostsPerSwitch))
	sw := make([]*fabric.Node, d.Groups*a)
	for g := 0; g < d.Groups; g++ {
		for i := 0; i < a; i++ {
			sw[g*a+i] = b.addSwitch(fmt.Sprintf("g%02ds%02d", g+1, i+1))
		}
	}
	hcas := b.addHCAs(d.Hosts, len(sw)*d.HostsPerSwitch)
	for i, s := range sw {
		for h := 0; h < d.HostsPerSwitch; h++ {
			if err := b.connect(s, h+1, hcas[i*d.HostsPerSwitch+h], 1); err != nil {
				return nil, err
			}
		}
	}
	local := func(i, j int) int { // port of switch i (in group) towards switch j
		if j > i {
			j--
		}
		return d.HostsPerSwitch + j + 1
	}
	for g := 0; g < d.Groups; g++ {
		for i := 0; i < a; i++ {
			for j := i + 1; j < a; j++ {
				if err := b.connect(sw[g*a+i], local(i, j), sw[g*a+j], local(j, i)); err != nil {
					return nil, err
				}
			}
		}
	}
	used := make([]int, d.Groups) // global links placed per group so far
	glob := func(g int) (*fabric.Node, int) {
		k := used[g]
		used[g]++
		return sw[g*a+k%a], d.HostsPerSwitch + a - 1 + k/a + 1
	}
	for g1 := 0; g1 < d.Groups; g1++ {
		for g2 := g1 + 1; g2 < d.Groups; g2++ {
			s1, p1 := glob(g1)
			s2, p2 := glob(g2)
			if err := b.connect(s1, p1, s2, p2); err != nil {
				return nil, err
			}
		}
	}
	return b.f, nil
}
