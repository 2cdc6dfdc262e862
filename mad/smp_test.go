package mad

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestGoldenIbsimRequests(t *testing.T) {
	// smpquery -D nodeinfo 0: a DR Get with permissive LIDs, hop count 0
	raw := readHex(t, "ibsim_sw_nodeinfo_req.hex")
	s, err := UnmarshalSMP(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewDRGet(Path{}, AttrNodeInfo, 0)
	want.TID = s.TID
	if !reflect.DeepEqual(s, want) {
		t.Errorf("smpquery's request\n got %+v\nwant %+v", s, want)
	}
	if !bytes.Equal(want.Marshal(), raw) {
		t.Errorf("NewDRGet bytes differ from smpquery's")
	}
	// ibroute: LID-routed LFT block 0
	raw = readHex(t, "ibsim_sw_lft0_req.hex")
	s, err = UnmarshalSMP(raw)
	if err != nil {
		t.Fatal(err)
	}
	lid := NewLIDGet(AttrLinearForwardingTable, 0)
	lid.TID = s.TID
	if !reflect.DeepEqual(s, lid) || !bytes.Equal(lid.Marshal(), raw) {
		t.Errorf("ibroute's request\n got %+v\nwant %+v", s, lid)
	}
	// perfquery: PortCounters Get with PortSelect 1
	raw = readHex(t, "ibsim_sw_portcounters_req.hex")
	g, err := UnmarshalGMP(raw)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := NewPerfGet(AttrPortCounters, 0, &PortCounters{PortSelect: 1})
	if err != nil {
		t.Fatal(err)
	}
	pg.TID = g.TID
	if !reflect.DeepEqual(g, pg) || !bytes.Equal(pg.Marshal(), raw) {
		t.Errorf("perfquery's request\n got %+v\nwant %+v", g, pg)
	}
	// the ibsim reference dump (ibsim-protocol.md §9): ClassPortInfo Get,
	// TID 0x000000021e7dcf50, and its GetResp with slot 1 in bits 63..48
	req := GMP{Header: Header{BaseVersion: 1, Class: ClassPerfMgt, ClassVersion: 1, Method: MethodGet, TID: 0x000000021e7dcf50, AttrID: AttrClassPortInfo}}
	b := req.Marshal()
	if !bytes.Equal(b[:16], []byte{0x01, 0x04, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x1e, 0x7d, 0xcf, 0x50}) {
		t.Errorf("reference request header % x", b[:16])
	}
	resp := make([]byte, Size)
	copy(resp, []byte{0x01, 0x04, 0x01, 0x81, 0, 0, 0, 0, 0, 0x01, 0, 0x02, 0x1e, 0x7d, 0xcf, 0x50, 0x00, 0x01})
	h, err := PeekHeader(resp)
	if err != nil || h.Method != MethodGetResp || h.TID != 0x000100021e7dcf50 || TIDLow(h.TID) != TIDLow(req.TID) {
		t.Errorf("reference response header %+v %v", h, err)
	}
}

func TestValidateResponse(t *testing.T) {
	req, _ := NewDRGet(Path{1, 3}, AttrPortInfo, 2)
	req.TID = 0x1234
	ok := func() *SMP {
		r := *req
		r.Method = MethodGetResp
		r.Direction = true
		r.HopPointer = 3
		r.TID = 0xffff000000001234 // upper bits rewritten by the kernel/ibsim
		return &r
	}
	if err := ValidateResponse(req, ok()); err != nil {
		t.Fatalf("good response: %v", err)
	}
	cases := map[string]func(*SMP){
		"SMP.Method":            func(r *SMP) { r.Method = MethodGet },
		"SMP.MgmtClass":         func(r *SMP) { r.Class = ClassSubnLID },
		"SMP.AttributeID":       func(r *SMP) { r.AttrID = AttrNodeInfo },
		"SMP.AttributeModifier": func(r *SMP) { r.AttrMod = 3 },
		"SMP.TransactionID":     func(r *SMP) { r.TID = 0x1235 },
		"SMP.D":                 func(r *SMP) { r.Direction = false },
		"SMP.HopCount":          func(r *SMP) { r.HopCount = 1 },
	}
	for field, mod := range cases {
		r := ok()
		mod(r)
		var fe *FieldError
		if err := ValidateResponse(req, r); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	set := ok()
	set.Method = MethodSet.Response()
	if err := ValidateResponse(req, set); err == nil {
		t.Errorf("SetResp accepted for a Get")
	}
}

func TestDecoderErrors(t *testing.T) {
	var fe *FieldError
	var h Header
	if err := h.Unmarshal(make([]byte, 10)); !errors.As(err, &fe) || fe.Field != "MAD header" {
		t.Errorf("short header: %v", err)
	}
	b := make([]byte, Size)
	b[0] = 2
	if err := h.Unmarshal(b); !errors.As(err, &fe) || fe.Field != "BaseVersion" {
		t.Errorf("version 2: %v", err)
	}
	b[0], b[1] = 1, byte(ClassPerfMgt)
	if _, err := UnmarshalSMP(b); !errors.As(err, &fe) || fe.Field != "SMP.MgmtClass" {
		t.Errorf("PerfMgt as SMP: %v", err)
	}
	if _, err := UnmarshalSMP(b[:100]); !errors.As(err, &fe) || fe.Field != "SMP" {
		t.Errorf("short SMP: %v", err)
	}
	b[1] = byte(ClassSubnDR)
	b[7] = 64
	if _, err := UnmarshalSMP(b); !errors.As(err, &fe) || fe.Field != "SMP.HopCount" {
		t.Errorf("hop count 64: %v", err)
	}
	b[7], b[6] = 63, 65
	if _, err := UnmarshalSMP(b); !errors.As(err, &fe) || fe.Field != "SMP.HopPointer" {
		t.Errorf("hop pointer 65: %v", err)
	}
	b[6] = 64
	if _, err := UnmarshalSMP(b); err != nil {
		t.Errorf("hop pointer 64 (HopCount+1 in a response): %v", err)
	}
	if _, err := UnmarshalGMP(b); !errors.As(err, &fe) || fe.Field != "GMP.MgmtClass" {
		t.Errorf("SMP as GMP: %v", err)
	}
	if _, err := UnmarshalGMP(b[:200]); !errors.As(err, &fe) || fe.Field != "GMP" {
		t.Errorf("short GMP: %v", err)
	}
	if _, err := NewDRGet(make(Path, 64), AttrNodeInfo, 0); !errors.As(err, &fe) || fe.Field != "SMP.HopCount" {
		t.Errorf("64-hop path: %v", err)
	}
}

func TestPaths(t *testing.T) {
	tests := []struct {
		in   string
		want Path
		str  string
	}{
		{"", Path{}, "0"},
		{"0", Path{}, "0"},
		{"0,1,3", Path{1, 3}, "0,1,3"},
		{"1,3", Path{1, 3}, "0,1,3"},
		{" 0, 2 ,255 ", Path{2, 255}, "0,2,255"},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.in)
		if err != nil || !reflect.DeepEqual(p, tt.want) || p.String() != tt.str {
			t.Errorf("ParsePath(%q) = %v (%q), %v", tt.in, p, p.String(), err)
		}
	}
	for _, bad := range []string{"0,0", "0,256", "a", "0,,1", "-1", "0,1," + string(bytes.Repeat([]byte("1,"), 63)) + "1"} {
		if p, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) = %v, want error", bad, p)
		}
	}
	p := Path{1}
	q := p.Extend(5)
	if p.String() != "0,1" || q.String() != "0,1,5" {
		t.Errorf("Extend modified its receiver: %v %v", p, q)
	}
	s, _ := NewDRGet(Path{4, 7, 9}, AttrNodeInfo, 0)
	if got := s.Path(); !reflect.DeepEqual(got, Path{4, 7, 9}) || s.HopCount != 3 || s.InitialPath[0] != 0 {
		t.Errorf("Path() = %v", got)
	}
	m, err := NewDRSet(Path{1}, &PortInfo{LID: 9}, 1)
	if err != nil || m.Method != MethodSet || m.Data[17] != 9 {
		t.Errorf("NewDRSet: %v", err)
	}
	if _, err := NewDRSet(Path{1}, &PortInfo{LMC: 9}, 1); err == nil {
		t.Errorf("NewDRSet accepted an overflowing attribute")
	}
}

