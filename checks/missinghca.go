package checks

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "topology.missing-hca",
		Summary: "a host has fewer HCAs than the clear majority of its peers (same host name pattern and HCA naming): names the missing HCAs and, where the rails point at it, the leaf port stuck without a link where the cable belongs; or a whole group of hosts named alike lacks an HCA the other groups have (a rail missing for a unit)",
		Needs:   []string{"topology"},
		run:     (*Snapshot).missingHCAs,
	})
}

// HostHCA is one host adapter in a census of the whole fabric's hosts:
// the host and device of its description ("gpu042 mlx5_3") and the switch
// port its first live link lands on (Leaf 0: none). A gate judges a part
// of the fabric and hands the census of the whole (Snapshot.HCAs).
type HostHCA struct {
	Host, Dev string
	Leaf      uint64
	LeafPort  uint8
}

// HCACensus lists the hosts' adapters of f: CAs described "host device"
// (not the firmware default).
func HCACensus(f *fabric.Fabric) []HostHCA {
	out := []HostHCA{} // not nil: a census of no host is still one
	for _, n := range f.Nodes {
		if h, ok := CensusEntry(n); ok {
			out = append(out, h)
		}
	}
	return out
}

// CensusEntry is n's entry in a census (HCACensus), or false for a node
// that is no host adapter. It keeps nothing of n but the strings of its
// description, so a caller may hand it a node it reuses.
func CensusEntry(n *fabric.Node) (HostHCA, bool) {
	host := HostOf(n)
	if host == "" {
		return HostHCA{}, false
	}
	_, dev, _ := twoWords(n.Description) // two words: HostOf said so
	h := HostHCA{Host: host, Dev: dev}
	for _, p := range n.Ports {
		if p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && linkUp(p) {
			h.Leaf, h.LeafPort = p.Remote.Node.GUID, p.Remote.Num
			break
		}
	}
	return h, true
}

// hostKind groups hosts that should look alike: the host name without
// its trailing number ("gpu" for gpu042) and the device naming schemes
// of its HCAs ("mlx5_"). Storage and login nodes named otherwise, or
// adapters named otherwise, are other kinds.
func hostKind(host string, devs []string) string {
	schemes := make([]string, 0, len(devs))
	for _, d := range devs {
		schemes = append(schemes, devScheme(d))
	}
	slices.Sort(schemes)
	return strings.TrimRight(host, "0123456789") + "|" + strings.Join(slices.Compact(schemes), ",")
}

// HCASummary is what topology.missing-hca compares a host with beyond
// its own adapters, summed up from a census of the whole fabric
// (SummarizeHCAs): a sweep keeps it, so that a gate reads its own hosts'
// adapters and this instead of the whole census (at 49k nodes, ~46k
// hosts grouped to judge 64).
type HCASummary struct {
	// Kinds are the host kinds (hostKind), each with its hosts.
	Kinds map[string]HCAKind `json:"kinds"`
	// Rails are each device's rail leaves by GUID, ascending: a leaf
	// where three quarters or more of the HCAs cabled to it (two or
	// more) carry that device name.
	Rails map[string][]uint64 `json:"rails"`
	// HostPorts are, by leaf GUID, the ports the census's HCAs land on,
	// in census order.
	HostPorts map[uint64][]uint8 `json:"host_ports"`
}

// HCAKind is one host kind of an HCASummary.
type HCAKind struct {
	// Name names the kind's hosts in words (kindName: "gpu*").
	Name string `json:"name"`
	// Hosts is how many hosts are of the kind.
	Hosts int `json:"hosts"`
	// Have is, for each device name, how many of them have it.
	Have map[string]int `json:"have"`
}

// HCALookup gives the entries of one host (by fabric.HostKey: every
// spelling of it) in a census of the whole fabric, in the census's
// order: a gate's, from the sweep's state.
type HCALookup interface {
	HostHCAs(host string) []HostHCA
}

// SummarizeHCAs sums a census of the whole fabric up as
// topology.missing-hca reads it (HCASummary).
func SummarizeHCAs(census []HostHCA) *HCASummary {
	census, _ = foldHostCase(census)
	devs, kindOf := groupHCAs(census)
	return summarizeHCAs(census, devs, kindOf)
}

// foldHostCase gives each host one spelling in a census: host names are
// matched without case (fabric.HostKey, trial F5), so "gpu001 mlx5_0" and
// "GPU001 mlx5_1" are one host's adapters, as a gate for gpu001 judges
// them (review R6b). A host spelled several ways takes the spelling
// greatest in byte order (the one with the fewest capitals, as hosts are
// mostly named), one the fabric has, whatever the census's order (a
// gate's and a sweep's agree); the census is copied only then, and
// spell maps each other spelling to it.
func foldHostCase(census []HostHCA) ([]HostHCA, map[string]string) {
	var spellings map[string][]string // by key, of hosts with a capital
	for _, x := range census {
		if k := fabric.HostKey(x.Host); k != x.Host {
			if spellings == nil {
				spellings = map[string][]string{}
			}
			if !slices.Contains(spellings[k], x.Host) {
				spellings[k] = append(spellings[k], x.Host)
			}
		}
	}
	if spellings == nil {
		return census, nil
	}
	for _, x := range census {
		if ss, ok := spellings[x.Host]; ok && !slices.Contains(ss, x.Host) {
			spellings[x.Host] = append(ss, x.Host) // the lower-case spelling
		}
	}
	var spell map[string]string
	for _, ss := range spellings {
		if len(ss) < 2 {
			continue
		}
		to := slices.Max(ss)
		for _, h := range ss {
			if h != to {
				if spell == nil {
					spell = map[string]string{}
				}
				spell[h] = to
			}
		}
	}
	if spell == nil {
		return census, nil
	}
	out := slices.Clone(census)
	for i, x := range out {
		if to, ok := spell[x.Host]; ok {
			out[i].Host = to
		}
	}
	return out, spell
}

// groupHCAs groups a census by host: each host's devices in census
// order, and its kind.
func groupHCAs(census []HostHCA) (devs map[string][]string, kindOf map[string]string) {
	devs = map[string][]string{}
	for _, h := range census {
		devs[h.Host] = append(devs[h.Host], h.Dev)
	}
	kindOf = make(map[string]string, len(devs))
	// A host with one HCA (most, at scale) takes its kind from those
	// already made for its name and scheme: one string per kind, not
	// one per host of the census.
	type nameScheme struct{ name, scheme string }
	oneHCAKinds := map[nameScheme]string{}
	for h, ds := range devs {
		var k string
		if len(ds) == 1 {
			ns := nameScheme{strings.TrimRight(h, "0123456789"), devScheme(ds[0])}
			if k = oneHCAKinds[ns]; k == "" {
				k = hostKind(h, ds)
				oneHCAKinds[ns] = k
			}
		} else {
			k = hostKind(h, ds)
		}
		kindOf[h] = k
	}
	return devs, kindOf
}

// summarizeHCAs is SummarizeHCAs on the census grouped by groupHCAs.
func summarizeHCAs(census []HostHCA, devs map[string][]string, kindOf map[string]string) *HCASummary {
	sum := &HCASummary{Kinds: map[string]HCAKind{}, Rails: map[string][]uint64{}, HostPorts: map[uint64][]uint8{}}
	// Per kind, how many of its hosts have each device: a host's peers
	// are its kind less itself, so counting once per kind, not once per
	// host over its peers, keeps this linear in the hosts.
	for h, ds := range devs {
		k := kindOf[h]
		kind, ok := sum.Kinds[k]
		if !ok {
			kind = HCAKind{Name: kindName(h), Have: map[string]int{}}
		}
		kind.Hosts++
		for i, d := range ds {
			if !slices.Contains(ds[:i], d) { // each device once per host
				kind.Have[d]++
			}
		}
		sum.Kinds[k] = kind
	}
	// Each rail's leaves: a leaf where three quarters or more of the
	// HCAs cabled to it (two or more) carry one device name.
	byLeaf := map[uint64]map[string]int{}
	for _, h := range census {
		if h.Leaf == 0 {
			continue
		}
		if byLeaf[h.Leaf] == nil {
			byLeaf[h.Leaf] = map[string]int{}
		}
		byLeaf[h.Leaf][h.Dev]++
		sum.HostPorts[h.Leaf] = append(sum.HostPorts[h.Leaf], h.LeafPort)
	}
	for leaf, c := range byLeaf {
		total, best, bestDev := 0, 0, ""
		for d, k := range c {
			total += k
			if k > best || (k == best && d < bestDev) {
				best, bestDev = k, d
			}
		}
		if total >= 2 && 4*best >= 3*total {
			sum.Rails[bestDev] = append(sum.Rails[bestDev], leaf)
		}
	}
	for _, leaves := range sum.Rails {
		slices.Sort(leaves) // in one order, not the map's
	}
	return sum
}

