package mad

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// PortInfoSize is the length of the PortInfo attribute (the whole SMP data
// area).
const PortInfoSize = 64

// PortInfo.CapabilityMask bits (IBA 14.2.5.6, table 161).
const (
	CapIsSM                                uint32 = 1 << 1
	CapIsNoticeSupported                   uint32 = 1 << 2
	CapIsTrapSupported                     uint32 = 1 << 3
	CapIsOptionalIPDSupported              uint32 = 1 << 4
	CapIsAutomaticMigrationSupported       uint32 = 1 << 5
	CapIsSLMappingSupported                uint32 = 1 << 6
	CapIsMKeyNVRAM                         uint32 = 1 << 7
	CapIsPKeyNVRAM                         uint32 = 1 << 8
	CapIsLEDInfoSupported                  uint32 = 1 << 9
	CapIsSMDisabled                        uint32 = 1 << 10
	CapIsSystemImageGUIDSupported          uint32 = 1 << 11
	CapIsPKeySwitchExternalPortTrapSupport uint32 = 1 << 12
	CapIsCableInfoSupported                uint32 = 1 << 13
	CapIsExtendedSpeedsSupported           uint32 = 1 << 14
	CapIsCapabilityMask2Supported          uint32 = 1 << 15
	CapIsCommunicationManagementSupported  uint32 = 1 << 16
	CapIsSNMPTunnelingSupported            uint32 = 1 << 17
	CapIsReinitSupported                   uint32 = 1 << 18
	CapIsDeviceManagementSupported         uint32 = 1 << 19
	CapIsVendorClassSupported              uint32 = 1 << 20
	CapIsDRNoticeSupported                 uint32 = 1 << 21
	CapIsCapabilityMaskNoticeSupported     uint32 = 1 << 22
	CapIsBootManagementSupported           uint32 = 1 << 23
	CapIsLinkRoundTripLatencySupported     uint32 = 1 << 24
	CapIsClientReregistrationSupported     uint32 = 1 << 25
	CapIsOtherLocalChangesNoticeSupported  uint32 = 1 << 26
	CapIsLinkSpeedWidthPairsTableSupported uint32 = 1 << 27
	CapIsVendorSpecificMadsTableSupported  uint32 = 1 << 28
	CapIsMcastPKeyTrapSuppressionSupported uint32 = 1 << 29
	CapIsMulticastFDBTopSupported          uint32 = 1 << 30
	CapIsHierarchyInfoSupported            uint32 = 1 << 31
)

// PortInfo.CapabilityMask2 bits.
const (
	Cap2IsSetNodeDescriptionSupported   uint16 = 0x0001
	Cap2IsPortInfoExtendedSupported     uint16 = 0x0002
	Cap2IsVirtualizationSupported       uint16 = 0x0004
	Cap2IsSwitchPortStateTableSupported uint16 = 0x0008
	Cap2IsLinkWidth2xSupported          uint16 = 0x0010
	Cap2IsLinkSpeedHDRSupported         uint16 = 0x0020
	Cap2IsLinkSpeedNDRSupported         uint16 = 0x0400
	Cap2IsExtendedSpeeds2Supported      uint16 = 0x0800
	Cap2IsLinkSpeedXDRSupported         uint16 = 0x1000
)

// Special values of the Enabled fields.
const (
	// LinkWidthEnabledSupported (255) asks the port to enable every
	// supported width.
	LinkWidthEnabledSupported = 0xff
	// LinkSpeedEnabledSupported (15) enables every supported SDR..QDR speed.
	LinkSpeedEnabledSupported = 15
	// LinkSpeedExtEnabledDisable (30) disables extended speeds.
	LinkSpeedExtEnabledDisable = 30
	// LinkSpeedExtEnabledSupported (31) enables every supported extended
	// speed.
	LinkSpeedExtEnabledSupported = 31
	// LinkSpeedExtEnabled2Supported (7) is taken to enable every supported
	// LinkSpeedExt2 speed, by analogy with the other Enabled fields.
	LinkSpeedExtEnabled2Supported = 7
)

