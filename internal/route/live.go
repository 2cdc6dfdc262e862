package route

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// LiveOptions tune TraceLive.
type LiveOptions struct {
	// Fabric, if set, is a discovered fabric: the source is reached by its
	// discovery Path and known nodes keep their *fabric.Node in the
	// result. Nil: nothing is known beforehand, and the source is found
	// by following the switches' LFTs from the local port towards it.
	Fabric *fabric.Fabric
}

// LiveTrace is a route followed on the live fabric.
type LiveTrace struct {
	Trace
	// Fabric holds the nodes the walk read (those of LiveOptions.Fabric
	// where it was given), so that Trace.Links and PortByLID work on it.
	Fabric *fabric.Fabric
	// SMPs is how many SMPs the walk sent (first attempts).
	SMPs int
	// LFTReads lists the switches whose LFT was read, in order: only the
	// switches the route (and the way to the source) crossed.
	LFTReads []*fabric.Node
}

// TraceLive follows the route from LID from to LID to on the live fabric,
// hop by hop over directed routes the way ibtracert does: at each switch
// it reads SwitchInfo and the one LinearForwardingTable block that holds
// to, and the PortInfo of the egress port, then reads NodeInfo through
// that port to learn the next node. Only switches on the route are read,
// so a trace costs a few SMPs per hop whatever the fabric's size.
//
// Outcomes match TraceRoute's over the same tables, except that a
// destination above a switch's LinearFDBTop is NoRoute (the switch drops
// it) rather than NoTable. An error means the walk itself failed: the
// source could not be found, or a node on the way did not answer.
func TraceLive(ctx context.Context, g SMPGetter, from, to uint16, o LiveOptions) (lt LiveTrace, err error) {
	w := &walker{g: g, ctx: ctx, known: o.Fabric, byGUID: map[uint64]*fabric.Node{}, f: &fabric.Fabric{}}
	lt.Trace = Trace{From: from, To: to}
	defer func() {
		lt.Fabric, lt.SMPs, lt.LFTReads = w.f, w.smps, w.lftReads
		w.f.Reindex()
	}()
	src, err := w.findSource(from)
	if err != nil {
		return lt, err
	}
	t := &lt.Trace
	var sw *visit
	var in uint8
	if src.node.Type == mad.NodeSwitch {
		sw = src
	} else {
		p := src.port
		if ownsLID(p, to) {
			t.Outcome, t.End = Delivered, p
			return lt, nil
		}
		if !Passes(p) || p.PhysState != mad.PhysLinkUp {
			t.Outcome, t.End = SourceDown, p
			return lt, nil
		}
		next, err := w.upstream(src)
		if err != nil {
			return lt, err
		}
		link(p, next.port)
		if next.node.Type != mad.NodeSwitch {
			// Two CAs cabled back to back: no switch to route.
			if ownsLID(next.port, to) {
				t.Outcome, t.End = Delivered, next.port
			} else {
				t.Outcome, t.End = Misdelivered, next.port
			}
			return lt, nil
		}
		sw, in = next, next.port.Num
	}
	seen := map[*fabric.Node]bool{}
	for {
		if seen[sw.node] {
			t.Hops = append(t.Hops, Hop{Switch: sw.node, In: in})
			t.Outcome = Loop
			return lt, nil
		}
		seen[sw.node] = true
		out, noTable, err := w.lookup(sw, to)
		if err != nil {
			return lt, err
		}
		t.Hops = append(t.Hops, Hop{Switch: sw.node, In: in, Out: out})
		switch {
		case noTable:
			t.Outcome = NoRoute
			return lt, nil
		case out == 0:
			if ownsLID(sw.node.Ports[0], to) {
				t.Outcome, t.End = Delivered, sw.node.Ports[0]
			} else {
				t.Outcome = NoRoute
			}
			return lt, nil
		case int(out) > sw.node.NumPorts():
			t.Outcome = NoRoute
			return lt, nil
		}
		ep, err := w.port(sw, out)
		if err != nil {
			return lt, err
		}
		if !Passes(ep) || ep.PhysState != mad.PhysLinkUp {
			t.Outcome, t.End = DeadEnd, ep
			return lt, nil
		}
		next, err := w.visit(sw.path.Extend(out))
		if err != nil {
			return lt, err
		}
		link(ep, next.port)
		if next.node.Type == mad.NodeSwitch {
			sw, in = next, next.port.Num
			continue
		}
		if ownsLID(next.port, to) {
			t.Outcome, t.End = Delivered, next.port
		} else {
			t.Outcome, t.End = Misdelivered, next.port
		}
		return lt, nil
	}
}

