package checks

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Baseline is the expected topology the checks compare a fabric against
// (topology.changed and .miswired, link.down, link.polling, loopback,
// missing-hca), reduced to what they read of it: each node's GUID, type,
// description and LID, and its cables. A sweep's accepted baseline
// decoded whole is a *fabric.Fabric several times this size (every
// port's PortInfo, every node's path), which a later sweep held beside
// the fabric it read (issue 13): it keeps this instead, packed in a few
// slices (the figures in docs/architecture.md).
type Baseline struct {
	// Accepted says the operator accepted this fabric as it is built
	// (`ibdoctor baseline accept`): what it lacks is then as built, as in
	// a designed topology (Snapshot.BaselineDesigned). False for a
	// baseline a first sweep took by itself, which may have taken a fault
	// in, and for a gate's own sweep's part.
	Accepted bool
	// Node i is the fabric's Nodes[i] for i < in; after them come the
	// nodes outside Nodes that its cables reach (a gate's part of the
	// baseline cables its switches to switches left out).
	in   int
	guid []uint64
	typ  []mad.NodeType
	// lid is the first of the node's ports' LIDs that is not 0 (what a
	// finding naming the node gives, nodeEntity).
	lid []uint16
	// desc holds every description, node i's ending at descEnd[i].
	desc    string
	descEnd []uint32
	// byGUID is nodes 0..in-1 by GUID, ties in fabric order
	// (NodeByGUID answers the first).
	byGUID []int32
	// Node i's cabled ports are k in first[i]..first[i+1]-1, in the
	// order of its Ports: at its index in Ports (portOf's), peer the far
	// end's node and peerNum its port number.
	first   []int32
	at      []uint16
	peer    []int32
	peerNum []uint8
	// links are the fabric's Links() when their order is not the one
	// allLinks derives from the cables (a fabric whose links are not all
	// well formed); nil otherwise.
	links []baseLink
	// descs: the descriptions of nodes 0..in-1, made on the first
	// hasDesc (checks run concurrently).
	descsOnce sync.Once
	descs     map[string]bool
}

// baseEnd is one end of a baseline link.
type baseEnd struct {
	node int32
	num  uint8
}

// baseLink is a baseline link, A end first as fabric.Links has it.
type baseLink struct{ a, b baseEnd }

// BaselineOf reduces f to what the checks compare against; nil for nil.
// The Baseline holds nothing of f: f can be let go of.
func BaselineOf(f *fabric.Fabric) *Baseline {
	if f == nil {
		return nil
	}
	b := &Baseline{in: len(f.Nodes)}
	at := make(map[*fabric.Node]int32, len(f.Nodes))
	ptrs := slices.Clone(f.Nodes) // a node listed twice is two nodes, as in f.Nodes
	for i, n := range f.Nodes {
		if _, ok := at[n]; !ok {
			at[n] = int32(i)
		}
	}
	add := func(n *fabric.Node) int32 {
		if i, ok := at[n]; ok {
			return i
		}
		i := int32(len(ptrs))
		at[n] = i
		ptrs = append(ptrs, n)
		return i
	}
	ls := f.Links()
	links := make([]baseLink, len(ls))
	for i, l := range ls {
		links[i] = baseLink{a: baseEnd{add(l.A.Node), l.A.Num}, b: baseEnd{add(l.B.Node), l.B.Num}}
	}
	ls = nil
	// Nodes are added while their ports are walked: a node outside f
	// reached by a cable has its own cables.
	cabled := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node != nil {
				cabled++
			}
		}
	}
	b.first = make([]int32, 0, len(ptrs)+1)
	b.at = make([]uint16, 0, cabled)
	b.peer = make([]int32, 0, cabled)
	b.peerNum = make([]uint8, 0, cabled)
	for i := 0; i < len(ptrs); i++ {
		b.first = append(b.first, int32(len(b.at)))
		for j, p := range ptrs[i].Ports {
			if p != nil && p.Remote != nil && p.Remote.Node != nil {
				b.at = append(b.at, uint16(j))
				b.peer = append(b.peer, add(p.Remote.Node))
				b.peerNum = append(b.peerNum, p.Remote.Num)
			}
		}
	}
	b.first = append(b.first, int32(len(b.at)))
	size := 0
	for _, n := range ptrs {
		size += len(n.Description)
	}
	var desc strings.Builder
	desc.Grow(size)
	b.guid = make([]uint64, len(ptrs))
	b.typ = make([]mad.NodeType, len(ptrs))
	b.lid = make([]uint16, len(ptrs))
	b.descEnd = make([]uint32, len(ptrs))
	for i, n := range ptrs {
		b.guid[i], b.typ[i] = n.GUID, n.Type
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 {
				b.lid[i] = p.LID
				break
			}
		}
		desc.WriteString(n.Description)
		b.descEnd[i] = uint32(desc.Len())
	}
	b.desc = desc.String()
	b.indexGUIDs()
	// A well-formed fabric's links are its cables' A ends in GUID
	// order: kept only when they are not.
	b.links = links
	k := 0
	for l := range b.derivedLinks() {
		if k >= len(links) || l != links[k] {
			k = -1
			break
		}
		k++
	}
	if k == len(links) {
		b.links = nil
	}
	return b
}

