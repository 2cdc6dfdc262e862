package checks

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "topology.duplicate-guid",
		Summary: "two or more nodes answer with the same NodeGUID",
		Needs:   []string{"topology"},
		run:     (*Snapshot).duplicateGUIDs,
	})
	register(Check{
		ID:      "topology.oversubscribed",
		Summary: "a leaf's uplink bandwidth is below half its host bandwidth (ratio configurable), or a leaf otherwise cabled like its peers has fewer cables to a spine than the spine's other leaves (missing or down uplinks)",
		Needs:   []string{"topology", "rates", "whole-fabric"},
		run:     (*Snapshot).oversubscribed,
	})
	register(Check{
		ID:      "topology.miswired",
		Summary: "a cable in the expected topology now lands on another port or node",
		Needs:   []string{"topology", "baseline"},
		run:     (*Snapshot).miswired,
	})
	register(Check{
		ID:      "topology.changed",
		Summary: "nodes or links of the expected topology are missing, or new ones appeared",
		Needs:   []string{"topology", "baseline"},
		run:     (*Snapshot).changed,
	})
}

func (s *Snapshot) duplicateGUIDs() []Finding {
	var out []Finding
	for _, d := range s.Fabric.DuplicateGUIDs {
		var ents []Entity
		var where []string
		// A file may record the claimants by description only
		// (ibnetdiscover -p has no paths): each is still a claimant.
		claimants := max(len(d.Paths), len(d.Descs))
		for i := range claimants {
			name := fmt.Sprintf("0x%016x", d.GUID)
			if i < len(d.Descs) && d.Descs[i] != "" {
				name = d.Descs[i]
			}
			ents = append(ents, Entity{NodeGUID: d.GUID, Node: name, Role: "claimant"})
			if i < len(d.Paths) {
				where = append(where, fmt.Sprintf("%q at path %s", name, d.Paths[i]))
			} else {
				where = append(where, fmt.Sprintf("%q", name))
			}
		}
		out = append(out, Finding{
			Check:    "topology.duplicate-guid",
			Severity: Critical,
			Title:    fmt.Sprintf("%d nodes claim NodeGUID 0x%016x", claimants, d.GUID),
			Entities: ents,
			Evidence: []Evidence{{Name: "NodeGUID", Value: float64(claimants), Text: "seen as " + strings.Join(where, "; ")}},
			Impact:   Impact{Score: 1, Summary: "the subnet manager cannot tell the nodes apart: routes and LIDs for both are unreliable"},
			Action:   "Find the node with the cloned GUID (a replaced board flashed with a copied image, a VM with a copied GUID) and burn a unique GUID into it; then let the SM re-sweep.",
			Basis:    "topology",
		})
	}
	return out
}

// claimedTwice reports whether another node of the fabric claims n's
// NodeGUID too (topology.duplicate-guid): its GUID does not name it.
func (s *Snapshot) claimedTwice(n *fabric.Node) bool {
	if s.Fabric.NodeByGUID(n.GUID) != n {
		return true
	}
	return slices.ContainsFunc(s.Fabric.DuplicateGUIDs, func(d fabric.DuplicateGUID) bool { return d.GUID == n.GUID })
}

// standIn returns the node now at the place of the expected topology's
// node i (the far end of a switch port i was cabled to) when i's GUID
// was not found and that node claims a GUID another node claims too: it
// is i under a cloned NodeGUID, known by its place, so neither missing
// nor miswired; topology.duplicate-guid is its finding. Nil otherwise.
func (s *Snapshot) standIn(i int32) *fabric.Node {
	b := s.Baseline
	if s.Fabric.NodeByGUID(b.guid[i]) != nil {
		return nil
	}
	for r, num := range b.cables(i) {
		sw := s.Fabric.NodeByGUID(b.guid[r])
		if sw == nil || sw.Type != mad.NodeSwitch {
			continue
		}
		if q := portOf(sw, num); q != nil && q.Remote != nil && q.Remote.Node.Type == b.typ[i] && s.claimedTwice(q.Remote.Node) {
			return q.Remote.Node
		}
	}
	return nil
}

// hostSlot reports whether switch port p is where a host would be: within
// its leaf's block of host ports, or where most other leaves have a host.
func hostSlot(p *fabric.Port, hostAt map[uint8]int, leaves int) bool {
	if p == nil {
		return false
	}
	if inHostBlock(p) {
		return true
	}
	return leaves >= 3 && hostPorts(p.Node) > 0 && 3*hostAt[p.Num] >= 2*(leaves-1)
}

// inHostBlock reports whether switch port p lies within the range of the
// switch's host ports.
func inHostBlock(p *fabric.Port) bool {
	lo, hi := 0, 0
	for _, q := range p.Node.Ports {
		if toHost(q) {
			if lo == 0 || int(q.Num) < lo {
				lo = int(q.Num)
			}
			hi = max(hi, int(q.Num))
		}
	}
	return lo != 0 && int(p.Num) >= lo && int(p.Num) <= hi
}

