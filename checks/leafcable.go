package checks

import (
	"fmt"
	"slices"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

func init() {
	register(Check{
		ID:      "topology.leaf-to-leaf",
		Summary: "in a fat tree whose leaves are not cabled to each other, a cable joins two leaves at a port where the other leaves have a cable to a spine: a spine cable plugged into the wrong switch",
		Needs:   []string{"topology"},
		reads:   memoLinks,
		run:     (*Snapshot).leafToLeafCables,
	})
}

// leafToLeafCables names the cables between two leaves that both have
// spines (leafToLeaf) at a port the other leaves use for a spine: the
// cable to move. Fabrics whose leaves are cabled to each other by design
// are left alone: when more than half of the leaves with spines
// have such a cable, or the other leaves' port is not a spine's, it is
// the design (leaves chained below a leaf have no spines of their own and
// are never candidates).
func (s *Snapshot) leafToLeafCables() []Finding {
	tiers := SwitchTiers(s.Fabric)
	var leaves []*fabric.Node // leaves with spines
	for _, n := range s.Fabric.Nodes {
		if tiers[n] != 0 {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && interSwitch(p) && linkUp(p) && tiers[p.Remote.Node] == 1 {
				leaves = append(leaves, n)
				break
			}
		}
	}
	var cands []fabric.Link
	joined := map[*fabric.Node]bool{}
	for _, l := range s.links() {
		if leafToLeaf(l.A, tiers) && leafToLeaf(l.B, tiers) {
			cands = append(cands, l)
			joined[l.A.Node], joined[l.B.Node] = true, true
		}
	}
	if len(cands) == 0 || 2*len(joined) > len(leaves) {
		return nil
	}
	// toSpine reports whether three quarters (three or more) of the
	// leaves with spines but a and b have port num cabled to a spine.
	toSpine := func(num uint8, a, b *fabric.Node) bool {
		others, spine := 0, 0
		for _, n := range leaves {
			if n == a || n == b {
				continue
			}
			others++
			if p := portOf(n, num); p != nil && interSwitch(p) && tiers[p.Remote.Node] == 1 {
				spine++
			}
		}
		return others >= 3 && 4*spine >= 3*others
	}
	var out []Finding
	for _, l := range cands {
		if !s.inScope(l.A) && !s.inScope(l.B) {
			continue
		}
		a, b := l.A, l.B
		if !toSpine(a.Num, a.Node, b.Node) {
			a, b = b, a
			if !toSpine(a.Num, a.Node, b.Node) {
				continue
			}
		}
		ea, eb := s.entityOf(a, ""), s.entityOf(b, "")
		other := ""
		if toSpine(b.Num, a.Node, b.Node) {
			other = fmt.Sprintf(", and theirs at %d too", b.Num)
		}
		state := "no state read"
		if a.StateKnown() {
			state = fmt.Sprintf("%s/%s", a.State, a.PhysState)
		}
		out = append(out, Finding{
			Check:    "topology.leaf-to-leaf",
			Severity: Warning,
			Title:    fmt.Sprintf("%s is cabled to another leaf (%s); its peers' port %d goes to a spine", ea, eb, a.Num),
			Entities: []Entity{s.entityOf(a, "end"), s.entityOf(b, "peer")},
			Evidence: []Evidence{{Name: "link", Value: float64(a.Num),
				Text: fmt.Sprintf("%s <-> %s, %s: both leaves have hosts and cables to spines; %d of the %d leaves with spines are cabled to a leaf, and the other leaves' port %d goes to a spine%s", ea, eb, state, len(joined), len(leaves), a.Num, other)}},
			Impact: Impact{Score: 0.01, Summary: "each leaf has one cable fewer to the spines than its peers, and the leaf-to-leaf cable breaks the fat tree's up/down paths the routing engine assumes (routes may loop or crowd)"},
			Action: fmt.Sprintf("Find on the cabling plan which spine %s and %s belong to and move the cable (its other end is probably plugged where a spine cable of %s's belongs; a loopback on a spine is often the spine's half of the same swap). Confirm with 'ibdoctor links'.", ea, eb, s.nodeName(b.Node)),
			Basis:  "topology",
		})
	}
	return out
}

// foldLeafToLeaf merges a leaf-to-leaf cable's finding into the
// topology.miswired finding of an expected cable one of its ends belongs
// to: with an expected topology the same cable is reported twice, once
// as "plugged into a leaf" and once as the expected cable's other half.
// One cable is one finding: miswired's, the more specific (it names the
// port the cable belongs on) and the more severe, carrying the leaf-to-leaf
// evidence (uplink counts folded into it included), its far leaf end and
// the higher severity. Without such a miswired finding it stays.
func foldLeafToLeaf(fs []Finding) []Finding {
	type portKey struct {
		guid uint64
		port int
	}
	key := func(e Entity) portKey { return portKey{e.NodeGUID, e.Port} }
	folded := make([]bool, len(fs))
	for k, l := range fs {
		if l.Check != "topology.leaf-to-leaf" || len(l.Entities) < 2 {
			continue
		}
		// The miswired finding whose cables (expected or found; a swap
		// names each port once) hold the end the leaf-to-leaf title
		// names first, else its other end.
		into := -1
		for _, end := range l.Entities[:2] {
			for j, m := range fs {
				if m.Check != "topology.miswired" || into >= 0 {
					continue
				}
				for _, e := range m.Entities {
					if (e.Role == "end" || e.Role == "peer" || e.Role == "expected-peer") && key(e) == key(end) {
						into = j
						break
					}
				}
			}
		}
		if into < 0 {
			continue
		}
		folded[k] = true
		m := &fs[into]
		m.Severity = max(m.Severity, l.Severity)
		for _, e := range l.Entities {
			if !slices.ContainsFunc(m.Entities, func(x Entity) bool { return key(x) == key(e) }) {
				e.Role = "peer"
				m.Entities = append(m.Entities, e)
			}
		}
		for i, e := range l.Evidence {
			if i == 0 {
				e.Text += " (topology.leaf-to-leaf folded here: the same cable)"
			}
			m.Evidence = append(m.Evidence, e)
		}
		if l.Impact.Score > m.Impact.Score {
			m.Impact = l.Impact
		}
	}
	out := fs[:0:0]
	for k, f := range fs {
		if !folded[k] {
			out = append(out, f)
		}
	}
	return out
}
