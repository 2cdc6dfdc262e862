package sim

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/mad"
)

// SetLID gives a port (a switch: its port 0) another LID and/or LMC, as
// a stale guid2lid entry or a second SM would: lid < 0 or lmc < 0 keep
// the current value. A LID another port owns makes a duplicate; LID 0 on
// an Active port leaves it unaddressable. LID-routed MADs to a duplicated
// LID reach whichever port the forwarding tables lead to.
func (s *Sim) SetLID(portRef string, lid, lmc int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pn, err := s.resolveSMPort(portRef)
	if err != nil {
		return err
	}
	if lid >= 0xc000 || lmc > 7 {
		return fmt.Errorf("sim: lid=%d lmc=%d: a unicast LID is below 0xc000 and an LMC at most 7", lid, lmc)
	}
	p := &s.nodes[ni].ports[pn]
	if lid >= 0 {
		p.lid = uint16(lid)
	}
	if lmc >= 0 {
		p.lmc = uint8(lmc)
	}
	top := uint16(len(s.lidMap) - 1)
	if p.lid != 0 {
		top = max(top, p.lid+uint16(1)<<p.lmc-1)
	}
	s.index(top)
	return nil
}

// SetDescription changes a node's NodeDescription (a cloned host image,
// a host whose rdma-ndd never ran).
func (s *Sim) SetDescription(nodeRef, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	if len(text) > mad.NodeDescriptionSize {
		return fmt.Errorf("sim: description %q is longer than %d bytes", text, mad.NodeDescriptionSize)
	}
	s.nodes[ni].desc = text
	s.index(uint16(len(s.lidMap) - 1))
	return nil
}
