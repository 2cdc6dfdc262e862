package mad

import (
	"encoding/binary"
	"fmt"
)

// PortSelectAll is the PortSelect value that asks a PMA for counters
// summed over all its ports (only with ClassPortInfo.AllPortSelect).
const PortSelectAll = 0xff

// PortCountersSize is the part of the GMP data area PortCounters uses.
const PortCountersSize = 44

// CounterSelect bits of PortCounters (a Set clears the selected counters).
// PortCountersExtended uses bits 0..7 for its own fields (see
// ExtCounterSelect*).
const (
	CounterSelectSymbolError                uint16 = 1 << 0
	CounterSelectLinkErrorRecovery          uint16 = 1 << 1
	CounterSelectLinkDowned                 uint16 = 1 << 2
	CounterSelectRcvErrors                  uint16 = 1 << 3
	CounterSelectRcvRemotePhysicalErrors    uint16 = 1 << 4
	CounterSelectRcvSwitchRelayErrors       uint16 = 1 << 5
	CounterSelectXmitDiscards               uint16 = 1 << 6
	CounterSelectXmitConstraintErrors       uint16 = 1 << 7
	CounterSelectRcvConstraintErrors        uint16 = 1 << 8
	CounterSelectLocalLinkIntegrityErrors   uint16 = 1 << 9
	CounterSelectExcessiveBufferOverrunErrs uint16 = 1 << 10
	CounterSelectVL15Dropped                uint16 = 1 << 11
	CounterSelectXmitData                   uint16 = 1 << 12
	CounterSelectRcvData                    uint16 = 1 << 13
	CounterSelectXmitPkts                   uint16 = 1 << 14
	CounterSelectRcvPkts                    uint16 = 1 << 15

	// CounterSelectErrors selects every error counter (bits 0..11), what
	// ibqueryerrors -k clears.
	CounterSelectErrors uint16 = 0x0fff
	// CounterSelectData selects the data and packet counters (bits
	// 12..15), what ibqueryerrors -K clears.
	CounterSelectData uint16 = 0xf000
	// CounterSelectAll selects every counter of CounterSelect.
	CounterSelectAll uint16 = 0xffff

	// CounterSelect2XmitWait (in CounterSelect2) clears PortXmitWait.
	CounterSelect2XmitWait uint8 = 1 << 0
)

// PortCounters is the PerfMgt PortCounters attribute (0x0012). Every
// counter saturates at its all-ones value instead of wrapping.
//
// The data counters count 4-byte words: use XmitBytes and RcvBytes for
// octets.
type PortCounters struct {
	PortSelect     uint8
	CounterSelect  uint16 // CounterSelect* bits, for a Set
	CounterSelect2 uint8  // CounterSelect2XmitWait, for a Set

	SymbolErrorCounter           uint16
	LinkErrorRecoveryCounter     uint8
	LinkDownedCounter            uint8
	PortRcvErrors                uint16
	PortRcvRemotePhysicalErrors  uint16
	PortRcvSwitchRelayErrors     uint16
	PortXmitDiscards             uint16
	PortXmitConstraintErrors     uint8
	PortRcvConstraintErrors      uint8
	LocalLinkIntegrityErrors     uint8 // 4 bits
	ExcessiveBufferOverrunErrors uint8 // 4 bits
	QP1Dropped                   uint16
	VL15Dropped                  uint16
	XmitDataWords                uint32 // PortXmitData: 4-octet words
	RcvDataWords                 uint32 // PortRcvData: 4-octet words
	PortXmitPkts                 uint32
	PortRcvPkts                  uint32
	PortXmitWait                 uint32
}

// AttributeID implements Attribute.
func (*PortCounters) AttributeID() AttrID { return AttrPortCounters }