func TestStatusBits(t *testing.T) {
	s := Status(0x7f1f)
	if !s.Busy() || !s.Redirect() || s.Code() != 7 || s.ClassSpecific() != 0x7f || s.OK() {
		t.Errorf("status bits of %v", s)
	}
	if !Status(0x8000).OK() {
		t.Errorf("the D bit alone is not an error")
	}
	if m := MethodGet; m.IsResponse() || m.Response() != MethodGetResp || MethodGetResp.Request() != MethodGet {
		t.Errorf("method bits")
	}
	if !ClassSubnDR.IsSMP() || ClassPerfMgt.IsSMP() {
		t.Errorf("IsSMP")
	}
}

// TestInitInPlace: InitDRGet and InitLIDGet build, over an SMP that held
// another MAD, the same bytes as NewDRGet and NewLIDGet.
func TestInitInPlace(t *testing.T) {
	var s SMP
	dirty := func() {
		s = SMP{Header: Header{Class: ClassSubnDR, Method: MethodSet, TID: 9, Status: 3}, Direction: true, HopPointer: 2, HopCount: 5, MKey: 7}
		for i := range s.Data {
			s.Data[i] = 0xaa
		}
		for i := range s.InitialPath {
			s.InitialPath[i], s.ReturnPath[i] = 9, 9
		}
	}
	dirty()
	if err := s.InitDRGet(Path{1, 3, 5}, AttrLinearForwardingTable, 7); err != nil {
		t.Fatal(err)
	}
	want, _ := NewDRGet(Path{1, 3, 5}, AttrLinearForwardingTable, 7)
	if got := s.Marshal(); !bytes.Equal(got, want.Marshal()) {
		t.Errorf("InitDRGet:\n% x\nwant\n% x", got, want.Marshal())
	}
	dirty()
	s.InitLIDGet(AttrSwitchInfo, 0)
	if got, want := s.Marshal(), NewLIDGet(AttrSwitchInfo, 0).Marshal(); !bytes.Equal(got, want) {
		t.Errorf("InitLIDGet:\n% x\nwant\n% x", got, want)
	}
	if err := s.InitDRGet(make(Path, MaxHops+1), AttrNodeInfo, 0); err == nil {
		t.Error("a path of 64 hops was accepted")
	}
}
