package mad

import (
	"encoding/binary"
	"fmt"
)

// ClassPortInfoSize is the length of ClassPortInfo within the GMP data
// area.
const ClassPortInfoSize = 72

// ClassPortInfo.CapabilityMask bits: generic (IBA 13.4.8.1) and PerfMgt
// specific (IBA 16.1.3.1 and later annexes).
const (
	CPICapIsTrapSupported                uint16 = 0x0001
	CPICapIsGetSetNoticeSupported        uint16 = 0x0002
	CPICapIsCapabilityMask2Supported     uint16 = 0x0004
	PMCapAllPortSelect                   uint16 = 0x0100
	PMCapExtendedWidth                   uint16 = 0x0200 // PortCountersExtended incl. unicast/multicast
	PMCapExtendedWidthNoIETF             uint16 = 0x0400 // PortCountersExtended data/packets only
	PMCapSamplesOnly                     uint16 = 0x0800
	PMCapXmitWait                        uint16 = 0x1000 // PortCounters.PortXmitWait is valid
	PMCapInhibitLimitedPKeyMcastConstErr uint16 = 0x2000
	PMCapRSFECCounters                   uint16 = 0x4000
	PMCapQP1Dropped                      uint16 = 0x8000 // PortCounters.QP1Dropped is valid
)

// ClassPortInfo.CapabilityMask2 bits for PerfMgt (the value after the
// shift, i.e. ClassPortInfo.CapabilityMask2).
const (
	PMCap2PMKey                      uint32 = 1 << 0
	PMCap2AdditionalCountersExtended uint32 = 1 << 1 // 64-bit error counters in PortCountersExtended
)

// ClassPortInfo is the ClassPortInfo attribute (0x0001) of a GS class, here
// PerfMgt's (IBA 13.4.8.1). CapabilityMask2 (27 bits) and RespTimeValue (5
// bits) share one 32-bit word on the wire.
type ClassPortInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	CapabilityMask  uint16 // CPICap*/PMCap* bits
	CapabilityMask2 uint32 // 27 bits; PMCap2* bits
	RespTimeValue   uint8  // 5 bits

	RedirectGID  [16]byte
	RedirectTC   uint8
	RedirectSL   uint8  // 4 bits
	RedirectFL   uint32 // 20 bits
	RedirectLID  uint16 // non-zero: the client must redirect
	RedirectPKey uint16
	RedirectQP   uint32 // 24 bits
	RedirectQKey uint32

	TrapGID  [16]byte
	TrapTC   uint8
	TrapSL   uint8  // 4 bits
	TrapFL   uint32 // 20 bits
	TrapLID  uint16
	TrapPKey uint16
	TrapHL   uint8
	TrapQP   uint32 // 24 bits
	TrapQKey uint32
}

// AttributeID implements Attribute.
func (*ClassPortInfo) AttributeID() AttrID { return AttrClassPortInfo }

// MarshalAttr implements Attribute.
func (c *ClassPortInfo) MarshalAttr(b []byte) error {
	if err := need("ClassPortInfo", b, ClassPortInfoSize); err != nil {
		return err
	}
	if err := checkAll(
		bitsCheck{"ClassPortInfo.CapabilityMask2", uint64(c.CapabilityMask2), 27},
		bitsCheck{"ClassPortInfo.RespTimeValue", uint64(c.RespTimeValue), 5},
		bitsCheck{"ClassPortInfo.RedirectSL", uint64(c.RedirectSL), 4},
		bitsCheck{"ClassPortInfo.RedirectFL", uint64(c.RedirectFL), 20},
		bitsCheck{"ClassPortInfo.RedirectQP", uint64(c.RedirectQP), 24},
		bitsCheck{"ClassPortInfo.TrapSL", uint64(c.TrapSL), 4},
		bitsCheck{"ClassPortInfo.TrapFL", uint64(c.TrapFL), 20},
		bitsCheck{"ClassPortInfo.TrapQP", uint64(c.TrapQP), 24},
	); err != nil {
		return err
	}
	be := binary.BigEndian
	b[0] = c.BaseVersion
	b[1] = c.ClassVersion
	be.PutUint16(b[2:4], c.CapabilityMask)
	be.PutUint32(b[4:8], c.CapabilityMask2<<5|uint32(c.RespTimeValue))
	copy(b[8:24], c.RedirectGID[:])
	be.PutUint32(b[24:28], uint32(c.RedirectTC)<<24|uint32(c.RedirectSL)<<20|c.RedirectFL)
	be.PutUint16(b[28:30], c.RedirectLID)
	be.PutUint16(b[30:32], c.RedirectPKey)
	be.PutUint32(b[32:36], c.RedirectQP)
	be.PutUint32(b[36:40], c.RedirectQKey)
	copy(b[40:56], c.TrapGID[:])
	be.PutUint32(b[56:60], uint32(c.TrapTC)<<24|uint32(c.TrapSL)<<20|c.TrapFL)
	be.PutUint16(b[60:62], c.TrapLID)
	be.PutUint16(b[62:64], c.TrapPKey)
	be.PutUint32(b[64:68], uint32(c.TrapHL)<<24|c.TrapQP)
	be.PutUint32(b[68:72], c.TrapQKey)
	return nil
}