// PortInfo is the PortInfo SMP attribute (0x0015), all 64 bytes. Fields
// narrower than their Go type are checked on encode.
//
// C14-24.2.1: when PortState is Down, every field except PortState and
// PhysState may be garbage; do not evaluate widths or speeds of down ports.
type PortInfo struct {
	MKey            uint64
	GIDPrefix       uint64
	LID             uint16
	MasterSMLID     uint16
	CapabilityMask  uint32 // Cap* bits
	DiagCode        uint16
	MKeyLeasePeriod uint16
	LocalPortNum    uint8

	LinkWidthEnabled   Width // mask; 0 no change, 255 set to supported
	LinkWidthSupported Width // mask
	LinkWidthActive    Width // one width

	LinkSpeedSupported   uint8 // 4 bits: 1 SDR, 2 DDR, 4 QDR
	PortState            PortState
	PhysState            PhysState
	LinkDownDefaultState uint8 // 4 bits
	MKeyProtectBits      uint8 // 2 bits
	LMC                  uint8 // 3 bits
	LinkSpeedActive      uint8 // 4 bits
	LinkSpeedEnabled     uint8 // 4 bits; 15 set to supported
	NeighborMTU          MTU   // 4 bits
	MasterSMSL           uint8 // 4 bits
	VLCap                uint8 // 4 bits
	InitType             uint8 // 4 bits
	VLHighLimit          uint8
	VLArbHighCap         uint8
	VLArbLowCap          uint8
	InitTypeReply        uint8 // 4 bits
	MTUCap               MTU   // 4 bits
	VLStallCount         uint8 // 3 bits
	HOQLife              uint8 // 5 bits
	OperationalVLs       uint8 // 4 bits

	PartitionEnforcementInbound  bool
	PartitionEnforcementOutbound bool
	FilterRawInbound             bool
	FilterRawOutbound            bool

	MKeyViolations uint16
	PKeyViolations uint16
	QKeyViolations uint16
	GUIDCap        uint8

	ClientReregister             bool
	MulticastPKeyTrapSuppression uint8 // 2 bits
	SubnetTimeout                uint8 // 5 bits
	RespTimeValue                uint8 // 5 bits
	LocalPhyErrors               uint8 // 4 bits (threshold)
	OverrunErrors                uint8 // 4 bits (threshold)
	MaxCreditHint                uint16

	LinkSpeedExtActive2    uint8  // 2 bits: 1 XDR
	LinkSpeedExtSupported2 uint8  // 2 bits: bit 0 XDR
	LinkSpeedExtEnabled2   uint8  // 3 bits
	LinkRoundTripLatency   uint32 // 24 bits
	CapabilityMask2        uint16 // Cap2* bits
	LinkSpeedExtActive     uint8  // 4 bits: 1 FDR, 2 EDR, 4 HDR, 8 NDR
	LinkSpeedExtSupported  uint8  // 4 bits, mask of the same
	LinkSpeedExtEnabled    uint8  // 5 bits: mask, 30 disable, 31 supported
}

// AttributeID implements Attribute.
func (*PortInfo) AttributeID() AttrID { return AttrPortInfo }