// ownsLID reports whether LID lid is p's (within its LMC range).
func ownsLID(p *fabric.Port, lid uint16) bool {
	return p != nil && p.LID != 0 && lid >= p.LID && int(lid) < int(p.LID)+1<<p.LMC
}

func link(a, b *fabric.Port) {
	if a != nil && b != nil {
		a.Remote, b.Remote = b, a
	}
}

// visit is a node reached at a directed route, entered through port.
type visit struct {
	path mad.Path
	node *fabric.Node
	port *fabric.Port // the port the walk entered by (switch: port 0's LID is read too)
	// entry is the port number the directed route entered the node by.
	entry uint8
	si    *mad.SwitchInfo
}

type walker struct {
	g        SMPGetter
	ctx      context.Context
	known    *fabric.Fabric
	f        *fabric.Fabric
	byGUID   map[uint64]*fabric.Node
	smps     int
	lftReads []*fabric.Node
}

func (w *walker) get(path mad.Path, a mad.Attribute, mod uint32) error {
	w.smps++
	_, err := w.g.GetSMP(w.ctx, path, a, mod)
	return err
}

// WalkError is a node on the way that did not answer.
type WalkError struct {
	Path mad.Path
	// GUID is the node read at Path, when its NodeInfo answered (0 else).
	GUID uint64
	What string
	Err  error
}

func (e *WalkError) Error() string {
	return fmt.Sprintf("route: reading %s at directed route %v: %v", e.What, e.Path, e.Err)
}

func (e *WalkError) Unwrap() error { return e.Err }

// visit reads the node at path: NodeInfo, and for a node not seen before
// its NodeDescription; the PortInfo of the port entered by (port 0 for a
// switch, whose LID lives there).
func (w *walker) visit(path mad.Path) (*visit, error) {
	var ni mad.NodeInfo
	if err := w.get(path, &ni, 0); err != nil {
		return nil, &WalkError{Path: path, What: "NodeInfo", Err: err}
	}
	n := w.byGUID[ni.NodeGUID]
	if n == nil {
		if w.known != nil {
			if k := w.known.NodeByGUID(ni.NodeGUID); k != nil && k.NumPorts() == int(ni.NumPorts) && k.Type == ni.NodeType {
				n = k
			}
		}
		if n == nil {
			n = &fabric.Node{
				Type: ni.NodeType, GUID: ni.NodeGUID, SystemImageGUID: ni.SystemImageGUID,
				VendorID: ni.VendorID, DeviceID: ni.DeviceID, Revision: ni.Revision,
				Ports: make([]*fabric.Port, int(ni.NumPorts)+1), Path: path,
			}
			var nd mad.NodeDescription
			if err := w.get(path, &nd, 0); err != nil {
				return nil, &WalkError{Path: path, What: "NodeDescription", Err: err}
			}
			n.Description = nd.Text
		}
		w.byGUID[ni.NodeGUID] = n
		w.f.Nodes = append(w.f.Nodes, n)
	}
	num := ni.LocalPortNum
	v := &visit{path: path, node: n, entry: num}
	if n.Type == mad.NodeSwitch {
		// The LID is port 0's; the entry port's number is enough here.
		if _, err := w.portAt(path, n, 0); err != nil {
			return nil, err
		}
		v.port = w.portOf(n, num, ni.PortGUID)
		return v, nil
	}
	p, err := w.portAt(path, n, num)
	if err != nil {
		return nil, err
	}
	if p.GUID == 0 {
		p.GUID = ni.PortGUID
	}
	v.port = p
	return v, nil
}

