package mad

import (
	"encoding/binary"
	"fmt"
)

// SMInfoSize is the part of the SMP data area SMInfo defines.
const SMInfoSize = 21

// SMState is SMInfo.SMState (IBA 14.4.1): what a subnet manager is doing.
type SMState uint8

// SM states.
const (
	SMNotActive   SMState = 0
	SMDiscovering SMState = 1
	SMStandby     SMState = 2
	SMMaster      SMState = 3
)

var smStateNames = [...]string{"NotActive", "Discovering", "Standby", "Master"}

func (s SMState) String() string {
	if int(s) < len(smStateNames) {
		return smStateNames[s]
	}
	return fmt.Sprintf("SMState(%d)", uint8(s))
}

// SMInfo is the SMInfo SMP attribute (0x0020, IBA 14.2.5.13): the subnet
// manager behind a port, answered by the SM itself (a port with no SM
// running does not answer it). SMKey is zero unless the requester
// presented the right key.
type SMInfo struct {
	GUID     uint64
	SMKey    uint64
	ActCount uint32 // advances while the SM is working
	Priority uint8  // 4 bits
	State    SMState
}

// AttributeID implements Attribute.
func (*SMInfo) AttributeID() AttrID { return AttrSMInfo }

// MarshalAttr implements Attribute.
func (s *SMInfo) MarshalAttr(b []byte) error {
	if err := need("SMInfo", b, SMInfoSize); err != nil {
		return err
	}
	if err := checkAll(
		bitsCheck{"SMInfo.Priority", uint64(s.Priority), 4},
		bitsCheck{"SMInfo.State", uint64(s.State), 4},
	); err != nil {
		return err
	}
	be := binary.BigEndian
	be.PutUint64(b[0:8], s.GUID)
	be.PutUint64(b[8:16], s.SMKey)
	be.PutUint32(b[16:20], s.ActCount)
	b[20] = s.Priority<<4 | uint8(s.State)
	return nil
}

// UnmarshalAttr implements Attribute. Reserved bytes are ignored.
func (s *SMInfo) UnmarshalAttr(b []byte) error {
	if err := need("SMInfo", b, SMInfoSize); err != nil {
		return err
	}
	be := binary.BigEndian
	s.GUID = be.Uint64(b[0:8])
	s.SMKey = be.Uint64(b[8:16])
	s.ActCount = be.Uint32(b[16:20])
	s.Priority = b[20] >> 4
	s.State = SMState(b[20] & 0xf)
	return nil
}
