package mad

import "encoding/binary"

// PortCountersExtendedSize is the part of the GMP data area
// PortCountersExtended uses.
const PortCountersExtendedSize = 184

// CounterSelect bits of PortCountersExtended (a Set clears them).
const (
	ExtCounterSelectXmitData          uint16 = 1 << 0
	ExtCounterSelectRcvData           uint16 = 1 << 1
	ExtCounterSelectXmitPkts          uint16 = 1 << 2
	ExtCounterSelectRcvPkts           uint16 = 1 << 3
	ExtCounterSelectUnicastXmitPkts   uint16 = 1 << 4
	ExtCounterSelectUnicastRcvPkts    uint16 = 1 << 5
	ExtCounterSelectMulticastXmitPkts uint16 = 1 << 6
	ExtCounterSelectMulticastRcvPkts  uint16 = 1 << 7
	ExtCounterSelectAll               uint16 = 0x00ff
)

// PortCountersExtended is the PerfMgt PortCountersExtended attribute
// (0x001D): 64-bit data and packet counters and, with
// ClassPortInfo.AdditionalExtended, 64-bit copies of the error counters.
// Which fields a PMA fills in depends on ClassPortInfo: see
// ClassPortInfo.Extended and Counters. Bytes the PMA does not support are
// reserved (zero), not "zero events".
type PortCountersExtended struct {
	PortSelect     uint8
	CounterSelect  uint16 // ExtCounterSelect* bits, for a Set
	CounterSelect2 uint32 // error-counter clear bits (AdditionalExtended only)

	XmitDataWords         uint64 // PortXmitData: 4-octet words
	RcvDataWords          uint64 // PortRcvData: 4-octet words
	PortXmitPkts          uint64
	PortRcvPkts           uint64
	PortUnicastXmitPkts   uint64
	PortUnicastRcvPkts    uint64
	PortMulticastXmitPkts uint64
	PortMulticastRcvPkts  uint64

	SymbolErrorCounter           uint64
	LinkErrorRecoveryCounter     uint64
	LinkDownedCounter            uint64
	PortRcvErrors                uint64
	PortRcvRemotePhysicalErrors  uint64
	PortRcvSwitchRelayErrors     uint64
	PortXmitDiscards             uint64
	PortXmitConstraintErrors     uint64
	PortRcvConstraintErrors      uint64
	LocalLinkIntegrityErrors     uint64
	ExcessiveBufferOverrunErrors uint64
	VL15Dropped                  uint64
	PortXmitWait                 uint64
	QP1Dropped                   uint64
}

// AttributeID implements Attribute.
func (*PortCountersExtended) AttributeID() AttrID { return AttrPortCountersExtended }

func (p *PortCountersExtended) fields() []*uint64 {
	return []*uint64{
		&p.XmitDataWords, &p.RcvDataWords, &p.PortXmitPkts, &p.PortRcvPkts,
		&p.PortUnicastXmitPkts, &p.PortUnicastRcvPkts, &p.PortMulticastXmitPkts, &p.PortMulticastRcvPkts,
		&p.SymbolErrorCounter, &p.LinkErrorRecoveryCounter, &p.LinkDownedCounter, &p.PortRcvErrors,
		&p.PortRcvRemotePhysicalErrors, &p.PortRcvSwitchRelayErrors, &p.PortXmitDiscards,
		&p.PortXmitConstraintErrors, &p.PortRcvConstraintErrors, &p.LocalLinkIntegrityErrors,
		&p.ExcessiveBufferOverrunErrors, &p.VL15Dropped, &p.PortXmitWait, &p.QP1Dropped,
	}
}

// MarshalAttr implements Attribute.
func (p *PortCountersExtended) MarshalAttr(b []byte) error {
	if err := need("PortCountersExtended", b, PortCountersExtendedSize); err != nil {
		return err
	}
	be := binary.BigEndian
	b[0] = 0
	b[1] = p.PortSelect
	be.PutUint16(b[2:4], p.CounterSelect)
	be.PutUint32(b[4:8], p.CounterSelect2)
	for i, f := range p.fields() {
		be.PutUint64(b[8+8*i:16+8*i], *f)
	}
	return nil
}

// UnmarshalAttr implements Attribute.
func (p *PortCountersExtended) UnmarshalAttr(b []byte) error {
	if err := need("PortCountersExtended", b, PortCountersExtendedSize); err != nil {
		return err
	}
	be := binary.BigEndian
	p.PortSelect = b[1]
	p.CounterSelect = be.Uint16(b[2:4])
	p.CounterSelect2 = be.Uint32(b[4:8])
	for i, f := range p.fields() {
		*f = be.Uint64(b[8+8*i : 16+8*i])
	}
	return nil
}