// hcaCensus is the census missingHCAs judges on: the entries of the
// hosts it looks at (with nodesOf, those of the fabric judged), the
// hosts grouped, and the summary of the whole fabric's. With the sweep's
// summary and a lookup (a gate's), only the hosts with a node in the
// fabric and those the baseline has an adapter of (missingRailOfGroups
// asks whether it has one of any host of a group) are looked up; else
// the whole census is grouped and summed up here.
// Each host has one spelling in it (foldHostCase): spell maps the
// others to it.
func (s *Snapshot) hcaCensus(nodesOf map[string][]*fabric.Node) (census []HostHCA, devs map[string][]string, kindOf map[string]string, sum *HCASummary, spell map[string]string) {
	if s.HCASummary == nil || s.HCALookup == nil {
		census = s.HCAs
		if census == nil {
			census = HCACensus(s.Fabric)
		}
		census, spell = foldHostCase(census)
		devs, kindOf = groupHCAs(census)
		return census, devs, kindOf, summarizeHCAs(census, devs, kindOf), spell
	}
	// By host key: a lookup finds every spelling of a host, once.
	need := make(map[string]bool, len(nodesOf))
	for h := range nodesOf {
		need[fabric.HostKey(h)] = true
	}
	if b := s.Baseline; b != nil {
		for i := range b.in {
			if h, _, ok := twoWords(b.descOf(int32(i))); ok {
				need[fabric.HostKey(h)] = true
			}
		}
	}
	for _, h := range slices.Sorted(maps.Keys(need)) {
		for _, x := range s.HCALookup.HostHCAs(h) {
			if fabric.HostKey(x.Host) == h {
				census = append(census, x)
			}
		}
	}
	census, spell = foldHostCase(census)
	devs, kindOf = groupHCAs(census)
	return census, devs, kindOf, s.HCASummary, spell
}

