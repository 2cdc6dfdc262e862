package mad

import "encoding/binary"

// AttrARInfo is NVIDIA's vendor SMP attribute AdaptiveRoutingInfo
// (0xFF20, classes 0x01 and 0x81), the switch's adaptive-routing state and
// capabilities: what ibdiagnet reads for its AR_INFO section (ibis'
// IBIS_IB_ATTR_SMP_AR_INFO, struct adaptive_routing_info).
const AttrARInfo AttrID = 0xff20

// ARInfoSize is the attribute's length: five 32-bit words.
const ARInfoSize = 20

// ARInfo is AdaptiveRoutingInfo as a Get with modifier 0 answers it (the
// switch's current settings). The layout is ibis' adb one: big-endian
// 32-bit words whose bit 0 is the word's least significant bit, so the
// first word's flags sit in byte 3 (Enabled is bit 0 of byte 3).
type ARInfo struct {
	Enabled           bool  // word 0 bit 0 ('e'): adaptive routing is on
	ARNSupported      bool  // bit 1: adaptive routing notifications
	FRNSupported      bool  // bit 2: fault routing notifications
	FRSupported       bool  // bit 3: fallback routing
	FREnabled         bool  // bit 4
	RNXmitEnabled     bool  // bit 5: the switch generates and passes on RN packets
	SubGroupsActive   uint8 // bits 8-11
	GroupTableCopySup uint8 // bits 12-15
	DirectionNumSup   uint8 // bits 16-23
	NoFallback        bool  // bit 24
	IS4Mode           bool  // bit 25
	GlobalGroups      bool  // bit 26
	BySLCap           bool  // bit 27
	BySLEnabled       bool  // bit 28: AR applies only to EnableBySLMask's SLs
	ByTransportCap    bool  // bit 29
	DynCapCalcSup     bool  // bit 30
	// Word 1.
	GroupCap       uint16 // bits 0-11: AR groups supported; 0: no adaptive routing
	GroupTop       uint16 // bits 12-23: highest group enabled
	GroupTableCap  uint8  // bits 24-27
	StringWidthCap uint8  // bits 28-31
	// Word 2.
	ARVersionCap       uint8  // bits 0-3
	RNVersionCap       uint8  // bits 4-7
	SubGroupsSupported uint8  // bits 8-15
	EnableBySLMask     uint16 // bits 16-31
	// Word 3.
	ByTransportDisable uint8 // bits 0-7: UD, RC, UC, DCT
	// Word 4.
	AgeingTime uint32 // microseconds
}

// AttributeID implements Attribute.
func (*ARInfo) AttributeID() AttrID { return AttrARInfo }

func bit(w uint32, i uint) bool { return w>>i&1 != 0 }

func setBit(w *uint32, i uint, v bool) {
	if v {
		*w |= 1 << i
	}
}

// MarshalAttr implements Attribute. Reserved bits are zero; values too
// wide for their field are refused.
func (a *ARInfo) MarshalAttr(b []byte) error {
	if err := need("ARInfo", b, ARInfoSize); err != nil {
		return err
	}
	switch {
	case a.SubGroupsActive > 0xf || a.GroupTableCopySup > 0xf:
		return &FieldError{Field: "ARInfo.SubGroupsActive/GroupTableCopySup", Msg: "wider than 4 bits"}
	case a.GroupCap > 0xfff || a.GroupTop > 0xfff:
		return &FieldError{Field: "ARInfo.GroupCap/GroupTop", Msg: "wider than 12 bits"}
	case a.GroupTableCap > 0xf || a.StringWidthCap > 0xf || a.ARVersionCap > 0xf || a.RNVersionCap > 0xf:
		return &FieldError{Field: "ARInfo", Msg: "a 4-bit field is wider than 4 bits"}
	}
	var w0 uint32
	for i, v := range []bool{a.Enabled, a.ARNSupported, a.FRNSupported, a.FRSupported, a.FREnabled, a.RNXmitEnabled} {
		setBit(&w0, uint(i), v)
	}
	w0 |= uint32(a.SubGroupsActive)<<8 | uint32(a.GroupTableCopySup)<<12 | uint32(a.DirectionNumSup)<<16
	for i, v := range []bool{a.NoFallback, a.IS4Mode, a.GlobalGroups, a.BySLCap, a.BySLEnabled, a.ByTransportCap, a.DynCapCalcSup} {
		setBit(&w0, 24+uint(i), v)
	}
	be := binary.BigEndian
	be.PutUint32(b[0:], w0)
	be.PutUint32(b[4:], uint32(a.GroupCap)|uint32(a.GroupTop)<<12|uint32(a.GroupTableCap)<<24|uint32(a.StringWidthCap)<<28)
	be.PutUint32(b[8:], uint32(a.ARVersionCap)|uint32(a.RNVersionCap)<<4|uint32(a.SubGroupsSupported)<<8|uint32(a.EnableBySLMask)<<16)
	be.PutUint32(b[12:], uint32(a.ByTransportDisable))
	be.PutUint32(b[16:], a.AgeingTime)
	return nil
}

// UnmarshalAttr implements Attribute.
func (a *ARInfo) UnmarshalAttr(b []byte) error {
	if err := need("ARInfo", b, ARInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	w0, w1, w2 := be.Uint32(b[0:]), be.Uint32(b[4:]), be.Uint32(b[8:])
	*a = ARInfo{
		Enabled: bit(w0, 0), ARNSupported: bit(w0, 1), FRNSupported: bit(w0, 2), FRSupported: bit(w0, 3),
		FREnabled: bit(w0, 4), RNXmitEnabled: bit(w0, 5),
		SubGroupsActive: uint8(w0 >> 8 & 0xf), GroupTableCopySup: uint8(w0 >> 12 & 0xf), DirectionNumSup: uint8(w0 >> 16),
		NoFallback: bit(w0, 24), IS4Mode: bit(w0, 25), GlobalGroups: bit(w0, 26), BySLCap: bit(w0, 27),
		BySLEnabled: bit(w0, 28), ByTransportCap: bit(w0, 29), DynCapCalcSup: bit(w0, 30),
		GroupCap: uint16(w1 & 0xfff), GroupTop: uint16(w1 >> 12 & 0xfff), GroupTableCap: uint8(w1 >> 24 & 0xf), StringWidthCap: uint8(w1 >> 28),
		ARVersionCap: uint8(w2 & 0xf), RNVersionCap: uint8(w2 >> 4 & 0xf), SubGroupsSupported: uint8(w2 >> 8), EnableBySLMask: uint16(w2 >> 16),
		ByTransportDisable: b[15],
		AgeingTime:         be.Uint32(b[16:]),
	}
	return nil
}

// SLs says which service levels adaptive routing applies to: all 16
// unless BySLEnabled restricts it to EnableBySLMask.
func (a *ARInfo) SLs() uint16 {
	if a.BySLEnabled {
		return a.EnableBySLMask
	}
	return 0xffff
}
