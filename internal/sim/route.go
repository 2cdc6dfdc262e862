package sim

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Directed-route processing. The rules are IBA 14.2.2 (C14-9 for the
// outbound direction, C14-13 for returning SMPs) in the form the Linux
// kernel applies them when a port sends (smiSend) or receives (smiRecv) a
// directed-route SMP. The simulator runs both steps at every node a
// directed-route SMP crosses, so HopPointer and ReturnPath take exactly
// the values a real fabric gives them. Only pure directed routes are
// simulated (DrSLID and DrDLID permissive); an SMP with a LID-routed part
// is dropped, as ibsim does.

type smiAction int

const (
	smiDiscard smiAction = iota
	smiHandle
)

// smiSend is the check a port applies to a directed-route SMP it is about
// to transmit on port (for a switch, the egress port; for a CA, its own
// port). It advances or retreats the hop pointer.
func smiSend(s *mad.SMP, isSwitch bool, port uint8) smiAction {
	hp, hc := s.HopPointer, s.HopCount
	if !s.Direction {
		switch {
		case hc != 0 && hp == 0: // C14-9:1, at the requester
			s.HopPointer++
			return when(s.InitialPath[s.HopPointer] == port)
		case hp != 0 && hp < hc: // C14-9:2, an intermediate switch
			if !isSwitch {
				return smiDiscard
			}
			s.HopPointer++
			return when(s.InitialPath[s.HopPointer] == port)
		case hp == hc: // C14-9:3, end of the directed part
			s.HopPointer++
			return smiHandle // DrDLID is permissive (pure directed route)
		}
		return when(hp == hc+1) // C14-9:4 and :5
	}
	switch {
	case hc != 0 && hp == hc+1: // C14-13:1, at the responder
		s.HopPointer--
		return when(s.ReturnPath[s.HopPointer] == port)
	case 2 <= hp && hp <= hc: // C14-13:2, an intermediate switch
		if !isSwitch {
			return smiDiscard
		}
		s.HopPointer--
		return when(s.ReturnPath[s.HopPointer] == port)
	case hp == 1: // C14-13:3, back at the requester's end
		s.HopPointer--
		return smiHandle // DrSLID is permissive
	case hp == 0: // C14-13:4
		return smiHandle
	}
	return smiDiscard // C14-13:5
}

// smiRecv is the check a node applies to a directed-route SMP that
// arrived on port; numPorts is its physical port count. Outbound, it
// records the arrival port in ReturnPath.
func smiRecv(s *mad.SMP, isSwitch bool, port uint8, numPorts int) smiAction {
	hp, hc := s.HopPointer, s.HopCount
	if !s.Direction {
		switch {
		case hc != 0 && hp == 0: // C14-9:1: the sender should have advanced it
			return smiDiscard
		case hp != 0 && hp < hc: // C14-9:2
			if !isSwitch {
				return smiDiscard
			}
			s.ReturnPath[hp] = port
			return when(int(s.InitialPath[hp+1]) <= numPorts)
		case hp == hc: // C14-9:3
			if hc != 0 {
				s.ReturnPath[hp] = port
			}
			return smiHandle
		}
		return when(hp == hc+1)
	}
	switch {
	case hc != 0 && hp == hc+1: // C14-13:1
		return smiDiscard
	case 2 <= hp && hp <= hc: // C14-13:2
		if !isSwitch {
			return smiDiscard
		}
		return when(int(s.ReturnPath[hp-1]) <= numPorts)
	case hp == 1: // C14-13:3: DrSLID permissive, the SMP is for us
		s.HopPointer--
		return smiHandle
	}
	return when(hp == 0)
}

func when(ok bool) smiAction {
	if ok {
		return smiHandle
	}
	return smiDiscard
}

// drHop is one receive step of a directed-route SMP, for tracing.
type drHop struct {
	Node       int32
	InPort     uint8
	Direction  bool
	HopPointer uint8    // as the SMP arrived
	ReturnPath [64]byte // after the receiving node recorded its arrival port
	Egress     uint8    // port it leaves by next (0: delivered here)
}

// drop describes why a MAD was lost; empty means it was not.
type drop string

// drRequest walks a directed-route request from node src (whose port
// srcPort the requester is bound to). It returns the node that answers,
// the port the SMP entered it by, and the number of cables crossed.
func (s *Sim) drRequest(m *mad.SMP, src int32, srcPort uint8, trace func(drHop)) (int32, uint8, int, drop) {
	cur := &s.nodes[src]
	isSw := cur.typ == mad.NodeSwitch
	if m.HopCount == 0 {
		if smiSend(m, isSw, srcPort) != smiHandle {
			return -1, 0, 0, "local SMP refused by the sending port"
		}
		return src, srcPort, 0, ""
	}
	egress := m.InitialPath[1]
	sendPort := egress
	if !isSw {
		sendPort = srcPort
	}
	if smiSend(m, isSw, sendPort) != smiHandle {
		return -1, 0, 0, drop(fmt.Sprintf("InitialPath[1]=%d is not the sending port %d", egress, srcPort))
	}
	ci := src
	hops := 0
	for {
		if d := s.checkEgress(ci, egress, false); d != "" {
			return -1, 0, hops, d
		}
		p := &s.nodes[ci].ports[egress]
		ni, in := p.remote, p.remotePort
		nx := &s.nodes[ni]
		hops++
		if nx.dead {
			return -1, 0, hops, drop(fmt.Sprintf("%s does not answer (dead)", s.nodeName(ni)))
		}
		nsw := nx.typ == mad.NodeSwitch
		arrived := m.HopPointer
		if smiRecv(m, nsw, in, nx.numPorts()) != smiHandle {
			if !nsw && m.HopPointer < m.HopCount {
				return -1, 0, hops, drop(fmt.Sprintf("path continues past CA %s at hop %d", s.nodeName(ni), m.HopPointer))
			}
			return -1, 0, hops, drop(fmt.Sprintf("%s discarded the SMP at hop %d (bad hop pointer or egress port %d)", s.nodeName(ni), m.HopPointer, m.InitialPath[m.HopPointer+1]))
		}
		if m.HopPointer < m.HopCount { // forward
			out := m.InitialPath[m.HopPointer+1]
			if smiSend(m, true, out) != smiHandle {
				return -1, 0, hops, drop(fmt.Sprintf("%s refused to forward on port %d", s.nodeName(ni), out))
			}
			if trace != nil {
				trace(drHop{Node: ni, InPort: in, HopPointer: arrived, ReturnPath: m.ReturnPath, Egress: out})
			}
			ci, egress = ni, out
			continue
		}
		// End of the directed route: hand it to the SMA.
		if smiSend(m, nsw, in) != smiHandle {
			return -1, 0, hops, drop("SMP not accepted at the end of its path")
		}
		if trace != nil {
			trace(drHop{Node: ni, InPort: in, HopPointer: arrived, ReturnPath: m.ReturnPath})
		}
		return ni, in, hops, ""
	}
}

// drResponse walks a directed-route response (Direction set) from node
// dst, which received the request on port in, back along ReturnPath. It
// returns the node it reached and the number of cables crossed.
func (s *Sim) drResponse(m *mad.SMP, dst int32, in uint8, trace func(drHop)) (int32, int, drop) {
	cur := &s.nodes[dst]
	if smiSend(m, cur.typ == mad.NodeSwitch, in) != smiHandle {
		return -1, 0, "response refused by the responder's port"
	}
	if m.HopCount == 0 {
		return dst, 0, ""
	}
	ci, egress := dst, in
	hops := 0
	for {
		if d := s.checkEgress(ci, egress, false); d != "" {
			return -1, hops, d
		}
		p := &s.nodes[ci].ports[egress]
		ni, pin := p.remote, p.remotePort
		nx := &s.nodes[ni]
		hops++
		nsw := nx.typ == mad.NodeSwitch
		arrived := m.HopPointer
		if smiRecv(m, nsw, pin, nx.numPorts()) != smiHandle {
			return -1, hops, drop(fmt.Sprintf("%s discarded the response", s.nodeName(ni)))
		}
		if m.HopPointer == 0 {
			if trace != nil {
				trace(drHop{Node: ni, InPort: pin, Direction: true, HopPointer: arrived, ReturnPath: m.ReturnPath})
			}
			return ni, hops, ""
		}
		if nx.dead {
			return -1, hops, drop(fmt.Sprintf("%s does not forward (dead)", s.nodeName(ni)))
		}
		out := m.ReturnPath[m.HopPointer-1]
		if smiSend(m, nsw, out) != smiHandle {
			return -1, hops, drop(fmt.Sprintf("%s refused to return the response on port %d", s.nodeName(ni), out))
		}
		if trace != nil {
			trace(drHop{Node: ni, InPort: pin, Direction: true, HopPointer: arrived, ReturnPath: m.ReturnPath, Egress: out})
		}
		ci, egress = ni, out
	}
}

// checkEgress reports why node ni cannot transmit on port out: a port
// that does not exist, is not cabled, or whose link is not up (not
// Active, when data is true: LID-routed MADs and traffic need Active
// ports; directed-route SMPs cross any port whose physical link is up).
func (s *Sim) checkEgress(ni int32, out uint8, data bool) drop {
	n := &s.nodes[ni]
	if out == 0 || int(out) > n.numPorts() {
		return drop(fmt.Sprintf("%s has no port %d", s.nodeName(ni), out))
	}
	p := &n.ports[out]
	if p.remote < 0 {
		return drop(fmt.Sprintf("%s port %d is not cabled", s.nodeName(ni), out))
	}
	if !p.linkUp() {
		return drop(fmt.Sprintf("%s port %d is %v/%v", s.nodeName(ni), out, p.state, p.phys))
	}
	if data && !p.active() {
		return drop(fmt.Sprintf("%s port %d is %v, not Active", s.nodeName(ni), out, p.state))
	}
	// The far end must be up too.
	r := &s.nodes[p.remote].ports[p.remotePort]
	if !r.linkUp() || (data && !r.active()) {
		return drop(fmt.Sprintf("%s port %d: far end is %v/%v", s.nodeName(ni), out, r.state, r.phys))
	}
	return ""
}

// ownsLID reports whether port pi of node ni answers to lid.
func (s *Sim) ownsLID(ni int32, pi uint8, lid uint16) bool {
	n := &s.nodes[ni]
	if n.typ == mad.NodeSwitch {
		pi = 0
	}
	p := &n.ports[pi]
	return p.lid != 0 && lid >= p.lid && uint32(lid) < uint32(p.lid)+uint32(1)<<p.lmc
}

// lftLookup returns a switch's egress port for dlid, fabric.NoRoute when
// it has none (past LinearFDBTop or the table).
func (s *Sim) lftLookup(ni int32, dlid uint16) uint8 {
	sw := s.nodes[ni].sw
	if sw == nil || dlid > sw.fdbTop || int(dlid) >= sw.lft.Len() {
		return fabric.NoRoute
	}
	return sw.lft.At(dlid)
}

// lidHop is one switch or CA a LID-routed packet passes, for traffic.
type lidHop struct {
	node int32
	in   uint8 // arrival port (0 at the source)
	out  uint8 // egress port (0 at the destination)
}

// lidRoute follows the forwarding tables from port srcPort of node src
// to dlid. data says whether the packet needs Active ports (everything
// except SMPs). It returns the destination and its arrival port; on a
// loss, the reason. When hops is non-nil every hop is appended to it.
func (s *Sim) lidRoute(src int32, srcPort uint8, dlid uint16, data bool, hops *[]lidHop) (int32, uint8, int, drop) {
	if dlid == 0 || dlid >= 0xc000 {
		return -1, 0, 0, drop(fmt.Sprintf("LID %d is not a unicast LID", dlid))
	}
	if s.ownsLID(src, srcPort, dlid) {
		return src, srcPort, 0, ""
	}
	ci, in := src, uint8(0)
	var out uint8
	if s.nodes[src].typ == mad.NodeSwitch {
		out = s.lftLookup(src, dlid)
		if data {
			out = s.skewed(src, out)
		}
	} else {
		out = srcPort
	}
	crossed := 0
	for {
		if hops != nil {
			*hops = append(*hops, lidHop{node: ci, in: in, out: out})
		}
		if out == fabric.NoRoute || out == 0 {
			return -1, 0, crossed, drop(fmt.Sprintf("%s has no route to LID %d", s.nodeName(ci), dlid))
		}
		if d := s.checkEgress(ci, out, data); d != "" {
			return -1, 0, crossed, d
		}
		p := &s.nodes[ci].ports[out]
		ni, pin := p.remote, p.remotePort
		crossed++
		if s.ownsLID(ni, pin, dlid) {
			if hops != nil {
				*hops = append(*hops, lidHop{node: ni, in: pin})
			}
			return ni, pin, crossed, ""
		}
		if s.nodes[ni].typ != mad.NodeSwitch {
			return -1, 0, crossed, drop(fmt.Sprintf("reached %s, which does not own LID %d", s.nodeName(ni), dlid))
		}
		if crossed > s.opts.LIDHopLimit {
			return -1, 0, crossed, drop(fmt.Sprintf("LID %d: more than %d hops (routing loop through %s)", dlid, s.opts.LIDHopLimit, s.nodeName(ni)))
		}
		ci, in, out = ni, pin, s.lftLookup(ni, dlid)
		if data {
			out = s.skewed(ci, out)
		}
	}
}

// skewed applies the skew fault to a data flow's egress at switch ni.
func (s *Sim) skewed(ni int32, out uint8) uint8 {
	sw := s.nodes[ni].sw
	if sw == nil || sw.skewUp == nil || int(out) >= len(sw.skewUp) || !sw.skewUp[out] {
		return out
	}
	return sw.skewTo
}
