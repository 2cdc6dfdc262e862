package checks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/devices"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "topology.missing-sharp-an",
		Summary: "a leaf has no SHARP Aggregation Node where three or more leaves of its switch model, three quarters of them or more, have one: SHARP in-network reductions cannot use it",
		Needs:   []string{"topology", "whole-fabric"},
		run:     (*Snapshot).missingSharpANs,
	})
}

// sharpAN reports whether n is a SHARP Aggregation Node by what it says
// of itself, not only built into a switch (a switch's management HCA
// shares its system image GUID too and aggregates nothing): its
// description, or its device ID in the capability table (a description
// not read still leaves it known).
func sharpAN(n *fabric.Node) bool {
	if n == nil || n.Type != mad.NodeCA {
		return false
	}
	d, ok := devices.Lookup(n.VendorID, n.DeviceID)
	return aggregationDesc(n.Description) || ok && strings.HasSuffix(d.Name, "Aggregation Node")
}

// anLeaf is one leaf of a switch model as topology.missing-sharp-an sees
// it: the ports its Aggregation Nodes are cabled to.
type anLeaf struct {
	n  *fabric.Node
	an []*fabric.Port
}

// missingSharpANs finds the leaves without a SHARP Aggregation Node among
// leaves of the same switch model that have one. SHARP is enabled per
// switch: where most leaves of a model carry an AN, one without lost it
// (SHARP disabled in its configuration, an upgrade that reset it) or was
// never set up, and the Aggregation Manager leaves it out of its trees.
// A model's leaves are judged when three or more have an AN and they are
// three quarters of the model's leaves or more; a fabric without ANs, or
// with too few, is not judged. Could not look is not missing: a leaf
// whose AN port's far end did not answer is undecided.
func (s *Snapshot) missingSharpANs() []Finding {
	const id = "topology.missing-sharp-an"
	if s.Scope != nil {
		return s.sweepVerdicts(id, true, "a leaf's peers are every leaf of its switch model, which the gate's part of the snapshot does not hold")
	}
	tiers := SwitchTiers(s.Fabric)
	byModel := map[string][]*anLeaf{}
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch || tiers[n] != 0 {
			continue
		}
		l := &anLeaf{n: n}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil && sharpAN(p.Remote.Node) {
				l.an = append(l.an, p)
			}
		}
		k := devices.Model(n)
		byModel[k] = append(byModel[k], l)
	}
	asBuilt := s.Baseline != nil && (s.BaselineDesigned || s.Baseline.Accepted)
	var out []Finding
	for _, model := range slices.Sorted(maps.Keys(byModel)) {
		leaves := byModel[model]
		// The ports the peers' ANs are cabled to: where this leaf's
		// would be (port 65 on a Quantum-2).
		at := map[uint8]int{}
		have := 0
		for _, l := range leaves {
			if len(l.an) > 0 {
				have++
				for _, p := range l.an {
					at[p.Num]++
				}
			}
		}
		if have < 3 || 4*have < 3*len(leaves) {
			continue // no ANs, or too few leaves with one to say
		}
		anPorts := slices.Sorted(maps.Keys(at))
		var missing []*anLeaf
		for _, l := range leaves {
			if len(l.an) > 0 {
				continue
			}
			if why := anUnread(l.n, anPorts); why != "" {
				s.couldNotDecide(id, fmt.Sprintf("%s has no SHARP Aggregation Node where %d of the %d %s have one, but %s: the AN may be there", s.nodeName(l.n), have, len(leaves), modelLeaves(model), why), s.nodeEntity(l.n, "switch"))
				continue
			}
			if has, known := s.baselineAN(l.n); has || asBuilt && known {
				// An AN the expected topology has is link.down's to
				// report (its cable gone); a plan that has the leaf
				// without one says it is built so.
				continue
			}
			missing = append(missing, l)
		}
		if len(missing) == 0 {
			continue
		}
		out = append(out, s.sharpANFinding(model, leaves, missing, have, anPorts, at))
	}
	return out
}

// anUnread says why whether leaf n has an Aggregation Node could not be
// read, "" when it could: a port where its peers have theirs that was
// not read or whose far end did not answer, or a CA built into it
// whose description was not read (it may be the AN).
func anUnread(n *fabric.Node, anPorts []uint8) string {
	for _, num := range anPorts {
		p := portOf(n, num)
		switch {
		case int(num) >= len(n.Ports):
			continue // no such port: no AN there
		case p == nil || !p.StateKnown():
			return fmt.Sprintf("its port %d was not read", num)
		case p.PeerUnknown():
			return fmt.Sprintf("the far end of its port %d (up) did not answer", num)
		}
	}
	for _, p := range n.Ports {
		if p != nil && p.Num != 0 && p.Remote != nil && isAggregationNode(p.Remote.Node) && strings.TrimSpace(p.Remote.Node.Description) == "" {
			return fmt.Sprintf("the CA built into it behind port %d has no description read", p.Num)
		}
	}
	return ""
}

// baselineAN reports whether the expected topology cables an Aggregation
// Node to leaf n (has), and whether it holds n at all (known).
func (s *Snapshot) baselineAN(n *fabric.Node) (has, known bool) {
	b := s.Baseline
	if b == nil {
		return false, false
	}
	i, ok := b.nodeByGUID(n.GUID)
	if !ok {
		return false, false
	}
	for peer := range b.cables(i) {
		if int(peer) < b.in && b.typ[peer] == mad.NodeCA && aggregationDesc(b.descOf(peer)) {
			return true, true
		}
	}
	return false, true
}