// portNumbers writes port numbers with runs collapsed: "33-40, 49".
func portNumbers(ps []uint8) string {
	ps = slices.Clone(ps)
	slices.Sort(ps)
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ps[i], ps[j]))
		} else {
			parts = append(parts, fmt.Sprint(ps[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func (s *Snapshot) oversubscribed() []Finding {
	if s.Scope != nil {
		return s.sweepOversubscribed()
	}
	ratio := s.Expect.Oversubscription
	if ratio <= 0 {
		ratio = 2
	}
	type leaf struct {
		n          *fabric.Node
		host, up   float64
		hosts, ups int
		below      []*fabric.Node // switches chained below it (chainedBelow)
	}
	var all []leaf
	below := chainedBelow(s.Fabric)
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		l := leaf{n: n}
		known := true
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && (!p.Reached() || (p.Remote != nil && !p.Remote.SpeedKnown())) {
				known = false // a port's state, rate or far end was not read: could not decide
			}
			if p == nil || p.Num == 0 || p.Remote == nil || !linkUp(p) {
				continue
			}
			switch {
			case interSwitch(p) && below[p.Remote.Node] == n:
				// A link down to a switch whose only way out is this
				// one: its traffic shares this leaf's uplinks, it is
				// no uplink of its own (trial H3).
				if !slices.Contains(l.below, p.Remote.Node) {
					l.below = append(l.below, p.Remote.Node)
				}
			case interSwitch(p):
				l.up += p.Rate().Gbps()
				l.ups++
			case toHost(p):
				l.host += p.Rate().Gbps()
				l.hosts++
			}
		}
		if known && l.hosts > 0 && l.ups > 0 {
			all = append(all, l)
		}
	}
	// Oversubscription is a design choice: what the leaves are built for
	// shows in the typical (median) leaf. A leaf above it lost uplinks or
	// has more hosts than its peers: a warning. A leaf at the design's
	// ratio, or with no peers to compare with, is only worth knowing.
	var ratios []float64
	for _, l := range all {
		ratios = append(ratios, l.host/l.up)
	}
	slices.Sort(ratios)
	typical := 0.0
	if len(ratios) >= 3 {
		typical = ratios[len(ratios)/2]
	}
	var out []Finding
	// Leaves built alike say the same thing: one finding names them all
	// (keyed by everything the text says but the leaf's name).
	type same struct {
		sev        Severity
		text       string
		hosts, ups int
		ratio      string
	}
	group := map[same]int{}
	short := s.shortOfUplinks()
	tiers := SwitchTiers(s.Fabric)
	// The hosts most leaves have: a leaf with them is a compute leaf.
	hostsOf := map[int]int{}
	mostHosts := 0
	for _, l := range all {
		hostsOf[l.hosts]++
		if c := hostsOf[l.hosts]; c > hostsOf[mostHosts] || c == hostsOf[mostHosts] && l.hosts > mostHosts {
			mostHosts = l.hosts
		}
	}
	for _, l := range all {
		if !s.nodeInScope(l.n) {
			continue
		}
		if m, ok := short[l.n]; ok {
			m.peerHosts = l.hosts == mostHosts
			out = append(out, s.shortOfUplinksFinding(l.n, m, l.host, l.up, l.hosts, spineCables(l.n, tiers), ratio))
			continue
		}
		if l.host <= ratio*l.up {
			continue
		}
		r := l.host / l.up
		sev, why := Info, "no other leaves to compare with: taken as the design"
		if typical > 0 {
			why = fmt.Sprintf("the typical leaf is %.1f:1: this is the design", typical)
			if r > 1.1*typical {
				sev, why = Warning, fmt.Sprintf("above the typical leaf's %.1f:1: an uplink may be missing or down", typical)
				if up, k := s.chainedTo(l.n, tiers, below); up != "" {
					why = fmt.Sprintf("above the typical leaf's %.1f:1; its uplinks go to %s, a switch with hosts of its own, not to a spine: it is chained below that switch and shares its uplinks", typical, up)
					if k > 1 {
						why = fmt.Sprintf("above the typical leaf's %.1f:1; its uplinks go to %s, switches with hosts of their own, not to a spine: it is chained below those switches and shares their uplinks", typical, up)
					}
				}
			}
		}
		text := fmt.Sprintf("host links %s Gb/s, uplinks %s Gb/s (active rates); %s", fmtGbps(l.host), fmtGbps(l.up), why)
		if len(l.below) > 0 {
			text += s.islandText(l.n, l.host, l.hosts, l.up, below)
		}
		k := same{sev, text, l.hosts, l.ups, fmt.Sprintf("%.1f", r)}
		if i, ok := group[k]; ok {
			f := &out[i]
			f.Entities = append(f.Entities, s.nodeEntity(l.n, "switch"))
			f.Impact.Score += float64(l.hosts) / float64(max(1, s.hostCount())) * (1 - l.up/l.host)
			continue
		}
		group[k] = len(out)
		out = append(out, Finding{
			Check:    "topology.oversubscribed",
			Severity: sev,
			Title:    fmt.Sprintf("Leaf %s is oversubscribed %.1f:1 (%s, %s)", s.nodeName(l.n), r, words.Count(l.hosts, "host"), words.Count(l.ups, "uplink")),
			Entities: []Entity{s.nodeEntity(l.n, "switch")},
			Evidence: []Evidence{{Name: "oversubscription", Value: r, Threshold: ratio, Text: text}},
			Impact: Impact{Score: float64(l.hosts) / float64(max(1, s.hostCount())) * (1 - l.up/l.host),
				Summary: fmt.Sprintf("traffic leaving the leaf gets at most %.0f%% of its hosts' bandwidth", l.up/l.host*100)},
			Action: "If this is not the design, add or repair uplinks (a down or degraded uplink lowers the ratio too); otherwise place bandwidth-bound jobs within the leaf.",
			Basis:  "topology",
		})
	}
	for k, i := range group {
		f := &out[i]
		if len(f.Entities) == 1 {
			continue
		}
		// Name order, not the file's node order: the same capture read
		// from another of its files names the same leaves first.
		slices.SortFunc(f.Entities, func(a, b Entity) int { return words.Natural(a.String(), b.String()) })
		var names []string
		for _, e := range f.Entities[:min(3, len(f.Entities))] {
			names = append(names, e.String())
		}
		f.Title = fmt.Sprintf("%d leaves are oversubscribed %s:1 (%s, %s each): %s", len(f.Entities), k.ratio,
			words.Count(k.hosts, "host"), words.Count(k.ups, "uplink"), words.FirstOf(names, len(f.Entities)))
		f.Evidence[0].Text = "each: " + f.Evidence[0].Text
		f.Impact.Score = min(1, f.Impact.Score)
	}
	return out
}

func (s *Snapshot) miswired() []Finding {
	var out []Finding
	b := s.Baseline
	swapped := map[*fabric.Port]bool{} // ends of a swap or rotation already reported
	for l := range b.allLinks() {
		for k, end := range [2][2]baseEnd{{l.a, l.b}, {l.b, l.a}} {
			want, peer := end[0], end[1]
			n := s.Fabric.NodeByGUID(b.guid[want.node])
			if n == nil || s.claimedTwice(n) {
				// A cloned GUID names either claimant: the cable is
				// judged from its switch end, by place.
				continue
			}
			p := portOf(n, want.num)
			if p == nil || p.Remote == nil || !s.inScope(p) || swapped[p] {
				continue
			}
			got := p.Remote
			if got.Node.GUID == b.guid[peer.node] && got.Num == peer.num {
				continue
			}
			if got.Num == peer.num && s.claimedTwice(got.Node) && s.standIn(peer.node) == got.Node {
				continue // the expected node under a cloned GUID, in its place
			}
			// Cables swapped (or rotated) among themselves are one fault
			// with one fix: one finding, whichever of their expected
			// cables is met first.
			if c := s.swapCycle(p); c != nil {
				for _, q := range c {
					swapped[q] = true
				}
				out = append(out, s.swapFinding(c))
				continue
			}
			// Cables moved along a chain that does not close are one
			// fault too, fixed by walking it from its empty end.
			if c := s.moveChain(p); c != nil {
				for _, q := range c.ports {
					swapped[q] = true
				}
				out = append(out, s.chainFinding(c))
				continue
			}
			// Report each moved cable once: from the end with the
			// smaller GUID/port of the expected link.
			if k == 1 && l.b != l.a {
				// the other end reports it unless that end is gone
				if m := s.Fabric.NodeByGUID(b.guid[l.a.node]); m != nil {
					if q := portOf(m, l.a.num); q != nil && q.Remote != nil {
						continue
					}
				}
			}
			wantName := fmt.Sprintf("%s/%d", s.baseName(peer.node), peer.num)
			gotName := s.entityOf(got, "").String()
			// The expected peer's port is usually not free: in a chain of
			// moves it carries the other half of the cable to move (on a
			// leaf, a leaf-to-leaf cable or a loopback), which names no
			// finding of its own when its expected link is reported from
			// here. When it has no link the cable simply moved.
			found, move, also := "", "", ""
			if m := s.Fabric.NodeByGUID(b.guid[peer.node]); m != nil {
				if q := portOf(m, peer.num); q != nil && q.Remote != nil && q.Remote != p {
					now := s.entityOf(q.Remote, "").String()
					found = fmt.Sprintf(" and %s <-> %s", wantName, now)
					move = fmt.Sprintf(", after moving the cable now at %s (to %s) off it", wantName, now)
					also = fmt.Sprintf(", %s to %s", wantName, now)
				} else if q != nil && q.StateKnown() && q.PeerUnknown() {
					// Up, with a far end that did not answer: what is
					// there was not seen, not known to be nothing
					// (review V4).
					also = fmt.Sprintf(", %s is up but what is behind it did not answer", wantName)
					move = fmt.Sprintf(", after finding where the live cable at %s leads (its far end did not answer)", wantName)
				} else if q != nil && q.Remote == nil && q.StateKnown() {
					also = fmt.Sprintf(", %s has no link", wantName)
				}
			}
			out = append(out, Finding{
				Check:    "topology.miswired",
				Severity: Error,
				// Both ends of the expected cable first: a table cut to
				// the terminal's width still shows the two ports to
				// recable; then where each goes now.
				Title:    fmt.Sprintf("Expected %s <-> %s moved: %s goes to %s%s", s.entityOf(p, "").String(), wantName, s.entityOf(p, "").String(), gotName, also),
				Entities: []Entity{s.entityOf(p, "end"), s.entityOf(got, "peer"), {NodeGUID: b.guid[peer.node], Node: s.baseName(peer.node), Port: int(peer.num), Role: "expected-peer"}},
				Evidence: []Evidence{{Name: "link", Text: fmt.Sprintf("expected %s <-> %s; found %s <-> %s%s", s.entityOf(p, "").String(), wantName, s.entityOf(p, "").String(), gotName, found)}},
				Impact:   s.miswireImpact(p),
				Action:   fmt.Sprintf("Move the cable at %s to %s%s (or fix the expected topology if the change was planned). A miswired fat tree breaks the routing engine's up/down assumptions and unbalances routes.", s.entityOf(p, "").String(), wantName, move),
				Basis:    "baseline",
			})
		}
	}
	return out
}

// maxRotation bounds the cables followed round a swap or rotation: past
// it the cables are reported one by one (and a chain that does not close
// is not walked further than a sweep's worth of work).
const maxRotation = 64

// swapCycle follows the cables from p: p's cable to its far end y, y's
// expected cable to the port x it belongs to, x's cable, and so on. When
// that comes back to p, the cables are swapped (two) or rotated (more)
// among themselves: every one of their ends is in use, each at another
// one's place. It returns the ports in that order, x0 y0 x1 y1 ... (xi
// <-> yi cabled, yi expected to x(i+1), the last y to x0); nil when the
// walk meets an end without a cable, a port the expected topology has no
// cable at, a node it lacks or one whose GUID another node claims too.
func (s *Snapshot) swapCycle(p *fabric.Port) []*fabric.Port {
	b := s.Baseline
	var c []*fabric.Port
	for x := p; len(c) < 2*maxRotation; {
		y := x.Remote
		if y == nil || s.claimedTwice(x.Node) || s.claimedTwice(y.Node) {
			return nil
		}
		i, ok := b.nodeByGUID(y.Node.GUID)
		if !ok {
			return nil
		}
		e, ok := b.peerAt(i, y.Num)
		if !ok {
			return nil
		}
		n := s.Fabric.NodeByGUID(b.guid[e.node])
		if n == nil {
			return nil
		}
		next := portOf(n, e.num)
		if next == nil || next == x || next.Remote == nil {
			return nil // x <-> y as planned, or the walk leaves the cables in use
		}
		c = append(c, x, y)
		if next == p {
			return c
		}
		if slices.Contains(c, next) {
			return nil
		}
		x = next
	}
	return nil
}

// chain is cables moved along a chain that does not close (moveChain):
// ports[i] and ports[i+1] are cabled now when found[i], else expected
// to be cabled to each other (and are not). It starts at the end the
// fix starts from.
type chain struct {
	ports []*fabric.Port
	found []bool
}

// plannedPort is the port the expected topology cables x to: ok is false
// when it has none there (x's node is not in it, or x is free in it);
// gone is true when that port's node is not in the fabric.
func (s *Snapshot) plannedPort(x *fabric.Port) (q *fabric.Port, ok, gone bool) {
	b := s.Baseline
	i, ok := b.nodeByGUID(x.Node.GUID)
	if !ok {
		return nil, false, false
	}
	e, ok := b.peerAt(i, x.Num)
	if !ok {
		return nil, false, false
	}
	n := s.Fabric.NodeByGUID(b.guid[e.node])
	if n == nil || portOf(n, e.num) == nil {
		return nil, true, true
	}
	return portOf(n, e.num), true, false
}

// moveChain follows the cables from p, whose cable is not where the
// expected topology has it, both ways: p's cable to its far end, that
// end's expected peer, its cable, and so on, and the same from p's
// expected peer. When both walks stop (a port without a cable, or one
// the expected topology has none at) without closing (swapCycle's case),
// the cables are moved along a chain: one fault. It returns nil when
// the chain holds fewer than two expected cables (one moved cable: its
// own finding says it), meets a node the fabric lacks, a cloned GUID, a
// port whose state or far end was not read (what is there is not known)
// or is longer than maxRotation cables.
func (s *Snapshot) moveChain(p *fabric.Port) *chain {
	// walk returns the ports after x, each reached by a cable (found)
	// or an expected cable, alternately, starting as found says.
	walk := func(x *fabric.Port, found bool) ([]*fabric.Port, []bool, bool) {
		var ps []*fabric.Port
		var fs []bool
		for len(ps) <= 2*maxRotation {
			var next *fabric.Port
			if found {
				next = x.Remote
				if next == nil {
					// x ends the chain without a link: known to have
					// none, not one whose far end did not answer.
					return ps, fs, x.StateKnown() && !x.PeerUnknown()
				}
			} else {
				q, ok, gone := s.plannedPort(x)
				if gone {
					return nil, nil, false
				}
				if !ok {
					return ps, fs, true // x has no cable in the plan
				}
				next = q
			}
			if next == p || slices.Contains(ps, next) || s.claimedTwice(next.Node) {
				return nil, nil, false // a cycle is swapCycle's
			}
			ps, fs = append(ps, next), append(fs, found)
			x, found = next, !found
		}
		return nil, nil, false
	}
	if p.Remote == nil || s.claimedTwice(p.Node) {
		return nil
	}
	fwd, ff, ok := walk(p, true)
	if !ok {
		return nil
	}
	back, bf, ok := walk(p, false)
	if !ok {
		return nil
	}
	c := &chain{}
	for i := len(back) - 1; i >= 0; i-- {
		c.ports, c.found = append(c.ports, back[i]), append(c.found, bf[i])
	}
	c.ports = append(append(c.ports, p), fwd...)
	c.found = append(c.found, ff...)
	expected, cables := 0, 0
	for _, f := range c.found {
		if f {
			cables++
		} else {
			expected++
		}
	}
	if expected < 2 || cables > maxRotation {
		return nil
	}
	// Start where the fix starts: at an end that is an empty port (the
	// first cable to move goes there), else either; then the way that
	// moves fewer HCA ends (a switch's ports are where cables are
	// re-plugged), then the first by name.
	rev := &chain{ports: slices.Clone(c.ports), found: slices.Clone(c.found)}
	slices.Reverse(rev.ports)
	slices.Reverse(rev.found)
	judge := func(c *chain) (int, int, string) {
		full := 0
		if c.found[0] {
			full = 1 // starts at a cable to remove
		}
		hcas := 0
		for _, x := range c.moved() {
			if x.Node.Type != mad.NodeSwitch {
				hcas++
			}
		}
		return full, hcas, s.entityOf(c.ports[0], "").String()
	}
	f1, h1, n1 := judge(c)
	f2, h2, n2 := judge(rev)
	if f2 < f1 || f2 == f1 && (h2 < h1 || h2 == h1 && words.Natural(n2, n1) < 0) {
		return rev
	}
	return c
}

// moved returns the ports whose cable ends the fix re-plugs, in order:
// after an expected cable from x to y, y's cable is moved from its far
// end z to x (z is moved).
func (c *chain) moved() []*fabric.Port {
	var out []*fabric.Port
	for i := 0; i+1 < len(c.found); i++ {
		if !c.found[i] && c.found[i+1] {
			out = append(out, c.ports[i+2])
		}
	}
	return out
}

// chainFinding is one finding for cables moved along a chain (moveChain):
// the title names each moved cable and where it belongs, from the end
// the fix starts at; the evidence lists every expected and found cable;
// the action walks the chain.
func (s *Snapshot) chainFinding(c *chain) Finding {
	name := func(p *fabric.Port) string { return s.entityOf(p, "").String() }
	ps, last := c.ports, len(c.ports)-1
	var now, steps, wantLinks, foundLinks, ends []string
	var ents []Entity
	impact := Impact{}
	for i, f := range c.found {
		x, y := ps[i], ps[i+1]
		if !f {
			wantLinks = append(wantLinks, fmt.Sprintf("%s <-> %s", name(x), name(y)))
			continue
		}
		foundLinks = append(foundLinks, fmt.Sprintf("%s <-> %s", name(y), name(x)))
		if i == 0 {
			// The chain starts at a cable the plan does not have:
			// take it out first, which frees the port the next goes to.
			steps = append(steps, fmt.Sprintf("unplug the cable between %s and %s (%s has none in the expected topology)", name(x), name(y), name(x)))
			ents = append(ents, s.entityOf(x, "end"), s.entityOf(y, "peer"))
			continue
		}
		// y's cable is moved from y to ps[i-1], x's expected peer.
		to := ps[i-1]
		now = append(now, fmt.Sprintf("cable at %s goes to %s (belongs at %s)", name(y), name(x), name(to)))
		step := fmt.Sprintf("move the cable at %s (to %s) to %s", name(y), name(x), name(to))
		if len(steps) > 0 {
			step = fmt.Sprintf("then the cable at %s (to %s) to %s", name(y), name(x), name(to))
		}
		steps = append(steps, step)
		ents = append(ents, s.entityOf(y, "end"), s.entityOf(x, "peer"))
		if im := s.miswireImpact(y); im.Score > impact.Score {
			impact = im
		}
	}
	// The ends: an empty port where a cable belongs, or a port the plan
	// has no cable at.
	for _, e := range []struct {
		p     *fabric.Port
		found bool
	}{{ps[0], c.found[0]}, {ps[last], c.found[last-1]}} {
		if e.found {
			ends = append(ends, fmt.Sprintf("%s has no cable in the expected topology", name(e.p)))
			continue
		}
		ends = append(ends, fmt.Sprintf("%s has no link", name(e.p)))
		ents = append(ents, s.entityOf(e.p, "expected-peer"))
	}
	if !c.found[last-1] {
		// The chain ends at an expected cable between two ports without
		// one: the last move frees the first of them.
		steps = append(steps, fmt.Sprintf("then connect %s to %s", name(ps[last-1]), name(ps[last])))
	}
	cables := len(foundLinks)
	title := fmt.Sprintf("%d cables moved along a chain from %s to %s: %s", cables, name(ps[0]), name(ps[last]), strings.Join(now, ", "))
	if len(now) > 3 {
		title = fmt.Sprintf("%d cables moved along a chain from %s to %s: %s; the evidence lists the other %d", cables, name(ps[0]), name(ps[last]), now[0], len(now)-1)
	}
	var empty []string
	for _, e := range ends {
		if strings.HasSuffix(e, "has no link") {
			empty = append(empty, e)
		}
	}
	if len(empty) > 0 {
		title += "; " + strings.Join(empty, ", ")
	}
	return Finding{
		Check:    "topology.miswired",
		Severity: Error,
		Title:    title,
		Entities: ents,
		Evidence: []Evidence{{Name: "link", Value: float64(cables), Unit: "cables",
			Text: fmt.Sprintf("expected %s; found %s; %s", strings.Join(wantLinks, ", "), strings.Join(foundLinks, ", "), strings.Join(ends, ", "))}},
		Impact: impact,
		Action: fmt.Sprintf("Walk the chain from %s: %s (or fix the expected topology if the change was planned). A miswired fat tree breaks the routing engine's up/down assumptions and unbalances routes.", name(ps[0]), strings.Join(steps, ", ")),
		Basis:  "baseline",
	}
}

// swapFinding is one finding for cables swapped or rotated among
// themselves (swapCycle's c). It names the ends to exchange on one side
// of the cables: the side whose ends are ports of one switch if there is
// one (a leaf's two ports, not two HCAs), else the side with fewer HCA
// ports, else the one whose first port sorts first; the title starts with
// them, so a table cut to the terminal's width still shows the ports to
// recable.
func (s *Snapshot) swapFinding(c []*fabric.Port) Finding {
	k := len(c) / 2
	// The other side: the same cycle walked the other way from c[1].
	other := []*fabric.Port{c[1], c[0]}
	for j := k - 1; j >= 1; j-- {
		other = append(other, c[2*j+1], c[2*j])
	}
	name := func(p *fabric.Port) string { return s.entityOf(p, "").String() }
	type side struct {
		ports         []*fabric.Port
		oneNode, hcas int
		first         string
	}
	judge := func(q []*fabric.Port) side {
		sd := side{ports: q, first: name(q[0])}
		for i := 0; i < len(q); i += 2 {
			if q[i].Node != q[0].Node {
				sd.oneNode = 1
			}
			if q[i].Node.Type != mad.NodeSwitch {
				sd.hcas++
			}
			if words.Natural(name(q[i]), sd.first) < 0 {
				sd.first = name(q[i])
			}
		}
		if q[0].Node.Type != mad.NodeSwitch {
			sd.oneNode = 1 // two HCAs' ports are not one switch's
		}
		return sd
	}
	a, o := judge(c), judge(other)
	if o.oneNode < a.oneNode || o.oneNode == a.oneNode && (o.hcas < a.hcas || o.hcas == a.hcas && words.Natural(o.first, a.first) < 0) {
		a = o
	}
	// Start at the side's first port by name.
	q := a.ports
	for i := 0; i < len(q); i += 2 {
		if name(q[i]) == a.first {
			q = append(slices.Clone(q[i:]), q[:i]...)
			break
		}
	}
	var ends, now, fix, back, wantLinks, foundLinks []string
	var ents []Entity
	impact := Impact{}
	for i := 0; i < len(q); i += 2 {
		x, y := q[i], q[i+1]
		exp := q[(i+len(q)-1)%len(q)] // x's expected far end: the previous y
		ends = append(ends, name(x))
		now = append(now, fmt.Sprintf("cable at %s goes to %s (expected %s)", name(x), name(y), name(exp)))
		fix = append(fix, fmt.Sprintf("%s to %s", name(x), name(exp)))
		back = append(back, fmt.Sprintf("%s reaches %s", name(x), name(exp)))
		wantLinks = append(wantLinks, fmt.Sprintf("%s <-> %s", name(x), name(exp)))
		foundLinks = append(foundLinks, fmt.Sprintf("%s <-> %s", name(x), name(y)))
		ents = append(ents, s.entityOf(x, "end"), s.entityOf(y, "peer"))
		if im := s.miswireImpact(x); im.Score > impact.Score {
			impact = im
		}
	}
	var title, action string
	plan := "(or fix the expected topology if the change was planned). A miswired fat tree breaks the routing engine's up/down assumptions and unbalances routes."
	switch {
	case k == 2:
		title = fmt.Sprintf("%s and %s are swapped: %s; swap them", ends[0], ends[1], strings.Join(now, ", "))
		action = fmt.Sprintf("Exchange the cables at %s and %s, so that %s %s", ends[0], ends[1], strings.Join(back, " and "), plan)
	case k <= 3:
		title = fmt.Sprintf("%s and %s are rotated: %s", strings.Join(ends[:k-1], ", "), ends[k-1], strings.Join(now, ", "))
		action = fmt.Sprintf("Re-plug the %d cables so that each reaches its expected port: %s %s", k, strings.Join(fix, ", "), plan)
	default:
		among := strings.Join(ends[:k-1], ", ") + " and " + ends[k-1]
		if k > 6 {
			among = words.First(ends[:k], 5)
		}
		title = fmt.Sprintf("%d cables are rotated among %s: %s; the evidence lists the other %d", k, among, now[0], k-1)
		action = fmt.Sprintf("Re-plug the %d cables so that each reaches its expected port: %s %s", k, strings.Join(fix, ", "), plan)
	}
	return Finding{
		Check:    "topology.miswired",
		Severity: Error,
		Title:    title,
		Entities: ents,
		Evidence: []Evidence{{Name: "link", Value: float64(k), Unit: "cables",
			Text: fmt.Sprintf("expected %s; found %s", strings.Join(wantLinks, ", "), strings.Join(foundLinks, ", "))}},
		Impact: impact,
		Action: action,
		Basis:  "baseline",
	}
}

func (s *Snapshot) miswireImpact(p *fabric.Port) Impact {
	sh := s.pathShare(p)
	share := sh.v
	return Impact{PathShare: share, PathShareLowerBound: sh.atLeast, Score: max(share, 0.01), Summary: fmt.Sprintf("the link carries %s of host-to-host paths%s over a path the design did not plan", sh.text(), s.shareNote(sh))}
}

func (s *Snapshot) changed() []Finding {
	var out []Finding
	b := s.Baseline
	var missing []int32
	for i := range b.in {
		if s.Fabric.NodeByGUID(b.guid[i]) == nil {
			missing = append(missing, int32(i))
		}
	}
	// A missing switch hides the hosts cabled only to it: they are its
	// finding (named in it), not one finding each.
	gone := map[int32]bool{}
	for _, n := range missing {
		gone[n] = true
	}
	behind := map[int32][]int32{}
	folded := map[int32]bool{}
	for _, n := range missing {
		if b.typ[n] == mad.NodeSwitch {
			continue
		}
		sw := int32(-1)
		only := true
		for r := range b.cables(n) {
			if b.typ[r] != mad.NodeSwitch || !gone[r] || (sw >= 0 && sw != r) {
				only = false
				break
			}
			sw = r
		}
		if only && sw >= 0 {
			behind[sw] = append(behind[sw], n)
			folded[n] = true
		}
	}
	unknown := s.unreachedBaseline()
	for _, n := range missing {
		guid, typ := b.guid[n], b.typ[n]
		if folded[n] || (s.Scope != nil && !s.scopeNamesGUID(guid)) {
			continue
		}
		if unknown[guid] {
			continue // behind a port whose far end did not answer: could not look
		}
		if typ != mad.NodeSwitch && s.cutOffByLink(n) {
			continue // its down link is link.down's finding
		}
		if s.standIn(n) != nil {
			continue // there under a cloned GUID: topology.duplicate-guid's finding
		}
		sev := Error
		if typ == mad.NodeSwitch {
			sev = Critical
		}
		title := fmt.Sprintf("%s %s from the expected topology is missing", typ, s.baseName(n))
		ev := []Evidence{{Name: "node", Text: fmt.Sprintf("NodeGUID 0x%016x is in the expected topology but was not discovered", guid)}}
		ents := []Entity{s.baseEntity(n, "missing")}
		impact := "its links and hosts are out of the fabric"
		if hs := behind[n]; len(hs) > 0 {
			what, more, sum := s.behindMissing(hs)
			title = fmt.Sprintf("%s %s from the expected topology is missing, and %s", typ, s.baseName(n), what)
			for _, h := range hs {
				ents = append(ents, s.baseEntity(h, "behind"))
			}
			ev = append(ev, more...)
			impact = sum
		}
		out = append(out, Finding{
			Check:    "topology.changed",
			Severity: sev,
			Title:    title,
			Entities: ents,
			Evidence: ev,
			Impact:   Impact{Score: 0.5, Summary: impact},
			Action:   "Find out whether the node is powered and cabled: look at the ports that lead to it (ibdoctor links) and at the node itself.",
			Basis:    "baseline",
		})
	}
	var added []string
	for _, n := range s.Fabric.Nodes {
		if !b.has(n.GUID) {
			added = append(added, s.nodeName(n))
		}
	}
	if len(added) > 0 && s.Scope == nil {
		shown := added
		if len(shown) > 10 {
			shown = append(shown[:10:10], fmt.Sprintf("... %d more", len(added)-10))
		}
		out = append(out, Finding{
			Check:    "topology.changed",
			Severity: Info,
			Title:    fmt.Sprintf("%s not in the expected topology", words.Count(len(added), "node")),
			Evidence: []Evidence{{Name: "new nodes", Value: float64(len(added)), Text: strings.Join(shown, ", ")}},
			Impact:   Impact{Summary: "new hardware, or a replaced board with a new GUID"},
			Action:   "If the change was planned, save a new baseline (ibdoctor sweep); a replaced board explains a missing and a new node at the same place.",
			Basis:    "baseline",
		})
	}
	return out
}

// behindMissing says what a missing switch took with it, of the expected
// topology's nodes cabled only to it (hs): hosts cut off; adapters of
// hosts still in the fabric on other adapters (a rail-optimised fabric's
// rail leaf: the hosts lose that rail, they are not cut off; trial C9);
// and Aggregation Nodes, which are no hosts (the role judgement). It
// returns the title's words after "and", the evidence and the impact.
func (s *Snapshot) behindMissing(hs []int32) (what string, ev []Evidence, impact string) {
	b := s.Baseline
	var cut, rail, ans []string
	devs := map[string]bool{}
	kept := map[string]bool{}
	for _, h := range hs {
		d := b.descOf(h)
		host, dev, ok := hostOfDesc(d)
		switch {
		case aggregationDesc(d):
			ans = append(ans, s.baseName(h))
		case ok && s.hostInFabric(host):
			rail = append(rail, s.baseName(h))
			devs[dev] = true
			kept[host] = true
		default:
			cut = append(cut, s.baseName(h))
		}
	}
	var parts, impacts []string
	if len(cut) > 0 {
		parts = append(parts, fmt.Sprintf("the %s behind it", words.Count(len(cut), "host")))
		ev = append(ev, Evidence{Name: "hosts behind", Value: float64(len(cut)), Text: "cabled only to it, not discovered either: " + strings.Join(cut, ", ")})
		impacts = append(impacts, fmt.Sprintf("%s %s cut off (or could not be seen through it)", words.Count(len(cut), "host"), words.Verb(len(cut), "are")))
	}
	if len(rail) > 0 {
		ds := strings.Join(slices.Sorted(maps.Keys(devs)), "/")
		lost := "that rail is lost"
		if len(devs) > 1 {
			lost = "those rails are lost"
		}
		the := "the "
		if len(cut) > 0 {
			the = ""
		}
		parts = append(parts, fmt.Sprintf("%s%s behind it (%s of %s: %s; the hosts stay reachable on their other rails)", the, words.Count(len(rail), "HCA"), ds, words.Count(len(kept), "host"), lost))
		ev = append(ev, Evidence{Name: "HCAs behind", Value: float64(len(rail)), Text: "cabled only to it, not discovered either; their hosts are, on their other adapters: " + strings.Join(rail, ", ")})
		impacts = append(impacts, fmt.Sprintf("%s %s without %s (reachable on their other rails, with less bandwidth)", words.Count(len(kept), "host"), words.Verb(len(kept), "run"), ds))
	}
	if len(ans) > 0 {
		an := "its Aggregation Node"
		if len(ans) > 1 {
			an = fmt.Sprintf("its %d Aggregation Nodes", len(ans))
		}
		parts = append(parts, an)
		ev = append(ev, Evidence{Name: "aggregation node", Value: float64(len(ans)), Text: "SHARP Aggregation Node cabled only to it (no host), not discovered either: " + strings.Join(ans, ", ")})
		impacts = append(impacts, "SHARP cannot aggregate on it")
	}
	what = parts[0]
	if len(parts) > 1 {
		what = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return what, ev, strings.Join(impacts, "; ")
}

// hostInFabric reports whether a host (hostOfDesc's) has an adapter in
// the fabric: discovered, so reachable on it.
func (s *Snapshot) hostInFabric(host string) bool {
	return slices.ContainsFunc(s.Fabric.NodesByHost(host), isHostNode)
}

// cutOffByLink reports whether a missing host's every expected link ends
// at a switch port that is present and not up: the host is gone because
// its cable is (link.down reports that link).
func (s *Snapshot) cutOffByLink(n int32) bool {
	any := false
	for peer, num := range s.Baseline.cables(n) {
		sw := s.Fabric.NodeByGUID(s.Baseline.guid[peer])
		if sw == nil {
			return false
		}
		q := portOf(sw, num)
		if q == nil || q.PhysState == mad.PhysLinkUp {
			return false
		}
		any = true
	}
	return any
}

func (s *Snapshot) scopeNamesGUID(guid uint64) bool {
	for h := range s.Scope.Hosts {
		if h.GUID == guid {
			return true
		}
	}
	for sw := range s.Scope.Switches {
		if sw.GUID == guid {
			return true
		}
	}
	return false
}

// unreachedBaseline returns the GUIDs of the expected topology's nodes
// that were not discovered because discovery could not look: a node
// cabled (in the expected topology) to a port whose far end or state was
// not read (fabric.Port.Unreached), and every missing node reached from
// one through other missing nodes (the hosts behind a leaf whose agent
// is dead). Their absence is undecided, not a change.
func (s *Snapshot) unreachedBaseline() map[uint64]bool {
	unknown := map[uint64]bool{}
	if s.Baseline == nil {
		return unknown
	}
	present := func(guid uint64) bool { return s.Fabric.NodeByGUID(guid) != nil }
	b := s.Baseline
	var queue []int32
	for l := range b.allLinks() {
		for _, e := range [2][2]baseEnd{{l.a, l.b}, {l.b, l.a}} {
			here, there := e[0], e[1]
			tg := b.guid[there.node]
			n := s.Fabric.NodeByGUID(b.guid[here.node])
			if n == nil || present(tg) || unknown[tg] {
				continue
			}
			if p := portOf(n, here.num); p == nil || p.PeerUnknown() || !p.StateKnown() {
				unknown[tg] = true
				queue = append(queue, there.node)
			}
		}
	}
	// A missing CA whose expected switch port now holds another node's
	// cable moved; when that switch has an up port whose far end did not
	// answer, it may be there (review V4: the two host cables of gpu005
	// swapped, the adapter now at leaf02/1 silent): could not look.
	silentOn := map[uint64]bool{} // switches with an up port whose far end was not read
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.StateKnown() && p.PeerUnknown() && p.PhysState == mad.PhysLinkUp {
				silentOn[n.GUID] = true
				break
			}
		}
	}
	if len(silentOn) > 0 {
		for l := range b.allLinks() {
			for _, e := range [2][2]baseEnd{{l.a, l.b}, {l.b, l.a}} {
				here, there := e[0], e[1]
				tg := b.guid[there.node]
				if b.typ[there.node] == mad.NodeSwitch || !silentOn[b.guid[here.node]] || present(tg) || unknown[tg] {
					continue
				}
				n := s.Fabric.NodeByGUID(b.guid[here.node])
				if p := portOf(n, here.num); p != nil && p.Remote != nil && p.Remote.Node.GUID != tg {
					unknown[tg] = true
					queue = append(queue, there.node)
				}
			}
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for peer := range b.cables(n) {
			if rg := b.guid[peer]; !present(rg) && !unknown[rg] {
				unknown[rg] = true
				queue = append(queue, peer)
			}
		}
	}
	return unknown
}

// spineBundle is one spine a leaf has fewer cables to than the spine's
// other leaves: have of want.
type spineBundle struct {
	spine      *fabric.Node
	have, want int
	peers      int // leaves cabled to the spine with exactly want cables
	leaves     int // leaves cabled to the spine at all
}

// shortUplinks is a leaf's cabling to the spines judged for it (those
// whose leaves agree on a design) against that design.
type shortUplinks struct {
	short  []spineBundle // the spines it has fewer cables to
	spines int           // spines judged
	full   int           // of them, those it has the design's cables to
	want   int           // the design's cables to the judged spines
	have   int           // its cables to them, at most the design's each
	// planned: the expected topology has more cables to one of the
	// spines than the leaf has: missing by the operator's plan.
	planned bool
	// alone: no other leaf is cabled to the spines as this one is;
	// peerHosts: it has as many hosts as most leaves (set by the caller).
	alone, peerHosts bool
}

// likePeers reports whether the leaf otherwise looks like its spines'
// other leaves: it lacks at most a quarter of their uplinks, and has
// their cables to some spine (when more than one is judged). That is
// what a cable lost (unplugged, down) looks like; a leaf cabled to half
// the spines, or with thinner bundles to every spine, differs in its
// whole pattern, which is how storage or service leaves are built on
// purpose. But such leaves come in sets, or with hosts of their own: a
// leaf unlike every other leaf that has its peers' hosts lost cables (on
// two or three spines one lost bundle is more than a quarter). The
// expected topology, when it has the cables, settles it.
func (u shortUplinks) likePeers() bool {
	return u.planned || u.alone && u.peerHosts || 4*(u.want-u.have) <= u.want && (u.full > 0 || u.spines == 1)
}

// shortOfUplinks finds the leaves with fewer cables to a spine than the
// spine's other leaves have. The cables between a leaf and a spine are
// built alike on every leaf, so a spine that has the same number to three
// quarters of its leaves (three or more) shows the design. A leaf with
// none to a spine counts when the spine reaches three quarters of the
// leaves that have spines. Only spines whose every port was read are
// judged: could not look is not missing. Whether a leaf below the design
// lost cables or was built so is likePeers' judgement.
func (s *Snapshot) shortOfUplinks() map[*fabric.Node]shortUplinks {
	tiers := SwitchTiers(s.Fabric)
	bundles := map[*fabric.Node]map[*fabric.Node]int{} // spine -> leaf -> active cables
	leaves := map[*fabric.Node]bool{}                  // leaves cabled to some spine
	var spines, leafList []*fabric.Node
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch || tiers[n] != 1 {
			continue
		}
		read := true
		b := map[*fabric.Node]int{}
		for i, p := range n.Ports {
			if i == 0 {
				continue
			}
			if p == nil || !p.Reached() || p.PeerUnknown() {
				read = false
				break
			}
			if !interSwitch(p) || tiers[p.Remote.Node] != 0 {
				continue
			}
			leaves[p.Remote.Node] = true
			if linkUp(p) {
				b[p.Remote.Node]++
			}
		}
		if read {
			bundles[n] = b
			spines = append(spines, n)
		}
	}
	// The expected topology, when it is the operator's word on the
	// design (--expect-topology, or a baseline accepted with 'baseline
	// accept' after a cable was retired), says a leaf it has with as few
	// cables to the spine is as built. A baseline the first sweep took
	// by itself may have taken the missing cables in (trial C7): it says
	// only that a leaf had more. Its cable counts are made the first
	// time a leaf is short: a map of every cable (about 10 MB at 49k
	// nodes) is not made for a fabric as designed.
	designed := s.Baseline != nil && (s.BaselineDesigned || s.Baseline.Accepted)
	type pair struct{ leaf, spine uint64 }
	var planned map[pair]int
	plannedAtMost := func(leaf, spine uint64, have int) bool {
		if planned == nil {
			planned = map[pair]int{}
			for l := range s.Baseline.allLinks() {
				a, b := s.Baseline.guid[l.a.node], s.Baseline.guid[l.b.node]
				planned[pair{a, b}]++
				planned[pair{b, a}]++
			}
		}
		return planned[pair{leaf, spine}] <= have
	}
	// A baseline without the spine (a gate's is the job's part: its
	// hosts and their leaves) says nothing of the cables to it.
	knows := func(leaf, spine *fabric.Node) bool {
		return s.Baseline != nil && s.Baseline.has(leaf.GUID) && s.Baseline.has(spine.GUID)
	}
	// The leaves in the fabric's order, listed once: each spine looked
	// every node of the fabric up in leaves (tens of millions of lookups
	// at 49k).
	for _, n := range s.Fabric.Nodes {
		if leaves[n] {
			leafList = append(leafList, n)
		}
	}
	near := peersReach(spines, leafList, bundles)
	judged := make([]shortUplinks, len(leafList)) // by leafList's index
	for j, sp := range spines {
		b := bundles[sp]
		if len(b) < 3 {
			continue
		}
		count := map[int]int{}
		for _, k := range b {
			count[k]++
		}
		want, most := 0, 0
		for k, c := range count {
			if c > most || (c == most && k > want) {
				want, most = k, c
			}
		}
		if 4*most < 3*len(b) {
			continue // no design the spine's leaves agree on
		}
		// Leaves with none to this spine are judged only when it
		// reaches nearly every leaf that has spines, or nearly every
		// leaf cabled to the spines this one is cabled to (one pod's
		// spine in a three-level fabric reaches its pod's leaves only;
		// leaves on a subset of the spines by design do not hide a
		// compute leaf's missing cable).
		all := 4*len(b) >= 3*len(leaves)
		for i, l := range leafList {
			have, cabled := b[l]
			if !cabled && !all && !near(i, j) {
				continue
			}
			u := &judged[i]
			u.spines++
			switch {
			case have >= want:
				u.full++
				u.want += want
				u.have += want
			case designed && knows(l, sp) && plannedAtMost(l.GUID, sp.GUID, have):
				u.full++ // as planned: the plan is its design
				u.want += have
				u.have += have
			default:
				u.want += want
				u.have += have
				u.planned = u.planned || knows(l, sp) && !plannedAtMost(l.GUID, sp.GUID, have)
				u.short = append(u.short, spineBundle{spine: sp, have: have, want: want, peers: most, leaves: len(b)})
			}
		}
	}
	// Each leaf's cables to every spine, as a key: a cabling no other
	// leaf shares is not a design of a set of leaves.
	keys := make([]string, len(leafList))
	shared := map[string]int{}
	var key []byte
	for i, l := range leafList {
		key = key[:0]
		for _, sp := range spines {
			key = binary.AppendUvarint(key, uint64(bundles[sp][l]))
		}
		keys[i] = string(key)
		shared[keys[i]]++
	}
	out := map[*fabric.Node]shortUplinks{}
	for i, u := range judged {
		if len(u.short) > 0 {
			u.alone = shared[keys[i]] == 1
			out[leafList[i]] = u
		}
	}
	return out
}

// peersReach returns whether leaf i (of leaves) is to be compared with
// spine j's design though it has no cable to it: of the other leaves
// cabled to every spine leaf i is cabled to (three or more), three
// quarters reach spine j too. Leaves cabled alike are grouped by the
// spines they reach, so the work is per group, not per leaf.
func peersReach(spines, leaves []*fabric.Node, bundles map[*fabric.Node]map[*fabric.Node]int) func(i, j int) bool {
	reach := make([][]int, len(leaves)) // leaf -> spines' indices
	at := make(map[*fabric.Node]int, len(leaves))
	for i, l := range leaves {
		at[l] = i
	}
	for j, sp := range spines {
		for l, k := range bundles[sp] {
			if i, ok := at[l]; ok && k > 0 {
				reach[i] = append(reach[i], j)
			}
		}
	}
	type group struct {
		reach []int
		n     int
	}
	var groups []*group
	of := make([]int, len(leaves))
	byKey := map[string]int{}
	var key []byte
	for i, r := range reach {
		slices.Sort(r)
		key = key[:0]
		for _, j := range r {
			key = binary.AppendUvarint(key, uint64(j))
		}
		g, ok := byKey[string(key)]
		if !ok {
			g = len(groups)
			byKey[string(key)] = g
			groups = append(groups, &group{reach: r})
		}
		groups[g].n++
		of[i] = g
	}
	// For each group: how many other leaves reach all its spines, and
	// how many of those reach each spine.
	peers := make([]int, len(groups))
	counts := make([][]int, len(groups))
	for g, a := range groups {
		counts[g] = make([]int, len(spines))
		for _, b := range groups {
			if !subset(a.reach, b.reach) {
				continue
			}
			peers[g] += b.n
			for _, j := range b.reach {
				counts[g][j] += b.n
			}
		}
		peers[g]-- // the leaf itself
	}
	return func(i, j int) bool {
		g := of[i]
		return peers[g] >= 3 && 4*counts[g][j] >= 3*peers[g]
	}
}

// subset reports whether every element of a (ascending) is in b
// (ascending).
func subset(a, b []int) bool {
	k := 0
	for _, x := range a {
		for k < len(b) && b[k] < x {
			k++
		}
		if k == len(b) || b[k] != x {
			return false
		}
	}
	return true
}

// pattern says how a leaf's cabling differs from its spines' other
// leaves' as a whole.
func (u shortUplinks) pattern() string {
	none, thin := 0, 0
	for _, b := range u.short {
		if b.have == 0 {
			none++
		} else {
			thin++
		}
	}
	switch {
	case thin == 0:
		return fmt.Sprintf("cabled to %d of the %d spines only", u.full, u.spines)
	case u.spines == 1:
		return fmt.Sprintf("%d of the %d cables to its one spine", u.have, u.want)
	case u.full == 0 && none == 0:
		return fmt.Sprintf("fewer cables to each of the %d spines", u.spines)
	}
	return fmt.Sprintf("of the %d spines, their other leaves' cables to %d, fewer to %d, none to %d", u.spines, u.full, thin, none)
}

// spineCables counts a leaf's active uplinks as its spines' other leaves
// are compared by: a cable to another leaf that has spines of its own
// (leafToLeaf) is not one; it would make the count a figure no leaf has.
// A cable to a switch with hosts but no spines (a spine with storage
// cabled to it, a leaf chained below this one) still is.
func spineCables(leaf *fabric.Node, tiers map[*fabric.Node]int) int {
	n := 0
	for _, p := range leaf.Ports {
		if p != nil && p.Num != 0 && interSwitch(p) && linkUp(p) && !leafToLeaf(p, tiers) {
			n++
		}
	}
	return n
}

// leafToLeaf reports whether p, on a leaf, is cabled to another leaf that
// has cables to spines of its own: two leaves of a fat tree cabled to
// each other rather than each to a spine.
func leafToLeaf(p *fabric.Port, tiers map[*fabric.Node]int) bool {
	if !interSwitch(p) || tiers[p.Node] != 0 || tiers[p.Remote.Node] != 0 {
		return false
	}
	for _, q := range p.Remote.Node.Ports {
		if q != nil && q.Num != 0 && interSwitch(q) && linkUp(q) && tiers[q.Remote.Node] == 1 {
			return true
		}
	}
	return false
}

// shortOfUplinksFinding says what a leaf's cabling below its spines'
// design means: cables missing or down when the leaf otherwise looks
// like its peers; a cabling of its own (info) when it does not, which is
// a warning only when it leaves the leaf past the oversubscription
// ratio, and never called missing: it may be the design.
func (s *Snapshot) shortOfUplinksFinding(leaf *fabric.Node, u shortUplinks, host, up float64, hosts, have int, ratio float64) Finding {
	missing := u.want - u.have
	var where []string
	ents := []Entity{s.nodeEntity(leaf, "switch")}
	for _, b := range u.short {
		where = append(where, fmt.Sprintf("to %s %d of %d (%d of its %d leaves have %d)", s.nodeName(b.spine), b.have, b.want, b.peers, b.leaves, b.want))
		ents = append(ents, s.nodeEntity(b.spine, "spine"))
	}
	want := have + missing
	r := host / up
	over := host > ratio*up
	f := Finding{
		Check:    "topology.oversubscribed",
		Severity: Warning,
		Entities: ents,
		Evidence: []Evidence{
			{Name: "uplinks", Value: float64(have), Threshold: float64(want),
				Text: fmt.Sprintf("active cables to the spines: %s", strings.Join(where, "; "))},
			{Name: "oversubscription", Value: r, Threshold: ratio,
				Text: fmt.Sprintf("host links %s Gb/s, uplinks %s Gb/s (active rates): %.1f:1", fmtNum(host), fmtNum(up), r)},
		},
		Basis: "topology",
	}
	if !u.likePeers() {
		// Its whole cabling differs: the design of a storage or service
		// leaf as likely as lost cables, so nothing is called missing.
		f.Evidence[0].Text += fmt.Sprintf("; its whole cabling differs from its peers' (%s), unlike a leaf that lost one or a few cables", u.pattern())
		f.Action = "Compare the leaf with the cabling plan: if it is built with these uplinks (a storage or service leaf on some of the spines, or thinner bundles), nothing is missing; if the plan gives it its peers' uplinks, plug or repair the cables to the spines named."
		if over {
			f.Title = fmt.Sprintf("Leaf %s is oversubscribed %.1f:1 (%s, %s), with %d uplinks where its spines' other leaves have %d", s.nodeName(leaf), r, words.Count(hosts, "host"), words.Count(have, "uplink"), have, want)
			f.Action += " Either way the leaf is past the ratio: add uplinks, or place bandwidth-bound jobs within the leaf."
			f.Impact = Impact{Score: float64(hosts) / float64(max(1, s.hostCount())) * (1 - up/host),
				Summary: fmt.Sprintf("traffic leaving the leaf gets at most %.0f%% of its hosts' bandwidth, past the %.1f:1 threshold", up/host*100, ratio)}
			return f
		}
		f.Severity = Info
		f.Title = fmt.Sprintf("Leaf %s has %s where its spines' other leaves have %d, %s: taken as its design", s.nodeName(leaf), words.Count(have, "uplink"), want, u.pattern())
		f.Impact = Impact{Summary: fmt.Sprintf("within the %.1f:1 threshold: none if built so", ratio)}
		return f
	}
	f.Title = fmt.Sprintf("Leaf %s has %s where its spines' other leaves have %d: %s missing or down", s.nodeName(leaf), words.Count(have, "uplink"), want, words.Count(missing, "cable"))
	if over {
		f.Title += fmt.Sprintf("; oversubscribed %.1f:1 (%s)", r, words.Count(hosts, "host"))
	}
	f.Impact = Impact{Score: float64(hosts) / float64(max(1, s.hostCount())) * float64(missing) / float64(want),
		Summary: fmt.Sprintf("traffic leaving the leaf has %d of the %d uplinks its peers have (%.0f%% of their bandwidth); routes over the missing cables crowd onto the others", have, want, 100*float64(have)/float64(want))}
	f.Action = "Find the leaf's ports for these spines on the cabling plan: reseat or replace a cable that is down, plug one that is missing, then confirm with 'ibdoctor check' that the finding is gone. If the leaf was built with fewer uplinks on purpose, nothing is wrong."
	sw := []*fabric.Node{leaf}
	for _, b := range u.short {
		sw = append(sw, b.spine)
	}
	if c := s.trainedUnlinked(sw); c != "" {
		f.Evidence = append(f.Evidence, Evidence{Name: "candidate ports",
			Text: "ports read with a link's rate but no neighbour, where the missing cable probably is: " + c + " (a port without a link reads 1X SDR; these trained, and their far end was not seen)"})
		f.Action = "Start with the ports read with a link's rate but no neighbour (" + c + "): a cable is probably plugged there whose link was not seen up end to end; reseat or replace it. Otherwise find the leaf's ports for these spines on the cabling plan: reseat or replace a cable that is down, plug one that is missing, then confirm with 'ibdoctor check' that the finding is gone. If the leaf was built with fewer uplinks on purpose, nothing is wrong."
	}
	return f
}

// trainedUnlinked names the ports of switches sw read without a
// neighbour yet at a speed above SDR, which a port reads only once its
// link trained (one without a link reads the slowest: ibnetdiscover -p
// lists free ports "1x SDR"): "ibcore01/9 (4X QDR); TS-…/15, 23 (4X
// QDR)", or "". A port that is up with a far end that did not answer is
// not one: that is could not look, said elsewhere.
func (s *Snapshot) trainedUnlinked(sw []*fabric.Node) string {
	var parts []string
	for _, n := range sw {
		var nums []string
		rate := ""
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote != nil || p.PeerUnknown() || linkUp(p) || p.PhysState == mad.PhysDisabled ||
				!p.SpeedKnown() || p.SpeedActive.Max() <= mad.SpeedSDR {
				continue
			}
			nums = append(nums, fmt.Sprint(p.Num))
			r := fmt.Sprintf("%s %s", p.WidthActive.Max(), p.SpeedActive.Max())
			if rate == "" {
				rate = r
			} else if rate != r {
				rate = "rates as read"
			}
		}
		if len(nums) > 0 {
			parts = append(parts, fmt.Sprintf("%s/%s (%s)", s.nodeName(n), strings.Join(nums, ", "), rate))
		}
	}
	return strings.Join(parts, "; ")
}

