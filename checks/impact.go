package checks

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// The impact model (docs/checks.md, "Ranking"):
//
// A link's path share is the share of ordered host pairs (s, d), s != d,
// whose route crosses the link in either direction. A link that runs at a
// fraction r of the rate it should lose (1-r) of its bandwidth; a ring
// all-reduce whose ring crosses it is limited by its slowest hop, so it
// runs up to 1/r times as long. The score that orders findings of one
// severity is path share × lost fraction: the expected share of the
// fabric's host-to-host bandwidth lost.
//
// Without route loads, a host link's path share is 2/H (its host's
// traffic both ways) and a switch link's is estimated as the share of
// hosts below it over its switch's uplink count.

// share is a link's path share and how it is known.
type share struct {
	v float64
	// measured: from the route loads (or, for a host port's own link,
	// from the host count), not an estimate
	measured bool
	// atLeast: some host routes were not followed to their end and may
	// cross the link too, so v is a lower bound
	atLeast bool
	// hostLink: a host port's own link, whose share is the host's
	// (2 of the hosts), whatever the routes: read, computed or not
	// followed (trial H9).
	hostLink bool
}

// text is the share for a sentence: "0.78%", "at least 0.44%".
func (sh share) text() string {
	if sh.atLeast && sh.v > 0 {
		return "at least " + pct(sh.v)
	}
	return pct(sh.v)
}

// pathShare returns the share of host pairs crossing the link at p.
func (s *Snapshot) pathShare(p *fabric.Port) share {
	if s.Loads != nil {
		h := s.Loads.Hosts()
		if h > 1 {
			// A host port's link carries every path to and from the
			// port, whatever the routes beyond it do: no need to
			// follow them, and no lower bound when some were not.
			hp := p
			if hp.Node.Type == mad.NodeSwitch {
				hp = p.Remote
			}
			if hp != nil && hp.Node.Type != mad.NodeSwitch {
				if n, ok := s.Loads.PortPaths(hp); ok && n > 0 {
					return share{v: 2 / float64(h), measured: true, hostLink: true}
				}
			}
			a, okA := s.Loads.PortPaths(p)
			var b int
			okB := false
			if p.Remote != nil {
				b, okB = s.Loads.PortPaths(p.Remote)
			}
			if okA || okB {
				unread, noTable := s.Loads.Unfollowed()
				return share{v: float64(a+b) / float64(h*(h-1)), measured: true, atLeast: unread+noTable > 0}
			}
		}
	}
	hosts := s.hostCount()
	if hosts <= 1 {
		return share{}
	}
	if isHostLink(p) {
		return share{v: 2 / float64(hosts)}
	}
	// A switch-to-switch link: the hosts below the lower switch spread
	// over its uplinks.
	sw := p.Node
	if p.Remote != nil && hostPorts(p.Remote.Node) > hostPorts(sw) {
		sw = p.Remote.Node
	}
	up := switchLinks(sw)
	if up == 0 {
		return share{}
	}
	below := float64(hostPorts(sw)) / float64(hosts)
	// Paths leaving the hosts below cross one of the uplinks each way.
	return share{v: min(1, 2*below*(1-below)/float64(up))}
}

// unfollowed says which host routes were not followed, for a share
// that is a lower bound: "21% of host routes were not followed (they
// leave by ports that were not read)".
func (s *Snapshot) unfollowed() string {
	if s.Loads == nil {
		return ""
	}
	unread, noTable := s.Loads.Unfollowed()
	h := int64(s.Loads.Hosts())
	if unread+noTable == 0 || h < 2 {
		return ""
	}
	var why string
	switch {
	case noTable == 0:
		why = "they leave by ports that were not read"
	case unread == 0:
		why = "they reach switches whose forwarding tables were not read"
	default:
		why = "they leave by ports that were not read or reach switches whose forwarding tables were not read"
	}
	return fmt.Sprintf("%s of host routes were not followed: %s", pct(float64(unread+noTable)/float64(h*(h-1))), why)
}

// shareNote is what a summary adds after a lower-bound share: " (21% of
// host routes were not followed: ...)", or nothing.
func (s *Snapshot) shareNote(sh share) string {
	if !sh.atLeast || sh.v == 0 {
		return ""
	}
	if u := s.unfollowed(); u != "" {
		return " (" + u + ")"
	}
	return ""
}

func (s *Snapshot) hostCount() int {
	if s.Loads != nil && s.Loads.Hosts() > 0 {
		return s.Loads.Hosts()
	}
	if s.memo != nil && s.memo.hosts > 0 {
		return s.memo.hosts - 1
	}
	n := 0
	for _, node := range s.Fabric.Nodes {
		if isHostNode(node) {
			for _, p := range node.Ports {
				if p != nil && p.Remote != nil {
					n++
				}
			}
		}
	}
	if s.memo != nil {
		s.memo.hosts = n + 1
	}
	return n
}

func isHostLink(p *fabric.Port) bool {
	return p.Node.Type != mad.NodeSwitch || (p.Remote != nil && p.Remote.Node.Type != mad.NodeSwitch)
}

func isSwitchLink(p *fabric.Port) bool {
	return p.Node.Type == mad.NodeSwitch && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch
}