// indexGUIDs makes byGUID.
func (b *Baseline) indexGUIDs() {
	b.byGUID = make([]int32, b.in)
	for i := range b.byGUID {
		b.byGUID[i] = int32(i)
	}
	slices.SortStableFunc(b.byGUID, func(x, y int32) int { return cmp.Compare(b.guid[x], b.guid[y]) })
}

// derivedLinks are the links of a fabric whose links are well formed, in
// fabric.Links' order: nodes by GUID, each node's cables in port order,
// a link at its A end (the lower GUID, or on one node the lower port).
func (b *Baseline) derivedLinks() iter.Seq[baseLink] {
	return func(yield func(baseLink) bool) {
		for _, i := range b.byGUID {
			for k := b.first[i]; k < b.first[i+1]; k++ {
				j, num, pn := b.peer[k], uint8(b.at[k]), b.peerNum[k]
				if b.guid[i] < b.guid[j] || (b.guid[i] == b.guid[j] && num < pn) {
					if !yield(baseLink{a: baseEnd{i, num}, b: baseEnd{j, pn}}) {
						return
					}
				}
			}
		}
	}
}

// allLinks are the expected topology's links, in fabric.Links' order.
func (b *Baseline) allLinks() iter.Seq[baseLink] {
	if b.links == nil {
		return b.derivedLinks()
	}
	return slices.Values(b.links)
}

// Nodes is the number of the expected topology's nodes.
func (b *Baseline) Nodes() int { return b.in }

// nodeByGUID returns the first of the expected topology's nodes with
// this GUID (fabric.NodeByGUID's).
func (b *Baseline) nodeByGUID(guid uint64) (int32, bool) {
	j, ok := slices.BinarySearchFunc(b.byGUID, guid, func(i int32, g uint64) int { return cmp.Compare(b.guid[i], g) })
	if !ok {
		return -1, false
	}
	return b.byGUID[j], true
}

// has reports whether the expected topology has a node with this GUID.
func (b *Baseline) has(guid uint64) bool {
	_, ok := b.nodeByGUID(guid)
	return ok
}

// Has reports whether the expected topology has a node with this GUID:
// whether a plan holds the reader's own port (snapshot.PlanOfAnotherFabric).
func (b *Baseline) Has(guid uint64) bool { return b.has(guid) }

// hasDesc reports whether the expected topology has a node (of its
// fabric's) with this description.
func (b *Baseline) hasDesc(desc string) bool {
	b.descsOnce.Do(func() {
		b.descs = make(map[string]bool, b.in)
		for i := range b.in {
			b.descs[b.descOf(int32(i))] = true
		}
	})
	return b.descs[desc]
}

// descOf is node i's description.
func (b *Baseline) descOf(i int32) string {
	from := uint32(0)
	if i > 0 {
		from = b.descEnd[i-1]
	}
	return b.desc[from:b.descEnd[i]]
}

// cables yields node i's cabled ports' far ends (node, port number), in
// the order of its Ports.
func (b *Baseline) cables(i int32) iter.Seq2[int32, uint8] {
	return func(yield func(int32, uint8) bool) {
		for k := b.first[i]; k < b.first[i+1]; k++ {
			if !yield(b.peer[k], b.peerNum[k]) {
				return
			}
		}
	}
}

// peerAt returns the far end of node i's port num (portOf(n, num).Remote);
// false when that port has no cable.
func (b *Baseline) peerAt(i int32, num uint8) (baseEnd, bool) {
	lo, hi := b.first[i], b.first[i+1]
	j, ok := slices.BinarySearch(b.at[lo:hi], uint16(num))
	if !ok {
		return baseEnd{}, false
	}
	return baseEnd{b.peer[lo+int32(j)], b.peerNum[lo+int32(j)]}, true
}

// baseName names an expected topology's node in findings, as nodeName
// names a node of the fabric.
func (s *Snapshot) baseName(i int32) string {
	return s.Fabric.NameFor(s.Baseline.guid[i], s.Baseline.descOf(i))
}

// baseEntity is nodeEntity for an expected topology's node.
func (s *Snapshot) baseEntity(i int32, role string) Entity {
	return Entity{NodeGUID: s.Baseline.guid[i], Node: s.baseName(i), LID: s.Baseline.lid[i], Role: role}
}

// BaselineColumns is a Baseline as plain columns, for a state file to
// keep it (a later sweep then reads it instead of decoding the whole
// accepted fabric, issue 13) and give it back through NewBaseline. Node i
// has GUID[i], Type[i], LID[i] and the description ending at DescEnd[i]
// in Desc; nodes In and on are outside the fabric's Nodes, reached by
// its cables. Node i's cabled ports are k in First[i]..First[i+1]-1:
// At[k] is the port's index in the node's Ports, Peer[k] and PeerNum[k]
// its far end. LinkNode and LinkNum hold the links (A end, then B end)
// when KeptLinks says they are not the ones derived from the cables.
// Columns shares them with the Baseline: read only.
type BaselineColumns struct {
	In        int
	GUID      []uint64
	Type      []mad.NodeType
	LID       []uint16
	Desc      string
	DescEnd   []uint32
	First     []int32
	At        []uint16
	Peer      []int32
	PeerNum   []uint8
	KeptLinks bool
	LinkNode  []int32
	LinkNum   []uint8
}

