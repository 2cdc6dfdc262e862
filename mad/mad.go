// Package mad encodes and decodes InfiniBand management datagrams (MADs):
// the common MAD header, subnet management packets (SMPs, LID-routed and
// directed-route), PerfMgt general management packets, and the attributes
// ibdoctor reads. It does no I/O.
//
// Byte offsets and bit positions follow the IBA specification (volume 1,
// chapters 13, 14 and 16); all multi-byte fields are big-endian on the wire.
package mad

import (
	"encoding/binary"
	"fmt"
)

// Sizes of the fixed parts of a MAD.
const (
	// Size is the length of every MAD ibdoctor exchanges (no RMPP).
	Size = 256
	// HeaderSize is the length of the common MAD header.
	HeaderSize = 24
	// SMPDataSize is the length of the attribute data in an SMP.
	SMPDataSize = 64
	// GMPDataSize is the length of the attribute data in a PerfMgt GMP.
	GMPDataSize = 192
	// MaxHops is the most hops a directed route may have (IBA C14-9).
	MaxHops = 63
)

// BaseVersion is the only MAD base version ibdoctor speaks.
const BaseVersion = 1

// Class is a management class.
type Class uint8

// Management classes.
const (
	ClassSubnLID    Class = 0x01 // LID-routed subnet management
	ClassSubnAdm    Class = 0x03 // subnet administration
	ClassPerfMgt    Class = 0x04 // performance management
	ClassBM         Class = 0x05 // baseboard management
	ClassDevMgt     Class = 0x06 // device management
	ClassCM         Class = 0x07 // communication management
	ClassSNMP       Class = 0x08 // SNMP tunnelling
	ClassSubnDR     Class = 0x81 // directed-route subnet management
	ClassCongestion Class = 0x21 // congestion control
)

func (c Class) String() string {
	switch c {
	case ClassSubnLID:
		return "SubnMgt(LID)"
	case ClassSubnAdm:
		return "SubnAdm"
	case ClassPerfMgt:
		return "PerfMgt"
	case ClassBM:
		return "BM"
	case ClassDevMgt:
		return "DevMgt"
	case ClassCM:
		return "CM"
	case ClassSNMP:
		return "SNMP"
	case ClassSubnDR:
		return "SubnMgt(DR)"
	case ClassCongestion:
		return "CongestionCtl"
	}
	return fmt.Sprintf("Class(0x%02x)", uint8(c))
}

// IsSMP reports whether the class is subnet management (LID-routed or
// directed-route), i.e. travels on QP0.
func (c Class) IsSMP() bool { return c == ClassSubnLID || c == ClassSubnDR }

// Method is a MAD method, including the response bit (0x80).
type Method uint8

// Methods. A response is the request's method with ResponseBit set.
const (
	MethodGet         Method = 0x01
	MethodSet         Method = 0x02
	MethodSend        Method = 0x03
	MethodTrap        Method = 0x05
	MethodReport      Method = 0x06
	MethodTrapRepress Method = 0x07
	MethodGetTable    Method = 0x12
	MethodGetResp     Method = 0x81
	MethodReportResp  Method = 0x86
	MethodGetTableRsp Method = 0x92

	ResponseBit Method = 0x80
)

// IsResponse reports whether the response bit is set.
func (m Method) IsResponse() bool { return m&ResponseBit != 0 }

// Response returns the response method for a request method.
func (m Method) Response() Method { return m | ResponseBit }

// Request returns the method with the response bit cleared.
func (m Method) Request() Method { return m &^ ResponseBit }

func (m Method) String() string {
	name := ""
	switch m.Request() {
	case MethodGet:
		name = "Get"
	case MethodSet:
		name = "Set"
	case MethodSend:
		name = "Send"
	case MethodTrap:
		name = "Trap"
	case MethodReport:
		name = "Report"
	case MethodTrapRepress:
		name = "TrapRepress"
	case MethodGetTable:
		name = "GetTable"
	default:
		return fmt.Sprintf("Method(0x%02x)", uint8(m))
	}
	if m.IsResponse() {
		name += "Resp"
	}
	return name
}

// Status is the 16-bit MAD status field. For directed-route SMPs the top
// bit of the wire field is the D (direction) bit, which is not part of
// Status: SMP.Direction holds it.
type Status uint16

