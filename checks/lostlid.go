package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "routing.lost-lid",
		Summary: "forwarding tables still send LIDs no port found holds into a switch port without a link: a node was lost there since the SM last routed",
		Needs:   []string{"topology", "lfts"},
		reads:   memoLost,
		run:     (*Snapshot).lostLIDs,
	})
}

// lostLIDs reports the switch ports without a link that the tables still
// send LIDs into which no port found holds (trial A4: a leaf's host port
// Disabled, the host gone from discovery, every switch still forwarding
// its LID to that port; A4b: a switch's only uplink unplugged). The SM
// assigned those LIDs and routed them there when it last swept: a node
// was lost at that port since. Tables that route LIDs nobody holds to
// 0xFF (OpenSM does, for LIDs it did not assign) or past LinearFDBTop say
// nothing; routes that reach a port or table not read are not followed
// (could not look), nor is a LID whose route reaches a link that is up.
func (s *Snapshot) lostLIDs() []Finding {
	if s.Scope != nil {
		return nil // a job's routes: routing.unreachable judges them
	}
	f := s.Fabric
	lost := s.lostPorts()
	if len(lost) == 0 {
		return nil
	}
	var out []Finding
	hosts := max(1, s.hostCount())
	// "No port found holds them" needs every port read: a LID may belong
	// to a node or port the sweep could not read (under MAD loss the
	// finding it folds into, topology.missing-hca, is undecided too).
	partial := partlyRead(f)
	for _, h := range lost {
		p := h.port
		if partial {
			s.couldNotDecide("routing.lost-lid", fmt.Sprintf("the tables forward %s %s into %s, which has no link, and no port read holds them, but the sweep did not read everything: they may be held by what was not read",
				words.Noun(len(h.lids), "LID"), lidList(h.lids), s.entityOf(p, "")), s.entityOf(p, "end"))
			continue
		}
		state := fmt.Sprintf("%s/%s", p.State, p.PhysState)
		if p.PhysState == mad.PhysDisabled {
			state = "Disabled"
		}
		var names []string
		for _, sw := range h.sws {
			names = append(names, s.nodeName(sw))
		}
		lidText := lidList(h.lids)
		at := s.entityOf(p, "")
		tail, heldBy := "which no port found holds: a node was lost there", "held by no port discovered"
		ents := []Entity{s.entityOf(p, "end")}
		if len(h.holders) > 0 {
			var hs []string
			for _, q := range h.holders {
				hs = append(hs, s.entityOf(q, "").String())
				ents = append(ents, s.entityOf(q, "holder"))
			}
			tail = "which no port with a link holds: the cable between them was lost"
			heldBy = fmt.Sprintf("held only by %s, which %s no link", strings.Join(hs, ", "), words.Verb(len(hs), "have"))
			if len(h.holders) != len(h.lids) {
				tail = "which no port with a link holds: what was cabled there was lost"
			}
		}
		out = append(out, Finding{
			Check:    "routing.lost-lid",
			Severity: Error,
			Title: fmt.Sprintf("%s is %s: %s still %s %s %s into it, %s",
				at, state, words.Count(len(names), "switch"), words.Verb(len(names), "forward"), words.Noun(len(h.lids), "LID"), lidText, tail),
			Entities: ents,
			Evidence: []Evidence{
				{Name: "LIDs", Value: float64(len(h.lids)), Text: fmt.Sprintf("%s %s: %s, forwarded into %s (%s, no link)", words.Noun(len(h.lids), "LID"), lidText, heldBy, at, state)},
				{Name: "switches", Value: float64(len(names)), Text: "forwarding them there: " + s.nodeListText(names)},
			},
			Impact: Impact{Summary: "the node behind the port is cut off: traffic and management to its LIDs are dropped there", Score: min(1, float64(len(h.lids))/float64(hosts))},
			Action: fmt.Sprintf("Find what was cabled at %s (the cabling plan, a saved ibnetdiscover or the SM's guid2lid file): enable the port if it was disabled ('ibportstate %d %d enable'), else reseat or replace the cable and check the node's power. If the node was removed on purpose, have the SM sweep again (a heavy re-sweep) so the tables drop its LIDs.",
				at, at.LID, p.Num),
			Basis: "routes",
		})
	}
	return out
}

// lostPort is a switch port without a link that the tables still send
// LIDs no port found holds into (findLostLIDs).
type lostPort struct {
	port *fabric.Port
	lids []uint16       // ascending
	sws  []*fabric.Node // the switches whose routes end there, in the fabric's order
	// holders are the CA ports without a link that hold some of the
	// LIDs (downHeldLIDs), in the order of their LIDs.
	holders []*fabric.Port
}