func (s *Snapshot) missingHCAs() []Finding {
	nodesOf := map[string][]*fabric.Node{}
	for _, n := range s.Fabric.Nodes {
		if host, _, ok := twoWords(n.Description); isHostNode(n) && ok {
			host = fabric.HostName(host)
			nodesOf[host] = append(nodesOf[host], n)
		}
	}
	census, devs, kindOf, sum, spell := s.hcaCensus(nodesOf)
	if spell != nil { // a host spelled several ways: its nodes under one, in the fabric's order
		clear(nodesOf)
		for _, n := range s.Fabric.Nodes {
			if host, _, ok := twoWords(n.Description); isHostNode(n) && ok {
				host = fabric.HostName(host)
				if to, ok := spell[host]; ok {
					host = to
				}
				nodesOf[host] = append(nodesOf[host], n)
			}
		}
	}
	// Where each host's HCAs land, in census order: only for the hosts
	// judged one by one below (a gate's census is the whole fabric's).
	ownLeavesOf := map[string][]uint64{}
	for _, x := range census {
		if x.Leaf != 0 && len(nodesOf[x.Host]) > 0 && !slices.Contains(ownLeavesOf[x.Host], x.Leaf) {
			ownLeavesOf[x.Host] = append(ownLeavesOf[x.Host], x.Leaf)
		}
	}
	hostPortsAt, railLeaves := sum.HostPorts, sum.Rails
	// A switch port whose far end did not answer, or a CA whose
	// description was not read, may hold the missing HCA: could not look
	// is not missing. The ports are kept by switch (anyUnread: a CA
	// whose description was not read, wherever it is cabled).
	unknownAt := map[uint64][]uint8{}
	for _, n := range s.Fabric.Nodes {
		for i, p := range n.Ports {
			if p == nil && i > 0 {
				unknownAt[n.GUID] = append(unknownAt[n.GUID], uint8(i)) // its PortInfo was never read
			}
			if p == nil || p.Num == 0 {
				continue
			}
			if p.PeerUnknown() {
				unknownAt[n.GUID] = append(unknownAt[n.GUID], p.Num)
			}
			if isHostNode(n) && strings.TrimSpace(n.Description) == "" && p.Remote != nil {
				unknownAt[p.Remote.Node.GUID] = append(unknownAt[p.Remote.Node.GUID], anyUnread)
			}
		}
	}
	// A host with no node in the fabric judged has no port in scope, so
	// no finding of its own: a gate judges its job's hosts, not each of
	// the census's tens of thousands.
	hosts := make([]string, 0, len(nodesOf))
	for h := range nodesOf {
		if _, ok := devs[h]; ok {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	// Each host's candidate ports, gathered first: a port two hosts
	// claim ties to neither (trial F1).
	type lacking struct {
		h              string
		missing, where []string
		spots, mine    []*fabric.Port
		least, others  int
		clear, few     bool
		misnamed       placement // adapters answering under another name (placeByOrder)
	}
	var lack []lacking
	var claims map[*fabric.Port]int
	var misnamedOut []Finding
	dupDescs := &descCounts{f: s.Fabric}
	// An adapter tied to its host by its place, answering under another
	// name, is still an adapter that host has: its peers count it (a
	// second pass, only when the first tied one), else a host really
	// short of the device drops under the clear majority.
	var tied map[string]map[string][]string // by kind and device, the hosts
	undecidedBefore := len(s.undecided)
	for pass := 0; ; pass++ {
		lack, claims, misnamedOut = nil, map[*fabric.Port]int{}, nil
		var ties map[string]map[string][]string
		for _, h := range hosts {
			kind := kindOf[h]
			others := sum.Kinds[kind].Hosts - 1
			// Two or three peers tell only together with the leaf: every one
			// of them has the adapter, and a port where its cable belongs
			// has no link (review R4: a host whose second HCA was down at
			// the first sweep, among four hosts alike, was named by nothing).
			few := others < 4
			if others < 2 {
				continue
			}
			have := map[string]bool{}
			for _, d := range devs[h] {
				have[d] = true
			}
			var missing []string
			clear := true
			least := others
			for d, k := range sum.Kinds[kind].Have {
				for _, x := range tied[kind][d] {
					if x != h {
						k++
					}
				}
				// A device h has is not missing; one it lacks is counted
				// among its peers alone (k). An HCA the expected topology
				// has is link.down's (topology.changed's) to report,
				// against the plan.
				if have[d] || 4*k < 3*others || (few && k < others) || s.baselineHas(h+" "+d) {
					continue
				}
				missing = append(missing, d)
				least = min(least, k)
				if 10*k < 9*others {
					clear = false
				}
			}
			if len(missing) == 0 {
				continue
			}
			slices.Sort(missing)
			var mine []*fabric.Port
			for _, n := range nodesOf[h] {
				for _, p := range n.Ports {
					if p != nil && p.Num != 0 {
						mine = append(mine, p)
					}
				}
			}
			if !slices.ContainsFunc(mine, s.inScope) {
				continue
			}
			// Where each missing HCA's cable likely belongs: a port of its
			// rail's leaves among the leaf's host ports, with no link.
			var where []string
			var spots []*fabric.Port
			undecided := false
			// h's other HCAs' leaves: where a host's adapters go when the
			// leaves are not rails (a leaf per few hosts).
			ownLeaves := ownLeavesOf[h]
			for _, d := range missing {
				leaves, why := railLeaves[d], "a leaf of rail "+d
				if len(leaves) == 0 {
					leaves, why = ownLeaves, "where "+h+"'s other HCAs land"
				}
				if len(leaves) == 0 && len(unknownAt) > 0 {
					undecided = true
				}
				for _, g := range leaves {
					leaf := s.Fabric.NodeByGUID(g)
					if unreadNearHosts(leaf, hostPortsAt[g], unknownAt[g]) {
						undecided = true
					}
					if leaf == nil || len(hostPortsAt[g]) == 0 {
						continue
					}
					ports := hostPortsAt[g]
					lo, hi := hostBlock(leaf, ports, len(missing))
					for _, p := range leaf.Ports {
						if p == nil || p.Num == 0 || p.Num < lo || p.Num > hi || slices.Contains(ports, p.Num) || slices.Contains(spots, p) {
							continue
						}
						if s.baselineCabled(p) {
							continue // another node's cable, by the baseline: missing is not in it
						}
						switch p.PhysState {
						case mad.PhysPolling, mad.PhysDisabled, mad.PhysConfigTraining, mad.PhysLinkErrorRecovery:
							if p.Remote == nil || !linkUp(p) {
								spots = append(spots, p)
								where = append(where, fmt.Sprintf("%s is %s, on %s (%s)", s.entityOf(p, "").String(), p.PhysState, s.nodeName(leaf), why))
							}
						}
					}
				}
			}
			if undecided {
				if len(mine) > 0 {
					s.couldNotDecide("topology.missing-hca", fmt.Sprintf("%s has %s where its peers have %d (%s not found), but a leaf it may be cabled to has a port or a host that was not read: the HCA may be there", h, words.Count(len(devs[h]), "HCA"), len(devs[h])+len(missing), strings.Join(missing, ", ")), s.nodeEntity(mine[0].Node, "host"))
				}
				continue
			}
			if s.HCAsPartial && len(spots) == 0 {
				if len(mine) > 0 {
					s.couldNotDecide("topology.missing-hca", fmt.Sprintf("%s has %s where its peers have %d (%s not found) in a snapshot whose sweep did not read everything, and no leaf port where its cable belongs was read without a link: the HCA may be one the sweep could not read", h, words.Count(len(devs[h]), "HCA"), len(devs[h])+len(missing), strings.Join(missing, ", ")), s.nodeEntity(mine[0].Node, "host"))
				}
				continue
			}
			if few && len(spots) > len(missing) {
				spots, where = s.samePortSpots(h, census, spots, where)
			}
			// An adapter that answers where one of h's HCAs goes, under
			// another name, is not missing: its place among h's says which
			// HCA it is, and which one a port without a link belongs to.
			// On a rail-optimized fabric the port number h's HCAs use on
			// their rail leaves places them instead.
			misnamed, ok := s.placeByOrder(h, census, devs[h], missing, spots, dupDescs)
			if !ok {
				misnamed = s.placeOnRails(h, census, devs, missing, spots, railLeaves, dupDescs)
			}
			if len(misnamed.named) > 0 {
				if ties == nil {
					ties = map[string]map[string][]string{}
				}
				if ties[kind] == nil {
					ties[kind] = map[string][]string{}
				}
				for _, m := range misnamed.named {
					if !slices.Contains(ties[kind][m.Want], h) {
						ties[kind][m.Want] = append(ties[kind][m.Want], h)
					}
				}
				// Still missing: the devices no adapter answers for, and
				// those whose place is a port without a link.
				var left []string
				for _, d := range missing {
					if !slices.ContainsFunc(misnamed.named, func(m misnamedHCA) bool { return m.Want == d }) {
						left = append(left, d)
					}
				}
				var downSpots []*fabric.Port
				var downWhere []string
				for i, p := range spots {
					if d, found := misnamed.down[p]; found {
						if !slices.Contains(left, d) {
							left = append(left, d)
						}
						downSpots = append(downSpots, p)
						downWhere = append(downWhere, where[i])
					}
				}
				if len(left) == 0 {
					misnamedOut = append(misnamedOut, s.misnamedHCAs(h, devs[h], missing, misnamed, mine))
					continue
				}
				slices.SortFunc(left, words.Natural)
				missing = left
				if len(downSpots) > 0 {
					spots, where = downSpots, downWhere
				}
			}
			for _, p := range spots {
				claims[p]++
			}
			lack = append(lack, lacking{h: h, missing: missing, where: where, spots: spots, mine: mine, least: least, others: others, clear: clear, misnamed: misnamed, few: few})
		}
		if pass > 0 || ties == nil {
			break
		}
		tied = ties
		s.undecided = s.undecided[:undecidedBefore] // said again, by the second pass
	}
	out := misnamedOut
	for _, l := range lack {
		h, missing, where, spots, mine, least, others, clear, misnamed := l.h, l.missing, l.where, l.spots, l.mine, l.least, l.others, l.clear, l.misnamed
		// The ports are named where its cable likely belongs only when
		// no other host claims one and there are no more of them than
		// HCAs missing; else which is its cannot be told from the data.
		ambiguous := len(spots) > len(missing) || slices.ContainsFunc(spots, func(p *fabric.Port) bool { return claims[p] > 1 })
		if l.few && (ambiguous || len(spots) < len(missing)) {
			continue // too few peers to tell without the ports
		}
		sev, basis := Error, fmt.Sprintf("at least %d of the %d other %s hosts have each of them", least, others, kindName(h))
		switch {
		case least == others && others == 1:
			basis = fmt.Sprintf("the one other %s host has each of them", kindName(h))
		case least == others:
			basis = fmt.Sprintf("all %d other %s hosts have each of them", others, kindName(h))
		}
		if !clear {
			// Without a clear majority the host may be of another kind
			// (a login node with one HCA among two-HCA nodes): only a
			// port without a link where the HCA would go says more.
			if len(spots) == 0 {
				continue
			}
			sev = Info
			basis += " (no clear majority: under 90%, so this may be another kind of host)"
		}
		title := fmt.Sprintf("%s has %s where its peers have %d: %s missing", h, words.Count(len(devs[h]), "HCA"), len(devs[h])+len(missing), strings.Join(missing, ", "))
		ents := make([]Entity, 0, 1+len(spots))
		if len(mine) > 0 {
			ents = append(ents, s.nodeEntity(mine[0].Node, "host"))
		}
		if !ambiguous {
			for _, p := range spots {
				ents = append(ents, s.entityOf(p, "end"))
			}
		}
		for _, m := range misnamed.named {
			ents = append(ents, s.nodeEntity(m.Node, "misnamed"))
		}
		byDesc := ""
		if len(misnamed.named) > 0 {
			byDesc = " by description" // one of them is misnamed (below)
		}
		ev := []Evidence{{Name: "HCAs", Value: float64(len(devs[h])), Threshold: float64(len(devs[h]) + len(missing)),
			Text: fmt.Sprintf("%s has %s%s; %s", h, strings.Join(slices.Sorted(slices.Values(devs[h])), ", "), byDesc, basis)}}
		action := fmt.Sprintf("Check %s's %s: 'ibstat' on the host shows whether the HCA is there and its port's state. ", h, strings.Join(missing, ", "))
		if ambiguous {
			// Not entities: the ports are not its (a finding's place,
			// and the lost LIDs folded into it, follow its entities).
			title += fmt.Sprintf("; could not tell which port its cable belongs in: %s without a link where it may", s.portList(spots))
			ev = append(ev, Evidence{Name: "rail", Text: strings.Join(where, "; ") + " (inferred from the host descriptions and where the peers' HCAs land; more ports than missing HCAs, or a port another host's missing HCA may belong in too, and no baseline cabling them)"})
			action += fmt.Sprintf("If it is, find its leaf port on the cabling plan (one of %s), reseat or replace the cable, then confirm with 'ibdoctor check'.", s.portList(spots))
		} else if len(spots) > 0 {
			title += fmt.Sprintf("; %s without a link, likely where its cable belongs", s.portList(spots))
			ev = append(ev, Evidence{Name: "rail", Text: strings.Join(where, "; ") + " (inferred from the host descriptions and where the peers' HCAs land; its link.polling is folded here)"})
			action += fmt.Sprintf("If it is, reseat or replace the cable between it and %s, then confirm with 'ibdoctor check' that the finding is gone.", s.portList(spots))
		} else {
			action += "If it is, its cable is unplugged, bad or down at both ends: find its leaf port on the cabling plan, reseat or replace the cable, then confirm with 'ibdoctor check'."
		}
		if len(misnamed.named) > 0 {
			ev = append(ev, Evidence{Name: "misnamed", Text: s.misnamedText(h, misnamed)})
			action += " " + s.renameAction(h, misnamed.named)
		}
		if us := misnamed.unsure; len(us) > 0 {
			// An adapter answering under another name where h's may
			// be: said, not taken for h's (never guess silently).
			var at, guids, owners []string
			for _, u := range us {
				at = append(at, s.entityOf(u.At, "").String())
				guids = append(guids, fmt.Sprintf("0x%016x", u.Node.GUID))
				for _, o := range u.Owners {
					if !slices.Contains(owners, o) {
						owners = append(owners, o)
					}
				}
			}
			the, verb := "the adapter on ", "belongs"
			if len(us) > 1 {
				the, verb = "the adapters on ", "belong"
			}
			title += fmt.Sprintf(", or answering under another name: could not tell which host %s%s %s to", the, words.FirstOf(at[:min(3, len(at))], len(at)), verb)
			if len(owners) > 1 {
				slices.SortFunc(owners, words.Natural)
				title += " (" + orList(owners) + ")"
			}
			ev = append(ev, Evidence{Name: "misnamed", Text: s.unsureText(h, us)})
			lead, rest, _ := strings.Cut(action, ". ")
			rest = strings.Replace(rest, "If it is,", "If it is there with another GUID,", 1)
			action = fmt.Sprintf("%s, and its GUID. If that is %s, it is %s%s under another name, nothing to recable: rdma-ndd on %s sets its name (or write '%s %s' to its /sys/class/infiniband/<dev>/node_desc), then confirm with 'ibdoctor check'. %s", lead, orList(guids), the, strings.Join(at, ", "), h, h, us[0].Dev, rest)
		}
		out = append(out, Finding{
			Check:    "topology.missing-hca",
			Severity: sev,
			Title:    title,
			Entities: ents,
			Evidence: ev,
			Impact:   Impact{Score: float64(len(missing)) / float64(max(1, s.hostCount())), Summary: "a job on this host runs without a rail: NCCL's rail-optimized all-reduce is slower or fails for that GPU, while the host's other links look healthy"},
			Action:   action,
			Basis:    "topology",
		})
	}
	return append(out, s.missingRailOfGroups(sum, kindOf, devs, nodesOf, len(unknownAt) > 0)...)
}

// descCounts counts the fabric's node descriptions, once and only when
// a host lacks an HCA (the count is over every node).
type descCounts struct {
	f *fabric.Fabric
	n map[string]int
}

// shared says whether another node carries n's description too.
func (c *descCounts) shared(n *fabric.Node) bool {
	if c.n == nil {
		c.n = map[string]int{}
		for _, x := range c.f.Nodes {
			if d := strings.TrimSpace(x.Description); d != "" {
				c.n[d]++
			}
		}
	}
	return c.n[strings.TrimSpace(n.Description)] > 1
}

// misnamedHCA is an adapter that answers where one of a host's HCAs
// goes, described otherwise: At is the leaf port it lands on, Want the
// host's device it likely is.
type misnamedHCA struct {
	At   *fabric.Port
	Node *fabric.Node
	Want string
}

// placement is what placeByOrder read: the adapters described otherwise
// than their place says, and the device each leaf port without a link
// stands for.
type placement struct {
	named []misnamedHCA
	down  map[*fabric.Port]string
	// why says how the places tie the named adapters to the host, when
	// not by the one leaf's device order (placeOnRails).
	why string
	// unsure are adapters answering under another name that may be the
	// host's, where the places do not tie them to it alone.
	unsure []unsureHCA
}

// placeByOrder reads h's HCAs by their place when they all land on one
// leaf, side by side in device order as every other host's there do
// (mlx5_0 on the block's first port, mlx5_1 on the next): the run of
// ports holding h's HCAs, its ports without a link (spots) and the
// adapters described as a firmware default or as another node is,
// places each device. It returns the adapters whose description is not
// the device of their place, and the device each spot stands for; false
// when the places do not say (h's HCAs on several leaves, a peer cabled
// out of order, two runs fitting as well).
func (s *Snapshot) placeByOrder(h string, census []HostHCA, have, missing []string, spots []*fabric.Port, dups *descCounts) (placement, bool) {
	var leaf uint64
	var mine []HostHCA
	onLeaf := map[string][]HostHCA{} // the other hosts' HCAs on the leaf
	for _, x := range census {
		if x.Host == h {
			if x.Leaf == 0 || (leaf != 0 && x.Leaf != leaf) {
				return placement{}, false
			}
			leaf = x.Leaf
			mine = append(mine, x)
		}
	}
	if leaf == 0 {
		return placement{}, false
	}
	for _, x := range census {
		if x.Host != h && x.Leaf == leaf {
			onLeaf[x.Host] = append(onLeaf[x.Host], x)
		}
	}
	// The convention: every other host's HCAs on the leaf rise in
	// device order with the port (and there is another host to say so).
	if len(onLeaf) == 0 {
		return placement{}, false
	}
	for _, xs := range onLeaf {
		slices.SortFunc(xs, func(a, b HostHCA) int { return int(a.LeafPort) - int(b.LeafPort) })
		for i := 1; i < len(xs); i++ {
			if words.Natural(xs[i-1].Dev, xs[i].Dev) > 0 {
				return placement{}, false
			}
		}
	}
	sw := s.Fabric.NodeByGUID(leaf)
	if sw == nil {
		return placement{}, false
	}
	want := slices.Compact(slices.SortedFunc(slices.Values(append(slices.Clone(have), missing...)), words.Natural))
	named := map[uint8]string{}
	for _, x := range mine {
		named[x.LeafPort] = x.Dev
	}
	spotAt := map[uint8]*fabric.Port{}
	for _, p := range spots {
		if p.Node == sw {
			spotAt[p.Num] = p
		}
	}
	other := map[uint8]*fabric.Port{} // adapters described otherwise
	for _, p := range sw.Ports {
		if p == nil || p.Num == 0 || p.Remote == nil || !linkUp(p) || named[p.Num] != "" {
			continue
		}
		n := p.Remote.Node
		if !isHostNode(n) || isAggregationNode(n) || n.DescriptionUnread {
			continue
		}
		if d := strings.TrimSpace(n.Description); isFirmwareDefault(d) || dups.shared(n) {
			other[p.Num] = p
		}
	}
	var q []int
	for num := range named {
		q = append(q, int(num))
	}
	for num := range spotAt {
		q = append(q, int(num))
	}
	for num := range other {
		q = append(q, int(num))
	}
	slices.Sort(q)
	q = slices.Compact(q)
	lo, hi := slices.Min(slices.Collect(maps.Keys(named))), slices.Max(slices.Collect(maps.Keys(named)))
	best, bestMis, tie := -1, len(want)+1, false
	for i := 0; i+len(want) <= len(q); i++ {
		first, last := q[i], q[i+len(want)-1]
		if last-first != len(want)-1 || first > int(lo) || last < int(hi) {
			continue // not one run of ports, or not all of h's
		}
		mis := 0
		for r, num := range q[i : i+len(want)] {
			if d, ok := named[uint8(num)]; ok && d != want[r] {
				mis++
			}
		}
		switch {
		case mis < bestMis:
			best, bestMis, tie = i, mis, false
		case mis == bestMis:
			tie = true
		}
	}
	if best < 0 || tie || bestMis > len(missing) {
		return placement{}, false
	}
	pl := placement{down: map[*fabric.Port]string{}}
	for r, num := range q[best : best+len(want)] {
		at := sw.Ports[num]
		switch d, ok := named[uint8(num)]; {
		case ok && d != want[r]:
			pl.named = append(pl.named, misnamedHCA{At: at, Node: at.Remote.Node, Want: want[r]})
		case ok:
		case spotAt[uint8(num)] != nil:
			pl.down[at] = want[r]
		default:
			pl.named = append(pl.named, misnamedHCA{At: at, Node: at.Remote.Node, Want: want[r]})
		}
	}
	return pl, len(pl.named) > 0
}

// unsureHCA is an adapter answering under another name on a unit's leaf
// of a rail a host lacks, that the places do not tie to that host alone:
// Owners are the hosts lacking the device whose other HCAs use its port
// number on the unit's leaves (none: the unit's hosts are not cabled by
// port number, so nothing says whose it is).
type unsureHCA struct {
	At     *fabric.Port
	Node   *fabric.Node
	Dev    string
	Owners []string
}

// placeOnRails reads h's HCAs by their place on a rail-optimized fabric,
// where a host's adapters are on one leaf per rail, each on the port
// number the host has on every rail leaf of its unit (DGX SuperPOD: host
// k's adapters on port k of each rail leaf). The unit's leaf of a rail h
// lacks (a leaf of that rail whose hosts are mostly the hosts sharing a
// leaf with h) holds at h's port number the adapter of the device h
// lacks: if it answers there under the firmware default, a description
// another node carries, or a host name that has no adapter off that
// place ("localhost"), it is h's, misnamed; a port without a link there
// is where h's cable belongs. It ties an adapter to h only when h's HCAs
// all use one port number, three quarters or more of the unit's other
// hosts use one port number each, and no other host lacking the device
// uses that port number; otherwise the adapters that could be h's are
// returned as unsure, with the hosts they could belong to.
func (s *Snapshot) placeOnRails(h string, census []HostHCA, devs map[string][]string, missing []string, spots []*fabric.Port, rails map[string][]uint64, dups *descCounts) placement {
	var mine []HostHCA
	hLeaves := map[uint64]bool{}
	for _, x := range census {
		if x.Host == h && x.Leaf != 0 {
			if hLeaves[x.Leaf] {
				return placement{} // two of h's HCAs on one leaf: not one per rail
			}
			hLeaves[x.Leaf] = true
			mine = append(mine, x)
		}
	}
	if len(mine) == 0 {
		return placement{}
	}
	// The unit: the hosts sharing a leaf with h, and the leaves of the
	// rails h lacks where those hosts are most of the hosts.
	// Only the leaves the unit's hosts land on are counted: a gate's
	// census is the whole fabric's.
	unit := map[string]bool{}
	for _, x := range census {
		if x.Leaf != 0 && x.Host != h && hLeaves[x.Leaf] {
			unit[x.Host] = true
		}
	}
	hostsOn := map[uint64]map[string]bool{}
	for _, x := range census {
		if x.Leaf != 0 && unit[x.Host] && hostsOn[x.Leaf] == nil {
			hostsOn[x.Leaf] = map[string]bool{}
		}
	}
	for _, x := range census {
		if on := hostsOn[x.Leaf]; on != nil {
			on[x.Host] = true
		}
	}
	unitLeaves := maps.Clone(hLeaves)
	for g, on := range hostsOn {
		in := 0
		for x := range on {
			if unit[x] || x == h {
				in++
			}
		}
		if 2*in > len(on) {
			unitLeaves[g] = true
		}
	}
	railLeaf := map[uint64]string{} // the unit's leaves of the rails h lacks
	for _, d := range missing {
		for _, g := range rails[d] {
			if unitLeaves[g] && !hLeaves[g] {
				railLeaf[g] = d
			}
		}
	}
	if len(railLeaf) == 0 {
		return placement{}
	}
	// The adapters on those leaves that answer under another name.
	var cands []unsureHCA
	at := map[uint64]map[uint8]bool{}
	for _, g := range slices.Sorted(maps.Keys(railLeaf)) {
		sw := s.Fabric.NodeByGUID(g)
		if sw == nil {
			continue
		}
		for _, p := range sw.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil || !linkUp(p) {
				continue
			}
			n := p.Remote.Node
			if !isHostNode(n) || isAggregationNode(n) || n.DescriptionUnread {
				continue
			}
			if !isFirmwareDefault(n.Description) && !dups.shared(n) && !aliasAt(HostOf(n), census, g, p.Num) {
				continue
			}
			cands = append(cands, unsureHCA{At: p, Node: n, Dev: railLeaf[g]})
			if at[g] == nil {
				at[g] = map[uint8]bool{}
			}
			at[g][p.Num] = true
		}
	}
	// The port numbers each host uses on the unit's leaves, the
	// adapters under another name left out (a neighbour's description
	// on h's place is no port of the neighbour's).
	portsOf := map[string][]uint8{}
	for _, x := range census {
		if x.Leaf != 0 && unitLeaves[x.Leaf] && !at[x.Leaf][x.LeafPort] && (unit[x.Host] || x.Host == h) {
			portsOf[x.Host] = append(portsOf[x.Host], x.LeafPort)
		}
	}
	oneNumber := func(ps []uint8) bool { return len(ps) > 0 && slices.Min(ps) == slices.Max(ps) }
	hosts, aligned := 0, 0
	for x, ps := range portsOf {
		if x != h && len(ps) >= 2 {
			hosts++
			if oneNumber(ps) {
				aligned++
			}
		}
	}
	byNumber := hosts >= 2 && 4*aligned >= 3*hosts
	mineAligned := oneNumber(portsOf[h])
	pl := placement{down: map[*fabric.Port]string{}}
	if byNumber && mineAligned {
		num := portsOf[h][0]
		var leaves []string
		for _, x := range mine {
			leaves = append(leaves, fmt.Sprintf("%s/%d", s.nodeName(s.Fabric.NodeByGUID(x.Leaf)), x.LeafPort))
		}
		slices.SortFunc(leaves, words.Natural)
		var lacked []string
		for _, g := range slices.Sorted(maps.Keys(railLeaf)) {
			lacked = append(lacked, fmt.Sprintf("rail %s's is %s", railLeaf[g], s.nodeName(s.Fabric.NodeByGUID(g))))
		}
		pl.why = fmt.Sprintf("%s's other HCAs are on port %d of their rail leaves (%s), so the HCAs it lacks go on port %d of its unit's leaves of their rails (%s); %d of the %d other hosts on the unit's leaves use one port number on every rail leaf, as rail-optimized cabling does, and no other host lacking the device uses port %d there",
			h, num, strings.Join(leaves, ", "), num, strings.Join(lacked, "; "), aligned, hosts, num)
		for _, p := range spots {
			if d, ok := railLeaf[p.Node.GUID]; ok && p.Num == num {
				pl.down[p] = d
			}
		}
	}
	named := map[string]int{}
	for _, c := range cands {
		var owners []string
		for x, ps := range portsOf {
			if slices.Contains(ps, c.At.Num) && !slices.Contains(devs[x], c.Dev) {
				owners = append(owners, x)
			}
		}
		slices.SortFunc(owners, words.Natural)
		switch {
		case byNumber && mineAligned && c.At.Num == portsOf[h][0] && len(owners) == 1:
			pl.named = append(pl.named, misnamedHCA{At: c.At, Node: c.Node, Want: c.Dev})
			named[c.Dev]++
		case !byNumber:
			pl.unsure = append(pl.unsure, c) // no port number says whose
		case slices.Contains(owners, h):
			c.Owners = owners
			pl.unsure = append(pl.unsure, c)
		}
	}
	// Two adapters for one device (two leaves of its rail in the unit):
	// neither is tied to h.
	pl.named = slices.DeleteFunc(pl.named, func(m misnamedHCA) bool {
		if named[m.Want] > 1 {
			pl.unsure = append(pl.unsure, unsureHCA{At: m.At, Node: m.Node, Dev: m.Want, Owners: []string{h}})
			return true
		}
		return false
	})
	return pl
}

// aliasAt says whether host is a name no machine of the fabric keeps
// apart from one place: a host named before its hostname was set
// (placeholderHost: localhost, ubuntu, ...), or a host whose one adapter in the census is the one on
// port num of leaf. An adapter described so, on a port where another
// host's HCA belongs, is that host's under a wrong name.
func aliasAt(host string, census []HostHCA, leaf uint64, num uint8) bool {
	if host == "" {
		return false
	}
	if placeholderHost(host) {
		return true
	}
	n := 0
	for _, x := range census {
		if x.Host == host {
			if x.Leaf != leaf || x.LeafPort != num {
				return false
			}
			n++
		}
	}
	return n == 1
}

// misnamedText says which adapters answer under another name and why
// they are taken for h's.
func (s *Snapshot) misnamedText(h string, pl placement) string {
	var parts []string
	for _, m := range pl.named {
		parts = append(parts, fmt.Sprintf("%s holds the adapter 0x%016x described %q (%s), where %s's %s goes", s.entityOf(m.At, "").String(), m.Node.GUID, strings.TrimSpace(m.Node.Description), whyOtherName(h, m.Node), h, m.Want))
	}
	why := fmt.Sprintf("%s's HCAs land side by side in device order, as its peers' on the leaf do", h)
	if pl.why != "" {
		why = pl.why
	}
	return strings.Join(parts, "; ") + " (" + why + ")"
}

// whyOtherName says why n's description is not its own: the firmware's
// default, another of h's device names, a host named before its name was
// set, or a description another node carries too.
func whyOtherName(h string, n *fabric.Node) string {
	switch d := strings.TrimSpace(n.Description); {
	case isFirmwareDefault(d):
		return "the firmware's default description"
	case strings.HasPrefix(d, h+" "):
		return "another of " + h + "'s device names"
	case placeholderHost(HostOf(n)):
		return "the host name before one was set"
	}
	return "a description another node carries too"
}

// orList joins names as "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// adapterText names an adapter by GUID and LID (when it has one) on the
// switch port it lands on.
func (s *Snapshot) adapterText(n *fabric.Node, at *fabric.Port) string {
	lid := ""
	if e := s.nodeEntity(n, ""); e.LID != 0 {
		lid = fmt.Sprintf(" (LID %d)", e.LID)
	}
	return fmt.Sprintf("the adapter 0x%016x%s on %s", n.GUID, lid, s.entityOf(at, "").String())
}

// renameAction tells how to give misnamed adapters h's names.
func (s *Snapshot) renameAction(h string, ms []misnamedHCA) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("'%s %s' to /sys/class/infiniband/%s/node_desc for the adapter on %s (0x%016x)", h, m.Want, m.Want, s.entityOf(m.At, "").String(), m.Node.GUID))
	}
	return fmt.Sprintf("Give %s's adapters their names: rdma-ndd on %s sets them, or write %s ('ibstat' on %s shows each device's GUID); a host image cloned with a fixed node_desc is the usual cause. Then confirm with 'ibdoctor check'.", h, h, strings.Join(parts, ", "), h)
}

