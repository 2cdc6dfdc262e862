package capture

import (
	"bytes"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// randomPacket returns a packet of FrameSize bytes with random contents.
func randomPacket(r *rand.Rand) []byte {
	b := make([]byte, FrameSize)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestICRCMatchesSoftRoCE computes the ICRC the way Linux's Soft-RoCE
// driver does (CRC register seeded with 0xdebb20e3, "the CRC of 8 bytes of
// 0xff representing a masked LRH", then BTH with its reserved byte set to
// 0xff, the rest of the headers and the payload, inverted) and compares.
func TestICRCMatchesSoftRoCE(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		pkt := randomPacket(r)[:FrameSize-icrcSize-vcrcSize]
		rest := bytes.Clone(pkt[lrhSize:])
		rest[4] = 0xff
		// crc32.Update takes and returns the inverted register.
		want := crc32.Update(^uint32(0xdebb20e3), crc32.IEEETable, rest)
		if got := icrc(pkt); got != want {
			t.Fatalf("icrc = 0x%08x, Soft-RoCE method gives 0x%08x", got, want)
		}
	}
}

// TestICRCInvariance: the ICRC ignores the LRH and BTH Resv8a (variant
// fields) but covers everything else.
func TestICRCInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pkt := randomPacket(r)[:FrameSize-icrcSize-vcrcSize]
	base := icrc(pkt)
	for _, i := range []int{0, 1, 2, 3, 4, 5, 6, 7, lrhSize + 4} {
		p := bytes.Clone(pkt)
		p[i] ^= 0x5a
		if icrc(p) != base {
			t.Errorf("changing variant byte %d changed the ICRC", i)
		}
	}
	for _, i := range []int{lrhSize, lrhSize + 2, lrhSize + 7, lrhSize + bthSize, len(pkt) - 1} {
		p := bytes.Clone(pkt)
		p[i] ^= 0x01
		if icrc(p) == base {
			t.Errorf("changing invariant byte %d left the ICRC unchanged", i)
		}
	}
}

// vcrcBitwise is an independent bit-at-a-time VCRC: polynomial 0x100B
// applied MSB-first to bit-reversed bytes (i.e. each byte sent least
// significant bit first), preset 0xFFFF, result bit-reversed and inverted.
func vcrcBitwise(p []byte) uint16 {
	reg := uint16(0xffff)
	for _, b := range p {
		reg ^= uint16(bits.Reverse8(b)) << 8
		for range 8 {
			if reg&0x8000 != 0 {
				reg = reg<<1 ^ 0x100b
			} else {
				reg <<= 1
			}
		}
	}
	return ^bits.Reverse16(reg)
}

func TestVCRCMatchesBitwise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 40 {
		p := randomPacket(r)[:n*7]
		if got, want := vcrc(p), vcrcBitwise(p); got != want {
			t.Fatalf("len %d: vcrc 0x%04x, bitwise 0x%04x", len(p), got, want)
		}
	}
}

// TestVCRCResidueConstant: running the register over a packet including
// its stored (little-endian) VCRC leaves the same remainder for any data,
// which is what a receiver checks.
func TestVCRCResidueConstant(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 50 {
		pkt := randomPacket(r)
		v := vcrc(pkt[:FrameSize-vcrcSize])
		pkt[FrameSize-2], pkt[FrameSize-1] = byte(v), byte(v>>8)
		if got := vcrcUpdate(0xffff, pkt); got != vcrcResidue {
			t.Fatalf("residue 0x%04x, want 0x%04x", got, vcrcResidue)
		}
	}
}

// TestICRCResidue: the ICRC stored little-endian gives CRC-32's standard
// residue over the masked packet.
func TestICRCResidue(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	pkt := randomPacket(r)[:FrameSize-vcrcSize]
	c := icrc(pkt[:FrameSize-vcrcSize-icrcSize])
	pkt[len(pkt)-4], pkt[len(pkt)-3], pkt[len(pkt)-2], pkt[len(pkt)-1] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
	masked := bytes.Clone(pkt)
	for i := range lrhSize {
		masked[i] = 0xff
	}
	masked[lrhSize+4] = 0xff
	// The standard CRC-32 of a message followed by its CRC is 0x2144df1c.
	if got := crc32.ChecksumIEEE(masked); got != 0x2144df1c {
		t.Errorf("CRC-32 over packet+ICRC = 0x%08x, want 0x2144df1c", got)
	}
}
