package mad

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Mellanox (NVIDIA) vendor-specific GMP class and its GeneralInfo
// attribute: what ibdiagnet reads for NODES_INFO' firmware columns
// (ibis' VendorSpec_GeneralInfo). Other vendors' devices do not
// implement class 0x0A as far as is known; a node that does not answer
// has an unread firmware version, nothing more.
const (
	ClassMlnxVendor Class  = 0x0a
	AttrGeneralInfo AttrID = 0x0017
)

// GeneralInfoSize is the attribute's length within the vendor MAD's
// 192-byte data area: HWInfo (32 bytes), FWInfo (64) and SWInfo (32).
const GeneralInfoSize = 128

// GeneralInfo is the part of VendorSpec_GeneralInfo ibdoctor uses: the
// hardware's device ID and revision, and the firmware's version, build
// and PSID (the board's firmware image ID). The extended version
// (FWInfo_Extended_*, 32 bits each: 28.39.1002) is what 'flint' and
// ibdiagnet print; the 8-bit Major/Minor/SubMinor are its truncation on
// current firmware and the only version on old firmware.
type GeneralInfo struct {
	DeviceID, DeviceHWRevision uint16
	UpTime                     uint32 // seconds since the device started
	Major, Minor, SubMinor     uint8
	BuildID                    uint32
	PSID                       string // up to 16 bytes, NUL-padded
	ExtMajor, ExtMinor         uint32
	ExtSubMinor                uint32
}

// AttributeID implements Attribute.
func (*GeneralInfo) AttributeID() AttrID { return AttrGeneralInfo }

// Version is the firmware version as flint prints it: the extended
// fields when set, else the 8-bit ones.
func (g *GeneralInfo) Version() string {
	if g.ExtMajor != 0 || g.ExtMinor != 0 || g.ExtSubMinor != 0 {
		return fmt.Sprintf("%d.%d.%04d", g.ExtMajor, g.ExtMinor, g.ExtSubMinor)
	}
	return fmt.Sprintf("%d.%d.%04d", g.Major, g.Minor, g.SubMinor)
}

// MarshalAttr implements Attribute. Reserved bytes are zero.
func (g *GeneralInfo) MarshalAttr(b []byte) error {
	if err := need("GeneralInfo", b, GeneralInfoSize); err != nil {
		return err
	}
	if len(g.PSID) > 16 || bytes.IndexByte([]byte(g.PSID), 0) >= 0 {
		return &FieldError{Field: "GeneralInfo.PSID", Msg: "is longer than 16 bytes or contains a NUL"}
	}
	b = b[:GeneralInfoSize]
	clear(b)
	be := binary.BigEndian
	be.PutUint16(b[0:], g.DeviceID)
	be.PutUint16(b[2:], g.DeviceHWRevision)
	be.PutUint32(b[28:], g.UpTime)
	b[33], b[34], b[35] = g.Major, g.Minor, g.SubMinor
	be.PutUint32(b[36:], g.BuildID)
	copy(b[48:64], g.PSID)
	be.PutUint32(b[68:], g.ExtMajor)
	be.PutUint32(b[72:], g.ExtMinor)
	be.PutUint32(b[76:], g.ExtSubMinor)
	return nil
}

// UnmarshalAttr implements Attribute.
func (g *GeneralInfo) UnmarshalAttr(b []byte) error {
	if err := need("GeneralInfo", b, GeneralInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	psid := b[48:64]
	if i := bytes.IndexByte(psid, 0); i >= 0 {
		psid = psid[:i]
	}
	*g = GeneralInfo{
		DeviceID: be.Uint16(b[0:]), DeviceHWRevision: be.Uint16(b[2:]), UpTime: be.Uint32(b[28:]),
		Major: b[33], Minor: b[34], SubMinor: b[35], BuildID: be.Uint32(b[36:]),
		PSID:     string(psid),
		ExtMajor: be.Uint32(b[68:]), ExtMinor: be.Uint32(b[72:]), ExtSubMinor: be.Uint32(b[76:]),
	}
	return nil
}