// MarshalAttr implements Attribute. It fails with a *FieldError naming the
// first field whose value does not fit its bit width.
func (p *PortInfo) MarshalAttr(b []byte) error {
	if err := need("PortInfo", b, PortInfoSize); err != nil {
		return err
	}
	if err := checkAll(
		bitsCheck{"PortInfo.LinkSpeedSupported", uint64(p.LinkSpeedSupported), 4},
		bitsCheck{"PortInfo.PortState", uint64(p.PortState), 4},
		bitsCheck{"PortInfo.PhysState", uint64(p.PhysState), 4},
		bitsCheck{"PortInfo.LinkDownDefaultState", uint64(p.LinkDownDefaultState), 4},
		bitsCheck{"PortInfo.MKeyProtectBits", uint64(p.MKeyProtectBits), 2},
		bitsCheck{"PortInfo.LMC", uint64(p.LMC), 3},
		bitsCheck{"PortInfo.LinkSpeedActive", uint64(p.LinkSpeedActive), 4},
		bitsCheck{"PortInfo.LinkSpeedEnabled", uint64(p.LinkSpeedEnabled), 4},
		bitsCheck{"PortInfo.NeighborMTU", uint64(p.NeighborMTU), 4},
		bitsCheck{"PortInfo.MasterSMSL", uint64(p.MasterSMSL), 4},
		bitsCheck{"PortInfo.VLCap", uint64(p.VLCap), 4},
		bitsCheck{"PortInfo.InitType", uint64(p.InitType), 4},
		bitsCheck{"PortInfo.InitTypeReply", uint64(p.InitTypeReply), 4},
		bitsCheck{"PortInfo.MTUCap", uint64(p.MTUCap), 4},
		bitsCheck{"PortInfo.VLStallCount", uint64(p.VLStallCount), 3},
		bitsCheck{"PortInfo.HOQLife", uint64(p.HOQLife), 5},
		bitsCheck{"PortInfo.OperationalVLs", uint64(p.OperationalVLs), 4},
		bitsCheck{"PortInfo.MulticastPKeyTrapSuppression", uint64(p.MulticastPKeyTrapSuppression), 2},
		bitsCheck{"PortInfo.SubnetTimeout", uint64(p.SubnetTimeout), 5},
		bitsCheck{"PortInfo.RespTimeValue", uint64(p.RespTimeValue), 5},
		bitsCheck{"PortInfo.LocalPhyErrors", uint64(p.LocalPhyErrors), 4},
		bitsCheck{"PortInfo.OverrunErrors", uint64(p.OverrunErrors), 4},
		bitsCheck{"PortInfo.LinkSpeedExtActive2", uint64(p.LinkSpeedExtActive2), 2},
		bitsCheck{"PortInfo.LinkSpeedExtSupported2", uint64(p.LinkSpeedExtSupported2), 2},
		bitsCheck{"PortInfo.LinkSpeedExtEnabled2", uint64(p.LinkSpeedExtEnabled2), 3},
		bitsCheck{"PortInfo.LinkRoundTripLatency", uint64(p.LinkRoundTripLatency), 24},
		bitsCheck{"PortInfo.LinkSpeedExtActive", uint64(p.LinkSpeedExtActive), 4},
		bitsCheck{"PortInfo.LinkSpeedExtSupported", uint64(p.LinkSpeedExtSupported), 4},
		bitsCheck{"PortInfo.LinkSpeedExtEnabled", uint64(p.LinkSpeedExtEnabled), 5},
	); err != nil {
		return err
	}
	be := binary.BigEndian
	be.PutUint64(b[0:8], p.MKey)
	be.PutUint64(b[8:16], p.GIDPrefix)
	be.PutUint16(b[16:18], p.LID)
	be.PutUint16(b[18:20], p.MasterSMLID)
	be.PutUint32(b[20:24], p.CapabilityMask)
	be.PutUint16(b[24:26], p.DiagCode)
	be.PutUint16(b[26:28], p.MKeyLeasePeriod)
	b[28] = p.LocalPortNum
	b[29] = uint8(p.LinkWidthEnabled)
	b[30] = uint8(p.LinkWidthSupported)
	b[31] = uint8(p.LinkWidthActive)
	b[32] = p.LinkSpeedSupported<<4 | uint8(p.PortState)
	b[33] = uint8(p.PhysState)<<4 | p.LinkDownDefaultState
	b[34] = p.MKeyProtectBits<<6 | p.LMC
	b[35] = p.LinkSpeedActive<<4 | p.LinkSpeedEnabled
	b[36] = uint8(p.NeighborMTU)<<4 | p.MasterSMSL
	b[37] = p.VLCap<<4 | p.InitType
	b[38] = p.VLHighLimit
	b[39] = p.VLArbHighCap
	b[40] = p.VLArbLowCap
	b[41] = p.InitTypeReply<<4 | uint8(p.MTUCap)
	b[42] = p.VLStallCount<<5 | p.HOQLife
	b[43] = p.OperationalVLs<<4 | b2u(p.PartitionEnforcementInbound)<<3 |
		b2u(p.PartitionEnforcementOutbound)<<2 | b2u(p.FilterRawInbound)<<1 | b2u(p.FilterRawOutbound)
	be.PutUint16(b[44:46], p.MKeyViolations)
	be.PutUint16(b[46:48], p.PKeyViolations)
	be.PutUint16(b[48:50], p.QKeyViolations)
	b[50] = p.GUIDCap
	b[51] = b2u(p.ClientReregister)<<7 | p.MulticastPKeyTrapSuppression<<5 | p.SubnetTimeout
	b[52] = p.RespTimeValue
	b[53] = p.LocalPhyErrors<<4 | p.OverrunErrors
	be.PutUint16(b[54:56], p.MaxCreditHint)
	b[56] = p.LinkSpeedExtActive2<<5 | p.LinkSpeedExtSupported2<<3 | p.LinkSpeedExtEnabled2
	b[57] = uint8(p.LinkRoundTripLatency >> 16)
	b[58] = uint8(p.LinkRoundTripLatency >> 8)
	b[59] = uint8(p.LinkRoundTripLatency)
	be.PutUint16(b[60:62], p.CapabilityMask2)
	b[62] = p.LinkSpeedExtActive<<4 | p.LinkSpeedExtSupported
	b[63] = p.LinkSpeedExtEnabled
	return nil
}

