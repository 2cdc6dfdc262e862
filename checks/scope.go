package checks

import (
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/mad"
)

// ScopeFor returns the part of f that jobs on hosts use: the hosts' own
// ports and their peers, and every switch and port on the routes among
// them over the switches' LFTs (both directions). Without LFTs only the
// hosts, their leaf switches and those links are in scope. Routes that
// fail (no route, dead end, loop) include the ports up to the failure.
func ScopeFor(f *fabric.Fabric, hosts []*fabric.Node) *Scope {
	return ScopeExcept(f, hosts, nil)
}

// ScopeExcept is ScopeFor without the routes to the host ports in notTo:
// a gate that found their LIDs moved since the sweep (the tables send
// those LIDs to other nodes now) leaves the routes to them out. Their
// cables, and the routes from them, stay.
func ScopeExcept(f *fabric.Fabric, hosts []*fabric.Node, notTo map[*fabric.Port]bool) *Scope {
	sc := &Scope{
		Hosts:    make(map[*fabric.Node]bool, len(hosts)),
		Ports:    make(map[*fabric.Port]bool),
		Switches: make(map[*fabric.Node]bool),
	}
	var hostPorts []*fabric.Port
	for _, h := range hosts {
		sc.Hosts[h] = true
		for _, p := range h.Ports {
			if p == nil || p.Num == 0 {
				continue
			}
			sc.Ports[p] = true
			if p.Remote != nil {
				sc.Ports[p.Remote] = true
				if p.Remote.Node.Type == mad.NodeSwitch {
					sc.Switches[p.Remote.Node] = true
				}
			}
			if p.LID != 0 && p.Remote != nil && linkUp(p) {
				hostPorts = append(hostPorts, p)
			}
		}
	}
	if !hasLFTs(f) {
		return sc
	}
	g := newRouteGraph(f)
	leafOrder, _ := leaves(hostPorts)
	var w *route.Walk
	for _, dst := range hostPorts {
		if notTo[dst] {
			continue
		}
		if w == nil {
			w = g.a.WalkTo(dst)
		} else {
			w.Reset(dst)
		}
		for _, leaf := range leafOrder {
			sc.Switches[leaf] = true
			for _, p := range w.Path(leaf) {
				sc.Ports[p] = true
				if p.Remote == nil || p.Num == 0 {
					break
				}
				sc.Ports[p.Remote] = true
				if p.Remote.Node.Type == mad.NodeSwitch {
					sc.Switches[p.Remote.Node] = true
				}
			}
		}
	}
	// Switch management ports (port 0) carry the LIDs the counters are
	// read at.
	for sw := range sc.Switches {
		if len(sw.Ports) > 0 && sw.Ports[0] != nil {
			sc.Ports[sw.Ports[0]] = true
		}
	}
	return sc
}
