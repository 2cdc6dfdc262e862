package capture

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ibdoctor/ibdoctor/mad"
)

// Layout of one capture record: an ERF header followed by a local
// (LRH-only) InfiniBand UD SEND Only packet carrying one 256-byte MAD.
const (
	// LinkTypeERF is the pcap link type of Endace ERF records
	// (LINKTYPE_ERF, 197). tshark 4.0 rejects LINKTYPE_INFINIBAND (247).
	LinkTypeERF = 197

	erfHeaderSize = 16
	erfTypeIB     = 21   // ERF_TYPE_INFINIBAND
	erfFlagVarLen = 0x04 // varying record length; capture interface 0

	lrhSize  = 8
	bthSize  = 12
	dethSize = 8
	icrcSize = 4
	vcrcSize = 2

	// FrameSize is the InfiniBand packet length: LRH + BTH + DETH + MAD +
	// ICRC + VCRC = 290 bytes.
	FrameSize = lrhSize + bthSize + dethSize + mad.Size + icrcSize + vcrcSize
	// RecordSize is the ERF record length: ERF header + frame.
	RecordSize = erfHeaderSize + FrameSize

	// pktLenWords is LRH PktLen: 4-byte words from the LRH through the ICRC.
	pktLenWords = (FrameSize - vcrcSize) / 4

	lnhIBALocal   = 2    // LRH Link Next Header: BTH follows, no GRH
	opUDSendOnly  = 0x64 // BTH OpCode: UD SEND Only
	defaultPKey   = 0xffff
	vlSMP         = 15
	offLRH        = erfHeaderSize
	offBTH        = offLRH + lrhSize
	offDETH       = offBTH + bthSize
	offMAD        = offDETH + dethSize
	offICRC       = offMAD + mad.Size
	offVCRC       = offICRC + icrcSize
	permissiveLID = mad.PermissiveLID
)

// Frame is one decoded capture record: the header fields ibdoctor writes
// and the MAD they carry.
type Frame struct {
	Time time.Time

	// LRH
	VL, SL     uint8
	LNH        uint8
	DLID, SLID uint16
	PktLen     uint16 // 4-byte words, LRH through ICRC

	// BTH
	OpCode uint8
	PKey   uint16
	DestQP uint32
	PSN    uint32

	// DETH
	QKey  uint32
	SrcQP uint32

	MAD  []byte // 256 bytes
	ICRC uint32 // as stored (little-endian on the wire)
	VCRC uint16 // as stored (little-endian on the wire)

	raw []byte // the InfiniBand packet, LRH through VCRC
}

// frameParams are the header values encodeRecord writes.
type frameParams struct {
	vl, sl        uint8
	dlid, slid    uint16
	destQP, srcQP uint32
	qkey          uint32
	psn           uint32
	pkey          uint16
	madBytes      []byte // at most mad.Size; zero-padded
	ts            time.Time
}

// encodeRecord writes one ERF record into b, which must be RecordSize
// bytes long.
func encodeRecord(b []byte, p *frameParams) {
	_ = b[RecordSize-1]
	clear(b[:RecordSize])

	// ERF header: little-endian fixed-point timestamp, big-endian lengths.
	binary.LittleEndian.PutUint64(b[0:8], erfTimestamp(p.ts))
	b[8] = erfTypeIB
	b[9] = erfFlagVarLen
	binary.BigEndian.PutUint16(b[10:12], RecordSize)
	binary.BigEndian.PutUint16(b[12:14], 0) // loss counter
	binary.BigEndian.PutUint16(b[14:16], FrameSize)

	// LRH.
	l := b[offLRH:offBTH]
	l[0] = p.vl << 4 // LVer 0
	l[1] = p.sl<<4 | lnhIBALocal
	binary.BigEndian.PutUint16(l[2:4], p.dlid)
	binary.BigEndian.PutUint16(l[4:6], pktLenWords)
	binary.BigEndian.PutUint16(l[6:8], p.slid)

	// BTH: UD SEND Only, no solicited event, no padding, TVer 0.
	t := b[offBTH:offDETH]
	t[0] = opUDSendOnly
	binary.BigEndian.PutUint16(t[2:4], p.pkey)
	put24(t[5:8], p.destQP)
	put24(t[9:12], p.psn)

	// DETH.
	d := b[offDETH:offMAD]
	binary.BigEndian.PutUint32(d[0:4], p.qkey)
	put24(d[5:8], p.srcQP)

	copy(b[offMAD:offICRC], p.madBytes)

	pkt := b[offLRH:RecordSize]
	binary.LittleEndian.PutUint32(b[offICRC:offVCRC], icrc(pkt[:offICRC-offLRH]))
	binary.LittleEndian.PutUint16(b[offVCRC:RecordSize], vcrc(pkt[:offVCRC-offLRH]))
}

