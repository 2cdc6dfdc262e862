package sim

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// smAgent is a subnet manager running behind one port: it sets IsSM in
// that port's CapabilityMask and answers SMInfo. A master's ActCount
// advances with every SMInfo it answers (OpenSM reports the SMPs it has
// sent, its own answers among them), unless the SM is stalled.
type smAgent struct {
	node     int32
	port     uint8 // a CA's port; 0 on a switch
	state    mad.SMState
	priority uint8
	stalled  bool
	act      atomic.Uint32
	guid     uint64 // the GUID a file recorded it answering; 0: its port's
}

// SM states the faults file names, beyond mad.SMState: "stalled" is a
// master whose ActCount no longer advances, "gone" an SM that exited
// (no IsSM, no SMInfo) while the ports still name its LID.
var smStateWords = map[string]mad.SMState{
	"master": mad.SMMaster, "standby": mad.SMStandby, "discovering": mad.SMDiscovering, "notactive": mad.SMNotActive,
}

// startSM puts the default SM (Options.SMLID, or the first CA port with a
// LID) on the port that owns s.smLID, as master.
func (s *Sim) startSM() {
	if s.smLID == 0 || int(s.smLID) >= len(s.lidMap) {
		return
	}
	o := s.lidMap[s.smLID]
	if o.node < 0 {
		return
	}
	a := &smAgent{node: o.node, port: o.port, state: mad.SMMaster}
	if s.nodes[o.node].typ == mad.NodeSwitch {
		a.port = 0
	}
	a.act.Store(1000)
	s.sms = append(s.sms, a)
}

// recordedSMs runs the subnet managers the file recorded (f.SMs) instead
// of the default one, each answering the SMInfo it recorded: one
// reading, whose ActCount does not advance (a second read would not be
// the fabric's). The SM LID is the recorded master's, and every port
// answers the MasterSMLID it recorded.
func (s *Sim) recordedSMs(f *fabric.Fabric, idx map[*fabric.Node]int32) error {
	s.msmRecorded = true
	s.sms = nil
	master := false
	for _, r := range f.SMs {
		ni, ok := idx[r.Port.Node]
		if !ok || int(r.Port.Num) >= len(s.nodes[ni].ports) {
			return fmt.Errorf("sim: a subnet manager behind a port that is not in the fabric (%q port %d)", r.Port.Node.Description, r.Port.Num)
		}
		a := &smAgent{node: ni, port: r.Port.Num, state: r.State, priority: r.Priority, stalled: true, guid: r.GUID}
		a.act.Store(r.ActCount)
		s.sms = append(s.sms, a)
		if r.State == mad.SMMaster && !master && s.opts.SMLID == 0 {
			master = true
			s.smLID = s.nodes[ni].ports[r.Port.Num].lid
			if s.nodes[ni].typ == mad.NodeSwitch {
				s.smLID = s.nodes[ni].ports[0].lid
			}
		}
	}
	return nil
}

// smAt returns the SM behind port pn of node ni (a switch's SM sits
// behind port 0), or nil.
func (s *Sim) smAt(ni int32, pn uint8) *smAgent {
	if s.nodes[ni].typ == mad.NodeSwitch {
		pn = 0
	}
	for _, a := range s.sms {
		if a.node == ni && a.port == pn {
			return a
		}
	}
	return nil
}

// smInfo answers SMInfo at port pn of node ni; nil when no SM runs there.
func (s *Sim) smInfo(ni int32, pn uint8) *mad.SMInfo {
	a := s.smAt(ni, pn)
	if a == nil {
		return nil
	}
	n := &s.nodes[ni]
	guid := n.guid
	if n.typ != mad.NodeSwitch {
		guid = n.ports[pn].guid
	}
	if a.guid != 0 {
		guid = a.guid
	}
	act := a.act.Load()
	if !a.stalled {
		act = a.act.Add(1)
	}
	return &mad.SMInfo{GUID: guid, ActCount: act, Priority: a.priority, State: a.state}
}