// Status codes (bits 4..2 of Status).
const (
	StatusOK                    = 0
	StatusBadVersion            = 1
	StatusMethodUnsupported     = 2
	StatusMethodAttrUnsupported = 3
	StatusInvalidField          = 7
)

// Busy reports the busy bit (bit 0): the responder could not answer now.
func (s Status) Busy() bool { return s&0x1 != 0 }

// Redirect reports the redirect-required bit (bit 1).
func (s Status) Redirect() bool { return s&0x2 != 0 }

// Code returns the invalid-field code in bits 4..2.
func (s Status) Code() uint8 { return uint8(s>>2) & 0x7 }

// ClassSpecific returns bits 14..8, whose meaning depends on the class.
func (s Status) ClassSpecific() uint8 { return uint8(s>>8) & 0x7f }

// OK reports whether the status carries no error, busy or redirect.
func (s Status) OK() bool { return s&0x7fff == 0 }

func (s Status) String() string {
	if s.OK() {
		return "ok"
	}
	var msg string
	switch s.Code() {
	case StatusOK:
		msg = ""
	case StatusBadVersion:
		msg = "bad base or class version"
	case StatusMethodUnsupported:
		msg = "method not supported"
	case StatusMethodAttrUnsupported:
		msg = "method/attribute combination not supported"
	case StatusInvalidField:
		msg = "invalid attribute or attribute modifier"
	default:
		msg = fmt.Sprintf("reserved code %d", s.Code())
	}
	add := func(part string) {
		if msg == "" {
			msg = part
		} else {
			msg += ", " + part
		}
	}
	if s.Busy() {
		add("busy")
	}
	if s.Redirect() {
		add("redirect required")
	}
	if cs := s.ClassSpecific(); cs != 0 {
		add(fmt.Sprintf("class-specific 0x%02x", cs))
	}
	return fmt.Sprintf("%s (0x%04x)", msg, uint16(s))
}

// AttrID is an attribute identifier. Its meaning depends on the class:
// use AttrName for a name.
type AttrID uint16

// SMP attribute IDs (classes 0x01 and 0x81).
const (
	AttrNodeDescription       AttrID = 0x0010
	AttrNodeInfo              AttrID = 0x0011
	AttrSwitchInfo            AttrID = 0x0012
	AttrGUIDInfo              AttrID = 0x0014
	AttrPortInfo              AttrID = 0x0015
	AttrPKeyTable             AttrID = 0x0016
	AttrLinearForwardingTable AttrID = 0x0019
	AttrSMInfo                AttrID = 0x0020
	AttrPortInfoExtended      AttrID = 0x0033
	AttrMlnxExtPortInfo       AttrID = 0xff90
)

// PerfMgt attribute IDs (class 0x04).
const (
	AttrClassPortInfo        AttrID = 0x0001
	AttrPortSamplesControl   AttrID = 0x0010
	AttrPortSamplesResult    AttrID = 0x0011
	AttrPortCounters         AttrID = 0x0012
	AttrPortCountersExtended AttrID = 0x001d
)

func (a AttrID) String() string { return fmt.Sprintf("0x%04x", uint16(a)) }

// AttrName names an attribute of a class, e.g. "NodeInfo" or
// "PortCounters"; unknown pairs print as hex.
func AttrName(c Class, a AttrID) string {
	if c.IsSMP() {
		switch a {
		case AttrNodeDescription:
			return "NodeDescription"
		case AttrNodeInfo:
			return "NodeInfo"
		case AttrSwitchInfo:
			return "SwitchInfo"
		case AttrGUIDInfo:
			return "GUIDInfo"
		case AttrPortInfo:
			return "PortInfo"
		case AttrPKeyTable:
			return "P_KeyTable"
		case AttrSLtoVLMappingTable:
			return "SLtoVLMappingTable"
		case AttrLinearForwardingTable:
			return "LinearForwardingTable"
		case AttrSMInfo:
			return "SMInfo"
		case AttrPortInfoExtended:
			return "PortInfoExtended"
		case AttrMlnxExtPortInfo:
			return "MlnxExtendedPortInfo"
		case AttrARInfo:
			return "AdaptiveRoutingInfo"
		}
	}
	if a == AttrClassPortInfo {
		return "ClassPortInfo"
	}
	if c == ClassMlnxVendor && a == AttrGeneralInfo {
		return "GeneralInfo"
	}
	if c == ClassPerfMgt {
		switch a {
		case AttrPortSamplesControl:
			return "PortSamplesControl"
		case AttrPortSamplesResult:
			return "PortSamplesResult"
		case AttrPortCounters:
			return "PortCounters"
		case AttrPortCountersExtended:
			return "PortCountersExtended"
		}
	}
	return a.String()
}