// portOf returns n's port num, creating it if needed (without reading it).
func (w *walker) portOf(n *fabric.Node, num uint8, guid uint64) *fabric.Port {
	if int(num) >= len(n.Ports) {
		return nil
	}
	p := n.Ports[num]
	if p == nil {
		p = &fabric.Port{Node: n, Num: num, GUID: guid}
		n.Ports[num] = p
	}
	return p
}

// portAt reads PortInfo of n's port num (at path) into the model.
func (w *walker) portAt(path mad.Path, n *fabric.Node, num uint8) (*fabric.Port, error) {
	var pi mad.PortInfo
	if err := w.get(path, &pi, uint32(num)); err != nil {
		return nil, &WalkError{Path: path, What: fmt.Sprintf("PortInfo %d", num), Err: err}
	}
	guid := uint64(0)
	if n.Type == mad.NodeSwitch {
		guid = n.GUID
	}
	p := w.portOf(n, num, guid)
	if p == nil {
		return nil, &WalkError{Path: path, What: fmt.Sprintf("PortInfo %d", num), Err: fmt.Errorf("node has only %d ports", n.NumPorts())}
	}
	p.State, p.PhysState = pi.PortState, pi.PhysState
	if n.Type != mad.NodeSwitch || num == 0 {
		p.LID, p.LMC = pi.LID, pi.LMC
	}
	return p, nil
}

// port reads the PortInfo of switch port num.
func (w *walker) port(v *visit, num uint8) (*fabric.Port, error) {
	return w.portAt(v.path, v.node, num)
}

// lookup reads the switch's SwitchInfo (once) and the LFT block holding
// to, and returns the egress port; noTable when to is above the top.
func (w *walker) lookup(v *visit, to uint16) (out uint8, noTable bool, err error) {
	if v.si == nil {
		var si mad.SwitchInfo
		if err := w.get(v.path, &si, 0); err != nil {
			return 0, false, &WalkError{Path: v.path, What: "SwitchInfo", Err: err}
		}
		v.si = &si
		if v.node.Switch == nil {
			// kept for the trace's words: a LID past the top has no
			// entry at all (trial A16: "its entry is 255")
			v.node.Switch = &fabric.Switch{LinearFDBCap: si.LinearFDBCap, LinearFDBTop: si.LinearFDBTop}
		}
	}
	if to > v.si.LinearFDBTop {
		return fabric.NoRoute, true, nil
	}
	var blk mad.LFTBlock
	b := uint32(to) / mad.LFTBlockSize
	if err := w.get(v.path, &blk, b); err != nil {
		return 0, false, &WalkError{Path: v.path, GUID: v.node.GUID, What: fmt.Sprintf("LinearForwardingTable block %d", b), Err: err}
	}
	w.lftReads = append(w.lftReads, v.node)
	return blk.Ports[int(to)%mad.LFTBlockSize], false, nil
}

// ErrSourceNotFound means TraceLive could not reach the source LID.
var ErrSourceNotFound = errors.New("source LID not found")

