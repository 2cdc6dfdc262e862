package mad

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// narrowFields lists, per attribute, the fields narrower than their Go
// type, with their width in bits from the IBA layouts. The random
// generator masks them; TestNarrowFieldsRejected checks the encoder agrees.
var narrowFields = map[string]map[string]int{
	"NodeInfo": {"VendorID": 24},
	"PortInfo": {
		"LinkSpeedSupported": 4, "PortState": 4, "PhysState": 4, "LinkDownDefaultState": 4,
		"MKeyProtectBits": 2, "LMC": 3, "LinkSpeedActive": 4, "LinkSpeedEnabled": 4,
		"NeighborMTU": 4, "MasterSMSL": 4, "VLCap": 4, "InitType": 4, "InitTypeReply": 4,
		"MTUCap": 4, "VLStallCount": 3, "HOQLife": 5, "OperationalVLs": 4,
		"MulticastPKeyTrapSuppression": 2, "SubnetTimeout": 5, "RespTimeValue": 5,
		"LocalPhyErrors": 4, "OverrunErrors": 4, "LinkSpeedExtActive2": 2,
		"LinkSpeedExtSupported2": 2, "LinkSpeedExtEnabled2": 3, "LinkRoundTripLatency": 24,
		"LinkSpeedExtActive": 4, "LinkSpeedExtSupported": 4, "LinkSpeedExtEnabled": 5,
	},
	"SwitchInfo":    {"LifeTimeValue": 5, "OptimizedSLtoVLMapping": 2},
	"SMInfo":        {"Priority": 4, "State": 4},
	"ClassPortInfo": {"CapabilityMask2": 27, "RespTimeValue": 5, "RedirectSL": 4, "RedirectFL": 20, "RedirectQP": 24, "TrapSL": 4, "TrapFL": 20, "TrapQP": 24},
	"PortCounters":  {"LocalLinkIntegrityErrors": 4, "ExcessiveBufferOverrunErrors": 4},
}

// narrowArrays lists, per attribute, the arrays whose elements are
// narrower than their Go type (TestGoldenHandSLtoVL checks the encoder
// refuses a wider element).
var narrowArrays = map[string]map[string]int{
	"SLtoVLTable": {"VL": 4},
}

// randomFill sets every exported field of the struct v points to to a
// random value that fits its wire width.
func randomFill(r *rand.Rand, v any) {
	rv := reflect.ValueOf(v).Elem()
	narrow := narrowFields[rv.Type().Name()]
	for i := 0; i < rv.NumField(); i++ {
		f, sf := rv.Field(i), rv.Type().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(r.IntN(2) == 1)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			x := r.Uint64()
			if n, ok := narrow[sf.Name]; ok {
				x &= 1<<uint(n) - 1
			}
			f.SetUint(x) // SetUint truncates to the field's size
		case reflect.Array:
			mask := ^uint64(0)
			if n, ok := narrowArrays[rv.Type().Name()][sf.Name]; ok {
				mask = 1<<uint(n) - 1
			}
			for j := 0; j < f.Len(); j++ {
				f.Index(j).SetUint(r.Uint64() & mask)
			}
		case reflect.String:
			f.SetString(randomText(r))
		default:
			panic("randomFill: unhandled field " + sf.Name)
		}
	}
}

// randomText is valid UTF-8 without NUL, at most 64 bytes.
func randomText(r *rand.Rand) string {
	var b strings.Builder
	alphabet := []rune("abcXYZ019 -_.é€ノ😀")
	for {
		c := alphabet[r.IntN(len(alphabet))]
		if b.Len()+utf8.RuneLen(c) > NodeDescriptionSize || r.IntN(40) == 0 {
			return b.String()
		}
		b.WriteRune(c)
	}
}