// UnmarshalAttr implements Attribute. Reserved bits are ignored.
func (p *PortInfo) UnmarshalAttr(b []byte) error {
	if err := need("PortInfo", b, PortInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	p.MKey = be.Uint64(b[0:8])
	p.GIDPrefix = be.Uint64(b[8:16])
	p.LID = be.Uint16(b[16:18])
	p.MasterSMLID = be.Uint16(b[18:20])
	p.CapabilityMask = be.Uint32(b[20:24])
	p.DiagCode = be.Uint16(b[24:26])
	p.MKeyLeasePeriod = be.Uint16(b[26:28])
	p.LocalPortNum = b[28]
	p.LinkWidthEnabled = Width(b[29])
	p.LinkWidthSupported = Width(b[30])
	p.LinkWidthActive = Width(b[31])
	p.LinkSpeedSupported = b[32] >> 4
	p.PortState = PortState(b[32] & 0xf)
	p.PhysState = PhysState(b[33] >> 4)
	p.LinkDownDefaultState = b[33] & 0xf
	p.MKeyProtectBits = b[34] >> 6
	p.LMC = b[34] & 0x7
	p.LinkSpeedActive = b[35] >> 4
	p.LinkSpeedEnabled = b[35] & 0xf
	p.NeighborMTU = MTU(b[36] >> 4)
	p.MasterSMSL = b[36] & 0xf
	p.VLCap = b[37] >> 4
	p.InitType = b[37] & 0xf
	p.VLHighLimit = b[38]
	p.VLArbHighCap = b[39]
	p.VLArbLowCap = b[40]
	p.InitTypeReply = b[41] >> 4
	p.MTUCap = MTU(b[41] & 0xf)
	p.VLStallCount = b[42] >> 5
	p.HOQLife = b[42] & 0x1f
	p.OperationalVLs = b[43] >> 4
	p.PartitionEnforcementInbound = b[43]&0x8 != 0
	p.PartitionEnforcementOutbound = b[43]&0x4 != 0
	p.FilterRawInbound = b[43]&0x2 != 0
	p.FilterRawOutbound = b[43]&0x1 != 0
	p.MKeyViolations = be.Uint16(b[44:46])
	p.PKeyViolations = be.Uint16(b[46:48])
	p.QKeyViolations = be.Uint16(b[48:50])
	p.GUIDCap = b[50]
	p.ClientReregister = b[51]&0x80 != 0
	p.MulticastPKeyTrapSuppression = (b[51] >> 5) & 0x3
	p.SubnetTimeout = b[51] & 0x1f
	p.RespTimeValue = b[52] & 0x1f
	p.LocalPhyErrors = b[53] >> 4
	p.OverrunErrors = b[53] & 0xf
	p.MaxCreditHint = be.Uint16(b[54:56])
	p.LinkSpeedExtActive2 = (b[56] >> 5) & 0x3
	p.LinkSpeedExtSupported2 = (b[56] >> 3) & 0x3
	p.LinkSpeedExtEnabled2 = b[56] & 0x7
	p.LinkRoundTripLatency = uint32(b[57])<<16 | uint32(b[58])<<8 | uint32(b[59])
	p.CapabilityMask2 = be.Uint16(b[60:62])
	p.LinkSpeedExtActive = b[62] >> 4
	p.LinkSpeedExtSupported = b[62] & 0xf
	p.LinkSpeedExtEnabled = b[63] & 0x1f
	return nil
}

// HasCap reports whether CapabilityMask has all bits of c (Cap* constants).
func (p *PortInfo) HasCap(c uint32) bool { return p.CapabilityMask&c == c }

// HasCap2 reports whether CapabilityMask2 has all bits of c (Cap2*
// constants). CapabilityMask2 only counts when CapabilityMask has
// CapIsCapabilityMask2Supported.
func (p *PortInfo) HasCap2(c uint16) bool {
	return p.HasCap(CapIsCapabilityMask2Supported) && p.CapabilityMask2&c == c
}

// ExtendedSpeeds reports whether the LinkSpeedExt fields are valid: the
// capability port has IsExtendedSpeedsSupported.
func (p *PortInfo) ExtendedSpeeds() bool { return p.HasCap(CapIsExtendedSpeedsSupported) }

// ExtendedSpeeds2 reports whether the LinkSpeedExt*2 fields (XDR) are
// valid: IsCapabilityMask2Supported and CapabilityMask2
// IsExtendedSpeeds2Supported. The reference tools (iblinkinfo,
// libibnetdisc) also require IsExtendedSpeedsSupported before they look at
// the ext2 fields; so does ibdoctor.
func (p *PortInfo) ExtendedSpeeds2() bool {
	return p.ExtendedSpeeds() && p.HasCap2(Cap2IsExtendedSpeeds2Supported)
}

// BaseSpeeds converts a LinkSpeed{Supported,Enabled,Active} value (1 SDR,
// 2 DDR, 4 QDR) into a Speed mask; bit 3 is reserved and dropped.
func BaseSpeeds(v uint8) Speed { return Speed(v & 0x7) }

// ExtSpeeds converts a LinkSpeedExt{Supported,Enabled,Active} mask (1 FDR,
// 2 EDR, 4 HDR, 8 NDR) into a Speed mask.
func ExtSpeeds(v uint8) Speed { return Speed(v&0xf) << 4 }

// ExtSpeeds2 converts a LinkSpeedExt*2 mask (bit 0 XDR) into a Speed mask.
func ExtSpeeds2(v uint8) Speed { return Speed(v&0x1) << 8 }

func capsOf(p, caps *PortInfo) *PortInfo {
	if caps == nil {
		return p
	}
	return caps
}

// SpeedActive returns the effective active lane speed, as iblinkinfo and
// libibnetdisc compute it. caps is the PortInfo whose capability masks
// apply: for a switch its port 0, for a CA the port itself (nil means p).
// mlnxFDR10 is MlnxExtPortInfo.FDR10Active() where that attribute was
// read (false otherwise).
//
//  1. With IsExtendedSpeedsSupported, and IsExtendedSpeeds2Supported
//     in CapabilityMask2 (with IsCapabilityMask2Supported), a non-zero
//     LinkSpeedExtActive2 means XDR.
//  2. With IsExtendedSpeedsSupported, a non-zero LinkSpeedExtActive means
//     FDR, EDR, HDR or NDR.
//  3. Otherwise mlnxFDR10 means FDR10.
//  4. Otherwise LinkSpeedActive: SDR, DDR or QDR.
//
// The result is one Speed bit (the fastest if a device sets several), or 0
// when nothing is active.
func (p *PortInfo) SpeedActive(caps *PortInfo, mlnxFDR10 bool) Speed {
	c := capsOf(p, caps)
	if c.ExtendedSpeeds2() && ExtSpeeds2(p.LinkSpeedExtActive2) != 0 {
		return SpeedXDR
	}
	if c.ExtendedSpeeds() {
		if s := ExtSpeeds(p.LinkSpeedExtActive); s != 0 {
			return s.Max()
		}
	}
	if mlnxFDR10 {
		return SpeedFDR10
	}
	return BaseSpeeds(p.LinkSpeedActive).Max()
}

// SpeedSupported returns the supported lane speeds merged into one mask:
// LinkSpeedSupported, plus LinkSpeedExtSupported when caps has extended
// speeds, plus XDR from LinkSpeedExtSupported2 when caps has extended
// speeds 2. FDR10 is not included: OR in SpeedFDR10 when
// MlnxExtPortInfo.FDR10Supported. caps nil means p.
func (p *PortInfo) SpeedSupported(caps *PortInfo) Speed {
	c := capsOf(p, caps)
	s := BaseSpeeds(p.LinkSpeedSupported)
	if c.ExtendedSpeeds() {
		s |= ExtSpeeds(p.LinkSpeedExtSupported)
	}
	if c.ExtendedSpeeds2() {
		s |= ExtSpeeds2(p.LinkSpeedExtSupported2)
	}
	return s
}

// SpeedEnabled returns the enabled lane speeds merged into one mask, with
// the special values resolved: LinkSpeedEnabled 15 and LinkSpeedExtEnabled
// 31 mean the supported set, LinkSpeedExtEnabled 30 means no extended
// speed, LinkSpeedExtEnabled2 7 means the supported ext2 set. Extended
// fields count only when caps (nil means p) has the capability. FDR10 is
// not included (see MlnxExtPortInfo.FDR10Enabled).
func (p *PortInfo) SpeedEnabled(caps *PortInfo) Speed {
	c := capsOf(p, caps)
	var s Speed
	if p.LinkSpeedEnabled == LinkSpeedEnabledSupported {
		s = BaseSpeeds(p.LinkSpeedSupported)
	} else {
		s = BaseSpeeds(p.LinkSpeedEnabled)
	}
	if c.ExtendedSpeeds() {
		switch p.LinkSpeedExtEnabled {
		case LinkSpeedExtEnabledSupported:
			s |= ExtSpeeds(p.LinkSpeedExtSupported)
		case LinkSpeedExtEnabledDisable:
		default:
			s |= ExtSpeeds(p.LinkSpeedExtEnabled)
		}
	}
	if c.ExtendedSpeeds2() {
		if p.LinkSpeedExtEnabled2 == LinkSpeedExtEnabled2Supported {
			s |= ExtSpeeds2(p.LinkSpeedExtSupported2)
		} else {
			s |= ExtSpeeds2(p.LinkSpeedExtEnabled2)
		}
	}
	return s
}

// WidthEnabled returns LinkWidthEnabled with 255 resolved to
// LinkWidthSupported.
func (p *PortInfo) WidthEnabled() Width {
	if p.LinkWidthEnabled == LinkWidthEnabledSupported {
		return p.LinkWidthSupported
	}
	return p.LinkWidthEnabled
}

// Rate returns the active width and effective active speed; see
// SpeedActive for caps and mlnxFDR10.
func (p *PortInfo) Rate(caps *PortInfo, mlnxFDR10 bool) Rate {
	return Rate{Width: p.LinkWidthActive, Speed: p.SpeedActive(caps, mlnxFDR10)}
}

// String prints the identifying fields, for logs and test failures.
func (p *PortInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "port %d lid %d state %v/%v width %v speed %v", p.LocalPortNum, p.LID, p.PortState, p.PhysState, p.LinkWidthActive, p.SpeedActive(nil, false))
	return b.String()
}

