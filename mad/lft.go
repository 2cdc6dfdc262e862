package mad

import "fmt"

// LFTBlockSize is the number of LIDs one LinearForwardingTable block
// covers.
const LFTBlockSize = 64

// LFTNoRoute is the conventional "no route" entry. Any entry greater than
// the switch's NumPorts means no route.
const LFTNoRoute = 0xff

// MaxLFTBlock is the highest LFT block number: LIDs 0..0xBFFF (unicast)
// are 768 blocks.
const MaxLFTBlock = 767

// LFTBlock is one LinearForwardingTable block (SMP attribute 0x0019, the
// attribute modifier is the block number): the egress port for each of 64
// consecutive LIDs starting at LFTBlockFirstLID(block).
type LFTBlock struct {
	Ports [LFTBlockSize]uint8
}

// AttributeID implements Attribute.
func (*LFTBlock) AttributeID() AttrID { return AttrLinearForwardingTable }

// MarshalAttr implements Attribute.
func (l *LFTBlock) MarshalAttr(b []byte) error {
	if err := need("LinearForwardingTable", b, LFTBlockSize); err != nil {
		return err
	}
	copy(b, l.Ports[:])
	return nil
}

// UnmarshalAttr implements Attribute.
func (l *LFTBlock) UnmarshalAttr(b []byte) error {
	if err := need("LinearForwardingTable", b, LFTBlockSize); err != nil {
		return err
	}
	copy(l.Ports[:], b)
	return nil
}

// LFTBlockCount is how many blocks hold LIDs 0..linearFDBTop: blocks 0
// through linearFDBTop/64 inclusive, i.e. linearFDBTop/64 + 1. A top of 63
// is one block, 64 two. (Top 0 still yields block 0, which holds LID 0.)
func LFTBlockCount(linearFDBTop uint16) int { return int(linearFDBTop)/LFTBlockSize + 1 }

// LFTBlockOf returns the block holding lid and the lid's index within it.
func LFTBlockOf(lid uint16) (block uint32, index int) {
	return uint32(lid) / LFTBlockSize, int(lid % LFTBlockSize)
}

// LFTBlockFirstLID returns the first LID of a block.
func LFTBlockFirstLID(block uint32) (uint16, error) {
	if block > MaxLFTBlock {
		return 0, &FieldError{Field: "LinearForwardingTable block", Msg: fmt.Sprintf("%d is beyond the last unicast block %d", block, MaxLFTBlock)}
	}
	return uint16(block * LFTBlockSize), nil
}

// PortFor returns the entry for lid, which must lie in block; ok is false
// when it does not.
func (l *LFTBlock) PortFor(block uint32, lid uint16) (port uint8, ok bool) {
	b, i := LFTBlockOf(lid)
	if b != block {
		return 0, false
	}
	return l.Ports[i], true
}