// misnamedHCAs is the finding for a host whose HCAs all answer, one or
// more under another name: nothing is missing, no cable to reseat, but
// the host looks short of an HCA and another host (or none) is named.
func (s *Snapshot) misnamedHCAs(h string, have, missing []string, pl placement, mine []*fabric.Port) Finding {
	ms := pl.named
	var wants, says []string
	for _, m := range ms {
		wants = append(wants, m.Want)
		where := fmt.Sprintf(", among %s's,", h)
		if pl.why != "" {
			where = fmt.Sprintf(", on the port number %s's other HCAs use on their rail leaves,", h)
		}
		says = append(says, fmt.Sprintf("%s%s is described %q", s.adapterText(m.Node, m.At), where, strings.TrimSpace(m.Node.Description)))
	}
	verb := "answers under another name"
	if len(ms) > 1 {
		verb = "answer under other names"
	}
	ents := make([]Entity, 0, 1+len(ms))
	if len(mine) > 0 {
		ents = append(ents, s.nodeEntity(mine[0].Node, "host"))
	}
	for _, m := range ms {
		ents = append(ents, s.nodeEntity(m.Node, "misnamed"))
	}
	return Finding{
		Check:    "topology.missing-hca",
		Severity: Warning,
		Title:    fmt.Sprintf("%s's %s %s: %s", h, strings.Join(wants, ", "), verb, strings.Join(says, "; ")),
		Entities: ents,
		Evidence: []Evidence{
			{Name: "HCAs", Value: float64(len(have)), Threshold: float64(len(have) + len(missing)),
				Text: fmt.Sprintf("%s has %s by description where its peers have %d (%s not found by name), and an adapter answers at the place of each", h, strings.Join(slices.Sorted(slices.Values(have)), ", "), len(have)+len(missing), strings.Join(missing, ", "))},
			{Name: "misnamed", Text: s.misnamedText(h, pl)},
		},
		Impact: Impact{Summary: "the adapter works, but findings, job host lists and the SM's logs name it as another machine's (or by GUID only): the wrong host gets drained or recabled"},
		Action: s.renameAction(h, ms),
		Basis:  "topology",
	}
}

