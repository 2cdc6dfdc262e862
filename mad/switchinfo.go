package mad

import "encoding/binary"

// SwitchInfoSize is the part of the SMP data area SwitchInfo defines.
const SwitchInfoSize = 20

// SwitchInfo is the SwitchInfo SMP attribute (0x0012), IBA 14.2.5.4.
type SwitchInfo struct {
	LinearFDBCap                   uint16 // LFT entries the switch holds
	RandomFDBCap                   uint16
	MulticastFDBCap                uint16
	LinearFDBTop                   uint16 // highest valid LID index in the LFT
	DefaultPort                    uint8
	DefaultMulticastPrimaryPort    uint8
	DefaultMulticastNotPrimaryPort uint8
	LifeTimeValue                  uint8 // 5 bits
	PortStateChange                bool
	OptimizedSLtoVLMapping         uint8 // 2 bits: OptimizedSLtoVLMappingProgramming
	LIDsPerPort                    uint16
	PartitionEnforcementCap        uint16
	InboundEnforcementCap          bool
	OutboundEnforcementCap         bool
	FilterRawInboundCap            bool
	FilterRawOutboundCap           bool
	EnhancedPort0                  bool
	MulticastFDBTop                uint16
}

// AttributeID implements Attribute.
func (*SwitchInfo) AttributeID() AttrID { return AttrSwitchInfo }

// MarshalAttr implements Attribute.
func (s *SwitchInfo) MarshalAttr(b []byte) error {
	if err := need("SwitchInfo", b, SwitchInfoSize); err != nil {
		return err
	}
	if err := checkAll(
		bitsCheck{"SwitchInfo.LifeTimeValue", uint64(s.LifeTimeValue), 5},
		bitsCheck{"SwitchInfo.OptimizedSLtoVLMapping", uint64(s.OptimizedSLtoVLMapping), 2},
	); err != nil {
		return err
	}
	be := binary.BigEndian
	be.PutUint16(b[0:2], s.LinearFDBCap)
	be.PutUint16(b[2:4], s.RandomFDBCap)
	be.PutUint16(b[4:6], s.MulticastFDBCap)
	be.PutUint16(b[6:8], s.LinearFDBTop)
	b[8] = s.DefaultPort
	b[9] = s.DefaultMulticastPrimaryPort
	b[10] = s.DefaultMulticastNotPrimaryPort
	b[11] = s.LifeTimeValue<<3 | b2u(s.PortStateChange)<<2 | s.OptimizedSLtoVLMapping
	be.PutUint16(b[12:14], s.LIDsPerPort)
	be.PutUint16(b[14:16], s.PartitionEnforcementCap)
	b[16] = b2u(s.InboundEnforcementCap)<<7 | b2u(s.OutboundEnforcementCap)<<6 |
		b2u(s.FilterRawInboundCap)<<5 | b2u(s.FilterRawOutboundCap)<<4 | b2u(s.EnhancedPort0)<<3
	b[17] = 0
	be.PutUint16(b[18:20], s.MulticastFDBTop)
	return nil
}

// UnmarshalAttr implements Attribute. Reserved bits are ignored.
func (s *SwitchInfo) UnmarshalAttr(b []byte) error {
	if err := need("SwitchInfo", b, SwitchInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	s.LinearFDBCap = be.Uint16(b[0:2])
	s.RandomFDBCap = be.Uint16(b[2:4])
	s.MulticastFDBCap = be.Uint16(b[4:6])
	s.LinearFDBTop = be.Uint16(b[6:8])
	s.DefaultPort = b[8]
	s.DefaultMulticastPrimaryPort = b[9]
	s.DefaultMulticastNotPrimaryPort = b[10]
	s.LifeTimeValue = b[11] >> 3
	s.PortStateChange = b[11]&0x4 != 0
	s.OptimizedSLtoVLMapping = b[11] & 0x3
	s.LIDsPerPort = be.Uint16(b[12:14])
	s.PartitionEnforcementCap = be.Uint16(b[14:16])
	s.InboundEnforcementCap = b[16]&0x80 != 0
	s.OutboundEnforcementCap = b[16]&0x40 != 0
	s.FilterRawInboundCap = b[16]&0x20 != 0
	s.FilterRawOutboundCap = b[16]&0x10 != 0
	s.EnhancedPort0 = b[16]&0x08 != 0
	s.MulticastFDBTop = be.Uint16(b[18:20])
	return nil
}

// LFTBlocks is the number of LinearForwardingTable blocks to read for this
// switch: LFTBlockCount(LinearFDBTop), capped by LinearFDBCap when that is
// set (a switch cannot hold entries past its capacity).
func (s *SwitchInfo) LFTBlocks() int {
	n := LFTBlockCount(s.LinearFDBTop)
	if s.LinearFDBCap != 0 {
		if c := (int(s.LinearFDBCap) + LFTBlockSize - 1) / LFTBlockSize; c < n {
			n = c
		}
	}
	return n
}