// XmitBytes is PortXmitData in octets (saturating at the top of uint64).
func (p *PortCountersExtended) XmitBytes() uint64 { return words2octets(p.XmitDataWords) }

// RcvBytes is PortRcvData in octets (saturating at the top of uint64).
func (p *PortCountersExtended) RcvBytes() uint64 { return words2octets(p.RcvDataWords) }

func words2octets(w uint64) uint64 {
	if w > ^uint64(0)/4 {
		return ^uint64(0)
	}
	return w * 4
}

// Errors returns the 64-bit error counters by IBA name, in wire order
// (SymbolErrorCounter .. VL15Dropped, then QP1Dropped). They are only valid
// with ClassPortInfo.AdditionalExtended.
func (p *PortCountersExtended) Errors() []Counter { return p.AppendErrors(nil) }

// AppendErrors appends what Errors returns to dst: a caller that reads
// every port's counters passes a buffer of its own, so reading them
// allocates nothing.
func (p *PortCountersExtended) AppendErrors(dst []Counter) []Counter {
	return append(dst,
		Counter{"SymbolErrorCounter", p.SymbolErrorCounter, 64, KindError},
		Counter{"LinkErrorRecoveryCounter", p.LinkErrorRecoveryCounter, 64, KindError},
		Counter{"LinkDownedCounter", p.LinkDownedCounter, 64, KindError},
		Counter{"PortRcvErrors", p.PortRcvErrors, 64, KindError},
		Counter{"PortRcvRemotePhysicalErrors", p.PortRcvRemotePhysicalErrors, 64, KindError},
		Counter{"PortRcvSwitchRelayErrors", p.PortRcvSwitchRelayErrors, 64, KindError},
		Counter{"PortXmitDiscards", p.PortXmitDiscards, 64, KindError},
		Counter{"PortXmitConstraintErrors", p.PortXmitConstraintErrors, 64, KindError},
		Counter{"PortRcvConstraintErrors", p.PortRcvConstraintErrors, 64, KindError},
		Counter{"LocalLinkIntegrityErrors", p.LocalLinkIntegrityErrors, 64, KindError},
		Counter{"ExcessiveBufferOverrunErrors", p.ExcessiveBufferOverrunErrors, 64, KindError},
		Counter{"VL15Dropped", p.VL15Dropped, 64, KindError},
		Counter{"QP1Dropped", p.QP1Dropped, 64, KindError},
	)
}

// Counters returns the counters valid for a PMA with capabilities cpi
// (nil: all), by IBA name: data and packets with ExtendedWidth or
// ExtendedWidthNoIETF, unicast/multicast packets with ExtendedWidth, the
// error counters and PortXmitWait with AdditionalExtended.
func (p *PortCountersExtended) Counters(cpi *ClassPortInfo) []Counter {
	return p.AppendCounters(nil, cpi)
}

// AppendCounters appends what Counters returns to dst (see AppendErrors).
func (p *PortCountersExtended) AppendCounters(dst []Counter, cpi *ClassPortInfo) []Counter {
	sup := cpi.Extended()
	cs := dst
	if sup.Data {
		cs = append(cs,
			Counter{"PortXmitData", p.XmitDataWords, 64, KindDataWords},
			Counter{"PortRcvData", p.RcvDataWords, 64, KindDataWords},
			Counter{"PortXmitPkts", p.PortXmitPkts, 64, KindPackets},
			Counter{"PortRcvPkts", p.PortRcvPkts, 64, KindPackets},
		)
	}
	if sup.UnicastMulticast {
		cs = append(cs,
			Counter{"PortUnicastXmitPkts", p.PortUnicastXmitPkts, 64, KindPackets},
			Counter{"PortUnicastRcvPkts", p.PortUnicastRcvPkts, 64, KindPackets},
			Counter{"PortMulticastXmitPkts", p.PortMulticastXmitPkts, 64, KindPackets},
			Counter{"PortMulticastRcvPkts", p.PortMulticastRcvPkts, 64, KindPackets},
		)
	}
	if sup.Errors {
		cs = p.AppendErrors(cs)
		cs = append(cs, Counter{"PortXmitWait", p.PortXmitWait, 64, KindWait})
	}
	return cs
}