// MlnxExtPortInfoSize is the part of the SMP data area the Mellanox
// ExtendedPortInfo attribute uses here.
const MlnxExtPortInfoSize = 16

// MlnxExtPortInfo is the Mellanox vendor ExtendedPortInfo SMP attribute
// (0xFF90, modifier = port). Its LinkSpeed fields carry FDR10 in bit 0.
type MlnxExtPortInfo struct {
	StateChangeEnable  uint8 // byte 3
	LinkSpeedSupported uint8 // byte 7
	LinkSpeedEnabled   uint8 // byte 11
	LinkSpeedActive    uint8 // byte 15
}

// AttributeID implements Attribute.
func (*MlnxExtPortInfo) AttributeID() AttrID { return AttrMlnxExtPortInfo }

// MarshalAttr implements Attribute.
func (m *MlnxExtPortInfo) MarshalAttr(b []byte) error {
	if err := need("MlnxExtPortInfo", b, MlnxExtPortInfoSize); err != nil {
		return err
	}
	b[3], b[7], b[11], b[15] = m.StateChangeEnable, m.LinkSpeedSupported, m.LinkSpeedEnabled, m.LinkSpeedActive
	return nil
}

// UnmarshalAttr implements Attribute.
func (m *MlnxExtPortInfo) UnmarshalAttr(b []byte) error {
	if err := need("MlnxExtPortInfo", b, MlnxExtPortInfoSize); err != nil {
		return err
	}
	m.StateChangeEnable, m.LinkSpeedSupported, m.LinkSpeedEnabled, m.LinkSpeedActive = b[3], b[7], b[11], b[15]
	return nil
}

