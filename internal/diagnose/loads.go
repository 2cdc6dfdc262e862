package diagnose

import (
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/mad"
)

// loads adapts the route analysis to checks.Loads. The per-port counts
// are computed on first use: only a finding's impact reads them, so a
// healthy fabric never follows its host pairs (at 49k nodes, seconds of
// CPU). The Analyzer is built at once, so they judge the fabric as it was
// then.
type loads struct {
	hosts  int
	isHost map[*fabric.Port]bool
	a      *route.Analyzer
	lids   []uint16

	pathsOnce sync.Once
	paths     *route.Loads // nil when HostPaths failed
	// host pairs whose route ended at a port not read or at a switch
	// without a table: where they go on is not known
	unread, noTable int64
	dlidsOnce       sync.Once
	dlids           route.Loads
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
	l := &loads{isHost: map[*fabric.Port]bool{}, a: route.NewAnalyzer(f)}
	for _, n := range hosts {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.LID != 0 && p.Remote != nil && p.PhysState == mad.PhysLinkUp && p.State == mad.PortStateActive {
				l.lids = append(l.lids, p.LID)
				l.isHost[p] = true
			}
		}
	}
	l.hosts = len(l.lids)
	return l
}

// hostPaths follows the host pairs once.
func (l *loads) hostPaths() *route.Loads {
	l.pathsOnce.Do(func() {
		if hp, err := l.a.HostPaths(l.lids, 0); err == nil {
			l.paths = &hp.Loads
			l.unread, l.noTable = hp.Outcomes[route.Unread], hp.Outcomes[route.NoTable]
		}
	})
	return l.paths
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
	paths := l.hostPaths()
	if paths == nil {
		return 0, false
	}
	return int(paths.Of(p)), true
}

// Unfollowed counts the host pairs whose routes could not be followed to
// the end, by why.
func (l *loads) Unfollowed() (unread, noTable int64) {
	if l.hostPaths() == nil {
		return 0, 0
	}
	return l.unread, l.noTable
}

func (l *loads) PortDLIDs(p *fabric.Port) int {
	l.dlidsOnce.Do(func() { l.dlids = l.a.LIDLoads() })
	return int(l.dlids.Of(p))
}