// UnmarshalAttr implements Attribute. Reserved bits are ignored.
func (c *ClassPortInfo) UnmarshalAttr(b []byte) error {
	if err := need("ClassPortInfo", b, ClassPortInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	c.BaseVersion = b[0]
	c.ClassVersion = b[1]
	c.CapabilityMask = be.Uint16(b[2:4])
	w := be.Uint32(b[4:8])
	c.CapabilityMask2 = w >> 5
	c.RespTimeValue = uint8(w & 0x1f)
	copy(c.RedirectGID[:], b[8:24])
	w = be.Uint32(b[24:28])
	c.RedirectTC, c.RedirectSL, c.RedirectFL = uint8(w>>24), uint8(w>>20)&0xf, w&0xfffff
	c.RedirectLID = be.Uint16(b[28:30])
	c.RedirectPKey = be.Uint16(b[30:32])
	c.RedirectQP = be.Uint32(b[32:36]) & 0xffffff
	c.RedirectQKey = be.Uint32(b[36:40])
	copy(c.TrapGID[:], b[40:56])
	w = be.Uint32(b[56:60])
	c.TrapTC, c.TrapSL, c.TrapFL = uint8(w>>24), uint8(w>>20)&0xf, w&0xfffff
	c.TrapLID = be.Uint16(b[60:62])
	c.TrapPKey = be.Uint16(b[62:64])
	w = be.Uint32(b[64:68])
	c.TrapHL, c.TrapQP = uint8(w>>24), w&0xffffff
	c.TrapQKey = be.Uint32(b[68:72])
	return nil
}

// AllPortSelect reports whether PortSelect 0xFF returns counters summed
// over all ports.
func (c *ClassPortInfo) AllPortSelect() bool { return c.CapabilityMask&PMCapAllPortSelect != 0 }

// ExtendedWidth reports IsExtendedWidthSupported: PortCountersExtended
// with every data, packet, unicast and multicast counter.
func (c *ClassPortInfo) ExtendedWidth() bool { return c.CapabilityMask&PMCapExtendedWidth != 0 }

// ExtendedWidthNoIETF reports IsExtendedWidthSupportedNoIETF:
// PortCountersExtended with data and packet counters only.
func (c *ClassPortInfo) ExtendedWidthNoIETF() bool {
	return c.CapabilityMask&PMCapExtendedWidthNoIETF != 0
}

// XmitWait reports IsPortCountersXmitWaitSupported: PortCounters'
// PortXmitWait is valid.
func (c *ClassPortInfo) XmitWait() bool { return c.CapabilityMask&PMCapXmitWait != 0 }

// QP1Dropped reports IsQP1DroppedSupported: PortCounters' QP1Dropped is
// valid.
func (c *ClassPortInfo) QP1Dropped() bool { return c.CapabilityMask&PMCapQP1Dropped != 0 }

// AdditionalExtended reports IsAdditionalPortCountersExtendedSupported:
// PortCountersExtended carries the 64-bit error counters (byte 72 on).
// perfquery reads CapabilityMask2 whether or not CapabilityMask has
// IsCapabilityMask2Supported; so does this.
func (c *ClassPortInfo) AdditionalExtended() bool {
	return c.CapabilityMask2&PMCap2AdditionalCountersExtended != 0
}

// Redirected reports whether the PMA asks clients to redirect (RedirectLID
// non-zero); ibdoctor does not follow redirects and reports them instead.
func (c *ClassPortInfo) Redirected() bool { return c.RedirectLID != 0 }

// ExtendedSupport is which parts of PortCountersExtended a PMA fills in.
type ExtendedSupport struct {
	Data             bool // PortXmitData, PortRcvData, PortXmitPkts, PortRcvPkts
	UnicastMulticast bool // Port{Unicast,Multicast}{Xmit,Rcv}Pkts
	Errors           bool // the 64-bit error counters, PortXmitWait, QP1Dropped
}

// Any reports whether PortCountersExtended is worth asking for at all.
func (e ExtendedSupport) Any() bool { return e.Data || e.UnicastMulticast || e.Errors }

// Extended says which PortCountersExtended fields are valid for this PMA.
// A nil ClassPortInfo (not read) means "unknown: assume everything".
func (c *ClassPortInfo) Extended() ExtendedSupport {
	if c == nil {
		return ExtendedSupport{true, true, true}
	}
	return ExtendedSupport{
		Data:             c.ExtendedWidth() || c.ExtendedWidthNoIETF(),
		UnicastMulticast: c.ExtendedWidth(),
		Errors:           c.AdditionalExtended(),
	}
}

// String lists the capabilities the counter sweep cares about.
func (c *ClassPortInfo) String() string {
	return fmt.Sprintf("PerfMgt caps 0x%04x caps2 0x%07x (allport %v ext %v ext-noietf %v xmitwait %v qp1dropped %v ext-errors %v)",
		c.CapabilityMask, c.CapabilityMask2, c.AllPortSelect(), c.ExtendedWidth(), c.ExtendedWidthNoIETF(), c.XmitWait(), c.QP1Dropped(), c.AdditionalExtended())
}
