package ibsim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Control channel (ibsim-protocol.md §3): fixed 80-byte messages, integers
// in host byte order (little-endian on every platform ibsim runs on here).
const (
	ctlMagic       = 0xDEADBEEF
	ctlSize        = 80
	ctlDataSize    = 64
	nodeIDSize     = 32 // client_info.nodeid, NUL-terminated
	clientInfoSize = 12 + nodeIDSize

	// maxSlots is the number of client slots ibsim has (IBSIM_MAX_CLIENTS).
	maxSlots = 10
)

// ctlType is a control message type.
type ctlType uint32

const (
	ctlError       ctlType = 0
	ctlConnect     ctlType = 1
	ctlDisconnect  ctlType = 2
	ctlGetPort     ctlType = 3
	ctlGetVendor   ctlType = 4
	ctlGetGID      ctlType = 5
	ctlGetGUID     ctlType = 6
	ctlGetNodeInfo ctlType = 7
	ctlGetPortInfo ctlType = 8
	ctlSetIsSM     ctlType = 9
	ctlGetPKeys    ctlType = 10
)

func (t ctlType) String() string {
	switch t {
	case ctlError:
		return "ERROR"
	case ctlConnect:
		return "CONNECT"
	case ctlDisconnect:
		return "DISCONNECT"
	case ctlGetPort:
		return "GET_PORT"
	case ctlGetVendor:
		return "GET_VENDOR"
	case ctlGetGID:
		return "GET_GID"
	case ctlGetGUID:
		return "GET_GUID"
	case ctlGetNodeInfo:
		return "GET_NODEINFO"
	case ctlGetPortInfo:
		return "GET_PORTINFO"
	case ctlSetIsSM:
		return "SET_ISSM"
	case ctlGetPKeys:
		return "GET_PKEYS"
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// ctlMsg is one control message.
type ctlMsg struct {
	ClientID uint32 // slot; 0 for CONNECT
	Type     ctlType
	Len      uint32
	Data     [ctlDataSize]byte
}

func (m *ctlMsg) marshal() []byte {
	b := make([]byte, ctlSize)
	binary.LittleEndian.PutUint32(b[0:4], ctlMagic)
	binary.LittleEndian.PutUint32(b[4:8], m.ClientID)
	binary.LittleEndian.PutUint32(b[8:12], uint32(m.Type))
	binary.LittleEndian.PutUint32(b[12:16], m.Len)
	copy(b[16:], m.Data[:])
	return b
}

func (m *ctlMsg) unmarshal(b []byte) error {
	if len(b) != ctlSize {
		return fmt.Errorf("ibsim: control reply is %d bytes, want %d", len(b), ctlSize)
	}
	if magic := binary.LittleEndian.Uint32(b[0:4]); magic != ctlMagic {
		return fmt.Errorf("ibsim: control reply has magic 0x%08x, want 0x%08x", magic, uint32(ctlMagic))
	}
	m.ClientID = binary.LittleEndian.Uint32(b[4:8])
	m.Type = ctlType(binary.LittleEndian.Uint32(b[8:12]))
	m.Len = binary.LittleEndian.Uint32(b[12:16])
	copy(m.Data[:], b[16:])
	return nil
}

// clientInfo is the CONNECT payload (§3.3).
type clientInfo struct {
	ID     uint32 // request: our client ID; reply: the slot
	QP     uint32
	IsSM   uint32
	NodeID string
}

func (c *clientInfo) marshal(m *ctlMsg) error {
	if len(c.NodeID) >= nodeIDSize {
		return fmt.Errorf("ibsim: node name %q is %d bytes; ibsim accepts at most %d", c.NodeID, len(c.NodeID), nodeIDSize-1)
	}
	binary.LittleEndian.PutUint32(m.Data[0:4], c.ID)
	binary.LittleEndian.PutUint32(m.Data[4:8], c.QP)
	binary.LittleEndian.PutUint32(m.Data[8:12], c.IsSM)
	clear(m.Data[12 : 12+nodeIDSize])
	copy(m.Data[12:], c.NodeID)
	m.Len = clientInfoSize
	return nil
}

func (c *clientInfo) unmarshal(m *ctlMsg) {
	c.ID = binary.LittleEndian.Uint32(m.Data[0:4])
	c.QP = binary.LittleEndian.Uint32(m.Data[4:8])
	c.IsSM = binary.LittleEndian.Uint32(m.Data[8:12])
	name := m.Data[12 : 12+nodeIDSize-1] // ibsim NUL-terminates within the field
	for i, ch := range name {
		if ch == 0 {
			name = name[:i]
			break
		}
	}
	c.NodeID = string(name)
}

// Data channel (§5): 288-byte messages, a 32-byte address header in
// network byte order followed by one 256-byte MAD.
const (
	dataHdrSize = 32
	dataSize    = dataHdrSize + mad.Size

	statusTimedOut = 110 // ETIMEDOUT: ibsim could not deliver
)

// dataMsg is the address header of a data-channel message.
type dataMsg struct {
	DLID   uint16
	SLID   uint16
	DQP    uint32
	SQP    uint32
	Status uint32
	Length uint64
}

// marshalData encodes h and m into b[:dataSize]; m is zero-padded to 256
// bytes.
func marshalData(b []byte, h *dataMsg, m []byte) {
	_ = b[dataSize-1]
	clear(b[:dataHdrSize])
	binary.BigEndian.PutUint16(b[0:2], h.DLID)
	binary.BigEndian.PutUint16(b[4:6], h.SLID)
	binary.BigEndian.PutUint32(b[8:12], h.DQP)
	binary.BigEndian.PutUint32(b[12:16], h.SQP)
	binary.BigEndian.PutUint32(b[16:20], h.Status)
	binary.BigEndian.PutUint64(b[24:32], h.Length)
	n := copy(b[dataHdrSize:dataSize], m)
	clear(b[dataHdrSize+n : dataSize])
}

// unmarshalData decodes a data-channel message; the returned MAD aliases b.
func unmarshalData(b []byte) (dataMsg, []byte, error) {
	if len(b) != dataSize {
		return dataMsg{}, nil, fmt.Errorf("ibsim: data message is %d bytes, want %d", len(b), dataSize)
	}
	h := dataMsg{
		DLID:   binary.BigEndian.Uint16(b[0:2]),
		SLID:   binary.BigEndian.Uint16(b[4:6]),
		DQP:    binary.BigEndian.Uint32(b[8:12]),
		SQP:    binary.BigEndian.Uint32(b[12:16]),
		Status: binary.BigEndian.Uint32(b[16:20]),
		Length: binary.BigEndian.Uint64(b[24:32]),
	}
	return h, b[dataHdrSize:dataSize], nil
}

// decodeInto fills p from a data message. p.MAD aliases b. A status-110
// message is ibsim handing back an undeliverable request: its Addr is
// where the request was going.
func decodeInto(p *transport.Packet, b []byte) bool {
	h, m, err := unmarshalData(b)
	if err != nil {
		return false
	}
	*p = transport.Packet{MAD: m[:len(m):len(m)]}
	if h.Status != 0 {
		p.Status = transport.StatusTimedOut
		p.Addr = transport.Addr{DLID: h.DLID, QP: h.DQP}
	} else {
		p.Addr = transport.Addr{DLID: h.SLID, QP: h.SQP}
	}
	if p.Addr.QP == transport.QP1 {
		p.Addr.QKey = transport.GSIQKey
	}
	return true
}

// Socket names (§2). Every name is abstract and carries ibsim's trailing
// NUL: Go maps the leading '@' to the abstract namespace's NUL and adds no
// NUL of its own.
func sockAddr(name string) string { return "@" + name + "\x00" }

func serverCtlName(base string) string            { return base + ":ctl" }
func clientCtlName(base string, id uint32) string { return fmt.Sprintf("%s:ctl%d", base, id) }
func clientDataName(base string, id uint32) string {
	return fmt.Sprintf("%s:in%d", base, id)
}
func serverDataName(base string, slot uint32) string { return fmt.Sprintf("%s:out%d", base, slot) }
