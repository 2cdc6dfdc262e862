package sim

import (
	"encoding/binary"
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
		s.encodeClassPortInfo(caps, data)
		return mad.StatusOK
	case mad.AttrPortCounters, mad.AttrPortCountersExtended:
		ext := req.AttrID == mad.AttrPortCountersExtended
		if ext && caps&(PMAExtendedWidth|PMAExtendedWidthNoIETF) == 0 {
			return statusAttrUnsupported
		}
		sel := req.Data[1]
		ports, ok := s.pmaPorts(n, in, sel, caps)
		if !ok {
			return statusInvalidField
		}
		if set {
			mask := s.resetMask(req, ext)
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
		reqData := req.Data
		*data = [mad.GMPDataSize]byte{}
		if ext {
			s.encodePortCountersExt(caps, &reqData, &v, data)
		} else {
			s.encodePortCounters(caps, &reqData, &v, data)
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
// 0..13 for the additional counters.
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

// resetMask turns a Set's CounterSelect fields into a set of counters.
func (s *Sim) resetMask(req *mad.GMP, ext bool) uint32 {
	var mask uint32
	d := req.Data[:]
	sel := binary.BigEndian.Uint16(d[2:4])
	if !ext {
		for i, id := range pcSelect {
			if sel&(1<<i) != 0 {
				mask |= 1 << id
			}
		}
		if d[18]&1 != 0 {
			mask |= 1 << ctrXmitWait
		}
		return mask
	}
	for i, id := range pceSelect {
		if sel&(1<<i) != 0 {
			mask |= 1 << id
		}
	}
	if s.pma.CapMask2&PMA2AdditionalExtended != 0 {
		sel2 := binary.BigEndian.Uint32(d[4:8])
		for i, id := range pceSelect2 {
			if sel2&(1<<i) != 0 {
				mask |= 1 << id
			}
		}
	}
	return mask
}

func (s *Sim) encodeClassPortInfo(caps uint16, b *[mad.GMPDataSize]byte) {
	b[0], b[1] = 1, 1
	binary.BigEndian.PutUint16(b[2:4], caps)
	const respTime = 18
	binary.BigEndian.PutUint32(b[4:8], s.pma.CapMask2<<5|respTime)
}

// PortCounters field layout: byte offset and width in bits.
var pcLayout = [...]struct {
	id    ctrID
	off   int
	width uint8
}{
	{ctrSymbolError, 4, 16},
	{ctrLinkErrorRecovery, 6, 8},
	{ctrLinkDowned, 7, 8},
	{ctrRcvErrors, 8, 16},
	{ctrRcvRemotePhysErrors, 10, 16},
	{ctrRcvSwitchRelayErrors, 12, 16},
	{ctrXmitDiscards, 14, 16},
	{ctrXmitConstraintErrors, 16, 8},
	{ctrRcvConstraintErrors, 17, 8},
	{ctrVL15Dropped, 22, 16},
	{ctrXmitData, 24, 32},
	{ctrRcvData, 28, 32},
	{ctrXmitPkts, 32, 32},
	{ctrRcvPkts, 36, 32},
	{ctrXmitWait, 40, 32},
}

func putN(b []byte, width uint8, v uint64) {
	switch width {
	case 8:
		b[0] = uint8(v)
	case 16:
		binary.BigEndian.PutUint16(b, uint16(v))
	case 32:
		binary.BigEndian.PutUint32(b, uint32(v))
	case 64:
		binary.BigEndian.PutUint64(b, v)
	}
}

func (s *Sim) encodePortCounters(caps uint16, req *[mad.GMPDataSize]byte, v *[numCtrs]uint64, b *[mad.GMPDataSize]byte) {
	b[1] = req[1]
	copy(b[2:4], req[2:4])
	b[18] = req[18]
	for _, f := range pcLayout {
		if f.id == ctrXmitWait && caps&PMAXmitWait == 0 {
			continue
		}
		putN(b[f.off:], f.width, narrow(v[f.id], f.width))
	}
	b[19] = uint8(narrow(v[ctrLocalLinkIntegrityErrors], 4))<<4 | uint8(narrow(v[ctrExcessiveBufferOverrunErrors], 4))
	if caps&0x8000 != 0 { // IsQP1DroppedSupported
		putN(b[20:], 16, narrow(v[ctrQP1Dropped], 16))
	}
}

func (s *Sim) encodePortCountersExt(caps uint16, req *[mad.GMPDataSize]byte, v *[numCtrs]uint64, b *[mad.GMPDataSize]byte) {
	b[1] = req[1]
	copy(b[2:8], req[2:8])
	for i, id := range pceSelect {
		if i >= 4 && caps&PMAExtendedWidth == 0 {
			break // NoIETF: data and packets only
		}
		putN(b[8+8*i:], 64, v[id])
	}
	if s.pma.CapMask2&PMA2AdditionalExtended != 0 {
		for i, id := range pceSelect2 {
			putN(b[72+8*i:], 64, v[id])
		}
	}
}