// MarshalAttr implements Attribute.
func (p *PortCounters) MarshalAttr(b []byte) error {
	if err := need("PortCounters", b, PortCountersSize); err != nil {
		return err
	}
	if err := checkAll(
		bitsCheck{"PortCounters.LocalLinkIntegrityErrors", uint64(p.LocalLinkIntegrityErrors), 4},
		bitsCheck{"PortCounters.ExcessiveBufferOverrunErrors", uint64(p.ExcessiveBufferOverrunErrors), 4},
	); err != nil {
		return err
	}
	be := binary.BigEndian
	b[0] = 0
	b[1] = p.PortSelect
	be.PutUint16(b[2:4], p.CounterSelect)
	be.PutUint16(b[4:6], p.SymbolErrorCounter)
	b[6] = p.LinkErrorRecoveryCounter
	b[7] = p.LinkDownedCounter
	be.PutUint16(b[8:10], p.PortRcvErrors)
	be.PutUint16(b[10:12], p.PortRcvRemotePhysicalErrors)
	be.PutUint16(b[12:14], p.PortRcvSwitchRelayErrors)
	be.PutUint16(b[14:16], p.PortXmitDiscards)
	b[16] = p.PortXmitConstraintErrors
	b[17] = p.PortRcvConstraintErrors
	b[18] = p.CounterSelect2
	b[19] = p.LocalLinkIntegrityErrors<<4 | p.ExcessiveBufferOverrunErrors
	be.PutUint16(b[20:22], p.QP1Dropped)
	be.PutUint16(b[22:24], p.VL15Dropped)
	be.PutUint32(b[24:28], p.XmitDataWords)
	be.PutUint32(b[28:32], p.RcvDataWords)
	be.PutUint32(b[32:36], p.PortXmitPkts)
	be.PutUint32(b[36:40], p.PortRcvPkts)
	be.PutUint32(b[40:44], p.PortXmitWait)
	return nil
}

// UnmarshalAttr implements Attribute.
func (p *PortCounters) UnmarshalAttr(b []byte) error {
	if err := need("PortCounters", b, PortCountersSize); err != nil {
		return err
	}
	be := binary.BigEndian
	p.PortSelect = b[1]
	p.CounterSelect = be.Uint16(b[2:4])
	p.SymbolErrorCounter = be.Uint16(b[4:6])
	p.LinkErrorRecoveryCounter = b[6]
	p.LinkDownedCounter = b[7]
	p.PortRcvErrors = be.Uint16(b[8:10])
	p.PortRcvRemotePhysicalErrors = be.Uint16(b[10:12])
	p.PortRcvSwitchRelayErrors = be.Uint16(b[12:14])
	p.PortXmitDiscards = be.Uint16(b[14:16])
	p.PortXmitConstraintErrors = b[16]
	p.PortRcvConstraintErrors = b[17]
	p.CounterSelect2 = b[18]
	p.LocalLinkIntegrityErrors = b[19] >> 4
	p.ExcessiveBufferOverrunErrors = b[19] & 0xf
	p.QP1Dropped = be.Uint16(b[20:22])
	p.VL15Dropped = be.Uint16(b[22:24])
	p.XmitDataWords = be.Uint32(b[24:28])
	p.RcvDataWords = be.Uint32(b[28:32])
	p.PortXmitPkts = be.Uint32(b[32:36])
	p.PortRcvPkts = be.Uint32(b[36:40])
	p.PortXmitWait = be.Uint32(b[40:44])
	return nil
}

// XmitBytes is PortXmitData in octets.
func (p *PortCounters) XmitBytes() uint64 { return uint64(p.XmitDataWords) * 4 }

// RcvBytes is PortRcvData in octets.
func (p *PortCounters) RcvBytes() uint64 { return uint64(p.RcvDataWords) * 4 }

// CounterKind says what a counter counts.
type CounterKind uint8

// Counter kinds.
const (
	KindError     CounterKind = iota // an error or discard event count
	KindDataWords                    // 4-octet words of data (PortXmitData, PortRcvData)
	KindPackets                      // packets
	KindWait                         // ticks a port had data to send but could not (PortXmitWait)
)

func (k CounterKind) String() string {
	switch k {
	case KindError:
		return "error"
	case KindDataWords:
		return "data-words"
	case KindPackets:
		return "packets"
	case KindWait:
		return "wait-ticks"
	}
	return fmt.Sprintf("CounterKind(%d)", uint8(k))
}

// Counter is one counter by its IBA name, with its raw wire value and bit
// width. Value is as on the wire: for KindDataWords it counts 4-octet words
// (Octets converts).
type Counter struct {
	Name  string // IBA name, as perfquery prints it: "SymbolErrorCounter"
	Value uint64
	Bits  int
	Kind  CounterKind
}

