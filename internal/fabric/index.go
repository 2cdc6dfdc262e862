package fabric

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ibdoctor/ibdoctor/mad"
)

// index holds the lookup maps, each built on its first use and on its
// own: a fabric that is only asked for nodes by GUID (a sweep's decoded
// baseline) does not pay for the maps by name, host, LID and port GUID.
// The checks look things up from several goroutines at once, so each map
// is built under its sync.Once.
type index struct {
	guidOnce, lidOnce, nameOnce, portGUIDOnce, hostOnce, sharedOnce sync.Once

	byGUID     map[uint64]*Node
	byLID      map[uint16]*Port
	byName     map[string][]*Node
	byPortGUID map[uint64]*Port
	byHost     map[string][]*Node // first word of the description
	shared     map[uint16][]*Port // LIDs owned by more than one port
	sharers    map[*Port][]*Port  // a port of shared, to its LID's other owners
}

// index returns f's lookup maps; the first caller makes the (empty) set,
// a concurrent one uses the set that won.
func (f *Fabric) index() *index {
	if x := f.idx.Load(); x != nil {
		return x
	}
	f.idx.CompareAndSwap(nil, &index{})
	return f.idx.Load()
}

func (f *Fabric) guidIndex() map[uint64]*Node {
	x := f.index()
	x.guidOnce.Do(func() {
		x.byGUID = make(map[uint64]*Node, len(f.Nodes))
		for _, n := range f.Nodes {
			if _, dup := x.byGUID[n.GUID]; !dup {
				x.byGUID[n.GUID] = n
			}
		}
	})
	return x.byGUID
}

func (f *Fabric) nameIndex() map[string][]*Node {
	x := f.index()
	x.nameOnce.Do(func() {
		x.byName = make(map[string][]*Node, len(f.Nodes))
		for _, n := range f.Nodes {
			x.byName[n.Description] = append(x.byName[n.Description], n)
		}
	})
	return x.byName
}

func (f *Fabric) hostIndex() map[string][]*Node {
	x := f.index()
	x.hostOnce.Do(func() {
		x.byHost = make(map[string][]*Node, len(f.Nodes))
		for _, n := range f.Nodes {
			if h := hostOf(n.Description); h != "" {
				h = HostKey(h)
				x.byHost[h] = append(x.byHost[h], n)
			}
		}
	})
	return x.byHost
}

func (f *Fabric) portGUIDIndex() map[uint64]*Port {
	x := f.index()
	x.portGUIDOnce.Do(func() {
		x.byPortGUID = make(map[uint64]*Port, len(f.Nodes))
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				// A switch's ports share its port GUID: index port 0.
				if p == nil || p.GUID == 0 || (n.Type == mad.NodeSwitch && p.Num != 0) {
					continue
				}
				if _, dup := x.byPortGUID[p.GUID]; !dup {
					x.byPortGUID[p.GUID] = p
				}
			}
		}
	})
	return x.byPortGUID
}

func (f *Fabric) lidIndex() map[uint16]*Port {
	x := f.index()
	x.lidOnce.Do(func() {
		x.byLID = make(map[uint16]*Port, len(f.Nodes))
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				// A switch's LID belongs to port 0; a CA's to each port.
				if p == nil || p.LID == 0 || (n.Type == mad.NodeSwitch && p.Num != 0) {
					continue
				}
				lmc := uint16(1) << p.LMC
				for l := p.LID; l < p.LID+lmc && l >= p.LID; l++ {
					x.byLID[l] = p
				}
			}
		}
	})
	return x.byLID
}

func (f *Fabric) sharedIndex() *index {
	x := f.index()
	x.sharedOnce.Do(func() {
		owners := make(map[uint16][]*Port, len(f.Nodes))
		for _, n := range f.Nodes {
			for i, p := range n.Ports {
				// A switch's LID belongs to port 0; a CA's to each port.
				if p == nil || p.LID == 0 || (n.Type == mad.NodeSwitch && i != 0) {
					continue
				}
				// A CA port read without a link (a dual-rail HCA's lost
				// rail) keeps the LID it had; nothing reaches it there,
				// so a subnet manager may have given the LID to another.
				if n.Type != mad.NodeSwitch && p.Remote == nil && p.StateKnown() && p.PhysState != 0 && p.PhysState != mad.PhysLinkUp {
					continue
				}
				for l := uint32(p.LID); l < uint32(p.LID)+1<<p.LMC && l < 0xc000; l++ {
					owners[uint16(l)] = append(owners[uint16(l)], p)
				}
			}
		}
		x.shared = map[uint16][]*Port{}
		x.sharers = map[*Port][]*Port{}
		for l, ps := range owners {
			if len(ps) < 2 {
				continue
			}
			x.shared[l] = ps
			for _, p := range ps {
				for _, o := range ps {
					if o != p && !slices.Contains(x.sharers[p], o) {
						x.sharers[p] = append(x.sharers[p], o)
					}
				}
			}
		}
	})
	return x
}

