package fabric

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibdoctor/ibdoctor/mad"
)

// ChangeKind names what changed between two fabrics.
type ChangeKind uint8

// Change kinds, in the order Diff reports them.
const (
	NodeRemoved ChangeKind = iota + 1
	NodeAdded
	LinkRemoved
	LinkAdded
	LinkMoved // a cable now on another port or node
	RateChanged
	LIDChanged
	DescChanged
)

var kindNames = [...]string{"", "node-removed", "node-added", "link-removed", "link-added", "link-moved", "rate-changed", "lid-changed", "description-changed"}

func (k ChangeKind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// End names one end of a cable: node GUID and port number.
type End struct {
	GUID uint64
	Port uint8
}

// Change is one difference between an old and a new fabric.
type Change struct {
	Kind ChangeKind
	// GUID and Port say where: the node (Port 0 for node-level changes;
	// a link's A end for link changes).
	GUID uint64
	Port uint8
	// Name is the node's description (the new one when both exist).
	Name string
	// Old and New are the values before and after, printed for people:
	// "4X HDR", "lid 7", a peer "0x...[3] leaf02"; empty when there is
	// none (an added node has no Old).
	Old, New string
	// OldPeer and NewPeer are the far ends of the cable for link
	// changes (zero when not applicable).
	OldPeer, NewPeer End
}

// Changes is Diff's result, in a stable order: by kind, then GUID, then
// port, then the values.
type Changes []Change

// String prints one change per line: "link-moved gpu001 mlx5_0 (0x..)[1]: was ... now ...".
func (c Change) String() string {
	where := fmt.Sprintf("%s (0x%016x)", c.Name, c.GUID)
	if c.Port != 0 || c.Kind >= LinkRemoved && c.Kind <= RateChanged {
		where += fmt.Sprintf("[%d]", c.Port)
	}
	switch {
	case c.Old != "" && c.New != "":
		return fmt.Sprintf("%s %s: %s -> %s", c.Kind, where, c.Old, c.New)
	case c.New != "":
		return fmt.Sprintf("%s %s: %s", c.Kind, where, c.New)
	case c.Old != "":
		return fmt.Sprintf("%s %s: %s", c.Kind, where, c.Old)
	}
	return fmt.Sprintf("%s %s", c.Kind, where)
}

func (cs Changes) String() string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Header is the column header for Rows.
func (cs Changes) Header() []string {
	return []string{"CHANGE", "NODE", "GUID", "PORT", "OLD", "NEW"}
}

// Rows returns the changes as table rows matching Header.
func (cs Changes) Rows() [][]string {
	rows := make([][]string, 0, len(cs))
	for _, c := range cs {
		port := ""
		if c.Port != 0 || c.Kind >= LinkRemoved && c.Kind <= RateChanged {
			port = fmt.Sprint(c.Port)
		}
		rows = append(rows, []string{c.Kind.String(), c.Name, fmt.Sprintf("0x%016x", c.GUID), port, c.Old, c.New})
	}
	return rows
}

// Count returns how many changes are of kind k.
func (cs Changes) Count(k ChangeKind) int {
	n := 0
	for _, c := range cs {
		if c.Kind == k {
			n++
		}
	}
	return n
}

type linkKey struct{ a, b End }

func keyOf(l Link) linkKey {
	return linkKey{End{l.A.Node.GUID, l.A.Num}, End{l.B.Node.GUID, l.B.Num}}
}

func (k linkKey) has(e End) bool { return k.a == e || k.b == e }

func (k linkKey) other(e End) End {
	if k.a == e {
		return k.b
	}
	return k.a
}

func linkRate(l Link) string {
	ra, rb := l.A.Rate(), l.B.Rate()
	if ra == rb {
		return ra.String()
	}
	return ra.String() + " / " + rb.String()
}

// Diff compares two fabrics by node GUID and reports nodes added and
// removed, cables added, removed and moved (a cable whose end is now on
// another port, or another node, or that joins the same two nodes on
// other ports), link rate changes, LID changes (a switch's port 0, CA and
// router ports) and description changes. With duplicated GUIDs, the
// first node of each GUID is compared.
func Diff(old, new *Fabric) Changes {
	oldN, newN := nodeMap(old), nodeMap(new)
	var cs Changes
	name := func(g uint64) string {
		if n := newN[g]; n != nil {
			return n.Description
		}
		if n := oldN[g]; n != nil {
			return n.Description
		}
		return ""
	}
	peerStr := func(e End) string {
		return fmt.Sprintf("0x%016x[%d] %s", e.GUID, e.Port, name(e.GUID))
	}
	for g, n := range oldN {
		if newN[g] == nil {
			cs = append(cs, Change{Kind: NodeRemoved, GUID: g, Name: n.Description, Old: n.Type.String()})
		}
	}
	for g, n := range newN {
		o := oldN[g]
		if o == nil {
			cs = append(cs, Change{Kind: NodeAdded, GUID: g, Name: n.Description, New: n.Type.String()})
			continue
		}
		if o.Description != n.Description {
			cs = append(cs, Change{Kind: DescChanged, GUID: g, Name: n.Description, Old: fmt.Sprintf("%q", o.Description), New: fmt.Sprintf("%q", n.Description)})
		}
		for i := 0; i < len(n.Ports) || i < len(o.Ports); i++ {
			ol, nl := lidAt(o, i), lidAt(n, i)
			if ol != nl {
				cs = append(cs, Change{Kind: LIDChanged, GUID: g, Port: uint8(i), Name: n.Description,
					Old: fmt.Sprintf("lid %d", ol), New: fmt.Sprintf("lid %d", nl)})
			}
		}
	}

	oldL, newL := linkMap(old, oldN), linkMap(new, newN)
	var removed, added []linkKey
	for k, l := range newL {
		if ol, ok := oldL[k]; ok {
			if a, b := linkRate(ol), linkRate(l); a != b {
				cs = append(cs, Change{Kind: RateChanged, GUID: k.a.GUID, Port: k.a.Port, Name: name(k.a.GUID),
					Old: a, New: b, OldPeer: k.b, NewPeer: k.b})
			}
			continue
		}
		added = append(added, k)
	}
	for k := range oldL {
		if _, ok := newL[k]; !ok {
			removed = append(removed, k)
		}
	}
	sortKeys := func(s []linkKey) {
		slices.SortFunc(s, func(x, y linkKey) int {
			return cmp.Or(cmp.Compare(x.a.GUID, y.a.GUID), cmp.Compare(x.a.Port, y.a.Port),
				cmp.Compare(x.b.GUID, y.b.GUID), cmp.Compare(x.b.Port, y.b.Port))
		})
	}
	sortKeys(removed)
	sortKeys(added)
	// Moves: first pairs sharing an end (the cable stayed plugged in on
	// one side), then pairs joining the same two nodes.
	usedR, usedA := make([]bool, len(removed)), make([]bool, len(added))
	move := func(r, a linkKey, fixed End) {
		was, now := r.other(fixed), a.other(fixed)
		cs = append(cs, Change{Kind: LinkMoved, GUID: fixed.GUID, Port: fixed.Port, Name: name(fixed.GUID),
			Old: peerStr(was), New: peerStr(now), OldPeer: was, NewPeer: now})
	}
	for i, r := range removed {
		for j, a := range added {
			if usedA[j] {
				continue
			}
			var fixed End
			switch {
			case a.has(r.a) && a.other(r.a) != r.b:
				fixed = r.a
			case a.has(r.b) && a.other(r.b) != r.a:
				fixed = r.b
			default:
				continue
			}
			usedR[i], usedA[j] = true, true
			move(r, a, fixed)
			break
		}
	}
	for i, r := range removed {
		if usedR[i] {
			continue
		}
		for j, a := range added {
			if usedA[j] || a.a.GUID != r.a.GUID || a.b.GUID != r.b.GUID {
				continue
			}
			usedR[i], usedA[j] = true, true
			cs = append(cs, Change{Kind: LinkMoved, GUID: r.a.GUID, Port: r.a.Port, Name: name(r.a.GUID),
				Old: fmt.Sprintf("[%d] - %s", r.a.Port, peerStr(r.b)), New: fmt.Sprintf("[%d] - %s", a.a.Port, peerStr(a.b)),
				OldPeer: r.b, NewPeer: a.b})
			break
		}
	}
	for i, r := range removed {
		if !usedR[i] {
			cs = append(cs, Change{Kind: LinkRemoved, GUID: r.a.GUID, Port: r.a.Port, Name: name(r.a.GUID), Old: peerStr(r.b), OldPeer: r.b})
		}
	}
	for j, a := range added {
		if !usedA[j] {
			cs = append(cs, Change{Kind: LinkAdded, GUID: a.a.GUID, Port: a.a.Port, Name: name(a.a.GUID), New: peerStr(a.b), NewPeer: a.b})
		}
	}
	slices.SortFunc(cs, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.GUID, y.GUID), cmp.Compare(x.Port, y.Port),
			cmp.Compare(x.Old, y.Old), cmp.Compare(x.New, y.New))
	})
	return cs
}

func nodeMap(f *Fabric) map[uint64]*Node {
	m := make(map[uint64]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		if _, dup := m[n.GUID]; !dup {
			m[n.GUID] = n
		}
	}
	return m
}

// linkMap keys f's links by GUID/port, keeping links between the nodes
// nodeMap chose.
func linkMap(f *Fabric, nodes map[uint64]*Node) map[linkKey]Link {
	m := make(map[linkKey]Link)
	for _, l := range f.Links() {
		if nodes[l.A.Node.GUID] != l.A.Node || nodes[l.B.Node.GUID] != l.B.Node {
			continue
		}
		m[keyOf(l)] = l
	}
	return m
}

// lidAt is the LID Diff compares for port i: a switch's port 0 only,
// every port of CAs and routers.
func lidAt(n *Node, i int) uint16 {
	if i >= len(n.Ports) || n.Ports[i] == nil {
		return 0
	}
	if n.Type == mad.NodeSwitch && i != 0 {
		return 0
	}
	return n.Ports[i].LID
}
