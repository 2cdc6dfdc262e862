package sim

import (
	"math"

	"github.com/ibdoctor/ibdoctor/mad"
)

// pmaCaps returns the ClassPortInfo CapabilityMask of node n's PMA.
func (s *Sim) pmaCaps(n *node) uint16 {
	if n.typ == mad.NodeSwitch {
		return s.pma.Switch
	}
	return s.pma.CA
}

// pmaAnswer runs node ni's performance management agent on req, which
// arrived on port in. Callers hold s.mu: for writing when req is a Set.
func (s *Sim) pmaAnswer(ni int32, in uint8, req *mad.GMP, data *[mad.GMPDataSize]byte) mad.Status {
	n := &s.nodes[ni]
	if n.refused(&req.Header) {
		return statusInvalidField
	}
	m := req.Method
	if m != mad.MethodGet && m != mad.MethodSet {
		return statusMethodUnsupported
	}
	set := m == mad.MethodSet
	caps := s.pmaCaps(n)
	now := s.ticks(s.now())
	switch req.AttrID {
	case mad.AttrClassPortInfo:
		if set {
			return statusAttrUnsupported
		}
		*data = [mad.GMPDataSize]byte{}
		cpi := &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: caps, CapabilityMask2: s.pma.CapMask2, RespTimeValue: 18}
		if err := cpi.MarshalAttr(data[:]); err != nil {
			return statusInvalidField
		}
		return mad.StatusOK
	case mad.AttrPortCounters, mad.AttrPortCountersExtended:
		ext := req.AttrID == mad.AttrPortCountersExtended
		if ext && caps&(PMAExtendedWidth|PMAExtendedWidthNoIETF) == 0 {
			return statusAttrUnsupported
		}
		var pc mad.PortCounters
		var pce mad.PortCountersExtended
		var sel uint8
		var mask uint32
		if ext {
			if pce.UnmarshalAttr(req.Data[:]) != nil {
				return statusInvalidField
			}
			sel, mask = pce.PortSelect, s.extResetMask(&pce)
		} else {
			if pc.UnmarshalAttr(req.Data[:]) != nil {
				return statusInvalidField
			}
			sel, mask = pc.PortSelect, resetMask(&pc)
		}
		ports, ok := s.pmaPorts(n, in, sel, caps)
		if !ok {
			return statusInvalidField
		}
		if set && mask != 0 {
			for _, pi := range ports {
				c := s.ctrs(ni, pi, now)
				for id := ctrID(0); id < numCtrs; id++ {
					if mask&(1<<id) != 0 {
						c.val[id] = 0
					}
				}
			}
		}
		var v [numCtrs]uint64
		for _, pi := range ports {
			c := n.ports[pi].ctr
			for id := range v {
				x := c.value(ctrID(id), now)
				if v[id] > math.MaxUint64-x {
					v[id] = math.MaxUint64
				} else {
					v[id] += x
				}
			}
		}
		*data = [mad.GMPDataSize]byte{}
		var err error
		if ext {
			s.fillExt(caps, &pce, &v)
			err = pce.MarshalAttr(data[:])
		} else {
			fillPC(caps, &pc, &v)
			err = pc.MarshalAttr(data[:])
		}
		if err != nil {
			return statusInvalidField
		}
		return mad.StatusOK
	}
	return statusAttrUnsupported
}

// pmaPorts resolves PortSelect: on a CA the port the MAD came in by; on a
// switch any port 0..NumPorts, or 0xFF for all of them when the PMA has
// AllPortSelect.
func (s *Sim) pmaPorts(n *node, in, sel uint8, caps uint16) ([]uint8, bool) {
	if n.typ != mad.NodeSwitch {
		return []uint8{in}, sel == in
	}
	if sel == 0xff {
		if caps&PMAAllPortSelect == 0 {
			return nil, false
		}
		ports := make([]uint8, n.numPorts())
		for i := range ports {
			ports[i] = uint8(i + 1)
		}
		return ports, true
	}
	if int(sel) > n.numPorts() {
		return nil, false
	}
	return []uint8{sel}, true
}

// CounterSelect bit order of PortCounters (bits 0..15, then
// CounterSelect2 bit 0 for PortXmitWait).
var pcSelect = [...]ctrID{
	ctrSymbolError, ctrLinkErrorRecovery, ctrLinkDowned, ctrRcvErrors,
	ctrRcvRemotePhysErrors, ctrRcvSwitchRelayErrors, ctrXmitDiscards,
	ctrXmitConstraintErrors, ctrRcvConstraintErrors, ctrLocalLinkIntegrityErrors,
	ctrExcessiveBufferOverrunErrors, ctrVL15Dropped, ctrXmitData, ctrRcvData,
	ctrXmitPkts, ctrRcvPkts,
}

// PortCountersExtended CounterSelect bits 0..7, and CounterSelect2 bits
// 0..13 for the additional counters (in wire order).
var pceSelect = [...]ctrID{
	ctrXmitData, ctrRcvData, ctrXmitPkts, ctrRcvPkts,
	ctrUnicastXmitPkts, ctrUnicastRcvPkts, ctrMulticastXmitPkts, ctrMulticastRcvPkts,
}
var pceSelect2 = [...]ctrID{
	ctrSymbolError, ctrLinkErrorRecovery, ctrLinkDowned, ctrRcvErrors,
	ctrRcvRemotePhysErrors, ctrRcvSwitchRelayErrors, ctrXmitDiscards,
	ctrXmitConstraintErrors, ctrRcvConstraintErrors, ctrLocalLinkIntegrityErrors,
	ctrExcessiveBufferOverrunErrors, ctrVL15Dropped, ctrXmitWait, ctrQP1Dropped,
}

