package sim

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
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

// SetMTU limits a port's hardware to mtu (MTUCap) and retrains the link
// to the best both ends can do (NeighborMTU on both ends), as an HCA
// whose firmware tops out at 2048 would come up.
func (s *Sim) SetMTU(portRef string, mtu mad.MTU) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pn, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pn]
	p.mtuCap = mtu
	p.nbrMTU = min(p.nbrMTU, mtu)
	if p.remote >= 0 {
		r := &s.nodes[p.remote].ports[p.remotePort]
		m := min(p.mtuCap, r.mtuCap)
		p.nbrMTU, r.nbrMTU = m, m
	}
	return nil
}

// SetVLs makes a port support and run only the given data VLs (the
// VLCap/OperationalVLs code: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14),
// as a port the SM configured with fewer VLs, or older firmware, would.
func (s *Sim) SetVLs(portRef string, code uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code < 1 || code > 5 {
		return fmt.Errorf("sim: VL code %d (want 1..5: VL0, VL0-1, VL0-3, VL0-7, VL0-14)", code)
	}
	ni, pn, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	p := &s.nodes[ni].ports[pn]
	p.vls, p.operVLs, p.vlsRecorded = code, 0, false
	return nil
}

// SetFirmware changes the firmware version the node's GeneralInfo
// reports (a node left on an older release).
func (s *Sim) SetFirmware(nodeRef string, fw [3]uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	s.nodes[ni].fw = fw
	return nil
}

// SetAR turns adaptive routing on in a switch's AdaptiveRoutingInfo, for
// every SL, or only for the SLs of mask when it is not 0 (BySLEn).
func (s *Sim) SetAR(nodeRef string, mask uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	n := &s.nodes[ni]
	if n.typ != mad.NodeSwitch || n.vendor != 0x0002c9 {
		return fmt.Errorf("ar %s: not an NVIDIA switch (only they have adaptive routing here)", nodeRef)
	}
	a := n.arInfo()
	a.Enabled, a.BySLEnabled, a.EnableBySLMask = true, mask != 0, mask
	n.ar = &a
	return nil
}

// SetRevision changes the NodeInfo revision a node reports (a board from
// another batch, a replaced part).
func (s *Sim) SetRevision(nodeRef string, rev uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveNode(nodeRef)
	if err != nil {
		return err
	}
	s.nodes[ni].rev = rev
	return nil
}

// Skew makes every data flow that the switch's tables send out of one of
// its uplinks (ports cabled to a higher-level switch) leave by port
// instead: an ECMP hash or adaptive-routing fault. The forwarding tables
// are not changed, so route analysis sees them balanced; only the data
// counters (PortXmitData, PortXmitWait) show it.
func (s *Sim) Skew(sw string, port uint8) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, err := s.resolveSwitch(sw)
	if err != nil {
		return err
	}
	up, err := s.uplinkPorts(ni, port)
	if err != nil {
		return err
	}
	if !up[port] {
		return fmt.Errorf("sim: port %d of %s is not one of its uplinks (ports cabled to a higher-level switch)", port, s.nodeName(ni))
	}
	n := &s.nodes[ni]
	n.sw.skewUp, n.sw.skewTo = up, port
	s.rerouteLocked()
	return nil
}

// SetPKeys replaces a port's P_Key table (keys nil: leave it) and, on a
// switch port, turns its partition enforcement on or off (enforce nil:
// leave it): the partitions an SM's partitions.conf would give it.
func (s *Sim) SetPKeys(portRef string, keys []mad.PKey, enforce *bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ni, pn, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	n := &s.nodes[ni]
	capacity := n.partCap
	if n.typ == mad.NodeSwitch && pn != 0 {
		capacity = n.sw.partCap
	}
	if len(keys) > int(capacity) {
		return fmt.Errorf("sim: %d P_Keys on %s, whose table holds %d", len(keys), portRef, capacity)
	}
	p := &n.ports[pn]
	if keys != nil {
		p.pkeys = append(make([]mad.PKey, 0, len(keys)), keys...)
		p.pkeyUnknown = false
	}
	if enforce != nil {
		if n.typ != mad.NodeSwitch || pn == 0 {
			return fmt.Errorf("sim: %s: partition enforcement is a switch port's (PortInfo of an external port)", portRef)
		}
		p.pkeyEnforce = 0
		if *enforce {
			p.pkeyEnforce = fabric.PKeyEnforceIn | fabric.PKeyEnforceOut
		}
	}
	return nil
}

// recordedPKeys gives the ports the P_Key tables the file recorded
// (f.PKeys); a port it recorded none for does not answer its table
// (could not decide, not the default partition). A table longer than
// the simulator's default capacity gets the capacity to hold it.
func (s *Sim) recordedPKeys(f *fabric.Fabric, idx map[*fabric.Node]int32) error {
	for i := range s.nodes {
		for pi := range s.nodes[i].ports {
			s.nodes[i].ports[pi].pkeyUnknown = true
		}
	}
	for fp, keys := range f.PKeys {
		ni, ok := idx[fp.Node]
		if !ok || int(fp.Num) >= len(s.nodes[ni].ports) {
			return fmt.Errorf("sim: P_Keys of a port that is not in the fabric (%q port %d)", fp.Node.Description, fp.Num)
		}
		n := &s.nodes[ni]
		p := &n.ports[fp.Num]
		p.pkeys, p.pkeyUnknown = keys, false
		capacity := &n.partCap
		if n.sw != nil && fp.Num != 0 {
			capacity = &n.sw.partCap
		}
		if len(keys) > int(*capacity) {
			*capacity = uint16(min(len(keys), 0xffff))
		}
	}
	return nil
}

// SetMKeyPolicy sets the M_Key protection bits and lease period a port's
// PortInfo reports (a switch's: port 0's, which all its ports share): an
// SM with another M_Key policy swept it.
func (s *Sim) SetMKeyPolicy(portRef string, protect uint8, lease uint16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if protect > 3 {
		return fmt.Errorf("sim: M_Key protection bits %d (want 0..3)", protect)
	}
	ni, pn, err := s.resolvePort(portRef)
	if err != nil {
		return err
	}
	if s.nodes[ni].typ == mad.NodeSwitch {
		pn = 0
	}
	p := &s.nodes[ni].ports[pn]
	p.mkeyProtect, p.mkeyLease = protect, lease
	return nil
}