// hostPorts counts the host ports cabled to a switch (Aggregation Nodes
// and routers are not hosts).
func hostPorts(n *fabric.Node) int {
	c := 0
	for _, p := range n.Ports {
		if toHost(p) {
			c++
		}
	}
	return c
}

// switchLinks counts a switch's links to other switches.
func switchLinks(n *fabric.Node) int {
	c := 0
	for _, p := range n.Ports {
		if p != nil && p.Num != 0 && interSwitch(p) {
			c++
		}
	}
	return c
}

// linkImpact estimates the impact of a link at p running at active rather
// than want.
func (s *Snapshot) linkImpact(p *fabric.Port, active, want mad.Rate) Impact {
	sh := s.pathShare(p)
	share := sh.v
	lost := want.Gbps() - active.Gbps()
	frac := 0.0
	if want.Gbps() > 0 {
		frac = lost / want.Gbps()
	}
	im := Impact{PathShare: share, PathShareLowerBound: sh.atLeast, LostGbps: lost, Score: share * frac}
	if active.Gbps() > 0 {
		im.Slowdown = want.Gbps() / active.Gbps()
	}
	basis := "estimated"
	if sh.hostLink {
		basis = "every path to or from its host crosses it, whatever the routes"
	} else if sh.measured {
		basis = "per the forwarding tables"
		if s.RoutesComputed {
			basis = "per ibdoctor's computed min-hop routes, not the fabric's tables"
		}
		if u := s.unfollowed(); sh.atLeast && share > 0 && u != "" {
			basis += "; " + u
		}
	}
	im.Summary = fmt.Sprintf("runs at %s of %s Gb/s (%.0f%% lost); carries %s of host-to-host paths (%s); a ring all-reduce crossing it runs up to %.1fx slower",
		fmtGbps(active.Gbps()), fmtGbps(want.Gbps()), frac*100, sh.text(), basis, im.Slowdown)
	return im
}

// SharePercent is a share (0..1) as every rendering prints it: the
// findings table's IMPACT column, the impact line and the HTML page round
// it the same way ("6.25%", never 6.2% beside 6.25%).
func SharePercent(v float64) string { return pct(v) }

func pct(v float64) string {
	switch {
	case v == 0:
		return "0%"
	case v < 0.001:
		return fmt.Sprintf("%.3f%%", v*100)
	case v < 0.1:
		return fmt.Sprintf("%.2f%%", v*100)
	default:
		return fmt.Sprintf("%.1f%%", v*100)
	}
}

func (s *Snapshot) entityOf(p *fabric.Port, role string) Entity {
	return Entity{NodeGUID: p.Node.GUID, Node: s.nodeName(p.Node), Port: int(p.Num), LID: PortLID(p), Role: role}
}

// PortLID is the LID a finding names port p by (Entity.LID): a switch
// port its switch's (port 0's), another port its own. With the GUID and
// the port number it tells apart two nodes claiming one GUID (top
// matches findings to its rows by the three).
func PortLID(p *fabric.Port) uint16 {
	if p.Node.Type == mad.NodeSwitch && p.Num != 0 && len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
		return p.Node.Ports[0].LID
	}
	return p.LID
}

func (s *Snapshot) nodeEntity(n *fabric.Node, role string) Entity {
	e := Entity{NodeGUID: n.GUID, Node: s.nodeName(n), Role: role}
	for _, p := range n.Ports {
		if p != nil && p.LID != 0 {
			e.LID = p.LID
			break
		}
	}
	return e
}

// nodeName names a node in findings: its description, with its GUID when
// another node shares the description (fabric.NameOf).
func (s *Snapshot) nodeName(n *fabric.Node) string {
	return s.Fabric.NameOf(n)
}

// orient returns a link's ends in the order operators name them: a host
// before its switch, a leaf (the switch with more hosts) before a spine.
func orient(a, b *fabric.Port) (*fabric.Port, *fabric.Port) {
	switch {
	case a.Node.Type != mad.NodeSwitch:
		return a, b
	case b.Node.Type != mad.NodeSwitch:
		return b, a
	case hostPorts(b.Node) > hostPorts(a.Node):
		return b, a
	}
	return a, b
}

// portName names one port and the far end of its link, for counters,
// which belong to one end: "spine02/49 (to leaf07/41)".
func (s *Snapshot) portName(p *fabric.Port) string {
	if p.Remote == nil {
		return s.entityOf(p, "").String()
	}
	return s.entityOf(p, "").String() + " (to " + s.entityOf(p.Remote, "").String() + ")"
}

// portAt names a port and its far end for a parenthesis, without one of
// its own: "spine02/49, cabled to leaf07/41".
func (s *Snapshot) portAt(p *fabric.Port) string {
	if p.Remote == nil {
		return s.entityOf(p, "").String()
	}
	return s.entityOf(p, "").String() + ", cabled to " + s.entityOf(p.Remote, "").String()
}

// linkName names a link for titles and actions: "leaf07/23 <-> spine02/5".
func (s *Snapshot) linkName(p *fabric.Port) string {
	if p.Remote != nil {
		a, b := orient(p, p.Remote)
		return s.entityOf(a, "").String() + " <-> " + s.entityOf(b, "").String()
	}
	return s.entityOf(p, "").String()
}