func allAttributes() []func() Attribute {
	return []func() Attribute{
		func() Attribute { return new(NodeInfo) },
		func() Attribute { return new(NodeDescription) },
		func() Attribute { return new(PortInfo) },
		func() Attribute { return new(SwitchInfo) },
		func() Attribute { return new(LFTBlock) },
		func() Attribute { return new(MlnxExtPortInfo) },
		func() Attribute { return new(ClassPortInfo) },
		func() Attribute { return new(PortCounters) },
		func() Attribute { return new(PortCountersExtended) },
		func() Attribute { return new(SMInfo) },
		func() Attribute { return new(PKeyTable) },
		func() Attribute { return new(SLtoVLTable) },
	}
}

func TestAttributeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, mk := range allAttributes() {
		for i := 0; i < 500; i++ {
			a := mk()
			randomFill(r, a)
			b := make([]byte, GMPDataSize)
			if err := a.MarshalAttr(b); err != nil {
				t.Fatalf("%T %+v: %v", a, a, err)
			}
			back := mk()
			if err := back.UnmarshalAttr(b); err != nil {
				t.Fatalf("%T: %v", a, err)
			}
			if !reflect.DeepEqual(a, back) {
				t.Fatalf("%T round trip\n got %+v\nwant %+v", a, back, a)
			}
		}
	}
}

func TestNarrowFieldsRejected(t *testing.T) {
	for _, mk := range allAttributes() {
		a := mk()
		rv := reflect.ValueOf(a).Elem()
		name := rv.Type().Name()
		for field, n := range narrowFields[name] {
			a := mk()
			f := reflect.ValueOf(a).Elem().FieldByName(field)
			if !f.IsValid() {
				t.Fatalf("%s has no field %s", name, field)
			}
			f.SetUint(1 << uint(n))
			var fe *FieldError
			if err := a.MarshalAttr(make([]byte, GMPDataSize)); !errors.As(err, &fe) || fe.Field != name+"."+field {
				t.Errorf("%s.%s = 1<<%d: got %v", name, field, n, err)
			}
			f.SetUint(1<<uint(n) - 1)
			if err := a.MarshalAttr(make([]byte, GMPDataSize)); err != nil {
				t.Errorf("%s.%s at max: %v", name, field, err)
			}
		}
	}
}

func randomHeader(r *rand.Rand) Header {
	return Header{
		BaseVersion: BaseVersion, Class: Class(r.Uint32()), ClassVersion: uint8(r.Uint32()), Method: Method(r.Uint32()),
		Status: Status(r.Uint32()), ClassSpecific: uint16(r.Uint32()), TID: r.Uint64(), AttrID: AttrID(r.Uint32()), AttrMod: r.Uint32(),
	}
}

func TestHeaderSMPGMPRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		h := randomHeader(r)
		b := make([]byte, HeaderSize)
		h.Marshal(b)
		var back Header
		if err := back.Unmarshal(b); err != nil || back != h {
			t.Fatalf("header %+v -> %+v %v", h, back, err)
		}

		s := &SMP{Header: randomHeader(r), MKey: r.Uint64()}
		for j := range s.Data {
			s.Data[j] = uint8(r.Uint32())
		}
		if r.IntN(2) == 0 {
			s.Class = ClassSubnDR
			s.Status &= 0x7fff
			s.ClassSpecific = 0
			s.Direction = r.IntN(2) == 1
			s.HopCount = uint8(r.IntN(MaxHops + 1))
			s.HopPointer = uint8(r.IntN(MaxHops + 2))
			s.DrSLID, s.DrDLID = uint16(r.Uint32()), uint16(r.Uint32())
			for j := range s.InitialPath {
				s.InitialPath[j], s.ReturnPath[j] = uint8(r.Uint32()), uint8(r.Uint32())
			}
		} else {
			s.Class = ClassSubnLID
		}
		got, err := UnmarshalSMP(s.Marshal())
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("SMP round trip: %v\n got %+v\nwant %+v", err, got, s)
		}

		g := &GMP{Header: randomHeader(r)}
		g.Class = ClassPerfMgt
		for j := range g.Data {
			g.Data[j] = uint8(r.Uint32())
		}
		gg, err := UnmarshalGMP(g.Marshal())
		if err != nil || !reflect.DeepEqual(gg, g) {
			t.Fatalf("GMP round trip: %v", err)
		}
	}
}
