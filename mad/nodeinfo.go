package mad

import (
	"encoding/binary"
	"fmt"
)

// NodeInfoSize is the length of the NodeInfo attribute within the 64-byte
// SMP data area.
const NodeInfoSize = 40

// NodeInfo is the NodeInfo SMP attribute (0x0011), IBA 14.2.5.3.
type NodeInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	NodeType        NodeType
	NumPorts        uint8 // physical ports; switch port 0 is not counted
	SystemImageGUID uint64
	NodeGUID        uint64
	PortGUID        uint64 // the port the SMP arrived on (switch: port 0)
	PartitionCap    uint16
	DeviceID        uint16
	Revision        uint32
	LocalPortNum    uint8  // port the SMP arrived on
	VendorID        uint32 // 24-bit IEEE OUI, e.g. 0x0002c9
}

// AttributeID implements Attribute.
func (*NodeInfo) AttributeID() AttrID { return AttrNodeInfo }

// MarshalAttr implements Attribute. It fails if VendorID does not fit in
// 24 bits.
func (n *NodeInfo) MarshalAttr(b []byte) error {
	if err := need("NodeInfo", b, NodeInfoSize); err != nil {
		return err
	}
	if err := checkBits("NodeInfo.VendorID", uint64(n.VendorID), 24); err != nil {
		return err
	}
	b[0] = n.BaseVersion
	b[1] = n.ClassVersion
	b[2] = uint8(n.NodeType)
	b[3] = n.NumPorts
	binary.BigEndian.PutUint64(b[4:12], n.SystemImageGUID)
	binary.BigEndian.PutUint64(b[12:20], n.NodeGUID)
	binary.BigEndian.PutUint64(b[20:28], n.PortGUID)
	binary.BigEndian.PutUint16(b[28:30], n.PartitionCap)
	binary.BigEndian.PutUint16(b[30:32], n.DeviceID)
	binary.BigEndian.PutUint32(b[32:36], n.Revision)
	binary.BigEndian.PutUint32(b[36:40], uint32(n.LocalPortNum)<<24|n.VendorID)
	return nil
}

// UnmarshalAttr implements Attribute. Any NodeType value is accepted (the
// caller decides what to do with an unknown one); use Validate for the
// checks discovery relies on.
func (n *NodeInfo) UnmarshalAttr(b []byte) error {
	if err := need("NodeInfo", b, NodeInfoSize); err != nil {
		return err
	}
	n.BaseVersion = b[0]
	n.ClassVersion = b[1]
	n.NodeType = NodeType(b[2])
	n.NumPorts = b[3]
	n.SystemImageGUID = binary.BigEndian.Uint64(b[4:12])
	n.NodeGUID = binary.BigEndian.Uint64(b[12:20])
	n.PortGUID = binary.BigEndian.Uint64(b[20:28])
	n.PartitionCap = binary.BigEndian.Uint16(b[28:30])
	n.DeviceID = binary.BigEndian.Uint16(b[30:32])
	n.Revision = binary.BigEndian.Uint32(b[32:36])
	v := binary.BigEndian.Uint32(b[36:40])
	n.LocalPortNum = uint8(v >> 24)
	n.VendorID = v & 0xffffff
	return nil
}

// Validate reports the inconsistencies a discovery must not build on: an
// unknown node type, a node without ports, a zero node GUID, or a local
// port number beyond NumPorts (port 0 is valid for switches only).
func (n *NodeInfo) Validate() error {
	switch n.NodeType {
	case NodeCA, NodeSwitch, NodeRouter:
	default:
		return &FieldError{Field: "NodeInfo.NodeType", Msg: fmt.Sprintf("unknown node type %d", uint8(n.NodeType))}
	}
	if n.NumPorts == 0 {
		return &FieldError{Field: "NodeInfo.NumPorts", Msg: "node reports no ports"}
	}
	if n.NodeGUID == 0 {
		return &FieldError{Field: "NodeInfo.NodeGUID", Msg: "is zero"}
	}
	if n.LocalPortNum > n.NumPorts || (n.LocalPortNum == 0 && n.NodeType != NodeSwitch) {
		return &FieldError{Field: "NodeInfo.LocalPortNum", Msg: fmt.Sprintf("port %d is not a port of a %v with %d ports", n.LocalPortNum, n.NodeType, n.NumPorts)}
	}
	return nil
}