// SharedLIDs maps each unicast LID that more than one port owns (by its
// LID and LMC: a CA's or router's port, a switch's port 0) to its owners,
// in the fabric's order. The map is f's: do not change it.
func (f *Fabric) SharedLIDs() map[uint16][]*Port { return f.sharedIndex().shared }

// LIDShared says why a LID-routed read of p (for a switch, of its port 0)
// would not reach p: its LID is also another port's, so whichever owner
// the tables lead to answers, and its answer would be filed under p.
// Empty when p's LIDs are its own.
func (f *Fabric) LIDShared(p *Port) string {
	others := f.sharedIndex().sharers[p]
	if len(others) == 0 {
		return ""
	}
	names := make([]string, len(others))
	for i, o := range others {
		names[i] = o.Node.Description
		if o.Node.Type != mad.NodeSwitch {
			names[i] += fmt.Sprintf(" port %d", o.Num)
		}
	}
	slices.Sort(names)
	lid := p.LID
	for l := uint32(p.LID); l < uint32(p.LID)+1<<p.LMC && l < 0xc000; l++ {
		if _, ok := f.sharedIndex().shared[uint16(l)]; ok {
			lid = uint16(l)
			break
		}
	}
	return fmt.Sprintf("LID %d is shared with %s (addr.duplicate-lid): a read by LID would be answered by either", lid, strings.Join(names, ", "))
}

// Reindex drops the lookup indexes; call it after changing Nodes (with
// no lookup under way).
func (f *Fabric) Reindex() { f.idx.Store(nil) }

// NodeByGUID returns the node with the given NodeGUID (the first one when
// the GUID is duplicated), or nil.
func (f *Fabric) NodeByGUID(guid uint64) *Node { return f.guidIndex()[guid] }

// PortByLID returns the port that owns lid (switch port 0 for a switch's
// LID; LMC ranges included), or nil.
func (f *Fabric) PortByLID(lid uint16) *Port { return f.lidIndex()[lid] }

// NodesByName returns the nodes whose description is exactly name.
func (f *Fabric) NodesByName(name string) []*Node { return f.nameIndex()[name] }

// PortByGUID returns the port with the given PortGUID (a switch's port 0
// for a switch port GUID; the first one when duplicated), or nil.
func (f *Fabric) PortByGUID(guid uint64) *Port { return f.portGUIDIndex()[guid] }

// NodesByHost returns the nodes of a host: those whose description is
// host or starts with host and a space ("gpu042" finds "gpu042 mlx5_0"
// and "gpu042 mlx5_3", not "gpu0420 mlx5_0"; GPU042 too: HostKey), in
// fabric order.
func (f *Fabric) NodesByHost(host string) []*Node {
	host = strings.TrimSpace(host)
	if host == "" {
		return nil
	}
	if strings.ContainsAny(host, " \t") {
		return f.NodesByName(host)
	}
	return f.hostIndex()[HostKey(host)]
}

// hostOf is the host part of a CA description: the text before the
// first space ("gpu042 mlx5_3" → "gpu042"), the whole description when
// it has no space, as HostName names it.
func hostOf(desc string) string {
	h, _, _ := strings.Cut(strings.TrimSpace(desc), " ")
	return HostName(h)
}

// HostName is the host a description's first word names: its first
// label when it is a domain name ("gpu042.cluster.local" → "gpu042").
// rdma-ndd writes the FQDN or the short name depending on the hostname at
// the time, and Slurm names hosts short, so both must be one host. A
// dotted quad (an IP address as the name) is kept whole.
func HostName(word string) string {
	i := strings.IndexByte(word, '.')
	if i <= 0 || strings.Trim(word, "0123456789.") == "" {
		return word
	}
	return word[:i]
}

// HostKey is what host names are matched by: HostName in lower case.
// Host names are case-insensitive (DNS): a Slurm NodeName GPU001 is the
// gpu001 rdma-ndd wrote (trial F5). Only matching folds case; names are
// shown as the fabric has them.
func HostKey(word string) string { return strings.ToLower(HostName(word)) }