// findLostLIDs is routing.lost-lid's judgement: the switch ports without
// a link where the routes of LIDs no port found holds end, in the order
// of their first LID. It does not say whether the sweep read enough to
// stand by it (partlyRead): its users do.
func findLostLIDs(f *fabric.Fabric) []*lostPort {
	var sws []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch && n.Switch != nil && n.Switch.LFT != nil {
			sws = append(sws, n)
		}
	}
	held := downHeldLIDs(f)
	unknown := unknownLIDs(f)
	if len(held) > 0 {
		for lid := range held {
			unknown = append(unknown, lid)
		}
		slices.Sort(unknown)
		unknown = slices.Compact(unknown)
	}
	if len(sws) == 0 || len(unknown) == 0 {
		return nil
	}
	hits := map[*fabric.Port]*lostPort{}
	var order []*lostPort
	by := map[*lostPort]map[*fabric.Node]bool{}
	memo := map[*fabric.Node]*fabric.Port{}
	for _, lid := range unknown {
		clear(memo)
		for _, sw := range sws {
			p := lostEnd(sw, lid, memo)
			if p == nil {
				continue
			}
			h := hits[p]
			if h == nil {
				h = &lostPort{port: p}
				hits[p] = h
				by[h] = map[*fabric.Node]bool{}
				order = append(order, h)
			}
			if len(h.lids) == 0 || h.lids[len(h.lids)-1] != lid {
				h.lids = append(h.lids, lid)
				if q := held[lid]; q != nil && !slices.Contains(h.holders, q) {
					h.holders = append(h.holders, q)
				}
			}
			by[h][sw] = true
		}
	}
	for _, h := range order {
		for _, sw := range sws {
			if by[h][sw] {
				h.sws = append(h.sws, sw)
			}
		}
	}
	return order
}

// downHeldLIDs returns the LIDs held only by CA ports without a link,
// with the port: a multi-port HCA reached through one port keeps the LID
// the SM gave its other port while that port had a link (trial A15: a
// dual-rail HCA's port 2 unplugged, Down/Polling with its LID). Such a
// LID is lost as much as one no port holds.
func downHeldLIDs(f *fabric.Fabric) map[uint16]*fabric.Port {
	var held map[uint16]*fabric.Port
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.LID == 0 || p.Remote != nil || !p.StateKnown() || p.PhysState == mad.PhysLinkUp {
				continue
			}
			if held == nil {
				held = map[uint16]*fabric.Port{}
			}
			for lid := range lids(p) {
				held[lid] = p
			}
		}
	}
	if held == nil {
		return nil
	}
	// A LID another port also holds is that port's.
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			for lid := range lids(p) {
				if q, ok := held[lid]; ok && q != p {
					delete(held, lid)
				}
			}
		}
	}
	return held
}

// lostEnd follows LID lid's route from switch sw over the tables and
// returns the switch port without a link where it ends, or nil when it
// ends any other way (0xFF, past LinearFDBTop, a port or table not read,
// a link that is up). memo keeps the end of every switch walked for this
// LID (nil included).
func lostEnd(sw *fabric.Node, lid uint16, memo map[*fabric.Node]*fabric.Port) *fabric.Port {
	var path []*fabric.Node
	var end *fabric.Port
	cur := sw
	for range 64 {
		if e, ok := memo[cur]; ok {
			end = e
			break
		}
		path = append(path, cur)
		if cur.Switch == nil || cur.Switch.LFT == nil || int(lid) >= cur.Switch.LFT.Len() || lid > cur.Switch.LinearFDBTop {
			break
		}
		out := cur.Switch.LFT.At(lid)
		p := portOf(cur, out)
		if out == 0 || p == nil || !p.StateKnown() {
			break
		}
		if p.PhysState != mad.PhysLinkUp {
			if p.Remote == nil {
				end = p
			}
			break
		}
		if p.PeerUnknown() || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch || !forwards(p) {
			break
		}
		cur = p.Remote.Node
	}
	for _, n := range path {
		memo[n] = end
	}
	return end
}

// lidList is "25", "4 and 9", "4, 9 and 12", at most eight.
func lidList(ls []uint16) string {
	var parts []string
	for _, l := range ls[:min(8, len(ls))] {
		parts = append(parts, fmt.Sprint(l))
	}
	if len(ls) > 8 {
		return words.FirstOf(parts, len(ls))
	}
	return words.And(parts)
}

// nodeListText lists names, at most eight.
func (s *Snapshot) nodeListText(names []string) string { return words.First(names, 8) }

// foldLostLIDs folds a routing.lost-lid into the finding that already
// names its port as down (link.down against the expected topology,
// topology.missing-hca for an HCA whose cable belongs there, ...): one
// fault, one finding, whose evidence then says the tables still forward
// the lost LIDs there.
func foldLostLIDs(fs []Finding) []Finding {
	named := map[string]int{}
	for i, f := range fs {
		if portDownCauses[f.Check] {
			for _, e := range f.Entities {
				if _, ok := named[e.String()]; !ok && e.Port != 0 {
					named[e.String()] = i
				}
			}
		}
	}
	if len(named) == 0 {
		return fs
	}
	// The finding naming the lost port, else the one naming a port
	// that holds the LIDs without a link (a dual-rail HCA's port 2).
	into := func(f Finding) (int, bool) {
		for _, e := range f.Entities {
			if i, ok := named[e.String()]; ok {
				return i, true
			}
		}
		return 0, false
	}
	for _, f := range fs {
		if f.Check != "routing.lost-lid" || len(f.Entities) == 0 {
			continue
		}
		if i, ok := into(f); ok {
			lead := "the forwarding tables still send LIDs no port found holds there: "
			if _, same := named[f.Entities[0].String()]; !same {
				lead = "the forwarding tables still send its LIDs into " + f.Entities[0].String() + ", which has no link: "
			}
			fs[i].Evidence = append(fs[i].Evidence, Evidence{Name: "lost LIDs", Value: f.Evidence[0].Value, Text: lead + f.Evidence[0].Text + "; " + f.Evidence[1].Text})
		}
	}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		if f.Check != "routing.lost-lid" || len(f.Entities) == 0 {
			return false
		}
		_, ok := into(f)
		return ok
	})
}
