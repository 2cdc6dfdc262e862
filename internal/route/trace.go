// Package route reads switches' linear forwarding tables from a live
// fabric and follows them: one route from a source LID to a destination
// LID, every route among a set of hosts at once (per-destination trees,
// never pair by pair), and how many destinations and host-to-host paths
// each switch egress port carries. The ECMP-imbalance, asymmetric-route,
// black-hole and loop checks read its answers.
package route

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Outcome is how a route ends.
type Outcome uint8

// Route outcomes.
const (
	// Delivered: the route reaches the port that owns the destination LID.
	Delivered Outcome = iota
	// NoRoute: a switch's LFT entry is 0xFF (or any port it does not
	// have, or port 0 for a LID that is not its own): a black hole.
	NoRoute
	// DeadEnd: the LFT sends the packet out of a port that is Down,
	// in Init or Armed (up but not activated, Passes), or has no cable.
	DeadEnd
	// Loop: the route comes back to a switch it already crossed.
	Loop
	// Misdelivered: the route reaches a CA or router that does not own
	// the destination LID.
	Misdelivered
	// NoTable: a switch on the route has no LFT read (or one too short
	// to hold the LID).
	NoTable
	// SourceDown: the source port has no live link into the fabric.
	SourceDown
	// BeyondTop: the destination LID is above a switch's LinearFDBTop
	// or beyond the table read (only under Rules.Strict).
	BeyondTop
	// Unread: the route leaves by a port whose state or far end could
	// not be read (a MAD went unanswered: fabric.Port.Unreached). Where
	// it goes is unknown, which is not a dead end.
	Unread
	numOutcomes
)

