package mad

import "fmt"

// GMP is a general management packet of the PerfMgt class (0x04): the
// common header, 40 reserved bytes, and 192 bytes of attribute data.
type GMP struct {
	Header
	Data [GMPDataSize]byte
}

// NewPerfGet builds a PerfMgt Get of attr whose data area carries a's
// encoding (PortCounters needs PortSelect in the request). a may be nil for
// attributes whose request data is empty (ClassPortInfo).
func NewPerfGet(attr AttrID, mod uint32, a Attribute) (*GMP, error) {
	return newPerf(MethodGet, attr, mod, a)
}

// NewPerfSet builds a PerfMgt Set carrying a's encoding, e.g. PortCounters
// with a CounterSelect mask to clear counters.
func NewPerfSet(a Attribute, mod uint32) (*GMP, error) {
	return newPerf(MethodSet, a.AttributeID(), mod, a)
}

func newPerf(m Method, attr AttrID, mod uint32, a Attribute) (*GMP, error) {
	g := &GMP{Header: Header{
		BaseVersion:  BaseVersion,
		Class:        ClassPerfMgt,
		ClassVersion: 1,
		Method:       m,
		AttrID:       attr,
		AttrMod:      mod,
	}}
	if a != nil {
		if err := a.MarshalAttr(g.Data[:]); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// NewVendorGet builds a Get of attr in Mellanox's vendor class (0x0A,
// e.g. GeneralInfo). Its layout is a PerfMgt GMP's: the common header,
// the V_Key (bytes 24-31, zero: no key is used) and reserved bytes to 63,
// then 192 bytes of data.
func NewVendorGet(attr AttrID, mod uint32) *GMP {
	return &GMP{Header: Header{
		BaseVersion:  BaseVersion,
		Class:        ClassMlnxVendor,
		ClassVersion: 1,
		Method:       MethodGet,
		AttrID:       attr,
		AttrMod:      mod,
	}}
}

// Marshal encodes the GMP into a new 256-byte slice.
func (g *GMP) Marshal() []byte {
	b := make([]byte, Size)
	g.MarshalTo(b)
	return b
}

// MarshalTo encodes the GMP into b, which must be at least Size bytes.
func (g *GMP) MarshalTo(b []byte) {
	_ = b[Size-1]
	g.Header.Marshal(b)
	clear(b[24:64])
	copy(b[64:256], g.Data[:])
}

// UnmarshalGMP decodes a PerfMgt GMP or a Mellanox vendor-class one.
func UnmarshalGMP(b []byte) (*GMP, error) {
	g := new(GMP)
	if err := g.Unmarshal(b); err != nil {
		return nil, err
	}
	return g, nil
}

// Unmarshal decodes b into g.
func (g *GMP) Unmarshal(b []byte) error {
	if err := need("GMP", b, Size); err != nil {
		return err
	}
	if err := g.Header.Unmarshal(b); err != nil {
		return err
	}
	if g.Class != ClassPerfMgt && g.Class != ClassMlnxVendor {
		return &FieldError{Field: "GMP.MgmtClass", Msg: fmt.Sprintf("%v is not PerfMgt or the Mellanox vendor class", g.Class)}
	}
	copy(g.Data[:], b[64:256])
	return nil
}

// Decode decodes the data area into a.
func (g *GMP) Decode(a Attribute) error { return a.UnmarshalAttr(g.Data[:]) }