// Header is the common 24-byte MAD header.
//
// For directed-route SMPs the wire Status field also carries the D bit and
// ClassSpecific carries the hop pointer and hop count; SMP splits those out.
type Header struct {
	BaseVersion   uint8
	Class         Class
	ClassVersion  uint8
	Method        Method
	Status        Status
	ClassSpecific uint16
	TID           uint64
	AttrID        AttrID
	AttrMod       uint32
}

// Marshal writes the header into b[:HeaderSize]. b must be at least
// HeaderSize long.
func (h *Header) Marshal(b []byte) {
	_ = b[HeaderSize-1]
	b[0] = h.BaseVersion
	b[1] = uint8(h.Class)
	b[2] = h.ClassVersion
	b[3] = uint8(h.Method)
	binary.BigEndian.PutUint16(b[4:6], uint16(h.Status))
	binary.BigEndian.PutUint16(b[6:8], h.ClassSpecific)
	binary.BigEndian.PutUint64(b[8:16], h.TID)
	binary.BigEndian.PutUint16(b[16:18], uint16(h.AttrID))
	b[18], b[19] = 0, 0
	binary.BigEndian.PutUint32(b[20:24], h.AttrMod)
}

// Unmarshal decodes the header from b. It fails if b is shorter than
// HeaderSize or the base version is not 1.
func (h *Header) Unmarshal(b []byte) error {
	if len(b) < HeaderSize {
		return &FieldError{Field: "MAD header", Msg: fmt.Sprintf("need %d bytes, have %d", HeaderSize, len(b))}
	}
	h.BaseVersion = b[0]
	h.Class = Class(b[1])
	h.ClassVersion = b[2]
	h.Method = Method(b[3])
	h.Status = Status(binary.BigEndian.Uint16(b[4:6]))
	h.ClassSpecific = binary.BigEndian.Uint16(b[6:8])
	h.TID = binary.BigEndian.Uint64(b[8:16])
	h.AttrID = AttrID(binary.BigEndian.Uint16(b[16:18]))
	h.AttrMod = binary.BigEndian.Uint32(b[20:24])
	if h.BaseVersion != BaseVersion {
		return &FieldError{Field: "BaseVersion", Msg: fmt.Sprintf("is %d, want %d", h.BaseVersion, BaseVersion)}
	}
	return nil
}

// PeekHeader decodes only the common header of a MAD in b.
func PeekHeader(b []byte) (Header, error) {
	var h Header
	err := h.Unmarshal(b)
	return h, err
}

// TIDLow returns the low 32 bits of a transaction ID: the part user space
// owns (the kernel and ibsim overwrite the high bits).
func TIDLow(tid uint64) uint32 { return uint32(tid) }

// FieldError reports a MAD or attribute field that is missing, too short or
// inconsistent.
type FieldError struct {
	Field string // e.g. "PortInfo.LinkWidthActive"
	Msg   string
}

func (e *FieldError) Error() string { return "mad: " + e.Field + ": " + e.Msg }

func need(field string, b []byte, n int) error {
	if len(b) < n {
		return &FieldError{Field: field, Msg: fmt.Sprintf("need %d bytes, have %d", n, len(b))}
	}
	return nil
}

// Attribute is an SMP or PerfMgt attribute that encodes into, and decodes
// from, the data area of a MAD (64 bytes for SMPs, 192 for PerfMgt).
type Attribute interface {
	// AttributeID is the attribute's ID within its class.
	AttributeID() AttrID
	// MarshalAttr encodes the attribute into b, which is at least the
	// data area's size. Bytes the attribute does not define are left as
	// they are (callers pass a zeroed area).
	MarshalAttr(b []byte) error
	// UnmarshalAttr decodes the attribute from b. It returns a
	// *FieldError naming the field when b is short or inconsistent.
	UnmarshalAttr(b []byte) error
}
