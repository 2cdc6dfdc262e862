package checks

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/words"
	"github.com/ibdoctor/ibdoctor/mad"
)

func init() {
	register(Check{
		ID:      "addr.duplicate-lid",
		Summary: "two ports (a switch counts as its port 0) own the same LID, LMC ranges included",
		Needs:   []string{"topology", "lids"},
		run:     (*Snapshot).duplicateLIDs,
	})
	register(Check{
		ID:      "addr.active-no-lid",
		Summary: "a host port or switch is Active without a LID while the rest of the fabric has them",
		Needs:   []string{"topology"},
		run:     (*Snapshot).activeNoLID,
	})
	register(Check{
		ID:      "addr.lmc-mismatch",
		Summary: "the ports of one host adapter run different LMCs",
		Needs:   []string{"topology"},
		run:     (*Snapshot).lmcMismatch,
	})
	register(Check{
		ID:      "names.duplicate-description",
		Summary: "two or more nodes carry the same NodeDescription (firmware defaults and SHARP Aggregation Nodes aside)",
		Needs:   []string{"topology"},
		run:     (*Snapshot).duplicateDescriptions,
	})
	register(Check{
		ID:      "names.default-description",
		Summary: "host adapters carry the firmware's default NodeDescription or a host name never set (localhost, ubuntu), or switches share one firmware default: nodes told apart by GUID only",
		Needs:   []string{"topology"},
		run:     (*Snapshot).defaultDescriptions,
	})
}