// erfTimestamp converts t to ERF's 32.32 fixed-point seconds.
func erfTimestamp(t time.Time) uint64 {
	sec := uint64(t.Unix())
	frac := (uint64(t.Nanosecond()) << 32) / 1e9
	return sec<<32 | frac
}

func erfTime(ts uint64) time.Time {
	sec := int64(ts >> 32)
	// Round to the nearest nanosecond so erfTime(erfTimestamp(t)) == t.
	nsec := ((ts&0xffffffff)*1e9 + 1<<31) >> 32
	return time.Unix(sec, int64(nsec))
}

func put24(b []byte, v uint32) {
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func get24(b []byte) uint32 {
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

// ParseRecord decodes one ERF record as ibdoctor writes it: ERF type
// InfiniBand, an LRH without GRH, a UD SEND Only BTH, a DETH and a
// 256-byte MAD. It does not check the CRCs; see Frame.CheckCRCs.
func ParseRecord(b []byte) (*Frame, error) {
	if len(b) < erfHeaderSize {
		return nil, fmt.Errorf("capture: ERF record is %d bytes, shorter than its %d-byte header", len(b), erfHeaderSize)
	}
	if b[8]&0x7f != erfTypeIB {
		return nil, fmt.Errorf("capture: ERF record type %d is not InfiniBand (%d)", b[8]&0x7f, erfTypeIB)
	}
	if b[8]&0x80 != 0 {
		return nil, fmt.Errorf("capture: ERF record has extension headers, which ibdoctor does not write")
	}
	rlen := int(binary.BigEndian.Uint16(b[10:12]))
	wlen := int(binary.BigEndian.Uint16(b[14:16]))
	if rlen != len(b) {
		return nil, fmt.Errorf("capture: ERF rlen %d does not match the record's %d bytes", rlen, len(b))
	}
	if rlen != RecordSize || wlen != FrameSize {
		return nil, fmt.Errorf("capture: ERF record of %d bytes (wire %d) is not a %d-byte MAD frame", rlen, wlen, FrameSize)
	}
	f := &Frame{Time: erfTime(binary.LittleEndian.Uint64(b[0:8]))}

	l := b[offLRH:offBTH]
	f.VL = l[0] >> 4
	if lver := l[0] & 0x0f; lver != 0 {
		return nil, fmt.Errorf("capture: LRH link version %d, want 0", lver)
	}
	f.SL = l[1] >> 4
	f.LNH = l[1] & 0x03
	f.DLID = binary.BigEndian.Uint16(l[2:4])
	f.PktLen = binary.BigEndian.Uint16(l[4:6]) & 0x07ff
	f.SLID = binary.BigEndian.Uint16(l[6:8])
	if f.LNH != lnhIBALocal {
		return nil, fmt.Errorf("capture: LRH next header %d, want %d (BTH, no GRH)", f.LNH, lnhIBALocal)
	}
	if f.PktLen != pktLenWords {
		return nil, fmt.Errorf("capture: LRH packet length %d words, want %d", f.PktLen, pktLenWords)
	}

	t := b[offBTH:offDETH]
	f.OpCode = t[0]
	if f.OpCode != opUDSendOnly {
		return nil, fmt.Errorf("capture: BTH opcode 0x%02x is not UD SEND Only (0x%02x)", f.OpCode, opUDSendOnly)
	}
	if pad := (t[1] >> 4) & 0x3; pad != 0 {
		return nil, fmt.Errorf("capture: BTH pad count %d, want 0", pad)
	}
	f.PKey = binary.BigEndian.Uint16(t[2:4])
	f.DestQP = get24(t[5:8])
	f.PSN = get24(t[9:12])

	d := b[offDETH:offMAD]
	f.QKey = binary.BigEndian.Uint32(d[0:4])
	f.SrcQP = get24(d[5:8])

	f.MAD = b[offMAD:offICRC:offICRC]
	f.ICRC = binary.LittleEndian.Uint32(b[offICRC:offVCRC])
	f.VCRC = binary.LittleEndian.Uint16(b[offVCRC:RecordSize])
	f.raw = b[offLRH:RecordSize:RecordSize]
	return f, nil
}

// CheckCRCs recomputes the invariant and variant CRCs of the frame and
// reports a mismatch.
func (f *Frame) CheckCRCs() error {
	if len(f.raw) != FrameSize {
		return fmt.Errorf("capture: frame has no raw packet to check")
	}
	if want := icrc(f.raw[:offICRC-offLRH]); want != f.ICRC {
		return fmt.Errorf("capture: ICRC is 0x%08x, computed 0x%08x", f.ICRC, want)
	}
	if want := vcrc(f.raw[:offVCRC-offLRH]); want != f.VCRC {
		return fmt.Errorf("capture: VCRC is 0x%04x, computed 0x%04x", f.VCRC, want)
	}
	return nil
}