// FDR10Active reports whether the link runs at FDR10.
func (m *MlnxExtPortInfo) FDR10Active() bool { return m.LinkSpeedActive&1 != 0 }

// FDR10Supported reports whether the port supports FDR10.
func (m *MlnxExtPortInfo) FDR10Supported() bool { return m.LinkSpeedSupported&1 != 0 }

// FDR10Enabled reports whether FDR10 is enabled.
func (m *MlnxExtPortInfo) FDR10Enabled() bool { return m.LinkSpeedEnabled&1 != 0 }

// MlnxExtPortInfoSupported reports whether a device answers the Mellanox
// ExtendedPortInfo attribute, by the device-ID list rdma-core uses
// (ConnectX-3/Connect-IB/ConnectX-4..7 and Mellanox switches); asking other
// devices gets an error status. The Bull device IDs of that list are not
// included.
func MlnxExtPortInfoSupported(deviceID uint16) bool {
	switch {
	case deviceID >= 0xc738 && deviceID <= 0xc73b,
		deviceID == 0xc839, deviceID == 0xcb20,
		deviceID == 0xcf08, deviceID == 0xcf09,
		deviceID == 0xd2f0, deviceID == 0xa2d2,
		deviceID >= 0x1003 && deviceID <= 0x101b:
		return true
	}
	return false
}