// findSource returns the node owning LID from: at its discovery path when
// a fabric is known, else by following the LFTs from the local node.
func (w *walker) findSource(from uint16) (*visit, error) {
	if w.known != nil {
		if p := w.known.PortByLID(from); p != nil && p.Node.Path != nil {
			v, err := w.visit(p.Node.Path)
			if err != nil {
				return nil, err
			}
			if v.node.GUID != p.Node.GUID {
				return nil, fmt.Errorf("route: the node at directed route %v is now %#016x, not %q (%#016x) as discovered; rediscover", p.Node.Path, v.node.GUID, p.Node.Description, p.Node.GUID)
			}
			return w.atPort(v, p.Num, from)
		}
	}
	v, err := w.visit(mad.Path{})
	if err != nil {
		return nil, err
	}
	for hops := 0; hops <= mad.MaxHops; hops++ {
		if v.node.Type != mad.NodeSwitch {
			if ownsLID(v.port, from) {
				return v, nil
			}
			if hops > 0 {
				return nil, fmt.Errorf("route: %w: following the LFTs from the local port towards LID %d ends at %q (LID %d); give the source by name so that discovery finds it", ErrSourceNotFound, from, v.node.Description, v.port.LID)
			}
			if v.port.PhysState != mad.PhysLinkUp {
				return nil, fmt.Errorf("route: %w: the local port is not linked up", ErrSourceNotFound)
			}
			if v, err = w.visit(v.path.Extend(v.port.Num)); err != nil {
				return nil, err
			}
			continue
		}
		if ownsLID(v.node.Ports[0], from) {
			return v, nil
		}
		out, noTable, err := w.lookup(v, from)
		if err != nil {
			return nil, err
		}
		if noTable || out == 0 || int(out) > v.node.NumPorts() {
			return nil, fmt.Errorf("route: %w: switch %q has no route to LID %d (entry %d); give the source by name so that discovery finds it", ErrSourceNotFound, v.node.Description, from, out)
		}
		if v, err = w.visit(v.path.Extend(out)); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("route: %w: no node with LID %d within %d hops", ErrSourceNotFound, from, mad.MaxHops)
}

// atPort re-reads the PortInfo of the discovered source port num so that
// the walk starts from its live state.
func (w *walker) atPort(v *visit, num uint8, lid uint16) (*visit, error) {
	if v.node.Type == mad.NodeSwitch {
		return v, nil
	}
	if v.port != nil && v.port.Num == num {
		return v, nil
	}
	p, err := w.portAt(v.path, v.node, num)
	if err != nil {
		return nil, err
	}
	if !ownsLID(p, lid) {
		return nil, fmt.Errorf("route: port %d of %q now has LID %d, not %d; rediscover", num, v.node.Description, p.LID, lid)
	}
	// A CA's other port: its directed route is the same node but leaves
	// by that port.
	return &visit{path: v.path, node: v.node, port: p, entry: v.entry}, nil
}

// upstream returns the node cabled to the source CA port: one hop out of
// the local CA, or one hop back along the directed route by which a
// remote CA was reached (a directed route may not pass through a CA), or
// the discovered neighbour when the source is another port of the CA.
func (w *walker) upstream(src *visit) (*visit, error) {
	p := src.port
	switch {
	case len(src.path) == 0 && src.entry == p.Num:
		return w.visit(src.path.Extend(p.Num))
	case len(src.path) > 0 && src.entry == p.Num:
		sw, err := w.visit(src.path[:len(src.path)-1])
		if err != nil {
			return nil, err
		}
		in := src.path[len(src.path)-1]
		if sw.node.Type != mad.NodeSwitch {
			return nil, fmt.Errorf("route: the node before %q on directed route %v is not a switch", src.node.Description, src.path)
		}
		return &visit{path: sw.path, node: sw.node, port: w.portOf(sw.node, in, sw.node.GUID), si: sw.si}, nil
	}
	if r := p.Remote; r != nil && r.Node.Path != nil {
		v, err := w.visit(r.Node.Path)
		if err != nil {
			return nil, err
		}
		if v.node.GUID != r.Node.GUID {
			return nil, fmt.Errorf("route: the node at directed route %v is now %#016x, not %q as discovered; rediscover", r.Node.Path, v.node.GUID, r.Node.Description)
		}
		if v.node.Type == mad.NodeSwitch {
			v.port = w.portOf(v.node, r.Num, v.node.GUID)
		}
		return v, nil
	}
	return nil, fmt.Errorf("route: no directed route to the neighbour of port %d of %q; give the source by a LID of the port the fabric is reached through", p.Num, src.node.Description)
}
