package mad

import (
	"bytes"
	"reflect"
	"testing"
)

// seedMADs adds every golden MAD (and the data area of each) to f.
func seedMADs(f *testing.F) {
	for _, name := range goldenFiles(f) {
		b := readHex(f, name)
		f.Add(b)
		if len(b) == Size {
			f.Add(b[64:])
		}
	}
	f.Add([]byte{})
	f.Add(make([]byte, Size))
}

func FuzzHeaderUnmarshal(f *testing.F) {
	seedMADs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if err := h.Unmarshal(b); err != nil {
			return
		}
		out := make([]byte, HeaderSize)
		h.Marshal(out)
		var h2 Header
		if err := h2.Unmarshal(out); err != nil || h2 != h {
			t.Fatalf("unstable: %+v -> %+v (%v)", h, h2, err)
		}
	})
}

func FuzzUnmarshalSMP(f *testing.F) {
	seedMADs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalSMP(b)
		if err != nil {
			return
		}
		out := s.Marshal()
		s2, err := UnmarshalSMP(out)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("unstable: %v\n%+v\n%+v", err, s, s2)
		}
		if !bytes.Equal(s2.Marshal(), out) {
			t.Fatalf("encoding not stable")
		}
		_ = s.Path()
		var pi PortInfo
		_ = s.Decode(&pi)
	})
}

func FuzzUnmarshalGMP(f *testing.F) {
	seedMADs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := UnmarshalGMP(b)
		if err != nil {
			return
		}
		out := g.Marshal()
		g2, err := UnmarshalGMP(out)
		if err != nil || !reflect.DeepEqual(g, g2) {
			t.Fatalf("unstable: %v", err)
		}
	})
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"", "0", "0,1,3", "1,2", "0,255", " 0, 4 ", "0,0", "x", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		if len(p) > MaxHops {
			t.Fatalf("%q: %d hops accepted", s, len(p))
		}
		p2, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("%q -> %v -> %q -> %v (%v)", s, p, p.String(), p2, err)
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"4xNDR", "4X NDR", "1x-edr", "NDR", "2X HDR", "12x_qdr", "FDR10", "8xXDR", "3xNDR", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.Width.Lanes() == 0 || r.Speed.DataGbps() == 0 {
			t.Fatalf("%q parsed to invalid %#v", s, r)
		}
		r2, err := ParseRate(r.String())
		if err != nil || r2 != r {
			t.Fatalf("%q -> %v -> %v (%v)", s, r, r2, err)
		}
	})
}

// fuzzAttr checks that decoding arbitrary bytes never panics, and that a
// decoded attribute re-encodes without error to bytes that decode to the
// same value and re-encode to the same bytes.
func fuzzAttr(f *testing.F, mk func() Attribute) {
	seedMADs(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a := mk()
		if err := a.UnmarshalAttr(b); err != nil {
			return
		}
		out := make([]byte, GMPDataSize)
		if err := a.MarshalAttr(out); err != nil {
			t.Fatalf("%T decoded from % x does not re-encode: %v", a, b, err)
		}
		a2 := mk()
		if err := a2.UnmarshalAttr(out); err != nil || !reflect.DeepEqual(a, a2) {
			t.Fatalf("%T unstable: %v\n%+v\n%+v", a, err, a, a2)
		}
		out2 := make([]byte, GMPDataSize)
		if err := a2.MarshalAttr(out2); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("%T encoding unstable", a)
		}
	})
}

func FuzzNodeInfo(f *testing.F)        { fuzzAttr(f, func() Attribute { return new(NodeInfo) }) }
func FuzzNodeDescription(f *testing.F) { fuzzAttr(f, func() Attribute { return new(NodeDescription) }) }
func FuzzPortInfo(f *testing.F)        { fuzzAttr(f, func() Attribute { return new(PortInfo) }) }
func FuzzSwitchInfo(f *testing.F)      { fuzzAttr(f, func() Attribute { return new(SwitchInfo) }) }
func FuzzLFTBlock(f *testing.F)        { fuzzAttr(f, func() Attribute { return new(LFTBlock) }) }
func FuzzMlnxExtPortInfo(f *testing.F) { fuzzAttr(f, func() Attribute { return new(MlnxExtPortInfo) }) }
func FuzzClassPortInfo(f *testing.F)   { fuzzAttr(f, func() Attribute { return new(ClassPortInfo) }) }
func FuzzSMInfo(f *testing.F)          { fuzzAttr(f, func() Attribute { return new(SMInfo) }) }
func FuzzPKeyTable(f *testing.F)       { fuzzAttr(f, func() Attribute { return new(PKeyTable) }) }
func FuzzARInfo(f *testing.F)          { fuzzAttr(f, func() Attribute { return new(ARInfo) }) }
func FuzzSLtoVLTable(f *testing.F)     { fuzzAttr(f, func() Attribute { return new(SLtoVLTable) }) }
func FuzzPortCounters(f *testing.F)    { fuzzAttr(f, func() Attribute { return new(PortCounters) }) }
func FuzzPortCountersExtended(f *testing.F) {
	fuzzAttr(f, func() Attribute { return new(PortCountersExtended) })
}
func FuzzGeneralInfo(f *testing.F) { fuzzAttr(f, func() Attribute { return new(GeneralInfo) }) }