// unsureText says which adapters answering under another name may be
// h's and why that cannot be told: the hosts each may belong to, or the
// unit's hosts not cabled by port number.
func (s *Snapshot) unsureText(h string, us []unsureHCA) string {
	var parts []string
	for _, u := range us {
		who := "could not tell which host it belongs to: the hosts of the unit do not use one port number on every rail leaf"
		switch {
		case len(u.Owners) > 1:
			var theirs []string
			for _, o := range u.Owners {
				theirs = append(theirs, o+"'s")
			}
			who = fmt.Sprintf("could not tell which host it belongs to: it may be %s (each lacks %s by name and has an HCA on port %d of the unit's leaves)", orList(theirs), u.Dev, u.At.Num)
		case len(u.Owners) == 1:
			who = fmt.Sprintf("could not tell which host it belongs to: %s lacks %s by name and has an HCA on port %d of the unit's leaves, but its HCAs are not all on one port number (or its rail has two leaves in the unit)", h, u.Dev, u.At.Num)
		}
		parts = append(parts, fmt.Sprintf("%s, on the unit's leaf of rail %s, is described %q (%s); %s", s.adapterText(u.Node, u.At), u.Dev, strings.TrimSpace(u.Node.Description), whyOtherName(h, u.Node), who))
	}
	return strings.Join(parts, "; ")
}

