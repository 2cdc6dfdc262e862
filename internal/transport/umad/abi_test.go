package umad

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"unsafe"
)

// The sizes and offsets below are those of the kernel's
// include/uapi/rdma/ib_user_mad.h, checked with gcc offsetof against
// Debian's linux-libc-dev 6.1 (see the umad reference §1.3-1.4).

func TestRegReqLayout(t *testing.T) {
	var r regReq
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof", unsafe.Sizeof(r), 28},
		{"alignof", unsafe.Alignof(r), 4},
		{"id", unsafe.Offsetof(r.ID), 0},
		{"method_mask", unsafe.Offsetof(r.MethodMask), 4},
		{"qpn", unsafe.Offsetof(r.QPN), 20},
		{"mgmt_class", unsafe.Offsetof(r.MgmtClass), 21},
		{"mgmt_class_version", unsafe.Offsetof(r.MgmtClassVersion), 22},
		{"oui", unsafe.Offsetof(r.OUI), 23},
		{"rmpp_version", unsafe.Offsetof(r.RMPPVersion), 26},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("ib_user_mad_reg_req %s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestRegReq2Layout(t *testing.T) {
	var r regReq2
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof", unsafe.Sizeof(r), 40},
		{"id", unsafe.Offsetof(r.ID), 0},
		{"qpn", unsafe.Offsetof(r.QPN), 4},
		{"mgmt_class", unsafe.Offsetof(r.MgmtClass), 8},
		{"mgmt_class_version", unsafe.Offsetof(r.MgmtClassVersion), 9},
		{"res", unsafe.Offsetof(r.Res), 10},
		{"flags", unsafe.Offsetof(r.Flags), 12},
		{"method_mask", unsafe.Offsetof(r.MethodMask), 16},
		{"oui", unsafe.Offsetof(r.OUI), 32},
		{"rmpp_version", unsafe.Offsetof(r.RMPPVersion), 36},
		{"reserved", unsafe.Offsetof(r.Reserved), 37},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("ib_user_mad_reg_req2 %s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestHdrLayout(t *testing.T) {
	var h userMADHdr
	checks := []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof", unsafe.Sizeof(h), hdrLen},
		{"id", unsafe.Offsetof(h.ID), 0},
		{"status", unsafe.Offsetof(h.Status), 4},
		{"timeout_ms", unsafe.Offsetof(h.TimeoutMS), 8},
		{"retries", unsafe.Offsetof(h.Retries), 12},
		{"length", unsafe.Offsetof(h.Length), 16},
		{"qpn", unsafe.Offsetof(h.QPN), 20},
		{"qkey", unsafe.Offsetof(h.QKey), 24},
		{"lid", unsafe.Offsetof(h.LID), 28},
		{"sl", unsafe.Offsetof(h.SL), 30},
		{"path_bits", unsafe.Offsetof(h.PathBits), 31},
		{"grh_present", unsafe.Offsetof(h.GRHPresent), 32},
		{"gid_index", unsafe.Offsetof(h.GIDIndex), 33},
		{"hop_limit", unsafe.Offsetof(h.HopLimit), 34},
		{"traffic_class", unsafe.Offsetof(h.TrafficClass), 35},
		{"gid", unsafe.Offsetof(h.GID), 36},
		{"flow_label", unsafe.Offsetof(h.FlowLabel), 52},
		{"pkey_index (end of the old layout)", unsafe.Offsetof(h.PKeyIndex), oldHdrLen},
		{"reserved", unsafe.Offsetof(h.Reserved), 58},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("ib_user_mad_hdr %s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestHdrMarshalMatchesMirror fills the C-layout mirror through memory and
// checks that the explicit marshaller produced the same bytes, so the
// encoder and the layout cannot drift apart.
func TestHdrMarshalMatchesMirror(t *testing.T) {
	h := madHdr{
		ID: 3, Status: 110, TimeoutMS: 1000, Retries: 2, Length: 320,
		QPN: 1, QKey: 0x80010000, LID: 0x1a2b, SL: 5, PathBits: 1,
		GRHPresent: true, GIDIndex: 2, HopLimit: 64, TrafficClass: 0x20,
		GID: netip.MustParseAddr("fe80::ff:fe00:2"), FlowLabel: 0x12345, PKeyIndex: 7,
	}
	var m userMADHdr
	m.ID, m.Status, m.TimeoutMS, m.Retries, m.Length = 3, 110, 1000, 2, 320
	// Big-endian fields: store the wire bytes in host memory.
	be := func(v uint32) uint32 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		return binary.NativeEndian.Uint32(b[:])
	}
	m.QPN, m.QKey, m.FlowLabel = be(1), be(0x80010000), be(0x12345)
	var lb [2]byte
	binary.BigEndian.PutUint16(lb[:], 0x1a2b)
	m.LID = binary.NativeEndian.Uint16(lb[:])
	m.SL, m.PathBits, m.GRHPresent, m.GIDIndex, m.HopLimit, m.TrafficClass = 5, 1, 1, 2, 64, 0x20
	m.GID = netip.MustParseAddr("fe80::ff:fe00:2").As16()
	m.PKeyIndex = 7
	mirror := unsafe.Slice((*byte)(unsafe.Pointer(&m)), unsafe.Sizeof(m))

	got := make([]byte, hdrLen)
	h.marshal(got, hdrLen)
	if !bytes.Equal(got, mirror) {
		t.Fatalf("marshal:\n%s\nmirror:\n%s", hex.Dump(got), hex.Dump(mirror))
	}
	if back := unmarshalHdr(got, hdrLen); back != h {
		t.Errorf("round trip: got %+v, want %+v", back, h)
	}
	// The old layout is the first 56 bytes, without the P_Key index.
	old := make([]byte, oldHdrLen)
	h.marshal(old, oldHdrLen)
	if !bytes.Equal(old, mirror[:oldHdrLen]) {
		t.Errorf("old layout differs from the first 56 bytes")
	}
	h.PKeyIndex = 0
	if back := unmarshalHdr(old, oldHdrLen); back != h {
		t.Errorf("old round trip: got %+v, want %+v", back, h)
	}
}

// TestHdrKnownBytes pins the encoding of a directed-route send on a
// little-endian host, byte for byte.
func TestHdrKnownBytes(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("known bytes are for little-endian hosts")
	}
	h := madHdr{ID: 1, TimeoutMS: 250, LID: 0xffff}
	got := make([]byte, hdrLen)
	h.marshal(got, hdrLen)
	want, _ := hex.DecodeString(strings.Join([]string{
		"01000000", "00000000", "fa000000", "00000000", "00000000", // id status timeout retries length
		"00000000", "00000000", "ffff", "00", "00", // qpn qkey lid sl path_bits
		"00", "00", "00", "00", strings.Repeat("00", 16), "00000000", // grh gid_index hop tc gid flow
		"0000", "000000000000", // pkey_index reserved
	}, ""))
	if !bytes.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", hex.Dump(got), hex.Dump(want))
	}
}

func TestMethodMasks(t *testing.T) {
	var m [16]byte
	putMethodMask(m[:], []uint8{1, 2, 0x7f})
	// Bits 1 and 2 are in the first byte on little-endian hosts and in
	// the last byte of the first word on big-endian ones; bit 127 is in
	// the second 64 bits.
	var lo, hi uint64
	if unsafe.Sizeof(uintptr(0)) == 8 {
		lo, hi = binary.NativeEndian.Uint64(m[:8]), binary.NativeEndian.Uint64(m[8:])
	} else {
		lo = uint64(binary.NativeEndian.Uint32(m[:4])) | uint64(binary.NativeEndian.Uint32(m[4:8]))<<32
		hi = uint64(binary.NativeEndian.Uint32(m[8:12])) | uint64(binary.NativeEndian.Uint32(m[12:]))<<32
	}
	if lo != 0x6 || hi != 1<<63 {
		t.Errorf("reg_req mask = %#x %#x, want 0x6 0x8000000000000000", lo, hi)
	}
	if got := methodMask2([]uint8{1, 2, 0x7f}); got != [2]uint64{0x6, 1 << 63} {
		t.Errorf("reg_req2 mask = %#x", got)
	}
	if got := methodMask2(nil); got != [2]uint64{} {
		t.Errorf("empty mask = %#x", got)
	}
}

func FuzzUnmarshalHdr(f *testing.F) {
	seed := make([]byte, hdrLen)
	(&madHdr{ID: 1, QPN: 1, GRHPresent: true, GID: netip.MustParseAddr("fe80::1")}).marshal(seed, hdrLen)
	f.Add(seed)
	f.Add(make([]byte, hdrLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, n := range []int{oldHdrLen, hdrLen} {
			if len(b) < n {
				continue
			}
			h := unmarshalHdr(b, n)
			out := make([]byte, n)
			h.marshal(out, n)
			// Everything but the GRH flag (normalized to 0/1) and the
			// reserved bytes survives a round trip.
			in := append([]byte(nil), b[:n]...)
			if in[32] != 0 {
				in[32] = 1
			}
			if n == hdrLen {
				clear(in[58:64])
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("round trip of %d-byte header:\n in %x\nout %x", n, in, out)
			}
		}
	})
}