// lidOwner is a port that owns LIDs: a CA's (or router's) port, a
// switch's port 0.
func lidPorts(f *fabric.Fabric) []*fabric.Port {
	var out []*fabric.Port
	for _, n := range f.Nodes {
		for i, p := range n.Ports {
			if p == nil || (n.Type == mad.NodeSwitch && i != 0) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

func (s *Snapshot) duplicateLIDs() []Finding {
	owners := s.Fabric.SharedLIDs()
	// One finding per set of ports that share LIDs.
	type group struct {
		ports []*fabric.Port
		lids  []uint16
	}
	groups := map[string]*group{}
	var keys []string
	for l, ps := range owners {
		if len(ps) < 2 {
			continue
		}
		var names []string
		for _, p := range ps {
			names = append(names, s.entityOf(p, "").String()+fmt.Sprintf("@%x", p.Node.GUID))
		}
		slices.Sort(names)
		k := strings.Join(names, ",")
		g := groups[k]
		if g == nil {
			g = &group{ports: ps}
			groups[k] = g
			keys = append(keys, k)
		}
		g.lids = append(g.lids, l)
	}
	slices.Sort(keys)
	var out []Finding
	for _, k := range keys {
		g := groups[k]
		slices.Sort(g.lids)
		if !slices.ContainsFunc(g.ports, s.inScope) {
			continue
		}
		var ents []Entity
		var names []string
		for _, p := range g.ports {
			ents = append(ents, s.entityOf(p, "end"))
			names = append(names, s.entityOf(p, "").String())
		}
		lidText := fmt.Sprint(g.lids[0])
		if len(g.lids) > 1 {
			lidText = fmt.Sprintf("%d-%d (%d LIDs)", g.lids[0], g.lids[len(g.lids)-1], len(g.lids))
		}
		out = append(out, Finding{
			Check:    "addr.duplicate-lid",
			Severity: Critical,
			Title:    fmt.Sprintf("LID %s is owned by %d ports: %s", lidText, len(g.ports), strings.Join(names, ", ")),
			Entities: ents,
			Evidence: []Evidence{{Name: "LID", Value: float64(g.lids[0]), Text: fmt.Sprintf("PortInfo LID/LMC of %s cover LID %s", strings.Join(names, " and "), lidText)}},
			Impact:   Impact{PathShare: float64(len(g.ports)) / float64(max(1, s.hostCount())), Score: 0.5, Summary: "packets to that LID reach only one of the ports (whichever the tables lead to): the other is cut off, and an SA path to it is wrong"},
			Action:   "Make the SM reassign LIDs: a duplicate is usually a port that kept a LID from another subnet or a static LID in a guid2lid file. Fix or delete the SM's guid2lid cache entry for one of them and have the SM do a heavy sweep (opensm: kill -HUP, or restart).",
			Basis:    "topology",
		})
	}
	return out
}

func (s *Snapshot) activeNoLID() []Finding {
	var none, with []*fabric.Port
	for _, p := range lidPorts(s.Fabric) {
		if p.State != mad.PortStateActive {
			continue
		}
		if p.Node.Type == mad.NodeSwitch && p.PhysState != mad.PhysLinkUp {
			continue
		}
		if p.LID == 0 {
			none = append(none, p)
		} else {
			with = append(with, p)
		}
	}
	// Nothing has a LID: no SM (sm.no-master), or a file without LIDs.
	if len(none) == 0 || len(with) == 0 {
		return nil
	}
	var out []Finding
	for _, p := range none {
		if !s.inScope(p) {
			continue
		}
		out = append(out, Finding{
			Check:    "addr.active-no-lid",
			Severity: Error,
			Title:    fmt.Sprintf("%s is Active without a LID", s.entityOf(p, "").String()),
			Entities: []Entity{s.entityOf(p, "end")},
			Evidence: []Evidence{{Name: "LID", Value: 0, Text: fmt.Sprintf("PortInfo LID 0, state Active, while %d other ports have LIDs", len(with))}},
			Impact:   Impact{PathShare: 1 / float64(max(1, s.hostCount())), Score: 1 / float64(max(1, s.hostCount())), Summary: "nothing can address the port: no LID-routed traffic or MAD reaches it"},
			Action:   "Have the SM re-sweep (opensm: kill -HUP) and check its log for this port GUID; a port Active with LID 0 was activated by a previous SM or has a firmware fault — bounce the port if the SM does not fix it.",
			Basis:    "topology",
		})
	}
	return out
}

func (s *Snapshot) lmcMismatch() []Finding {
	var out []Finding
	for _, n := range s.Fabric.Nodes {
		if n.Type == mad.NodeSwitch {
			continue
		}
		lmcs := map[uint8][]*fabric.Port{}
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 && p.State == mad.PortStateActive {
				lmcs[p.LMC] = append(lmcs[p.LMC], p)
			}
		}
		if len(lmcs) < 2 || !s.nodeInScope(n) {
			continue
		}
		var parts []string
		var ents []Entity
		keys := make([]uint8, 0, len(lmcs))
		for k := range lmcs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, p := range lmcs[k] {
				parts = append(parts, fmt.Sprintf("port %d LMC %d", p.Num, k))
				ents = append(ents, s.entityOf(p, "end"))
			}
		}
		out = append(out, Finding{
			Check:    "addr.lmc-mismatch",
			Severity: Warning,
			Title:    fmt.Sprintf("%s runs different LMCs on its ports: %s", s.nodeName(n), strings.Join(parts, ", ")),
			Entities: ents,
			Evidence: []Evidence{{Name: "LMC", Value: float64(len(keys)), Text: strings.Join(parts, "; ")}},
			Impact:   Impact{Score: 1 / float64(max(1, s.hostCount())), Summary: "multipath libraries (and the SM's LMC-based routing) see a different number of paths per port of one adapter"},
			Action:   "Set one LMC for the subnet (opensm.conf lmc) and have the SM do a heavy sweep; an LMC that differs per port usually comes from a port brought up by another SM or a per-port override.",
			Basis:    "topology",
		})
	}
	return out
}

// firmwareDefault matches the NodeDescription adapters and switches carry
// before anything sets one: "MT4129 ConnectX7   Mellanox Technologies",
// "MT23108 InfiniHost Mellanox Technologies", "Quantum-2 Mellanox
// Technologies", "Mellanox Technologies Aggregation Node".
var firmwareDefault = regexp.MustCompile(`^(MT\d{4,6}\b.*|.*\b(Mellanox Technologies|NVIDIA)\s*)$`)

func isFirmwareDefault(desc string) bool {
	d := strings.TrimSpace(desc)
	if strings.IndexByte(d, '\n') >= 0 {
		return firmwareDefault.MatchString(d) // '.' stops at a newline: the expression decides
	}
	return firmwareDefaultLine(d)
}

// firmwareDefaultLine is firmwareDefault's match on a trimmed description
// without a newline, without the expression's backtracking: checks ask it
// of every node, several times (at 49k nodes, a regexp match each was
// tens of ms of a gate's CPU). FuzzFirmwareDefault holds it to the
// expression.
func firmwareDefaultLine(d string) bool {
	// MT and 4 to 6 digits, then a word boundary.
	if rest, ok := strings.CutPrefix(d, "MT"); ok {
		k := 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k >= 4 && k <= 6 && (k == len(rest) || !isWordByte(rest[k])) {
			return true
		}
	}
	// Or ends with a word "Mellanox Technologies" or "NVIDIA" (d is
	// trimmed: no space follows).
	for _, suffix := range []string{"Mellanox Technologies", "NVIDIA"} {
		if before, ok := strings.CutSuffix(d, suffix); ok && (before == "" || !isWordByte(before[len(before)-1])) {
			return true
		}
	}
	return false
}

// isWordByte is a word character of a regexp's \b (ASCII only, as RE2).
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (s *Snapshot) duplicateDescriptions() []Finding {
	by := map[string][]*fabric.Node{}
	for _, n := range s.Fabric.Nodes {
		d := strings.TrimSpace(n.Description)
		if d == "" || isAggregationNode(n) || isFirmwareDefault(d) {
			continue
		}
		by[d] = append(by[d], n)
	}
	var descs []string
	for d, ns := range by {
		if len(ns) > 1 {
			descs = append(descs, d)
		}
	}
	slices.Sort(descs)
	var out []Finding
	for _, d := range descs {
		ns := by[d]
		if !slices.ContainsFunc(ns, s.nodeInScope) {
			continue
		}
		ents, guids := s.nodesByGUID(ns, "node")
		out = append(out, Finding{
			Check:    "names.duplicate-description",
			Severity: Warning,
			Title:    fmt.Sprintf("%d nodes are described %q", len(ns), d),
			Entities: ents,
			Evidence: []Evidence{{Name: "nodes", Value: float64(len(ns)), Text: "node GUIDs " + strings.Join(guids, ", ")}},
			Impact:   Impact{Summary: "findings, job host lists and the SM's logs name two machines alike: the wrong one gets drained or recabled"},
			Action:   "Give each node its own description: on hosts rdma-ndd (or /sys/class/infiniband/*/node_desc) from the host name; on switches the system name. A host image cloned with a fixed node_desc is the usual cause.",
			Basis:    "topology",
		})
	}
	return out
}

// placeholderHost reports whether host is a name a machine answers
// under before its own is set: "localhost" (and localhost.*), the
// kernel's "(none)", or "ubuntu", the name Ubuntu's installer and cloud
// images give (the DGX file's "localhost HCA-1", "ubuntu mlx5_0"). Such
// a description names no machine (trial H7).
func placeholderHost(host string) bool {
	return host == "localhost" || strings.HasPrefix(host, "localhost.") || host == "(none)" || host == "ubuntu"
}

func (s *Snapshot) defaultDescriptions() []Finding {
	var defaults, placeholders []*fabric.Node
	named := 0
	for _, n := range s.Fabric.Nodes {
		if !isHostNode(n) || n.DescriptionUnread {
			continue // not read: could not look
		}
		switch {
		case isFirmwareDefault(n.Description) || strings.TrimSpace(n.Description) == "":
			defaults = append(defaults, n)
		case placeholderHost(HostOf(n)):
			placeholders = append(placeholders, n)
		default:
			named++
		}
	}
	out := s.defaultSwitchDescriptions()
	unnamed := len(defaults) + len(placeholders)
	if unnamed == 0 {
		return out
	}
	var ents []Entity
	var names []string
	for _, n := range append(slices.Clone(defaults), placeholders...) {
		if !s.nodeInScope(n) {
			continue
		}
		ents = append(ents, s.nodeEntity(n, "node"))
		if len(names) < 5 {
			names = append(names, fmt.Sprintf("0x%016x %q", n.GUID, n.Description))
		}
	}
	if len(ents) == 0 {
		return out
	}
	what := "the firmware's default description"
	switch {
	case len(placeholders) > 0 && len(defaults) > 0:
		what = fmt.Sprintf("the firmware's default description (%d) or a host name never set (%d: %s)", len(defaults), len(placeholders), placeholderNames(placeholders))
	case len(placeholders) > 0:
		what = fmt.Sprintf("a host name never set (%s)", placeholderNames(placeholders))
	}
	f := Finding{
		Check:    "names.default-description",
		Severity: Info, // naming hygiene: no traffic is affected
		Entities: ents,
		Evidence: []Evidence{{Name: "hosts", Value: float64(len(ents)), Text: words.FirstOf(names, len(ents))}},
		Impact:   Impact{Summary: "these hosts cannot be told apart in findings, routes and the SM's logs: a fault on one is found by GUID only"},
		Action:   "Run rdma-ndd on those hosts (it sets node_desc to '<hostname> <device>'), or write the name to /sys/class/infiniband/<dev>/node_desc at boot; check why the image lacks it (and, for a host name never set, set the host's name).",
		Basis:    "topology",
	}
	switch {
	case named >= 2*unnamed:
		// Most hosts named: these missed the convention.
		f.Title = fmt.Sprintf("%d host adapters still carry %s while %d are named after their hosts", len(ents), what, named)
	case unnamed >= 8:
		// Most hosts unnamed (trial H7: 21 of plafrim2's 23 IS5030
		// hosts): no convention to miss, but the operator cannot tell
		// which host is on which port; one finding for the fabric.
		f.Title = fmt.Sprintf("%d of the %d host adapters carry %s: the hosts cannot be told apart", len(ents), unnamed+named, what)
	default:
		return out // a lab's few adapters: nothing to tell apart
	}
	return append(out, f)
}

// placeholderNames lists the placeholder host names of ns: "localhost,
// ubuntu".
func placeholderNames(ns []*fabric.Node) string {
	var hs []string
	for _, n := range ns {
		if h := HostOf(n); !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
	}
	slices.Sort(hs)
	return strings.Join(hs, ", ")
}

// defaultSwitchDescriptions finds switches that share one firmware
// default description (the Quantum-2 capture's 8 "Quantum-2 Mellanox
// Technologies", which ibdiagnet flags as duplicated descriptions):
// every finding has to name them by GUID. names.duplicate-description
// leaves firmware defaults aside (unmanaged switches share them by
// design), so this says it once per description, as info (trial H7).
func (s *Snapshot) defaultSwitchDescriptions() []Finding {
	by := map[string][]*fabric.Node{}
	total := 0
	for _, n := range s.Fabric.Nodes {
		if n.Type != mad.NodeSwitch || n.DescriptionUnread {
			continue
		}
		total++
		if d := strings.TrimSpace(n.Description); isFirmwareDefault(d) {
			by[d] = append(by[d], n)
		}
	}
	var out []Finding
	for _, d := range slices.Sorted(maps.Keys(by)) {
		ns := by[d]
		if len(ns) < 2 || !slices.ContainsFunc(ns, s.nodeInScope) {
			continue
		}
		ents, guids := s.nodesByGUID(ns, "switch")
		out = append(out, Finding{
			Check:    "names.default-description",
			Severity: Info,
			Title:    fmt.Sprintf("%d of the %d switches carry the firmware's default description %q: they can be told apart by GUID only", len(ns), total, d),
			Entities: ents,
			Evidence: []Evidence{{Name: "switches", Value: float64(len(ns)), Text: "switch GUIDs " + words.FirstOf(guids[:min(8, len(guids))], len(guids))}},
			Impact:   Impact{Summary: "findings, routes and the SM's logs name these switches alike: finding the one at fault in the racks takes its GUID"},
			Action:   "Give each switch a name: on a managed switch set its hostname (its NodeDescription follows); an unmanaged one takes a node description set through its firmware configuration or UFM. A name with rack and position lets a finding point at the box.",
			Basis:    "topology",
		})
	}
	return out
}

// nodesByGUID sorts nodes sharing one description by GUID and gives them
// as entities of role and as the GUIDs the evidence lists.
func (s *Snapshot) nodesByGUID(ns []*fabric.Node, role string) ([]Entity, []string) {
	slices.SortFunc(ns, func(a, b *fabric.Node) int { return cmp.Compare(a.GUID, b.GUID) })
	ents := make([]Entity, 0, len(ns))
	guids := make([]string, 0, len(ns))
	for _, n := range ns {
		ents = append(ents, s.nodeEntity(n, role))
		guids = append(guids, fmt.Sprintf("0x%016x", n.GUID))
	}
	return ents, guids
}