// Validate reports the inconsistencies a check must not build on: an
// unknown PortState or PhysState, and for a port that is not Down
// (C14-24.2.1: a Down port's other fields may be garbage) a
// LinkWidthActive that is not exactly one known width or no active speed
// under the capability masks of caps (nil means p).
func (p *PortInfo) Validate(caps *PortInfo) error {
	if p.PortState > PortStateActiveDefer {
		return &FieldError{Field: "PortInfo.PortState", Msg: fmt.Sprintf("unknown state %d", uint8(p.PortState))}
	}
	if p.PhysState > PhysPhyTest {
		return &FieldError{Field: "PortInfo.PortPhysicalState", Msg: fmt.Sprintf("unknown state %d", uint8(p.PhysState))}
	}
	if p.PortState <= PortStateDown {
		return nil
	}
	if p.LinkWidthActive.Lanes() == 0 {
		return &FieldError{Field: "PortInfo.LinkWidthActive", Msg: fmt.Sprintf("0x%02x is not one link width on a port that is %v", uint8(p.LinkWidthActive), p.PortState)}
	}
	if p.SpeedActive(caps, false) == 0 {
		return &FieldError{Field: "PortInfo.LinkSpeedActive", Msg: fmt.Sprintf("no active speed on a port that is %v", p.PortState)}
	}
	return nil
}
