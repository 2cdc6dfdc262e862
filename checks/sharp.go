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
		Summary: "a leaf has no SHARP Aggregation Node where three or more leaves of its switch model, three quarters of them or more, have one, or a switch above such leaves joining two or more with one has none: SHARP in-network reductions cannot use it",
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
	judged := false
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
		judged = true
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
	if judged {
		if f, ok := s.missingUpperANs(tiers, asBuilt); ok {
			out = append(out, f)
		}
	}
	return out
}

// missingUpperANs finds the switches above the leaves that join two or
// more switches with a SHARP Aggregation Node, one tier down, without
// one of their own: a SHARP tree spans leaves only through an AN on a
// switch above them, so such a switch is the tree's missing upper level.
// It is judged on a fabric whose leaves are (ANs are deployed there);
// the DGX SuperPOD's spines each carry an AN, as the Quantum-2 capture's
// leaves do and its spine does not (ibdiagnet's PORT_HIERARCHY_MISSING
// on its port 65 agrees).
func (s *Snapshot) missingUpperANs(tiers map[*fabric.Node]int, asBuilt bool) (Finding, bool) {
	const id = "topology.missing-sharp-an"
	hasAN := map[*fabric.Node]bool{}
	anPorts := map[string]map[uint8]bool{} // by switch model: where its ANs are cabled
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil && sharpAN(p.Remote.Node) {
				hasAN[n] = true
				m := devices.Model(n)
				if anPorts[m] == nil {
					anPorts[m] = map[uint8]bool{}
				}
				anPorts[m][p.Num] = true
			}
		}
	}
	// joined: the switches with an AN one tier below n that n is cabled to.
	joined := func(n *fabric.Node) []*fabric.Node {
		var below []*fabric.Node
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || !interSwitch(p) {
				continue
			}
			r := p.Remote.Node
			if tiers[r] == tiers[n]-1 && hasAN[r] && !slices.Contains(below, r) {
				below = append(below, r)
			}
		}
		return below
	}
	var missing []*fabric.Node
	var withAN []string
	under := map[*fabric.Node]bool{} // the switches with an AN the missing ones join
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch || tiers[n] < 1 {
			continue
		}
		below := joined(n)
		if len(below) < 2 {
			continue // joins no two AN switches: no tree level to miss
		}
		if hasAN[n] {
			withAN = append(withAN, s.nodeName(n))
			continue
		}
		ports := slices.Sorted(maps.Keys(anPorts[devices.Model(n)]))
		look := ports
		if len(look) == 0 {
			// No switch of n's model shows an AN: no port number says
			// where its would be, so an unread port, or one whose far
			// end did not answer, may hold it (review R1).
			for num := 1; num < len(n.Ports); num++ {
				look = append(look, uint8(num))
			}
		}
		if why := anUnread(n, look); why != "" {
			s.couldNotDecide(id, fmt.Sprintf("%s joins %s with a SHARP Aggregation Node and shows none of its own, but %s: the AN may be there", s.nodeName(n), words.Count(len(below), "switch"), why), s.nodeEntity(n, "switch"))
			continue
		}
		if has, known := s.baselineAN(n); has || asBuilt && known {
			continue // as for a leaf: link.down's, or built so
		}
		missing = append(missing, n)
		for _, b := range below {
			under[b] = true
		}
	}
	if len(missing) == 0 {
		return Finding{}, false
	}
	slices.SortFunc(missing, func(a, b *fabric.Node) int { return words.Natural(s.nodeName(a), s.nodeName(b)) })
	ents := make([]Entity, 0, len(missing))
	var names, own []string
	for _, n := range missing {
		ents = append(ents, s.nodeEntity(n, "switch"))
		names = append(names, s.nodeName(n))
		b := joined(n)
		ports := slices.Sorted(maps.Keys(anPorts[devices.Model(n)]))
		now := "no Aggregation Node behind any port"
		if len(ports) > 0 {
			now = anPortsNow(n, ports)
		}
		noun := "switch"
		if tiers[n] == 1 {
			noun = "leaf"
		}
		own = append(own, fmt.Sprintf("%s joins %s with a SHARP Aggregation Node: %s", s.nodeName(n), words.Count(len(b), noun), now))
	}
	hosts := 0
	for b := range under {
		hosts += hostPorts(b)
	}
	slices.SortFunc(withAN, words.Natural)
	what := "Switch " + names[0]
	if tiers[missing[0]] == 1 {
		what = "Spine " + names[0]
	}
	group := ""
	if len(missing) > 1 {
		group = words.FirstOf(names[:min(3, len(names))], len(names))
		what = fmt.Sprintf("%d switches above the leaves (%s)", len(missing), group)
	}
	has := words.Verb(len(missing), "have")
	belowNoun := "switch"
	if tiers[missing[0]] == 1 {
		belowNoun = "leaf"
	}
	var title, impact string
	score := 0.5 * float64(hosts) / float64(max(1, s.hostCount()))
	if len(withAN) == 0 {
		it := "it"
		if len(missing) > 1 {
			it = "them"
		}
		title = fmt.Sprintf("%s %s no SHARP Aggregation Node, and no switch above the leaves has one: SHARP trees cannot span the %s below %s that have one", what, has, words.Count(len(under), belowNoun), it)
		impact = fmt.Sprintf("SHARP in-network reduction stops at the leaf: the SHARP Aggregation Manager builds a tree across leaves only through an Aggregation Node on a switch above them, and there is none, so every SHARP job with hosts on more than one leaf (the %s under them) gets no SHARP tree and its collectives (NCCL's SHARP/CollNet plugin, UCC, HCOLL) fall back to host-based algorithms, which send about twice the data per host in a large all-reduce (or stop, where SHARP is forced); jobs within one leaf keep SHARP, and point-to-point traffic is not affected",
			words.Count(hosts, "host port"))
	} else {
		score /= 4
		title = fmt.Sprintf("%s %s no SHARP Aggregation Node where %s above the leaves joining switches with one %s one", what, has, words.Count(len(withAN), "peer"), words.Verb(len(withAN), "have"))
		this, it := "this switch", "it"
		if len(missing) > 1 {
			this, it = "these switches", "them"
		}
		impact = fmt.Sprintf("SHARP trees across leaves cannot pass through %s: the SHARP Aggregation Manager builds them on %s alone, so fewer SHARP jobs fit at once (each AN holds a limited number of trees) and a job whose tree would need %s gets none and falls back to host-based collectives; point-to-point traffic is not affected",
			this, words.FirstOf(withAN[:min(3, len(withAN))], len(withAN)), it)
	}
	peers := "no other switch above the leaves joining two or more with an AN has one"
	if len(withAN) > 0 {
		peers = fmt.Sprintf("%d of the %d switches above the leaves joining two or more with an AN have one: %s", len(withAN), len(withAN)+len(missing), words.FirstOf(withAN[:min(3, len(withAN))], len(withAN)))
	}
	ev := Evidence{Name: "aggregation nodes above the leaves", Value: float64(len(withAN)), Threshold: float64(len(withAN) + len(missing)),
		Text: fmt.Sprintf("%s; %s (judged on a fabric whose leaves carry ANs: a SHARP tree spans leaves only through an AN on a switch above them)",
			strings.Join(own, "; "), peers)}
	return Finding{
		Check:    id,
		Severity: Warning,
		Title:    title,
		Entities: ents,
		Group:    group,
		Evidence: []Evidence{ev},
		Impact:   Impact{Score: score, Summary: impact},
		Action: fmt.Sprintf("On %s, check that SHARP is enabled (the setting can be lost in a firmware upgrade or a configuration reset; a switch's AN shows in 'ibnetdiscover' as a CA \"Aggregation Node\" behind its internal port, port 65 on a Quantum-2) and that the SHARP Aggregation Manager (sharp_am: its log, or UFM) uses it as a tree level; confirm with 'ibdoctor check'. If SHARP is meant to stay within a leaf, nothing is wrong.",
			words.FirstOf(names[:min(3, len(names))], len(names))),
		Basis: "topology",
	}, true
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
