package capture

import "hash/crc32"

// The two link CRCs of an InfiniBand packet (IBA vol 1, 7.8).
//
// ICRC (invariant CRC) is the Ethernet CRC-32 (reflected polynomial
// 0xEDB88320, preset and final inversion) over the packet with its variant
// fields replaced by ones: for a packet without GRH that is the whole LRH
// (8 bytes of 0xFF) and BTH byte 4 (reserved, 8 bits). It covers the
// packet up to, not including, the ICRC. Linux's Soft-RoCE driver seeds its
// ICRC with the CRC of the same 8 bytes of 0xFF, which crc_test.go checks.
//
// VCRC (variant CRC) is a 16-bit CRC with polynomial 0x100B (x^16 + x^12
// + x^3 + x + 1), processed least significant bit first (reflected
// polynomial 0xD008), preset 0xFFFF and final inversion, over the whole
// packet from the first LRH byte through the ICRC.
//
// Both are stored least significant byte first, the order in which a
// bit-reflected CRC is transmitted; with that order, running the CRC over
// the data followed by its stored CRC gives a constant residue, which the
// tests check. tshark 4.0 displays both fields but validates neither.

var vcrcTable = makeVCRCTable()

func makeVCRCTable() *[256]uint16 {
	const poly = 0xd008 // 0x100B bit-reversed
	var t [256]uint16
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return &t
}

// vcrcUpdate runs the raw (not inverted) VCRC register over p.
func vcrcUpdate(reg uint16, p []byte) uint16 {
	for _, b := range p {
		reg = vcrcTable[byte(reg)^b] ^ reg>>8
	}
	return reg
}

// vcrc returns the VCRC of pkt (LRH through ICRC).
func vcrc(pkt []byte) uint16 { return ^vcrcUpdate(0xffff, pkt) }

// icrc returns the ICRC of pkt, which runs from the first LRH byte up to
// the ICRC and has no GRH.
func icrc(pkt []byte) uint32 {
	var masked [lrhSize + bthSize]byte
	for i := range lrhSize {
		masked[i] = 0xff
	}
	copy(masked[lrhSize:], pkt[lrhSize:lrhSize+bthSize])
	masked[lrhSize+4] = 0xff // BTH Resv8a
	c := crc32.Update(0, crc32.IEEETable, masked[:])
	return crc32.Update(c, crc32.IEEETable, pkt[lrhSize+bthSize:])
}