// Columns gives b's columns (Accepted aside: whoever keeps them keeps
// that mark).
func (b *Baseline) Columns() BaselineColumns {
	c := BaselineColumns{
		In: b.in, GUID: b.guid, Type: b.typ, LID: b.lid, Desc: b.desc, DescEnd: b.descEnd,
		First: b.first, At: b.at, Peer: b.peer, PeerNum: b.peerNum, KeptLinks: b.links != nil,
	}
	if b.links != nil {
		c.LinkNode = make([]int32, 0, 2*len(b.links))
		c.LinkNum = make([]uint8, 0, 2*len(b.links))
		for _, l := range b.links {
			c.LinkNode = append(c.LinkNode, l.a.node, l.b.node)
			c.LinkNum = append(c.LinkNum, l.a.num, l.b.num)
		}
	}
	return c
}

// NewBaseline makes the Baseline whose columns c are (Columns' inverse),
// keeping c's slices. Columns that do not hold together (read from a
// damaged file) are an error, never a Baseline that would panic a check
// or answer for nodes that are not there.
func NewBaseline(c BaselineColumns) (*Baseline, error) {
	n := len(c.GUID)
	switch {
	case n >= 1<<31-1:
		return nil, fmt.Errorf("baseline columns: %d nodes", n)
	case len(c.Type) != n || len(c.LID) != n || len(c.DescEnd) != n || len(c.First) != n+1:
		return nil, fmt.Errorf("baseline columns: %d GUIDs, %d types, %d LIDs, %d descriptions, %d cable starts", n, len(c.Type), len(c.LID), len(c.DescEnd), len(c.First))
	case c.In < 0 || c.In > n:
		return nil, fmt.Errorf("baseline columns: %d of %d nodes in the fabric", c.In, n)
	case len(c.Peer) != len(c.At) || len(c.PeerNum) != len(c.At):
		return nil, fmt.Errorf("baseline columns: %d cabled ports, %d far nodes, %d far ports", len(c.At), len(c.Peer), len(c.PeerNum))
	case len(c.LinkNode) != len(c.LinkNum) || len(c.LinkNode)%2 != 0 || (!c.KeptLinks && len(c.LinkNode) != 0):
		return nil, fmt.Errorf("baseline columns: %d link nodes, %d link ports", len(c.LinkNode), len(c.LinkNum))
	case c.First[0] != 0 || int(c.First[n]) != len(c.At):
		return nil, fmt.Errorf("baseline columns: cables %d..%d of %d", c.First[0], c.First[n], len(c.At))
	}
	end := uint32(0)
	for i, e := range c.DescEnd {
		if e < end {
			return nil, fmt.Errorf("baseline columns: node %d's description ends at %d, before %d", i, e, end)
		}
		end = e
	}
	if int(end) != len(c.Desc) {
		return nil, fmt.Errorf("baseline columns: descriptions end at %d of %d bytes", end, len(c.Desc))
	}
	for i := range n {
		lo, hi := c.First[i], c.First[i+1]
		if hi < lo {
			return nil, fmt.Errorf("baseline columns: node %d's cables %d..%d", i, lo, hi)
		}
		for k := lo; k < hi; k++ {
			// In port order, each port once (peerAt searches them), a
			// port number a byte holds (derivedLinks' A end).
			if c.At[k] > 0xff || (k > lo && c.At[k] <= c.At[k-1]) {
				return nil, fmt.Errorf("baseline columns: node %d's cabled port %d out of order", i, c.At[k])
			}
			if c.Peer[k] < 0 || int(c.Peer[k]) >= n {
				return nil, fmt.Errorf("baseline columns: node %d's cable to node %d of %d", i, c.Peer[k], n)
			}
		}
	}
	b := &Baseline{
		in: c.In, guid: c.GUID, typ: c.Type, lid: c.LID, desc: c.Desc, descEnd: c.DescEnd,
		first: c.First, at: c.At, peer: c.Peer, peerNum: c.PeerNum,
	}
	if c.KeptLinks {
		b.links = make([]baseLink, len(c.LinkNode)/2)
		for i := range b.links {
			a, z := c.LinkNode[2*i], c.LinkNode[2*i+1]
			if a < 0 || int(a) >= n || z < 0 || int(z) >= n {
				return nil, fmt.Errorf("baseline columns: link %d between nodes %d and %d of %d", i, a, z, n)
			}
			b.links[i] = baseLink{a: baseEnd{a, c.LinkNum[2*i]}, b: baseEnd{z, c.LinkNum[2*i+1]}}
		}
	}
	b.indexGUIDs()
	return b, nil
}
