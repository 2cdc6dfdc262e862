package checks

import (
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "link.loopback",
		Summary: "a cable comes back to the node it leaves (two ports of one switch or one adapter cabled to each other): it carries no traffic and takes two ports",
		Needs:   []string{"topology"},
		reads:   memoLinks,
		run:     (*Snapshot).loopbacks,
	})
}

// loopbacks reports the cables whose two ends are ports of one node
// (isLoopback), one finding per node: the subnet manager routes nothing
// over them, so they only take ports, and one is usually a cable meant
// for another switch or a test plug left in.
func (s *Snapshot) loopbacks() []Finding {
	var order []*fabric.Node
	byNode := map[*fabric.Node][]fabric.Link{}
	for _, l := range s.LoopbackLinks() {
		if !s.inScope(l.A) {
			continue
		}
		if byNode[l.A.Node] == nil {
			order = append(order, l.A.Node)
		}
		byNode[l.A.Node] = append(byNode[l.A.Node], l)
	}
	var out []Finding
	for _, n := range order {
		out = append(out, s.loopbackFinding(n, byNode[n]))
	}
	return out
}

// LoopbackLinks is the one judgement of loop-back cables: the links whose
// two ends are ports of one node, less those an expected topology cables
// elsewhere (topology.miswired's). link.loopback reports them, 'links'
// marks them.
func (s *Snapshot) LoopbackLinks() []fabric.Link {
	var out []fabric.Link
	for _, l := range s.links() {
		if isLoopback(l.A) && !s.miswiredEnd(l) {
			out = append(out, l)
		}
	}
	return out
}

// miswiredEnd reports whether the expected topology cables either end of
// l to another port: topology.miswired then reports the cable and names
// where it belongs (the simulator's miswire of two ports of one leaf makes
// a loopback), and a loopback finding would say the same thing twice.
func (s *Snapshot) miswiredEnd(l fabric.Link) bool {
	if s.Baseline == nil {
		return false
	}
	for _, e := range [][2]*fabric.Port{{l.A, l.B}, {l.B, l.A}} {
		n, ok := s.Baseline.nodeByGUID(e[0].Node.GUID)
		if !ok {
			continue
		}
		if q, ok := s.Baseline.peerAt(n, e[0].Num); ok && (s.Baseline.guid[q.node] != e[1].Node.GUID || q.num != e[1].Num) {
			return true
		}
	}
	return false
}

func (s *Snapshot) loopbackFinding(n *fabric.Node, ls []fabric.Link) Finding {
	kind := "switch"
	if n.Type != mad.NodeSwitch {
		kind = "adapter"
	}
	var (
		ents  []Entity
		ev    []Evidence
		pairs []string
	)
	for _, l := range ls {
		a, b := l.A, l.B
		if b.Num < a.Num {
			a, b = b, a
		}
		ents = append(ents, s.entityOf(a, "end"), s.entityOf(b, "peer"))
		pairs = append(pairs, fmt.Sprintf("%d<->%d", a.Num, b.Num)) // a cable, as in the evidence; "19-21" read as a range
		state := "no state read"
		if a.StateKnown() {
			state = fmt.Sprintf("%s/%s", a.State, a.PhysState)
		}
		ev = append(ev, Evidence{Name: "loopback", Value: float64(a.Num),
			Text: fmt.Sprintf("%s <-> %s: both ends on %s (GUID 0x%016x), %s", s.entityOf(a, ""), s.entityOf(b, ""), s.nodeName(n), n.GUID, state)})
	}
	a, b := ents[0], ents[1]
	title := fmt.Sprintf("Port %s is cabled back to %s (a loopback cable)", a, b)
	if len(ls) > 1 {
		title = fmt.Sprintf("%s has %s (ports %s): each comes back to the same %s",
			s.nodeName(n), words.Count(len(ls), "loopback cable"), strings.Join(pairs, ", "), kind)
	}
	impact := fmt.Sprintf("%d ports lost for uplinks or hosts; the subnet manager routes nothing over a cable that comes back to its own %s, so it carries no traffic", 2*len(ls), kind)
	action := fmt.Sprintf("Find where these cables were meant to go in the cabling plan and recable them (a cable between two ports of one %s is usually one end plugged into the wrong switch); if one is a loopback test plug or a burn-in cable left in, remove it. Confirm with 'ibdoctor links'.", kind)
	if kind == "adapter" {
		impact = fmt.Sprintf("%d ports of the adapter are cabled to each other, not to the fabric: the host reaches nothing through them", 2*len(ls))
		action = "Cable the adapter's ports to their leaf switch as the cabling plan says; if this is a port-to-port loopback test, remove the cable when it is done. Confirm with 'ibdoctor links'."
	}
	return Finding{
		Check:    "link.loopback",
		Severity: Warning,
		Title:    title,
		Entities: ents,
		Evidence: ev,
		// Nothing is routed over it: no path crosses it, the score only
		// orders it among warnings.
		Impact: Impact{Score: 0.001 * float64(len(ls)), Summary: impact},
		Action: action,
		Basis:  "topology",
	}
}