// Links returns every link once, in canonical order (by the A end's node
// GUID and port number).
func (f *Fabric) Links() []Link {
	n, order := f.linksInOrder()
	if order == nil {
		return f.linksSeen()
	}
	// Every link well formed: no map of the ports seen and no list grown
	// by append (at 49k nodes that was 25 MB of garbage per call).
	links := make([]Link, 0, n)
	for _, i := range order {
		for _, p := range f.Nodes[i].Ports {
			if isAEnd(p) {
				links = append(links, Link{A: p, B: p.Remote})
			}
		}
	}
	return links
}

// linksSeen is Links for any fabric: a link is kept from the first of its
// ends met, then sorted.
func (f *Fabric) linksSeen() []Link {
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

// linksInOrder says how many links f has, and the order of f's nodes by
// GUID, when every link is well formed: no two nodes with one GUID, and
// each cabled port at its number in its node's Ports, its node's, cabled
// to another port that is its Remote's Remote, at its number in its
// node's Ports, on a node of f. Then Links in order are each node's A ends
// (isAEnd), nodes in that order and ports by number, and no two have one
// sort key. order is nil for any other fabric.
func (f *Fabric) linksInOrder() (n int, order []int32) {
	if len(f.Nodes) > math.MaxInt32 {
		return 0, nil
	}
	order = make([]int32, len(f.Nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(f.Nodes[a].GUID, f.Nodes[b].GUID) })
	for i := 1; i < len(order); i++ {
		if f.Nodes[order[i]].GUID == f.Nodes[order[i-1]].GUID {
			return 0, nil
		}
	}
	// The GUIDs in order, side by side: a far end's node is searched for
	// once per cabled port, and a search through order read each
	// probe's GUID from its node, scattered over the heap.
	guids := make([]uint64, len(order))
	for k, i := range order {
		guids[k] = f.Nodes[i].GUID
	}
	inF := func(m *Node) bool {
		j, ok := slices.BinarySearch(guids, m.GUID)
		return ok && f.Nodes[order[j]] == m
	}
	for _, nd := range f.Nodes {
		for i, p := range nd.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			q := p.Remote
			if int(p.Num) != i || p.Node != nd || q == p || q.Remote != p || q.Node == nil ||
				int(q.Num) >= len(q.Node.Ports) || q.Node.Ports[q.Num] != q || !inF(q.Node) {
				return 0, nil
			}
			if isAEnd(p) {
				n++
			}
		}
	}
	return n, order
}

// isAEnd says p is the end of its link that Links puts first: the lower
// node GUID, or on one node the lower port number (for a well-formed
// link, linksInOrder).
func isAEnd(p *Port) bool {
	if p == nil || p.Remote == nil {
		return false
	}
	q := p.Remote
	return p.Node.GUID < q.Node.GUID || (p.Node.GUID == q.Node.GUID && p.Num < q.Num)
}

// NameOf names n for people: its description when no other node of f
// (another GUID) has the same one, else the description and its GUID ("Quantum-2
// Mellanox Technologies (0xb0cf0e0300d33fc0)"); the GUID alone when the
// description is empty. Findings and listings use it so that two names
// never mean one node or one name two nodes.
func (f *Fabric) NameOf(n *Node) string { return f.NameFor(n.GUID, n.Description) }

// NameFor is NameOf for a node of another fabric known by its GUID and
// description (an expected topology's).
func (f *Fabric) NameFor(guid uint64, desc string) string {
	if desc == "" {
		return fmt.Sprintf("0x%016x", guid)
	}
	if f != nil {
		for _, o := range f.NodesByName(desc) {
			if o.GUID != guid {
				return fmt.Sprintf("%s (0x%016x)", desc, guid)
			}
		}
	}
	return desc
}

// NodesNamed returns the nodes a name as NameOf prints it names: the
// nodes described exactly so, else, for "DESC (0xGUID)", the node with
// that GUID when its description is DESC. Commands take back every name
// they print (trial C8: "X (0xGUID)" was refused where X is shared).
func (f *Fabric) NodesNamed(name string) []*Node {
	if ns := f.NodesByName(name); len(ns) > 0 {
		return ns
	}
	if desc, guid, ok := SplitNamed(name); ok {
		if n := f.NodeByGUID(guid); n != nil && n.Description == desc {
			return []*Node{n}
		}
	}
	return nil
}

// SplitNamed reads name as NameOf writes a shared description: "DESC
// (0xGUID)", the GUID in hex after 0x.
func SplitNamed(name string) (desc string, guid uint64, ok bool) {
	rest, found := strings.CutSuffix(name, ")")
	i := strings.LastIndex(rest, " (0x")
	if !found || i <= 0 {
		return "", 0, false
	}
	g, err := strconv.ParseUint(rest[i+4:], 16, 64)
	if err != nil {
		return "", 0, false
	}
	return rest[:i], g, true
}
