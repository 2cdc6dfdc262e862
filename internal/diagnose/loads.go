package diagnose

import (
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/mad"
)

// loads adapts the route analysis to checks.Loads.
type loads struct {
	hosts  int
	isHost map[*fabric.Port]bool
	paths  *route.Loads
	dlids  route.Loads
}

// NewLoads follows every host-to-host route over f's LFTs (per-destination
// trees, see route.Analyzer.HostPaths) and counts, per switch port, the
// host paths and CA destinations it carries. Hosts are CA ports with a
// LID whose link is up.
func NewLoads(f *fabric.Fabric) *loads {
	var hosts []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type != mad.NodeSwitch {
			hosts = append(hosts, n)
		}
	}
	return NewLoadsFor(f, hosts)
}

// NewLoadsFor is NewLoads over the given hosts only (a job's), so path
// shares are shares of the job's host pairs.
func NewLoadsFor(f *fabric.Fabric, hosts []*fabric.Node) *loads {
	a := route.NewAnalyzer(f)
	l := &loads{isHost: map[*fabric.Port]bool{}, dlids: a.LIDLoads()}
	var lids []uint16
	for _, n := range hosts {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.LID != 0 && p.Remote != nil && p.PhysState == mad.PhysLinkUp && p.State == mad.PortStateActive {
				lids = append(lids, p.LID)
				l.isHost[p] = true
			}
		}
	}
	l.hosts = len(lids)
	if hp, err := a.HostPaths(lids, 0); err == nil {
		l.paths = &hp.Loads
	}
	return l
}

func (l *loads) Hosts() int { return l.hosts }

// PortPaths counts the host paths leaving p. A host's own port sends to
// every other host.
func (l *loads) PortPaths(p *fabric.Port) (int, bool) {
	if p.Node.Type != mad.NodeSwitch {
		if l.isHost[p] {
			return l.hosts - 1, true
		}
		return 0, false
	}
	if l.paths == nil {
		return 0, false
	}
	return int(l.paths.Of(p)), true
}

func (l *loads) PortDLIDs(p *fabric.Port) int { return int(l.dlids.Of(p)) }
