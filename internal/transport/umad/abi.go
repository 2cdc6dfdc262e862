package umad

import (
	"encoding/binary"
	"net/netip"
	"structs"
	"unsafe"
)

// The user_mad ABI (include/uapi/rdma/ib_user_mad.h), mirrored field by
// field. abi_test.go asserts every size and offset against the kernel's
// layout; the header itself is marshalled explicitly below because it
// mixes host-order and big-endian fields.

// regReq is struct ib_user_mad_reg_req (28 bytes, 4-byte aligned). The
// kernel's method_mask is unsigned long[] with aligned(4), so it is held
// here as 16 bytes at offset 4, filled by putMethodMask.
type regReq struct {
	_                structs.HostLayout
	ID               uint32
	MethodMask       [16]byte
	QPN              uint8
	MgmtClass        uint8
	MgmtClassVersion uint8
	OUI              [3]uint8
	RMPPVersion      uint8
	_                uint8
}

// regReq2 is struct ib_user_mad_reg_req2 (40 bytes, 8-byte aligned).
type regReq2 struct {
	_                structs.HostLayout
	ID               uint32
	QPN              uint32
	MgmtClass        uint8
	MgmtClassVersion uint8
	Res              uint16
	Flags            uint32
	MethodMask       [2]uint64
	OUI              uint32
	RMPPVersion      uint8
	Reserved         [3]uint8
}

// userMADHdr is struct ib_user_mad_hdr (64 bytes; the old layout stops at
// PKeyIndex, 56 bytes). It documents the layout and is checked by the
// tests; marshalHdr/unmarshalHdr do the actual encoding.
type userMADHdr struct {
	_            structs.HostLayout
	ID           uint32 // host
	Status       uint32 // host
	TimeoutMS    uint32 // host
	Retries      uint32 // host
	Length       uint32 // host
	QPN          uint32 // big-endian
	QKey         uint32 // big-endian
	LID          uint16 // big-endian
	SL           uint8
	PathBits     uint8
	GRHPresent   uint8
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	GID          [16]byte
	FlowLabel    uint32 // big-endian
	PKeyIndex    uint16 // host
	Reserved     [6]uint8
}

// Header sizes of the two layouts.
const (
	hdrLen    = 64 // after ENABLE_PKEY or REGISTER_AGENT2
	oldHdrLen = 56 // before P_Key index support
)

// ioctl request numbers, magic 0x1b. ioc is per architecture.
var (
	iocRegisterAgent   = ioc(iocRead|iocWrite, 0x1b, 1, unsafe.Sizeof(regReq{}))
	iocUnregisterAgent = ioc(iocWrite, 0x1b, 2, 4)
	iocEnablePKey      = ioc(iocNone, 0x1b, 3, 0)
	iocRegisterAgent2  = ioc(iocRead|iocWrite, 0x1b, 4, unsafe.Sizeof(regReq2{}))
)

func ioc(dir, typ, nr, size uintptr) uintptr {
	return dir<<iocDirShift | size<<iocSizeShift | typ<<8 | nr
}

// putMethodMask sets bit m for each method in a kernel bitmap of unsigned
// longs laid out in host order (16 bytes).
func putMethodMask(dst []byte, methods []uint8) {
	clear(dst[:16])
	word := int(unsafe.Sizeof(uintptr(0))) // unsigned long
	for _, m := range methods {
		w, bit := int(m)/(word*8), uint(m)%uint(word*8)
		if word == 8 {
			v := binary.NativeEndian.Uint64(dst[w*8:]) | 1<<bit
			binary.NativeEndian.PutUint64(dst[w*8:], v)
		} else {
			v := binary.NativeEndian.Uint32(dst[w*4:]) | 1<<bit
			binary.NativeEndian.PutUint32(dst[w*4:], v)
		}
	}
}

// methodMask2 is the __u64[2] mask of reg_req2.
func methodMask2(methods []uint8) [2]uint64 {
	var m [2]uint64
	for _, x := range methods {
		m[x/64] |= 1 << (x % 64)
	}
	return m
}

// madHdr is the decoded form of ib_user_mad_hdr.
type madHdr struct {
	ID           uint32
	Status       uint32
	TimeoutMS    uint32
	Retries      uint32
	Length       uint32
	QPN          uint32
	QKey         uint32
	LID          uint16
	SL           uint8
	PathBits     uint8
	GRHPresent   bool
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	GID          netip.Addr // zero when GRHPresent is false and the field is all zero
	FlowLabel    uint32
	PKeyIndex    uint16 // new layout only
}

// marshal writes the header into b[:n] where n is hdrLen or oldHdrLen.
func (h *madHdr) marshal(b []byte, n int) {
	_ = b[n-1]
	ne, be := binary.NativeEndian, binary.BigEndian
	ne.PutUint32(b[0:], h.ID)
	ne.PutUint32(b[4:], h.Status)
	ne.PutUint32(b[8:], h.TimeoutMS)
	ne.PutUint32(b[12:], h.Retries)
	ne.PutUint32(b[16:], h.Length)
	be.PutUint32(b[20:], h.QPN)
	be.PutUint32(b[24:], h.QKey)
	be.PutUint16(b[28:], h.LID)
	b[30] = h.SL
	b[31] = h.PathBits
	b[32] = 0
	if h.GRHPresent {
		b[32] = 1
	}
	b[33] = h.GIDIndex
	b[34] = h.HopLimit
	b[35] = h.TrafficClass
	clear(b[36:52])
	if h.GID.IsValid() {
		g := h.GID.As16()
		copy(b[36:52], g[:])
	}
	be.PutUint32(b[52:], h.FlowLabel)
	if n >= hdrLen {
		ne.PutUint16(b[56:], h.PKeyIndex)
		clear(b[58:64])
	}
}

// unmarshalHdr decodes a header of n bytes (hdrLen or oldHdrLen) from b.
func unmarshalHdr(b []byte, n int) madHdr {
	_ = b[n-1]
	ne, be := binary.NativeEndian, binary.BigEndian
	h := madHdr{
		ID:           ne.Uint32(b[0:]),
		Status:       ne.Uint32(b[4:]),
		TimeoutMS:    ne.Uint32(b[8:]),
		Retries:      ne.Uint32(b[12:]),
		Length:       ne.Uint32(b[16:]),
		QPN:          be.Uint32(b[20:]),
		QKey:         be.Uint32(b[24:]),
		LID:          be.Uint16(b[28:]),
		SL:           b[30],
		PathBits:     b[31],
		GRHPresent:   b[32] != 0,
		GIDIndex:     b[33],
		HopLimit:     b[34],
		TrafficClass: b[35],
		FlowLabel:    be.Uint32(b[52:]),
	}
	var g [16]byte
	copy(g[:], b[36:52])
	if h.GRHPresent || g != [16]byte{} {
		h.GID = netip.AddrFrom16(g)
	}
	if n >= hdrLen {
		h.PKeyIndex = ne.Uint16(b[56:])
	}
	return h
}