// missingRailOfGroups finds a whole group of hosts (one host kind: a
// scalable unit's hosts named alike) lacking an adapter that the hosts of
// the other groups with the same adapter naming have: all alike within
// the group, the per-host comparison above sees no gap, yet the group
// runs without that rail (its rail leaf gone). Groups of four or more
// hosts are compared; the adapter counts when three quarters of the other
// groups (two or more) have it on nine in ten of their hosts, and the
// group has more of the adapters than it lacks.
func (s *Snapshot) missingRailOfGroups(sum *HCASummary, kindOf map[string]string, devs map[string][]string, nodesOf map[string][]*fabric.Node, unread bool) []Finding {
	// The plan, or the fabric the operator accepted as built, has the
	// group's adapters (link.down reports each that is gone) or does not
	// (built without) — for the groups it has: every host of the group
	// (in a gate, of the job's) in it with the adapters the host has now.
	// A rack added after it (reviewer V6), or hosts added to a group, the
	// operator said nothing about: they are judged as without a baseline.
	asBuilt := s.Baseline != nil && (s.BaselineDesigned || s.Baseline.Accepted)
	// A baseline a first sweep took by itself (or a gate's part of it)
	// is no plan: one that lacks the adapters too may have been taken
	// with the rail already gone (trial N9: the second sweep and every
	// gate said nothing). An adapter it has is link.down's to report.
	// The hosts of each kind that kindOf has: with a gate's census, its
	// part's hosts and those the baseline has an adapter of (the group's
	// size and name are the summary's).
	hostsOf := map[string][]string{}
	for h, k := range kindOf {
		hostsOf[k] = append(hostsOf[k], h)
	}
	kinds := make([]string, 0, len(sum.Kinds))
	for k, kind := range sum.Kinds {
		if kind.Hosts >= 4 {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	var out []Finding
	for _, k := range kinds {
		_, schemes, _ := strings.Cut(k, "|")
		var others []string
		for _, o := range kinds {
			if _, sc, _ := strings.Cut(o, "|"); o != k && sc == schemes {
				others = append(others, o)
			}
		}
		var missing, as []string
		var joined string
		peerHosts, peerKinds := 0, 0
		if len(others) < 2 {
			// No two other groups name their adapters this way (the DGX
			// file's one mlx5_n unit among HCA-n ones): the groups of
			// another naming tell, joined in device order.
			others, missing, as, joined, peerHosts = crossNamingRail(sum, k, kinds)
			// An adapter the baseline has is link.down's to report.
			if slices.ContainsFunc(missing, func(d string) bool {
				return slices.ContainsFunc(hostsOf[k], func(h string) bool { return s.baselineHas(h + " " + d) })
			}) {
				missing = nil
			}
			peerKinds = len(others)
		} else {
			devSet := map[string]bool{}
			for _, o := range others {
				for d := range sum.Kinds[o].Have {
					devSet[d] = true
				}
			}
			for _, d := range slices.Sorted(maps.Keys(devSet)) {
				if sum.Kinds[k].Have[d] > 0 {
					continue
				}
				have, hosts := 0, 0
				for _, o := range others {
					if 10*sum.Kinds[o].Have[d] >= 9*sum.Kinds[o].Hosts {
						have++
						hosts += sum.Kinds[o].Hosts
					}
				}
				if 4*have < 3*len(others) || slices.ContainsFunc(hostsOf[k], func(h string) bool { return s.baselineHas(h + " " + d) }) {
					continue
				}
				missing = append(missing, d)
				peerHosts, peerKinds = hosts, have
			}
		}
		// A group that has fewer of the adapters than it lacks is
		// another kind of host (CPU nodes with one HCA beside GPU nodes
		// with four), not a group that lost a rail.
		if len(missing) == 0 || len(missing) >= len(sum.Kinds[k].Have) {
			continue
		}
		hosts := slices.SortedFunc(slices.Values(hostsOf[k]), words.Natural)
		size := sum.Kinds[k].Hosts
		// The group's hosts in scope: all of them, or a gate's job's
		// (the title still counts the whole group, judged on the census).
		var ents []Entity
		var scoped []string
		for _, h := range hosts {
			if ns := nodesOf[h]; len(ns) > 0 && slices.ContainsFunc(ns[0].Ports, func(p *fabric.Port) bool { return p != nil && p.Num != 0 && s.inScope(p) }) {
				ents = append(ents, s.nodeEntity(ns[0], "host"))
				scoped = append(scoped, h)
			}
		}
		if len(ents) == 0 {
			continue
		}
		// A gate's baseline is its job's part: the job's hosts of the
		// group are the ones it can say it has.
		if asBuilt && !slices.ContainsFunc(scoped, func(h string) bool {
			return slices.ContainsFunc(devs[h], func(d string) bool { return !s.baselineHas(h + " " + d) })
		}) {
			continue
		}
		group := sum.Kinds[k].Name
		if unread || s.HCAsPartial {
			s.couldNotDecide("topology.missing-hca", fmt.Sprintf("the %d %s hosts have no %s where the hosts of %d other groups have it, but some ports or hosts were not read: the adapters may be there", size, group, strings.Join(missing, ", "), peerKinds), ents[0])
			continue
		}
		naming, asWords, joinedWords := "with the same adapter naming", "", ""
		if joined != "" {
			naming = "naming their adapters otherwise"
			asWords = " (as " + strings.Join(as, ", ") + ")"
			joinedWords = "; the namings " + joined
		}
		var otherNames []string
		for _, o := range others[:min(3, len(others))] {
			otherNames = append(otherNames, sum.Kinds[o].Name)
		}
		out = append(out, Finding{
			Check:    "topology.missing-hca",
			Severity: Error,
			Title:    fmt.Sprintf("%d %s hosts have no %s where the hosts of %d other groups have it%s: a rail missing for the whole group", size, group, strings.Join(missing, ", "), peerKinds, asWords),
			Entities: ents,
			Group:    group,
			Evidence: []Evidence{{Name: "HCAs", Value: 0, Threshold: float64(peerHosts),
				Text: fmt.Sprintf("none of %s has %s; %d hosts of %d other groups %s (%s) have it%s on nine in ten of their hosts or more; %s",
					words.Count(size, "host"), strings.Join(missing, ", "), peerHosts, peerKinds, naming, words.FirstOf(otherNames, len(others)), asWords,
					"the group's hosts being alike, no host of it is missing an adapter its own peers have"+joinedWords)}},
			Impact: Impact{Score: float64(size*len(missing)) / float64(max(1, s.hostCount())),
				Summary: "jobs on these hosts run without that rail: NCCL's rail-optimized all-reduce is slower or fails for its GPUs, while the hosts' other links look healthy"},
			Action: s.missingRailAction(sum, missing, as, hosts, nodesOf),
			Basis:  "topology",
		})
	}
	return out
}

// missingRailAction is the next step for a group lacking the missing
// rails (as: the other naming's names for them, or nil): the absent
// leaf by name where the leaf naming ties it (missingLeafName), else
// which rail and leaf position to look for.
func (s *Snapshot) missingRailAction(sum *HCASummary, missing, as, hosts []string, nodesOf map[string][]*fabric.Node) string {
	devs := strings.Join(missing, ", ")
	// The group's own leaves: where its hosts' adapters land.
	var own []string
	for _, h := range hosts {
		for _, n := range nodesOf[h] {
			for _, p := range n.Ports {
				if p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && !slices.Contains(own, p.Remote.Node.Description) {
					own = append(own, p.Remote.Node.Description)
				}
			}
		}
	}
	slices.SortFunc(own, words.Natural)
	var named, present, where []string
	for i, d := range missing {
		rail := sum.Rails[d]
		if len(rail) == 0 && i < len(as) {
			rail = sum.Rails[as[i]]
		}
		var railNames []string
		for _, g := range rail {
			if n := s.Fabric.NodeByGUID(g); n != nil {
				railNames = append(railNames, n.Description)
			}
		}
		slices.SortFunc(railNames, words.Natural)
		if len(railNames) == 0 || len(own) == 0 {
			continue
		}
		name, railRun, ownRun, ok := missingLeafName(own, railNames)
		if ok && len(s.Fabric.NodesByName(name)) > 0 {
			present = append(present, fmt.Sprintf("The leaf the naming puts %s of this group on, %s, is in the fabric but none of the group's hosts has %s cabled to it: check those cables and adapters ('ibdoctor links' on it shows its host ports). ", d, name, d))
			continue
		}
		if ok {
			named = append(named, fmt.Sprintf("Leaf %s is probably the group's %s leaf and is absent from the fabric: the other groups' %s land on %s, whose names agree on %s where this group's differ, this group's other adapters on %s, whose names agree on %s where the rail's differ, and no switch of that name answered or is in the file", name, d, d, words.FirstOf(railNames[:min(3, len(railNames))], len(railNames)), railRun, words.FirstOf(own[:min(3, len(own))], len(own)), ownRun))
			continue
		}
		where = append(where, fmt.Sprintf("the group's %s leaf is the one on the rail of %s (where the other groups' %s land) serving the group's place beside its other leaves %s; the leaf names do not tie it to one name", d, words.FirstOf(railNames[:min(3, len(railNames))], len(railNames)), d, words.FirstOf(own[:min(3, len(own))], len(own))))
	}
	var b strings.Builder
	for _, n := range named {
		b.WriteString(n + ": check that it is powered, its uplinks cabled and the subnet manager sees it ('ibdoctor links' on the other groups' leaves shows where those rails land). ")
	}
	for _, p := range present {
		b.WriteString(p)
	}
	if len(where) > 0 {
		b.WriteString(upperFirst(strings.Join(where, "; ")) + ". ")
	}
	if len(named) == 0 && len(present) == 0 {
		fmt.Fprintf(&b, "Check whether the group's %s leaf switch is powered, cabled and in the fabric ('ibdoctor links' on the other groups' %s leaves shows where those rails land) and ", devs, devs)
	} else {
		b.WriteString("Check ")
	}
	fmt.Fprintf(&b, "'ibstat' on one host for %s; bring the leaf or cables back, then confirm with 'ibdoctor check'. If this group was built without that rail, nothing is wrong.", devs)
	return b.String()
}

// missingLeafName is the name a group's leaf of a rail would have when
// the leaf names tie it: split into runs of digits and of other
// characters, alike in shape, each run the rail's leaves (the other
// groups' on that rail) agree on and the group's own leaves do not is
// the rail's, each the group's leaves agree on and the rail's do not is
// the group's, and a run both agree on is the same in both. Fewer than
// two leaves on either side, or a run neither or both tie otherwise,
// tie nothing. (The DGX file: rail leaves A09-P1-IBLEAF-03-02 to
// B09-P1-IBLEAF-03-08, the SU's own leaves A09-P1-IBLEAF-01-01,
// 02-01 and 04-01 give A09-P1-IBLEAF-03-01.)
func missingLeafName(own, rail []string) (name, railRun, ownRun string, ok bool) {
	if len(own) < 2 || len(rail) < 2 {
		return "", "", "", false
	}
	split := func(name string) []string {
		var runs []string
		for i := 0; i < len(name); {
			j := i + 1
			for j < len(name) && (name[j] >= '0' && name[j] <= '9') == (name[i] >= '0' && name[i] <= '9') {
				j++
			}
			runs = append(runs, name[i:j])
			i = j
		}
		return runs
	}
	runsOf := func(names []string) ([][]string, bool) {
		var out [][]string
		for _, n := range names {
			r := split(n)
			if len(out) > 0 && len(r) != len(out[0]) {
				return nil, false
			}
			out = append(out, r)
		}
		return out, true
	}
	o, ok1 := runsOf(own)
	r, ok2 := runsOf(rail)
	if !ok1 || !ok2 || len(o[0]) != len(r[0]) {
		return "", "", "", false
	}
	same := func(rs [][]string, i int) bool {
		return !slices.ContainsFunc(rs, func(x []string) bool { return x[i] != rs[0][i] })
	}
	var b strings.Builder
	var railRuns, ownRuns []string
	for i := range o[0] {
		so, sr := same(o, i), same(r, i)
		switch {
		case so && sr && o[0][i] == r[0][i]:
			b.WriteString(o[0][i])
		case sr && !so:
			b.WriteString(r[0][i])
			railRuns = append(railRuns, "'"+r[0][i]+"'")
		case so && !sr:
			b.WriteString(o[0][i])
			ownRuns = append(ownRuns, "'"+o[0][i]+"'")
		default:
			return "", "", "", false
		}
	}
	if len(railRuns) == 0 || len(ownRuns) == 0 {
		return "", "", "", false
	}
	return b.String(), strings.Join(railRuns, ", "), strings.Join(ownRuns, ", "), true
}

// samePortSpots keeps, of spots, the ports with the number h's other HCAs
// land on, when the hosts land on one port number on every rail's leaf
// (each other host of the census with two or more cabled HCAs, one at
// least, and h): gpu001's mlx5_0 on rail0/1 puts its mlx5_1's cable at
// rail1/1, not at rail1/5 where nothing was ever cabled. Otherwise spots
// as they are.
func (s *Snapshot) samePortSpots(h string, census []HostHCA, spots []*fabric.Port, where []string) ([]*fabric.Port, []string) {
	ports := map[string][]uint8{}
	for _, x := range census {
		if x.Leaf != 0 {
			ports[x.Host] = append(ports[x.Host], x.LeafPort)
		}
	}
	mine := ports[h]
	if len(mine) == 0 || slices.Min(mine) != slices.Max(mine) {
		return spots, where
	}
	aligned := 0
	for o, ps := range ports {
		if o == h || len(ps) < 2 {
			continue
		}
		if slices.Min(ps) != slices.Max(ps) {
			return spots, where
		}
		aligned++
	}
	if aligned == 0 {
		return spots, where
	}
	var keep []*fabric.Port
	var keepWhere []string
	for i, p := range spots {
		if p.Num == mine[0] {
			keep = append(keep, p)
			keepWhere = append(keepWhere, where[i]+"; the port number "+h+"'s other HCAs and its peers' land on, on every rail")
		}
	}
	if len(keep) == 0 {
		return spots, where
	}
	return keep, keepWhere
}

// crossNamingRail compares group k, whose adapter naming no two other
// groups share, with the groups of another naming: those (two or more,
// three quarters of that naming's groups of four hosts or more) whose
// hosts have, nine in ten, the same adapters, more than k's. The namings
// are joined as topology.rail-miswired joins them (joinRails): k's
// missing adapters are the others' it does not join, named in k's
// naming (missing) and in theirs (as); joined says how. k's own adapters
// must be on nine in ten of its hosts (a group alike).
func crossNamingRail(sum *HCASummary, k string, kinds []string) (others, missing, as []string, joined string, peerHosts int) {
	_, schemes, _ := strings.Cut(k, "|")
	if strings.Contains(schemes, ",") {
		return nil, nil, nil, "", 0
	}
	full := func(o string) []string {
		var ds []string
		for d, n := range sum.Kinds[o].Have {
			if 10*n >= 9*sum.Kinds[o].Hosts {
				ds = append(ds, d)
			}
		}
		return slices.SortedFunc(slices.Values(ds), words.Natural)
	}
	mine := full(k)
	if len(mine) == 0 || len(mine) != len(sum.Kinds[k].Have) {
		return nil, nil, nil, "", 0
	}
	// The other namings' groups, by naming, and each group's adapters.
	byScheme := map[string][]string{}
	for _, o := range kinds {
		if _, sc, _ := strings.Cut(o, "|"); o != k && sc != schemes && !strings.Contains(sc, ",") {
			byScheme[sc] = append(byScheme[sc], o)
		}
	}
	for _, sc := range slices.Sorted(maps.Keys(byScheme)) {
		alike := map[string][]string{}
		for _, o := range byScheme[sc] {
			key := strings.Join(full(o), " ")
			alike[key] = append(alike[key], o)
		}
		for _, key := range slices.Sorted(maps.Keys(alike)) {
			peers := alike[key]
			theirs := strings.Fields(key)
			if len(peers) < 2 || 4*len(peers) < 3*len(byScheme[sc]) || len(theirs) <= len(mine) {
				continue
			}
			m, ok := joinRails(mine, theirs)
			if !ok {
				continue
			}
			// k's name of a device it lacks: the offset of the join.
			var off int
			for d, e := range m {
				off = railNumber(d) - railNumber(e)
				break
			}
			for _, e := range theirs {
				if !slices.Contains(slices.Collect(maps.Values(m)), e) {
					as = append(as, e)
					missing = append(missing, devScheme(mine[0])+strconv.Itoa(railNumber(e)+off))
				}
			}
			if len(missing) >= len(mine) {
				return nil, nil, nil, "", 0
			}
			for _, o := range peers {
				peerHosts += sum.Kinds[o].Hosts
			}
			pairs := make([]string, len(mine))
			for i, d := range mine {
				pairs[i] = m[d]
			}
			joined = fmt.Sprintf("joined in device order as topology.rail-miswired joins rails: %s are their %s", strings.Join(mine, ", "), strings.Join(pairs, ", "))
			return peers, missing, as, joined, peerHosts
		}
	}
	return nil, nil, nil, "", 0
}

// hostBlock is the span of leaf's ports that hold hosts' cables: from
// the lowest to the highest port a host's link lands on, widened by up
// to `missing` ports at each end over ports not cabled to a switch. The
// linked ports alone leave out a missing HCA's port when it is the first
// or last of the block (leaf01/1 for gpu001 mlx5_0); an uplink ends the
// widening, so a spine cable's port is never taken for a host's.
func hostBlock(leaf *fabric.Node, ports []uint8, missing int) (lo, hi uint8) {
	lo, hi = slices.Min(ports), slices.Max(ports)
	toSwitch := func(num int) bool {
		if num < 1 || num >= len(leaf.Ports) {
			return true // no such port: the block cannot widen past it
		}
		p := leaf.Ports[num]
		return p == nil || (p.Remote != nil && p.Remote.Node.Type != mad.NodeCA)
	}
	for i := 0; i < missing && !toSwitch(int(lo)-1); i++ {
		lo--
	}
	for i := 0; i < missing && !toSwitch(int(hi)+1); i++ {
		hi++
	}
	return lo, hi
}

// anyUnread marks a switch where an unread port could be anywhere.
const anyUnread = 0

// unreadNearHosts says whether one of a leaf's unread ports could hold a
// host's cable: one among or beside its host ports, up to the first port
// known to be cabled to a switch on either side. An unread port beyond
// those (the far end of an uplink to a spine that does not answer) is
// not where a host's cable goes, so what was read still decides (trial
// T4: spine03 dead, leaf03's uplinks 49-56 unread, leaf03/28 Polling).
func unreadNearHosts(leaf *fabric.Node, hostPorts, unread []uint8) bool {
	if len(unread) == 0 {
		return false
	}
	if leaf == nil || len(hostPorts) == 0 || slices.Contains(unread, anyUnread) {
		return true
	}
	toSwitch := func(num int) bool {
		p := leaf.Ports[num]
		return p != nil && p.Remote != nil && p.Remote.Node.Type != mad.NodeCA
	}
	lo, hi := int(slices.Min(hostPorts)), int(slices.Max(hostPorts))
	for lo > 1 && !toSwitch(lo-1) {
		lo--
	}
	for hi+1 < len(leaf.Ports) && !toSwitch(hi+1) {
		hi++
	}
	return slices.ContainsFunc(unread, func(n uint8) bool { return int(n) >= lo && int(n) <= hi })
}

func kindName(host string) string {
	if p := strings.TrimRight(host, "0123456789"); p != "" {
		return p + "*"
	}
	return "such"
}

// foldMissingHCA folds a link.polling finding on a port that a
// topology.missing-hca finding names as where the missing HCA's cable
// belongs: one cable, one finding.
//
// It folds as well the names.* finding that an adapter it takes for a
// misnamed HCA explains: a description two nodes share where one is the
// misnamed adapter, or the firmware default on that adapter alone (trial
// E1: one cause, one finding, ranked as the naming fault it is).
func foldMissingHCA(fs []Finding) []Finding {
	named := map[string]bool{}
	misnamed := map[uint64]bool{}
	for _, f := range fs {
		if f.Check != "topology.missing-hca" {
			continue
		}
		for _, e := range f.Entities[min(1, len(f.Entities)):] {
			if e.Role == "misnamed" {
				misnamed[e.NodeGUID] = true
				continue
			}
			named[e.String()] = true
		}
	}
	if len(named) == 0 && len(misnamed) == 0 {
		return fs
	}
	explained := func(f Finding) bool {
		switch f.Check {
		case "names.duplicate-description":
			return len(f.Entities) == 2 && slices.ContainsFunc(f.Entities, func(e Entity) bool { return misnamed[e.NodeGUID] })
		case "names.default-description":
			return len(f.Entities) > 0 && !slices.ContainsFunc(f.Entities, func(e Entity) bool { return !misnamed[e.NodeGUID] })
		}
		return false
	}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		return f.Check == "link.polling" && len(f.Entities) > 0 && named[f.Entities[0].String()] || explained(f)
	})
}

// baselineCabled reports whether the baseline has a cable at switch port
// p: the port is then another node's, not where an HCA the baseline
// lacks belongs (trial F1: gpu009 mlx5_4's port named as gpu012's).
func (s *Snapshot) baselineCabled(p *fabric.Port) bool {
	if s.Baseline == nil {
		return false
	}
	i, ok := s.Baseline.nodeByGUID(p.Node.GUID)
	if !ok {
		return false
	}
	_, ok = s.Baseline.peerAt(i, p.Num)
	return ok
}

// baselineHas reports whether the expected topology has a node with this
// description.
func (s *Snapshot) baselineHas(desc string) bool {
	if s.Baseline == nil {
		return false
	}
	return s.Baseline.hasDesc(desc)
}