// SetSM runs (or changes) a subnet manager behind a port: state is
// master, standby, discovering, notactive, stalled (a master whose
// ActCount stops) or gone (the SM exits; ports keep naming its LID as
// their master). A second master is two masters on one subnet.
func (s *Sim) SetSM(portRef, state string, priority int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pn, err := s.resolveSMPort(portRef)
	if err != nil {
		return err
	}
	word := strings.ToLower(state)
	a := s.smAt(ni, pn)
	if word == "gone" {
		if a == nil {
			return fmt.Errorf("sim: no SM runs at %s", portRef)
		}
		s.sms = removeSM(s.sms, a)
		return nil
	}
	st, ok := smStateWords[word]
	stalled := word == "stalled"
	if stalled {
		st = mad.SMMaster
	} else if !ok {
		return fmt.Errorf("sim: SM state %q (want master, standby, discovering, notactive, stalled or gone)", state)
	}
	if priority > 15 {
		return fmt.Errorf("sim: SM priority %d does not fit in 4 bits (0..15)", priority)
	}
	if a == nil {
		a = &smAgent{node: ni, port: pn}
		a.act.Store(500)
		s.sms = append(s.sms, a)
	}
	a.state, a.stalled = st, stalled
	if priority >= 0 {
		a.priority = uint8(priority)
	}
	return nil
}

func removeSM(list []*smAgent, a *smAgent) []*smAgent {
	out := list[:0]
	for _, b := range list {
		if b != a {
			out = append(out, b)
		}
	}
	return out
}

// resolveSMPort is resolvePort where a bare switch name means its port 0.
func (s *Sim) resolveSMPort(ref string) (int32, uint8, error) {
	if !strings.Contains(ref, "/") {
		if ni, err := s.resolveNode(strings.Trim(ref, `"`)); err == nil && s.nodes[ni].typ == mad.NodeSwitch {
			return ni, 0, nil
		}
	}
	ni, pn, err := s.resolvePort(ref)
	if err != nil {
		return -1, 0, err
	}
	if s.nodes[ni].typ == mad.NodeSwitch {
		pn = 0
	}
	return ni, pn, nil
}

// NoSM makes the subnet one no SM has ever swept: every port whose link
// is up stays in Init, no port has a LID, no SM runs and every
// forwarding table is empty. Directed-route SMPs still work (that is how
// an SM would find the fabric); LID-routed MADs go nowhere.
// SMDied is what a fabric shows when its only subnet manager died and
// the links then retrained: every port whose link is up is in Init (a
// switch's port 0 stays Active), with the LIDs, LMCs and forwarding tables
// the SM had set kept, and no SM answers SMInfo.
func (s *Sim) SMDied() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sms = nil
	for i := range s.nodes {
		n := &s.nodes[i]
		for pi := range n.ports {
			p := &n.ports[pi]
			if pi == 0 && n.typ == mad.NodeSwitch {
				continue
			}
			if p.state > mad.PortStateInit {
				p.state = mad.PortStateInit
			}
		}
	}
	s.flowState = nil
}

func (s *Sim) NoSM() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sms = nil
	s.smLID = 0
	s.msmRecorded = false
	for i := range s.nodes {
		n := &s.nodes[i]
		for pi := range n.ports {
			p := &n.ports[pi]
			p.lid, p.lmc = 0, 0
			if pi == 0 && n.typ == mad.NodeSwitch {
				continue // a switch's management port is Active without an SM (as on ibsim)
			}
			if p.state > mad.PortStateInit {
				p.state = mad.PortStateInit
			}
		}
		if sw := n.sw; sw != nil {
			sw.lft = fabric.NewLFT(sw.lft.Len())
			sw.lftOwned, sw.lftUnknown = true, false
			sw.fdbTop = 0
		}
	}
	for i := range s.lidMap {
		s.lidMap[i] = lidOwner{node: -1}
	}
	s.flowState = nil
}
