package mad

import "fmt"

// AttrSLtoVLMappingTable is the SMP attribute mapping each service level
// to the virtual lane a port sends it on (IBA 14.2.5.8). The vendor class
// 0x0A's GeneralInfo has the same number; attribute IDs are per class.
const AttrSLtoVLMappingTable AttrID = 0x0017

// SLtoVLSize is the part of the SMP data area the table fills: 16 SLs of
// 4 bits each.
const SLtoVLSize = 8

// VLDrop is the VL an SL mapped to is dropped on (VL15 carries only
// subnet management, never a data SL).
const VLDrop = 15

// SLtoVLTable is the SLtoVLMappingTable SMP attribute: VL[sl] is the
// virtual lane packets of service level sl leave on. On the wire SL0 is
// the high nibble of byte 0, SL1 its low nibble, and so on. A switch
// holds one table per pair of input and output port (SLtoVLMod); a CA
// one per port, answered for the port the SMP came in by (modifier 0).
type SLtoVLTable struct {
	VL [16]uint8 // 4 bits each
}

// SLtoVLMod is the attribute modifier reading a switch's table for
// packets that come in by port in and leave by port out: in in bits
// 8-15, out in bits 0-7 (what 'smpquery sl2vl' sends). Bits 16-31 are
// for Sets on switches with optimized SL2VL programming; a Get leaves
// them clear.
func SLtoVLMod(in, out uint8) uint32 { return uint32(in)<<8 | uint32(out) }

// AttributeID implements Attribute.
func (*SLtoVLTable) AttributeID() AttrID { return AttrSLtoVLMappingTable }

// MarshalAttr implements Attribute.
func (t *SLtoVLTable) MarshalAttr(b []byte) error {
	if err := need("SLtoVLMappingTable", b, SLtoVLSize); err != nil {
		return err
	}
	for sl, vl := range t.VL {
		if err := checkBits(fmt.Sprintf("SLtoVLMappingTable.SL%dtoVL", sl), uint64(vl), 4); err != nil {
			return err
		}
	}
	for i := range SLtoVLSize {
		b[i] = t.VL[2*i]<<4 | t.VL[2*i+1]
	}
	return nil
}

// UnmarshalAttr implements Attribute.
func (t *SLtoVLTable) UnmarshalAttr(b []byte) error {
	if err := need("SLtoVLMappingTable", b, SLtoVLSize); err != nil {
		return err
	}
	for i := range SLtoVLSize {
		t.VL[2*i], t.VL[2*i+1] = b[i]>>4, b[i]&0x0f
	}
	return nil
}

// VLs returns the set of VLs the table sends data SLs on, bit v for VL v
// (an SL mapped to VL15 is dropped and counts for none).
func (t *SLtoVLTable) VLs() uint16 {
	var set uint16
	for _, vl := range t.VL {
		if vl != VLDrop {
			set |= 1 << vl
		}
	}
	return set
}

// String prints the table as 'smpquery sl2vl' prints a row: "|0|1|...|".
func (t *SLtoVLTable) String() string {
	s := "|"
	for _, vl := range t.VL {
		s += fmt.Sprintf("%2d|", vl)
	}
	return s
}