// Max is the largest value the counter can hold (where it saturates).
func (c Counter) Max() uint64 {
	if c.Bits >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(c.Bits) - 1
}

// Saturated reports whether the counter stuck at its maximum. A saturated
// counter no longer counts: its value is a lower bound.
func (c Counter) Saturated() bool { return c.Value == c.Max() }

// Octets is the value in octets for data counters, else Value.
func (c Counter) Octets() uint64 {
	if c.Kind == KindDataWords {
		return c.Value * 4
	}
	return c.Value
}

// Errors returns the error counters in wire order, by IBA name:
// SymbolErrorCounter through VL15Dropped (the twelve CounterSelect bits
// 0..11). QP1Dropped is left out: it is only valid with
// ClassPortInfo.QP1Dropped (see Counters).
func (p *PortCounters) Errors() []Counter { return p.AppendErrors(nil) }

// AppendErrors appends what Errors returns to dst: a caller that reads
// every port's counters passes a buffer of its own, so reading them
// allocates nothing.
func (p *PortCounters) AppendErrors(dst []Counter) []Counter {
	return append(dst,
		Counter{"SymbolErrorCounter", uint64(p.SymbolErrorCounter), 16, KindError},
		Counter{"LinkErrorRecoveryCounter", uint64(p.LinkErrorRecoveryCounter), 8, KindError},
		Counter{"LinkDownedCounter", uint64(p.LinkDownedCounter), 8, KindError},
		Counter{"PortRcvErrors", uint64(p.PortRcvErrors), 16, KindError},
		Counter{"PortRcvRemotePhysicalErrors", uint64(p.PortRcvRemotePhysicalErrors), 16, KindError},
		Counter{"PortRcvSwitchRelayErrors", uint64(p.PortRcvSwitchRelayErrors), 16, KindError},
		Counter{"PortXmitDiscards", uint64(p.PortXmitDiscards), 16, KindError},
		Counter{"PortXmitConstraintErrors", uint64(p.PortXmitConstraintErrors), 8, KindError},
		Counter{"PortRcvConstraintErrors", uint64(p.PortRcvConstraintErrors), 8, KindError},
		Counter{"LocalLinkIntegrityErrors", uint64(p.LocalLinkIntegrityErrors), 4, KindError},
		Counter{"ExcessiveBufferOverrunErrors", uint64(p.ExcessiveBufferOverrunErrors), 4, KindError},
		Counter{"VL15Dropped", uint64(p.VL15Dropped), 16, KindError},
	)
}

// Counters returns every counter valid for a PMA with capabilities cpi:
// the error counters, QP1Dropped when cpi.QP1Dropped, the data and packet
// counters, and PortXmitWait when cpi.XmitWait. A nil cpi includes all.
func (p *PortCounters) Counters(cpi *ClassPortInfo) []Counter { return p.AppendCounters(nil, cpi) }

// AppendCounters appends what Counters returns to dst (see AppendErrors).
func (p *PortCounters) AppendCounters(dst []Counter, cpi *ClassPortInfo) []Counter {
	cs := p.AppendErrors(dst)
	if cpi == nil || cpi.QP1Dropped() {
		cs = append(cs, Counter{"QP1Dropped", uint64(p.QP1Dropped), 16, KindError})
	}
	cs = append(cs,
		Counter{"PortXmitData", uint64(p.XmitDataWords), 32, KindDataWords},
		Counter{"PortRcvData", uint64(p.RcvDataWords), 32, KindDataWords},
		Counter{"PortXmitPkts", uint64(p.PortXmitPkts), 32, KindPackets},
		Counter{"PortRcvPkts", uint64(p.PortRcvPkts), 32, KindPackets},
	)
	if cpi == nil || cpi.XmitWait() {
		cs = append(cs, Counter{"PortXmitWait", uint64(p.PortXmitWait), 32, KindWait})
	}
	return cs
}

// Saturated returns the IBA names of the counters (all fields, whatever
// the PMA's capabilities) that stuck at their maximum.
func (p *PortCounters) Saturated() []string {
	var names []string
	for _, c := range p.Counters(nil) {
		if c.Saturated() {
			names = append(names, c.Name)
		}
	}
	return names
}