// modelLeaves names a switch model's leaves for a finding: "Quantum-2
// leaves".
func modelLeaves(model string) string {
	switch {
	case model == devices.UnknownModel:
		return "leaves of an unknown switch model (no device ID read)"
	case strings.HasPrefix(model, "device 0x"):
		return "leaves of switch " + model
	}
	return model + " leaves"
}

// sharpANFinding is the finding for the leaves of one model without an
// AN: one leaf, or several folded into one finding that names them.
func (s *Snapshot) sharpANFinding(model string, leaves, missing []*anLeaf, have int, anPorts []uint8, at map[uint8]int) Finding {
	var where []string
	for _, num := range anPorts {
		where = append(where, fmt.Sprintf("port %d (%d)", num, at[num]))
	}
	onPorts := "on " + strings.Join(where, ", ")
	if len(anPorts) == 1 {
		onPorts = fmt.Sprintf("on port %d", anPorts[0])
	}
	slices.SortFunc(missing, func(a, b *anLeaf) int { return words.Natural(s.nodeName(a.n), s.nodeName(b.n)) })
	ents := make([]Entity, 0, len(missing))
	var names, own []string
	hosts := 0
	for _, l := range missing {
		ents = append(ents, s.nodeEntity(l.n, "switch"))
		names = append(names, s.nodeName(l.n))
		hosts += hostPorts(l.n)
		own = append(own, s.nodeName(l.n)+": "+anPortsNow(l.n, anPorts))
	}
	peers := len(leaves) - 1
	title := fmt.Sprintf("Leaf %s has no SHARP Aggregation Node where its %d peer leaves have one", names[0], have)
	if have < peers {
		title = fmt.Sprintf("Leaf %s has no SHARP Aggregation Node where %d of its %d peer leaves have one", names[0], have, peers)
	}
	group := ""
	if len(missing) > 1 {
		// The leaves together, as the title names them: the place a
		// renderer that gives a finding one (the textfile) shows.
		group = words.FirstOf(names[:min(3, len(names))], len(names))
		title = fmt.Sprintf("%d leaves have no SHARP Aggregation Node where %d of the %d %s have one: %s", len(missing), have, len(leaves), modelLeaves(model), group)
	}
	ev := Evidence{Name: "aggregation nodes", Value: float64(have), Threshold: float64(len(leaves)),
		Text: fmt.Sprintf("%d of the %d %s have a SHARP Aggregation Node, %s; %s (peers: leaves of the same switch model, judged when three or more have an AN and they are three quarters of them or more)",
			have, len(leaves), modelLeaves(model), onPorts, strings.Join(own, "; "))}
	plural := len(missing) > 1
	it, its := "this leaf", "it"
	if plural {
		it, its = "these leaves", "them"
	}
	return Finding{
		Check:    "topology.missing-sharp-an",
		Severity: Warning,
		Title:    title,
		Entities: ents,
		Group:    group,
		Evidence: []Evidence{ev},
		Impact: Impact{Score: 0.5 * float64(hosts) / float64(max(1, s.hostCount())),
			Summary: fmt.Sprintf("SHARP in-network reduction cannot use %s: the SHARP Aggregation Manager has no Aggregation Node on %s to build its reduction trees with, so a job with hosts on %s (%s) gets no SHARP tree covering them and its SHARP collectives (NCCL's SHARP/CollNet plugin, UCC, HCOLL) fall back to host-based algorithms, which send about twice the data per host in a large all-reduce (or stop, where SHARP is forced); point-to-point traffic and jobs on other leaves are not affected",
				it, its, its, words.Count(hosts, "host port"))},
		Action: fmt.Sprintf("On %s, check that SHARP is enabled (the setting can be lost in a firmware upgrade or a configuration reset) and that 'ibnetdiscover' lists a CA \"Aggregation Node\" behind its %s, as behind its peers'; then that the SHARP Aggregation Manager (sharp_am: its log, or UFM) sees it, and confirm with 'ibdoctor check'. If %s is meant to run without SHARP, nothing is wrong.",
			words.FirstOf(names[:min(3, len(names))], len(names)), portWord(anPorts), it),
		Basis: "topology",
	}
}

// portWord names the AN ports for an action: "port 65".
func portWord(anPorts []uint8) string {
	var nums []string
	for _, n := range anPorts {
		nums = append(nums, fmt.Sprint(n))
	}
	return words.Noun(len(anPorts), "port") + " " + words.And(nums)
}

// anPortsNow says what leaf n has at the ports its peers' ANs are on:
// nothing, a link to something else, or the state read when there is no
// link (a file that does not list the port gives none: nothing is said).
func anPortsNow(n *fabric.Node, anPorts []uint8) string {
	var parts []string
	for _, num := range anPorts {
		p := portOf(n, num)
		switch {
		case p == nil:
			parts = append(parts, fmt.Sprintf("it has no port %d", num))
		case p.Remote != nil:
			parts = append(parts, fmt.Sprintf("its port %d is cabled to %s", num, p.Remote.Node.Description))
		case p.PhysState == mad.PhysDisabled:
			parts = append(parts, fmt.Sprintf("its port %d is Disabled and has no Aggregation Node behind it", num))
		default:
			parts = append(parts, fmt.Sprintf("no Aggregation Node behind its port %d", num))
		}
	}
	return strings.Join(parts, ", ")
}
