package mad

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// PermissiveLID is the LID that stands for "directed route" in DrSLID and
// DrDLID, and for the local port in umad and ibsim addressing.
const PermissiveLID = 0xffff

// Path is a directed route: the egress port at each hop, i.e. InitialPath
// entries 1..HopCount. An empty path addresses the local node.
type Path []uint8

// String prints the path the way infiniband-diags does: "0" for the local
// node, "0,1,3" for two hops.
func (p Path) String() string {
	var b strings.Builder
	b.WriteByte('0')
	for _, port := range p {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(port)))
	}
	return b.String()
}

// Extend returns a new path with port appended; p is not modified.
func (p Path) Extend(port uint8) Path {
	q := make(Path, len(p)+1)
	copy(q, p)
	q[len(p)] = port
	return q
}

// ParsePath parses infiniband-diags' path syntax ("0,1,3"; the leading 0
// may be omitted; "" and "0" are the local node).
func ParsePath(s string) (Path, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Path{}, nil
	}
	parts := strings.Split(s, ",")
	if parts[0] == "0" {
		parts = parts[1:]
	}
	if len(parts) > MaxHops {
		return nil, fmt.Errorf("mad: path %q has %d hops, at most %d allowed", s, len(parts), MaxHops)
	}
	p := make(Path, 0, len(parts))
	for _, f := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 8)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("mad: path %q: %q is not a port number 1..255", s, f)
		}
		p = append(p, uint8(n))
	}
	return p, nil
}

// SMP is a subnet management packet, LID-routed (class 0x01) or directed
// route (class 0x81).
//
// For directed-route SMPs, Header.Status holds the 15-bit status and
// Direction the D bit; HopPointer and HopCount are kept here rather than in
// Header.ClassSpecific (Marshal and Unmarshal translate).
type SMP struct {
	Header
	Direction   bool // D bit: false outbound (request), true returning
	HopPointer  uint8
	HopCount    uint8
	MKey        uint64
	DrSLID      uint16
	DrDLID      uint16
	Data        [SMPDataSize]byte
	InitialPath [64]byte
	ReturnPath  [64]byte
}

// DirectedRoute reports whether this is a directed-route SMP.
func (s *SMP) DirectedRoute() bool { return s.Class == ClassSubnDR }

// NewDRGet builds a directed-route SubnGet of attr with modifier mod along
// path, with permissive DrSLID/DrDLID. The TID is left for the sender.
func NewDRGet(path Path, attr AttrID, mod uint32) (*SMP, error) {
	return newDR(MethodGet, path, attr, mod)
}

// NewDRSet builds a directed-route SubnSet carrying a's encoding.
func NewDRSet(path Path, a Attribute, mod uint32) (*SMP, error) {
	s, err := newDR(MethodSet, path, a.AttributeID(), mod)
	if err != nil {
		return nil, err
	}
	if err := a.MarshalAttr(s.Data[:]); err != nil {
		return nil, err
	}
	return s, nil
}

func newDR(m Method, path Path, attr AttrID, mod uint32) (*SMP, error) {
	s := new(SMP)
	if err := s.initDR(m, path, attr, mod); err != nil {
		return nil, err
	}
	return s, nil
}

// InitDRGet makes s what NewDRGet returns, in place (a reader that keeps
// its request in a larger object spares an allocation per SMP).
func (s *SMP) InitDRGet(path Path, attr AttrID, mod uint32) error {
	return s.initDR(MethodGet, path, attr, mod)
}

func (s *SMP) initDR(m Method, path Path, attr AttrID, mod uint32) error {
	if len(path) > MaxHops {
		return &FieldError{Field: "SMP.HopCount", Msg: fmt.Sprintf("path has %d hops, at most %d allowed", len(path), MaxHops)}
	}
	*s = SMP{
		Header: Header{
			BaseVersion:  BaseVersion,
			Class:        ClassSubnDR,
			ClassVersion: 1,
			Method:       m,
			AttrID:       attr,
			AttrMod:      mod,
		},
		HopCount: uint8(len(path)),
		DrSLID:   PermissiveLID,
		DrDLID:   PermissiveLID,
	}
	copy(s.InitialPath[1:], path)
	return nil
}

// NewLIDGet builds a LID-routed SubnGet (class 0x01). The destination LID
// travels in the transport address, not in the MAD.
func NewLIDGet(attr AttrID, mod uint32) *SMP {
	s := new(SMP)
	s.InitLIDGet(attr, mod)
	return s
}

// InitLIDGet makes s what NewLIDGet returns, in place.
func (s *SMP) InitLIDGet(attr AttrID, mod uint32) {
	*s = SMP{Header: Header{
		BaseVersion:  BaseVersion,
		Class:        ClassSubnLID,
		ClassVersion: 1,
		Method:       MethodGet,
		AttrID:       attr,
		AttrMod:      mod,
	}}
}

// Path returns the initial path of a directed-route SMP.
func (s *SMP) Path() Path {
	n := int(s.HopCount)
	if n > MaxHops {
		n = MaxHops
	}
	return append(Path(nil), s.InitialPath[1:1+n]...)
}

// Marshal encodes the SMP into a new 256-byte slice.
func (s *SMP) Marshal() []byte {
	b := make([]byte, Size)
	s.MarshalTo(b)
	return b
}