// foldShortUplinks folds a leaf's "fewer uplinks than its spines' other
// leaves" into the findings that already name each missing cable's port
// on that leaf (a link down against the expected topology, a port stuck
// training, a miswired cable): they say which cable and why, the count
// would only say it again. The first of them notes the fold.
// foldedHere marks the "uplinks" evidence foldShortUplinks gives the
// finding it folds a topology.oversubscribed count into (foldOf).
const foldedHere = "topology.oversubscribed folded here"

func foldShortUplinks(fs []Finding) []Finding {
	cause := map[string]bool{"link.down": true, "link.polling": true, "topology.miswired": true, "topology.changed": true, "topology.leaf-to-leaf": true}
	// Decide every fold before copying any finding out: a cause listed
	// before its count must carry the note too.
	folded := make([]bool, len(fs))
	for k, f := range fs {
		i := slices.IndexFunc(f.Evidence, func(e Evidence) bool { return e.Name == "uplinks" })
		if f.Check != "topology.oversubscribed" || i < 0 || len(f.Entities) == 0 {
			continue
		}
		leaf := f.Entities[0].NodeGUID
		missing := int(f.Evidence[i].Threshold - f.Evidence[i].Value)
		ports := map[int]bool{}
		first := -1
		for j, g := range fs {
			if !cause[g.Check] {
				continue
			}
			for _, e := range g.Entities {
				if e.NodeGUID == leaf && e.Port != 0 {
					ports[e.Port] = true
					if first < 0 {
						first = j
					}
				}
			}
		}
		if first < 0 || len(ports) < missing {
			continue
		}
		folded[k] = true
		text := strings.TrimPrefix(f.Title, "Leaf ")
		switch fs[first].Check {
		case "topology.leaf-to-leaf":
			// The cable is up, plugged into a leaf: not missing, not down.
			text = strings.Replace(text, "missing or down", "plugged into a leaf instead", 1)
		case "topology.miswired":
			text = strings.Replace(text, "missing or down", "plugged elsewhere", 1)
		}
		fs[first].Evidence = append(fs[first].Evidence, Evidence{Name: "uplinks", Value: f.Evidence[i].Value, Threshold: f.Evidence[i].Threshold,
			Text: text + " (" + foldedHere + ": these findings name the cables)"})
	}
	out := fs[:0:0]
	for k, f := range fs {
		if !folded[k] {
			out = append(out, f)
		}
	}
	return out
}

