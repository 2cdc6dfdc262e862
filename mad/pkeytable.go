package mad

import (
	"encoding/binary"
	"fmt"
)

// PKeyBlockSize is the number of P_Keys one P_KeyTable block holds.
const PKeyBlockSize = 32

// PKey is one P_Key table entry (IBA 10.9.1): the top bit is the
// membership (1 full, 0 limited), the low 15 bits the partition. Two
// ports can talk in a partition when both hold it and at least one is a
// full member.
type PKey uint16

// Partition is the key's 15-bit partition number.
func (k PKey) Partition() uint16 { return uint16(k) & 0x7fff }

// Full reports whether the key is a full membership.
func (k PKey) Full() bool { return k&0x8000 != 0 }

// Valid reports whether the entry holds a partition: base 0 (0x0000 and
// 0x8000) is the invalid P_Key that marks an empty entry.
func (k PKey) Valid() bool { return k.Partition() != 0 }

// String prints the key as ibdiagnet and OpenSM do: "0x8001".
func (k PKey) String() string { return fmt.Sprintf("0x%04x", uint16(k)) }

// PKeyTable is one block of the P_KeyTable SMP attribute (0x0016, IBA
// 14.2.5.7): 32 entries. Its attribute modifier is the block number in
// bits 0-15 and, on a switch, the external port in bits 16-23
// (PKeyTableMod).
type PKeyTable struct {
	Keys [PKeyBlockSize]PKey
}

// PKeyTableMod is the attribute modifier reading block of port's table
// (port 0 for a CA, whose SMA answers for the port the SMP came in by).
func PKeyTableMod(port uint8, block uint16) uint32 {
	return uint32(port)<<16 | uint32(block)
}

// PKeyBlocks is how many blocks a table of capacity entries spans
// (NodeInfo.PartitionCap for a CA port or a switch's port 0,
// SwitchInfo.PartitionEnforcementCap for a switch's external ports).
func PKeyBlocks(capacity uint16) int {
	return (int(capacity) + PKeyBlockSize - 1) / PKeyBlockSize
}

// AttributeID implements Attribute.
func (*PKeyTable) AttributeID() AttrID { return AttrPKeyTable }

// MarshalAttr implements Attribute.
func (t *PKeyTable) MarshalAttr(b []byte) error {
	if err := need("P_KeyTable", b, 2*PKeyBlockSize); err != nil {
		return err
	}
	for i, k := range t.Keys {
		binary.BigEndian.PutUint16(b[2*i:], uint16(k))
	}
	return nil
}

// UnmarshalAttr implements Attribute.
func (t *PKeyTable) UnmarshalAttr(b []byte) error {
	if err := need("P_KeyTable", b, 2*PKeyBlockSize); err != nil {
		return err
	}
	for i := range t.Keys {
		t.Keys[i] = PKey(binary.BigEndian.Uint16(b[2*i:]))
	}
	return nil
}