var outcomeNames = [...]string{"delivered", "no route (0xFF)", "dead end", "loop", "misdelivered", "no LFT", "source down", "beyond LinearFDBTop", "not read"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Hop is one switch a route crosses: the port it came in by (0 where the
// route starts at the switch itself) and the port the LFT sends it out of.
type Hop struct {
	Switch  *fabric.Node
	In, Out uint8
}

// Trace is one route from a source LID to a destination LID.
type Trace struct {
	From, To uint16
	Hops     []Hop
	Outcome  Outcome
	// End is where the route ended: the destination port when delivered,
	// the CA port reached when misdelivered, the egress port for a dead
	// end; nil otherwise (the last hop then names the switch).
	End *fabric.Port
}

// Links returns the cables the route crosses in order, starting with the
// source CA's own link when the route starts at a CA.
func (t Trace) Links(f *fabric.Fabric) []fabric.Link {
	var out []fabric.Link
	if src := f.PortByLID(t.From); src != nil && src.Node.Type != mad.NodeSwitch && src.Remote != nil {
		out = append(out, fabric.Link{A: src, B: src.Remote})
	}
	for _, h := range t.Hops {
		p := portOf(h.Switch, h.Out)
		if p == nil || p.Remote == nil || h.Out == 0 {
			break
		}
		out = append(out, fabric.Link{A: p, B: p.Remote})
	}
	return out
}

func (t Trace) String() string {
	s := fmt.Sprintf("LID %d -> LID %d:", t.From, t.To)
	for _, h := range t.Hops {
		s += fmt.Sprintf(" [%d]%s[%d]", h.In, h.Switch.Description, h.Out)
	}
	return s + " " + t.Outcome.String()
}

func portOf(n *fabric.Node, num uint8) *fabric.Port {
	if int(num) >= len(n.Ports) {
		return nil
	}
	return n.Ports[num]
}

func live(p *fabric.Port) bool {
	return p != nil && p.Remote != nil && Passes(p) && Passes(p.Remote)
}

// Passes reports whether port p's logical state lets LID-routed packets
// through: not Down, and not Init or Armed, where the link has trained
// but the subnet manager has not activated it and only directed-route
// SMPs cross it (a route over it is as lost as over a Down port: ibsim
// drops LID-routed MADs there, ibtracert "can't reach"). A state not
// read (0) passes: the walks judge unread ports apart.
func Passes(p *fabric.Port) bool {
	return p.State != mad.PortStateDown && p.State != mad.PortStateInit && p.State != mad.PortStateArmed
}

// Rules say how a walk judges what a switch's LFT does with a LID. The
// zero Rules are TraceRoute's and NewAnalyzer's.
type Rules struct {
	// PortUp, if set, says whether a cabled port carries traffic (an
	// egress port, or a host's own port for HostPaths). Nil: a cabled
	// port is up when it and its peer pass packets (Passes).
	PortUp func(*fabric.Port) bool
	// Strict judges entries as a switch does and names each failure
	// exactly, where the zero Rules fold them into NoRoute and NoTable:
	// a LID above the switch's LinearFDBTop, or beyond a table read
	// shorter, is BeyondTop (the switch drops it); an entry naming a
	// port the fabric has no record of (nil in Node.Ports, as an
	// uncabled port in a topology file) is a DeadEnd; entry 0 for a LID
	// the switch does not own is Misdelivered (the switch takes the
	// packet itself). A switch without an LFT is NoTable either way.
	Strict bool
}

// up reports whether port p is cabled and carries traffic.
func (r *Rules) up(p *fabric.Port) bool {
	if r.PortUp == nil {
		return live(p)
	}
	return p != nil && p.Remote != nil && r.PortUp(p)
}

// forward is the step outcome of a packet that leaves by a port that is
// up (never a route's outcome).
const forward Outcome = 0xff

// lookup is what switch sw's LFT does with LID to, as far as the egress
// port: the entry, the port (port 0 where the switch keeps the packet)
// and forward when the packet leaves by it, or the outcome that ends the
// route there (with the port for a dead end). sw.Switch must be set.
func (r *Rules) lookup(sw *fabric.Node, to uint16) (out uint8, p *fabric.Port, o Outcome) {
	lft := sw.Switch.LFT
	if int(to) >= lft.Len() || (r.Strict && to > sw.Switch.LinearFDBTop) {
		if r.Strict && lft != nil {
			return fabric.NoRoute, nil, BeyondTop
		}
		return fabric.NoRoute, nil, NoTable
	}
	out = lft.At(to)
	if out == 0 {
		return 0, portOf(sw, 0), forward
	}
	if out == fabric.NoRoute {
		return out, nil, NoRoute
	}
	p = portOf(sw, out)
	if p == nil {
		if r.Strict && int(out) < len(sw.Ports) {
			return out, nil, DeadEnd
		}
		return out, nil, NoRoute
	}
	if !r.up(p) {
		if !p.StateKnown() || p.PeerUnknown() || (p.Remote != nil && !p.Remote.StateKnown()) {
			return out, p, Unread
		}
		return out, p, DeadEnd
	}
	return out, p, forward
}

// step is what a switch's LFT does with LID to: its egress port and the
// switch it leads to (nil when the route ends there, with the outcome).
func (r *Rules) step(sw *fabric.Node, to uint16, dst *fabric.Port) (out uint8, next *fabric.Node, in uint8, end *fabric.Port, o Outcome) {
	out, p, o := r.lookup(sw, to)
	if o != forward {
		return out, nil, 0, p, o
	}
	if out == 0 {
		if dst != nil && dst.Node == sw {
			return 0, nil, 0, dst, Delivered
		}
		if r.Strict {
			return 0, nil, 0, p, Misdelivered
		}
		return 0, nil, 0, nil, NoRoute
	}
	rm := p.Remote
	if rm.Node.Type == mad.NodeSwitch {
		return out, rm.Node, rm.Num, nil, forward // carry on
	}
	if rm == dst || (dst != nil && rm.Node == dst.Node && rm.LID == dst.LID) {
		return out, nil, 0, rm, Delivered
	}
	return out, nil, 0, rm, Misdelivered
}

// TraceRoute follows the LFTs from the port owning LID from to LID to.
// It returns an error only when from is not a known LID; an unknown
// destination is followed anyway (it usually ends in NoRoute).
func TraceRoute(f *fabric.Fabric, from, to uint16) (Trace, error) {
	t := Trace{From: from, To: to}
	src := f.PortByLID(from)
	if src == nil {
		return t, fmt.Errorf("route: no port has LID %d; rediscover or check the LID", from)
	}
	dst := f.PortByLID(to)
	var sw *fabric.Node
	var in uint8
	if src.Node.Type == mad.NodeSwitch {
		sw = src.Node
	} else {
		if src == dst {
			t.Outcome, t.End = Delivered, dst
			return t, nil
		}
		if !live(src) || src.Remote.Node.Type != mad.NodeSwitch {
			t.Outcome, t.End = SourceDown, src
			return t, nil
		}
		sw, in = src.Remote.Node, src.Remote.Num
	}
	seen := map[*fabric.Node]bool{}
	for {
		if seen[sw] {
			t.Hops = append(t.Hops, Hop{Switch: sw, In: in})
			t.Outcome = Loop
			return t, nil
		}
		seen[sw] = true
		if sw.Switch == nil || sw.Switch.LFT == nil {
			t.Hops = append(t.Hops, Hop{Switch: sw, In: in, Out: fabric.NoRoute})
			t.Outcome = NoTable
			return t, nil
		}
		out, next, nextIn, end, o := (&Rules{}).step(sw, to, dst)
		t.Hops = append(t.Hops, Hop{Switch: sw, In: in, Out: out})
		if next == nil {
			t.Outcome, t.End = o, end
			return t, nil
		}
		sw, in = next, nextIn
	}
}