// chainedBelow maps each switch with hosts whose up inter-switch links
// all go to one other switch to that switch: its only way out, so its
// traffic leaving shares that switch's uplinks, and the links to it are
// not that switch's uplinks (plafrim's Infiniscale-IV below MT47396,
// trial H3). Two switches cabled only to each other are peers, neither
// below the other.
func chainedBelow(f *fabric.Fabric) map[*fabric.Node]*fabric.Node {
	out := map[*fabric.Node]*fabric.Node{}
	for _, m := range f.Nodes {
		if m.Type != mad.NodeSwitch || hostPorts(m) == 0 {
			continue
		}
		var to *fabric.Node
		one := true
		for _, p := range m.Ports {
			if p == nil || p.Num == 0 || !interSwitch(p) || !linkUp(p) || p.Remote.Node == m {
				continue
			}
			if to != nil && p.Remote.Node != to {
				one = false
				break
			}
			to = p.Remote.Node
		}
		if one && to != nil {
			out[m] = to
		}
	}
	for m, n := range out {
		if out[n] == m {
			delete(out, m)
			delete(out, n)
		}
	}
	return out
}

// islandText is the oversubscription evidence's note on the switches
// chained below leaf n: their links are not counted as n's uplinks, and
// with their hosts the island reaches the rest of the fabric over n's
// uplinks at the ratio given.
func (s *Snapshot) islandText(n *fabric.Node, host float64, hosts int, up float64, below map[*fabric.Node]*fabric.Node) string {
	var names []string
	seen := map[*fabric.Node]bool{n: true}
	q := []*fabric.Node{n}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		for m, to := range below {
			if to != x || seen[m] {
				continue
			}
			seen[m] = true
			q = append(q, m)
			names = append(names, s.nodeName(m))
			for _, p := range m.Ports {
				if p != nil && p.Num != 0 && p.Remote != nil && linkUp(p) && toHost(p) {
					host += p.Rate().Gbps()
					hosts++
				}
			}
		}
	}
	slices.SortFunc(names, words.Natural)
	return fmt.Sprintf("; the links to %s, chained below it (its only way out), are not counted as uplinks: with their hosts, the island's %s (%s Gb/s) reach the rest of the fabric over %s Gb/s, %.1f:1",
		words.FirstOf(names[:min(3, len(names))], len(names)), words.Count(hosts, "host"), fmtGbps(host), fmtGbps(up), host/up)
}

// chainedTo names the switches n's uplinks go to when every one of them
// is a leaf (a switch with hosts) and the fabric has spines: n hangs
// below another leaf instead of reaching the spines, by design or not,
// and no spine cable of it can be "missing". "" otherwise.
func (s *Snapshot) chainedTo(n *fabric.Node, tiers map[*fabric.Node]int, below map[*fabric.Node]*fabric.Node) (string, int) {
	if !slices.ContainsFunc(s.Fabric.Nodes, func(m *fabric.Node) bool { return tiers[m] == 1 }) {
		return "", 0
	}
	var names []string
	for _, p := range n.Ports {
		if p == nil || p.Num == 0 || !interSwitch(p) || !linkUp(p) || below[p.Remote.Node] == n {
			continue // a switch chained below n is no way up
		}
		if tiers[p.Remote.Node] != 0 {
			return "", 0
		}
		if name := s.nodeName(p.Remote.Node); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return words.And(names), len(names)
}