// resetMask turns a PortCounters Set's CounterSelect fields into a set
// of counters.
func resetMask(pc *mad.PortCounters) uint32 {
	var mask uint32
	for i, id := range pcSelect {
		if pc.CounterSelect&(1<<i) != 0 {
			mask |= 1 << id
		}
	}
	if pc.CounterSelect2&mad.CounterSelect2XmitWait != 0 {
		mask |= 1 << ctrXmitWait
	}
	return mask
}

func (s *Sim) extResetMask(p *mad.PortCountersExtended) uint32 {
	var mask uint32
	for i, id := range pceSelect {
		if p.CounterSelect&(1<<i) != 0 {
			mask |= 1 << id
		}
	}
	if s.pma.CapMask2&PMA2AdditionalExtended != 0 {
		for i, id := range pceSelect2 {
			if p.CounterSelect2&(1<<i) != 0 {
				mask |= 1 << id
			}
		}
	}
	return mask
}

// fillPC shows the 64-bit counters through PortCounters' narrow fields,
// sticky at all-ones. PortXmitWait and QP1Dropped are reserved (zero)
// unless the PMA advertises them.
func fillPC(caps uint16, pc *mad.PortCounters, v *[numCtrs]uint64) {
	n := func(id ctrID) uint64 { return narrow(v[id], ctrInfo[id].width) }
	pc.SymbolErrorCounter = uint16(n(ctrSymbolError))
	pc.LinkErrorRecoveryCounter = uint8(n(ctrLinkErrorRecovery))
	pc.LinkDownedCounter = uint8(n(ctrLinkDowned))
	pc.PortRcvErrors = uint16(n(ctrRcvErrors))
	pc.PortRcvRemotePhysicalErrors = uint16(n(ctrRcvRemotePhysErrors))
	pc.PortRcvSwitchRelayErrors = uint16(n(ctrRcvSwitchRelayErrors))
	pc.PortXmitDiscards = uint16(n(ctrXmitDiscards))
	pc.PortXmitConstraintErrors = uint8(n(ctrXmitConstraintErrors))
	pc.PortRcvConstraintErrors = uint8(n(ctrRcvConstraintErrors))
	pc.LocalLinkIntegrityErrors = uint8(n(ctrLocalLinkIntegrityErrors))
	pc.ExcessiveBufferOverrunErrors = uint8(n(ctrExcessiveBufferOverrunErrors))
	pc.VL15Dropped = uint16(n(ctrVL15Dropped))
	pc.XmitDataWords = uint32(n(ctrXmitData))
	pc.RcvDataWords = uint32(n(ctrRcvData))
	pc.PortXmitPkts = uint32(n(ctrXmitPkts))
	pc.PortRcvPkts = uint32(n(ctrRcvPkts))
	if caps&PMAXmitWait != 0 {
		pc.PortXmitWait = uint32(n(ctrXmitWait))
	}
	if caps&mad.PMCapQP1Dropped != 0 {
		pc.QP1Dropped = uint16(n(ctrQP1Dropped))
	}
}

// fillExt fills what the PMA supports: data and packets with either
// extended-width capability, unicast/multicast with ExtendedWidth, the
// 64-bit error counters with AdditionalCountersExtended.
func (s *Sim) fillExt(caps uint16, p *mad.PortCountersExtended, v *[numCtrs]uint64) {
	p.XmitDataWords, p.RcvDataWords = v[ctrXmitData], v[ctrRcvData]
	p.PortXmitPkts, p.PortRcvPkts = v[ctrXmitPkts], v[ctrRcvPkts]
	if caps&PMAExtendedWidth != 0 {
		p.PortUnicastXmitPkts, p.PortUnicastRcvPkts = v[ctrUnicastXmitPkts], v[ctrUnicastRcvPkts]
		p.PortMulticastXmitPkts, p.PortMulticastRcvPkts = v[ctrMulticastXmitPkts], v[ctrMulticastRcvPkts]
	}
	if s.pma.CapMask2&PMA2AdditionalExtended == 0 {
		return
	}
	p.SymbolErrorCounter = v[ctrSymbolError]
	p.LinkErrorRecoveryCounter = v[ctrLinkErrorRecovery]
	p.LinkDownedCounter = v[ctrLinkDowned]
	p.PortRcvErrors = v[ctrRcvErrors]
	p.PortRcvRemotePhysicalErrors = v[ctrRcvRemotePhysErrors]
	p.PortRcvSwitchRelayErrors = v[ctrRcvSwitchRelayErrors]
	p.PortXmitDiscards = v[ctrXmitDiscards]
	p.PortXmitConstraintErrors = v[ctrXmitConstraintErrors]
	p.PortRcvConstraintErrors = v[ctrRcvConstraintErrors]
	p.LocalLinkIntegrityErrors = v[ctrLocalLinkIntegrityErrors]
	p.ExcessiveBufferOverrunErrors = v[ctrExcessiveBufferOverrunErrors]
	p.VL15Dropped = v[ctrVL15Dropped]
	p.PortXmitWait = v[ctrXmitWait]
	p.QP1Dropped = v[ctrQP1Dropped]
}
