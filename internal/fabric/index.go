package fabric

import (
	"cmp"
	"slices"

	"github.com/ibdoctor/ibdoctor/mad"
)

type index struct {
	byGUID map[uint64]*Node
	byLID  map[uint16]*Port
	byName map[string][]*Node
}

func (f *Fabric) index() *index {
	if f.idx != nil {
		return f.idx
	}
	x := &index{
		byGUID: make(map[uint64]*Node, len(f.Nodes)),
		byLID:  make(map[uint16]*Port, len(f.Nodes)),
		byName: make(map[string][]*Node, len(f.Nodes)),
	}
	for _, n := range f.Nodes {
		if _, dup := x.byGUID[n.GUID]; !dup {
			x.byGUID[n.GUID] = n
		}
		x.byName[n.Description] = append(x.byName[n.Description], n)
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			// A switch's LID belongs to port 0; a CA's to each port.
			if n.Type == mad.NodeSwitch && p.Num != 0 {
				continue
			}
			lmc := uint16(1) << p.LMC
			for l := p.LID; l < p.LID+lmc && l >= p.LID; l++ {
				x.byLID[l] = p
			}
		}
	}
	f.idx = x
	return x
}

// Reindex drops the lookup indexes; call it after changing Nodes.
func (f *Fabric) Reindex() { f.idx = nil }

// NodeByGUID returns the node with the given NodeGUID (the first one when
// the GUID is duplicated), or nil.
func (f *Fabric) NodeByGUID(guid uint64) *Node { return f.index().byGUID[guid] }

// PortByLID returns the port that owns lid (switch port 0 for a switch's
// LID; LMC ranges included), or nil.
func (f *Fabric) PortByLID(lid uint16) *Port { return f.index().byLID[lid] }

// NodesByName returns the nodes whose description is exactly name.
func (f *Fabric) NodesByName(name string) []*Node { return f.index().byName[name] }

// Links returns every link once, in canonical order (by the A end's node
// GUID and port number).
func (f *Fabric) Links() []Link {
	var links []Link
	seen := make(map[*Port]bool)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || seen[p] {
				continue
			}
			seen[p], seen[p.Remote] = true, true
			a, b := p, p.Remote
			if b.Node.GUID < a.Node.GUID || (b.Node.GUID == a.Node.GUID && b.Num < a.Num) {
				a, b = b, a
			}
			links = append(links, Link{A: a, B: b})
		}
	}
	slices.SortStableFunc(links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.A.Node.GUID, b.A.Node.GUID), cmp.Compare(a.A.Num, b.A.Num))
	})
	return links
}