// MarshalTo encodes the SMP into b, which must be at least Size bytes.
func (s *SMP) MarshalTo(b []byte) {
	_ = b[Size-1]
	h := s.Header
	if s.DirectedRoute() {
		h.Status &= 0x7fff
		if s.Direction {
			h.Status |= 0x8000
		}
		h.ClassSpecific = uint16(s.HopPointer)<<8 | uint16(s.HopCount)
	}
	h.Marshal(b)
	binary.BigEndian.PutUint64(b[24:32], s.MKey)
	clear(b[32:64])
	if s.DirectedRoute() {
		binary.BigEndian.PutUint16(b[32:34], s.DrSLID)
		binary.BigEndian.PutUint16(b[34:36], s.DrDLID)
	}
	copy(b[64:128], s.Data[:])
	if s.DirectedRoute() {
		copy(b[128:192], s.InitialPath[:])
		copy(b[192:256], s.ReturnPath[:])
	} else {
		clear(b[128:256])
	}
}

// UnmarshalSMP decodes an SMP. It rejects short input, a class that is not
// subnet management, and a directed-route hop count or pointer beyond 63
// hops (the pointer may be HopCount+1 in a response).
func UnmarshalSMP(b []byte) (*SMP, error) {
	s := new(SMP)
	if err := s.Unmarshal(b); err != nil {
		return nil, err
	}
	return s, nil
}

// Unmarshal decodes b into s; see UnmarshalSMP.
func (s *SMP) Unmarshal(b []byte) error {
	if err := need("SMP", b, Size); err != nil {
		return err
	}
	if err := s.Header.Unmarshal(b); err != nil {
		return err
	}
	if !s.Class.IsSMP() {
		return &FieldError{Field: "SMP.MgmtClass", Msg: fmt.Sprintf("%v is not a subnet management class", s.Class)}
	}
	s.MKey = binary.BigEndian.Uint64(b[24:32])
	copy(s.Data[:], b[64:128])
	if s.DirectedRoute() {
		raw := uint16(s.Status)
		s.Direction = raw&0x8000 != 0
		s.Status = Status(raw & 0x7fff)
		s.HopPointer = uint8(s.ClassSpecific >> 8)
		s.HopCount = uint8(s.ClassSpecific)
		s.ClassSpecific = 0
		if s.HopCount > MaxHops {
			return &FieldError{Field: "SMP.HopCount", Msg: fmt.Sprintf("is %d, at most %d allowed", s.HopCount, MaxHops)}
		}
		if s.HopPointer > MaxHops+1 {
			return &FieldError{Field: "SMP.HopPointer", Msg: fmt.Sprintf("is %d, at most %d allowed", s.HopPointer, MaxHops+1)}
		}
		s.DrSLID = binary.BigEndian.Uint16(b[32:34])
		s.DrDLID = binary.BigEndian.Uint16(b[34:36])
		copy(s.InitialPath[:], b[128:192])
		copy(s.ReturnPath[:], b[192:256])
	} else {
		s.Direction, s.HopPointer, s.HopCount = false, 0, 0
		s.DrSLID, s.DrDLID = 0, 0
		s.InitialPath, s.ReturnPath = [64]byte{}, [64]byte{}
	}
	return nil
}

// Decode decodes the SMP's data area into a.
func (s *SMP) Decode(a Attribute) error {
	return a.UnmarshalAttr(s.Data[:])
}

// ResponseMethod is the method that answers m: GetResp for both Get and
// Set (IBA 13.4.5), m|0x80 for the others.
func ResponseMethod(m Method) Method {
	if m == MethodSet {
		return MethodGetResp
	}
	return m.Response()
}

// ValidateResponse checks that resp answers req: the response method for
// the request's method (GetResp for a Set too), the same class, attribute, modifier and TID low 32
// bits, and for directed route the same hop count and D bit set. A non-OK
// status is not a validation failure: callers read resp.Status.
func ValidateResponse(req, resp *SMP) error {
	switch {
	case !resp.Method.IsResponse():
		return &FieldError{Field: "SMP.Method", Msg: fmt.Sprintf("%v is not a response", resp.Method)}
	case resp.Method != ResponseMethod(req.Method):
		return &FieldError{Field: "SMP.Method", Msg: fmt.Sprintf("%v does not answer %v", resp.Method, req.Method)}
	case resp.Class != req.Class:
		return &FieldError{Field: "SMP.MgmtClass", Msg: fmt.Sprintf("%v does not match request %v", resp.Class, req.Class)}
	case resp.AttrID != req.AttrID:
		return &FieldError{Field: "SMP.AttributeID", Msg: fmt.Sprintf("%s does not match request %s", AttrName(resp.Class, resp.AttrID), AttrName(req.Class, req.AttrID))}
	case resp.AttrMod != req.AttrMod:
		return &FieldError{Field: "SMP.AttributeModifier", Msg: fmt.Sprintf("%d does not match request %d", resp.AttrMod, req.AttrMod)}
	case TIDLow(resp.TID) != TIDLow(req.TID):
		return &FieldError{Field: "SMP.TransactionID", Msg: fmt.Sprintf("0x%016x does not match request 0x%016x", resp.TID, req.TID)}
	}
	if req.DirectedRoute() {
		if !resp.Direction {
			return &FieldError{Field: "SMP.D", Msg: "direction bit clear in a response"}
		}
		if resp.HopCount != req.HopCount {
			return &FieldError{Field: "SMP.HopCount", Msg: fmt.Sprintf("%d does not match request %d", resp.HopCount, req.HopCount)}
		}
	}
	return nil
}
