package mad

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestGoldenIbsimSMP decodes SMP responses captured from ibsim (strace of
// smpquery/ibroute under libumad2sim, see testdata/ibsim_*.txt for what the
// tools printed), compares every field with the values the tools printed,
// and re-encodes both the attribute and the whole MAD to the same bytes.
func TestGoldenIbsimSMP(t *testing.T) {
	swPort0 := &PortInfo{
		GIDPrefix: 0xfe80000000000000, LID: 1, MasterSMLID: 1,
		CapabilityMask: 0xc048, MKeyLeasePeriod: 4089, LocalPortNum: 0,
		LinkWidthEnabled: Width4X, LinkWidthSupported: 31, LinkWidthActive: Width4X,
		LinkSpeedSupported: 7, PortState: PortStateActive, PhysState: PhysLinkUp,
		LinkDownDefaultState: 2, LinkSpeedActive: 1, LinkSpeedEnabled: 1,
		NeighborMTU: MTU256, VLCap: 4, VLArbHighCap: 8, VLArbLowCap: 8,
		MTUCap: MTU1024, OperationalVLs: 4, GUIDCap: 1, SubnetTimeout: 31,
		RespTimeValue: 8, CapabilityMask2: 0x30,
	}
	swPort1 := &PortInfo{
		LocalPortNum:     0, // ibsim answers LocalPortNum for the port the SMP arrived on
		LinkWidthEnabled: Width4X, LinkWidthSupported: 31, LinkWidthActive: Width4X,
		LinkSpeedSupported: 7, PortState: PortStateActive, PhysState: PhysLinkUp,
		LinkDownDefaultState: 2, LinkSpeedActive: 1, LinkSpeedEnabled: 1,
		NeighborMTU: MTU2048, VLCap: 4, VLArbHighCap: 8, VLArbLowCap: 8,
		MTUCap: MTU2048, VLStallCount: 7, HOQLife: 16, OperationalVLs: 4,
	}
	h1Port := &PortInfo{
		GIDPrefix: 0xfe80000000000000, LID: 2, MasterSMLID: 1,
		CapabilityMask: 0x50c048, MKeyLeasePeriod: 4089, LocalPortNum: 1,
		LinkWidthEnabled: Width4X, LinkWidthSupported: 31, LinkWidthActive: Width4X,
		LinkSpeedSupported: 7, PortState: PortStateActive, PhysState: PhysLinkUp,
		LinkDownDefaultState: 2, LinkSpeedActive: 1, LinkSpeedEnabled: 1,
		NeighborMTU: MTU2048, VLCap: 4, VLArbHighCap: 8, VLArbLowCap: 8,
		MTUCap: MTU2048, VLStallCount: 7, OperationalVLs: 4, GUIDCap: 32,
		SubnetTimeout: 31, CapabilityMask2: 0x30,
	}
	lft := &LFTBlock{}
	for i := range lft.Ports {
		lft.Ports[i] = 0xff
	}
	lft.Ports[0], lft.Ports[1], lft.Ports[2], lft.Ports[3] = 0xff, 0, 1, 2

	tests := []struct {
		file string
		want Attribute
		dr   bool
	}{
		{"ibsim_sw_nodeinfo_resp.hex", &NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: NodeSwitch, NumPorts: 4,
			SystemImageGUID: 0x200000, NodeGUID: 0x200000, PortGUID: 0x200000, PartitionCap: 8, Revision: 0xa1}, true},
		{"ibsim_h1_nodeinfo_resp.hex", &NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: NodeCA, NumPorts: 1,
			SystemImageGUID: 0x100000, NodeGUID: 0x100000, PortGUID: 0x100001, PartitionCap: 64, Revision: 0xa1, LocalPortNum: 1}, true},
		{"ibsim_sw_nodedesc_resp.hex", &NodeDescription{Text: "switch one"}, true},
		{"ibsim_h1_nodedesc_resp.hex", &NodeDescription{Text: "host one HCA"}, true},
		{"ibsim_sw_portinfo0_resp.hex", swPort0, true},
		{"ibsim_sw_portinfo1_resp.hex", swPort1, true},
		{"ibsim_h1_portinfo_resp.hex", h1Port, true},
		{"ibsim_sw_switchinfo_resp.hex", &SwitchInfo{LinearFDBCap: 30720, MulticastFDBCap: 1024, LinearFDBTop: 3,
			LifeTimeValue: 18, PartitionEnforcementCap: 64, FilterRawInboundCap: true, FilterRawOutboundCap: true}, true},
		{"ibsim_sw_mlnxepi_resp.hex", &MlnxExtPortInfo{}, true},
		{"ibsim_sw_lft0_resp.hex", lft, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := readHex(t, tt.file)
			s, err := UnmarshalSMP(raw)
			if err != nil {
				t.Fatalf("UnmarshalSMP: %v", err)
			}
			if s.DirectedRoute() != tt.dr || !s.Method.IsResponse() || !s.Status.OK() || s.AttrID != tt.want.AttributeID() {
				t.Fatalf("header: class %v method %v status %v attr %v", s.Class, s.Method, s.Status, s.AttrID)
			}
			if tt.dr && !s.Direction {
				t.Errorf("D bit clear in a DR response")
			}
			got := reflect.New(reflect.TypeOf(tt.want).Elem()).Interface().(Attribute)
			if err := s.Decode(got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
			var data [SMPDataSize]byte
			if err := got.MarshalAttr(data[:]); err != nil {
				t.Fatalf("MarshalAttr: %v", err)
			}
			if data != s.Data {
				t.Errorf("attribute re-encoded\n got % x\nwant % x", data, s.Data)
			}
			if again := s.Marshal(); !bytes.Equal(again, raw) {
				t.Errorf("SMP re-encoded differs\n got % x\nwant % x", again, raw)
			}
		})
	}
}

// TestGoldenIbsimSpeeds checks the speed rules on ibsim's real answers:
// the switch's external port 1 has CapabilityMask 0, so its extended
// speed fields only count with port 0's masks.
func TestGoldenIbsimSpeeds(t *testing.T) {
	dec := func(file string) *PortInfo {
		s, err := UnmarshalSMP(readHex(t, file))
		if err != nil {
			t.Fatal(err)
		}
		var p PortInfo
		if err := s.Decode(&p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	p0, p1, h1 := dec("ibsim_sw_portinfo0_resp.hex"), dec("ibsim_sw_portinfo1_resp.hex"), dec("ibsim_h1_portinfo_resp.hex")
	if got := p1.Rate(p0, false); got.String() != "4X SDR" || got.Gbps() != 8 {
		t.Errorf("switch port 1 rate = %v (%v Gb/s), want 4X SDR (8)", got, got.Gbps())
	}
	if got := h1.Rate(nil, false); got.String() != "4X SDR" {
		t.Errorf("h1 rate = %v", got)
	}
	if got := p1.SpeedSupported(p0); got != SpeedSDR|SpeedDDR|SpeedQDR {
		t.Errorf("supported = %v", got)
	}
	if got := p1.SpeedEnabled(p0); got != SpeedSDR {
		t.Errorf("enabled = %v", got)
	}
	if !p0.HasCap(CapIsExtendedSpeedsSupported|CapIsCapabilityMask2Supported) || p1.HasCap(CapIsExtendedSpeedsSupported) {
		t.Errorf("cap masks: port0 %#x port1 %#x", p0.CapabilityMask, p1.CapabilityMask)
	}
	if !p0.HasCap2(Cap2IsLinkWidth2xSupported) || p0.HasCap2(Cap2IsExtendedSpeeds2Supported) {
		t.Errorf("cap mask 2: %#x", p0.CapabilityMask2)
	}
}

func TestGoldenHandPortInfo(t *testing.T) {
	raw := readHex(t, "hand_portinfo_ndr_ca.hex")
	want := PortInfo{
		MKey: 0x0102030405060708, GIDPrefix: 0xfe80000000000000, LID: 42, MasterSMLID: 1,
		CapabilityMask: 0x0251c84a, DiagCode: 0x1234, MKeyLeasePeriod: 4089, LocalPortNum: 1,
		LinkWidthEnabled: Width1X | Width4X, LinkWidthSupported: Width1X | Width4X | Width2X, LinkWidthActive: Width4X,
		LinkSpeedSupported: 7, PortState: PortStateActive, PhysState: PhysLinkUp, LinkDownDefaultState: 2,
		MKeyProtectBits: 1, LMC: 2, LinkSpeedActive: 4, LinkSpeedEnabled: 7,
		NeighborMTU: MTU4096, MasterSMSL: 3, VLCap: 4, InitType: 1, VLHighLimit: 7,
		VLArbHighCap: 8, VLArbLowCap: 8, InitTypeReply: 2, MTUCap: MTU4096,
		VLStallCount: 7, HOQLife: 0x13, OperationalVLs: 4,
		PartitionEnforcementInbound: true, FilterRawInbound: true,
		MKeyViolations: 5, PKeyViolations: 256, QKeyViolations: 0xffff, GUIDCap: 32,
		ClientReregister: true, MulticastPKeyTrapSuppression: 2, SubnetTimeout: 0x12,
		RespTimeValue: 0x10, LocalPhyErrors: 8, OverrunErrors: 15, MaxCreditHint: 300,
		LinkRoundTripLatency: 0x1234, CapabilityMask2: 0x0430,
		LinkSpeedExtActive: 8, LinkSpeedExtSupported: 0xf, LinkSpeedExtEnabled: 31,
	}
	var got PortInfo
	if err := got.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("decoded\n got %+v\nwant %+v", got, want)
	}
	out := make([]byte, PortInfoSize)
	if err := want.MarshalAttr(out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, raw) {
		t.Errorf("encoded\n got % x\nwant % x", out, raw)
	}
	r := got.Rate(nil, false)
	if r.String() != "4X NDR" || r.Gbps() != 400 {
		t.Errorf("rate %v %v", r, r.Gbps())
	}
	all := SpeedSDR | SpeedDDR | SpeedQDR | SpeedFDR | SpeedEDR | SpeedHDR | SpeedNDR
	if s := got.SpeedSupported(nil); s != all {
		t.Errorf("supported %v", s)
	}
	if s := got.SpeedEnabled(nil); s != all {
		t.Errorf("enabled %v (31 must mean supported)", s)
	}
}

func TestGoldenHandSwitchInfoNodeInfo(t *testing.T) {
	var si SwitchInfo
	raw := readHex(t, "hand_switchinfo.hex")
	if err := si.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	wantSI := SwitchInfo{LinearFDBCap: 49152, MulticastFDBCap: 4096, LinearFDBTop: 128, DefaultPort: 1,
		DefaultMulticastPrimaryPort: 2, DefaultMulticastNotPrimaryPort: 3, LifeTimeValue: 18, PortStateChange: true,
		OptimizedSLtoVLMapping: 2, LIDsPerPort: 1, PartitionEnforcementCap: 32, InboundEnforcementCap: true,
		FilterRawInboundCap: true, EnhancedPort0: true, MulticastFDBTop: 0xc01f}
	if si != wantSI {
		t.Errorf("SwitchInfo\n got %+v\nwant %+v", si, wantSI)
	}
	if n := si.LFTBlocks(); n != 3 {
		t.Errorf("LFTBlocks for top 128 = %d, want 3 (blocks 0,1,2)", n)
	}
	out := make([]byte, SMPDataSize)
	if err := si.MarshalAttr(out); err != nil || !bytes.Equal(out, raw) {
		t.Errorf("SwitchInfo re-encoded (%v)\n got % x\nwant % x", err, out, raw)
	}

	var ni NodeInfo
	raw = readHex(t, "hand_nodeinfo_cx7.hex")
	if err := ni.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	wantNI := NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: NodeCA, NumPorts: 1,
		SystemImageGUID: 0xb83fd20300a1b2c3, NodeGUID: 0xb83fd20300a1b2c4, PortGUID: 0xb83fd20300a1b2c4,
		PartitionCap: 128, DeviceID: 0x1021, LocalPortNum: 1, VendorID: 0x0002c9}
	if ni != wantNI {
		t.Errorf("NodeInfo\n got %+v\nwant %+v", ni, wantNI)
	}
	if err := ni.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	for id, want := range map[uint16]bool{0x1017: true, 0x1003: true, 0x101b: true, 0xc738: true, 0xcb20: true, 0x0000: false, 0x101c: false, 0xc737: false} {
		if MlnxExtPortInfoSupported(id) != want {
			t.Errorf("MlnxExtPortInfoSupported(%#x) != %v", id, want)
		}
	}
	out = make([]byte, SMPDataSize)
	if err := ni.MarshalAttr(out); err != nil || !bytes.Equal(out, raw) {
		t.Errorf("NodeInfo re-encoded (%v)\n got % x\nwant % x", err, out, raw)
	}
}

func TestNodeInfoValidate(t *testing.T) {
	ok := NodeInfo{NodeType: NodeSwitch, NumPorts: 36, NodeGUID: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("switch port 0: %v", err)
	}
	for name, mod := range map[string]func(*NodeInfo){
		"NodeInfo.NodeType":     func(n *NodeInfo) { n.NodeType = 9 },
		"NodeInfo.NumPorts":     func(n *NodeInfo) { n.NumPorts = 0 },
		"NodeInfo.NodeGUID":     func(n *NodeInfo) { n.NodeGUID = 0 },
		"NodeInfo.LocalPortNum": func(n *NodeInfo) { n.LocalPortNum = 37 },
	} {
		n := ok
		mod(&n)
		var fe *FieldError
		if err := n.Validate(); !errors.As(err, &fe) || fe.Field != name {
			t.Errorf("%s: got %v", name, err)
		}
	}
	ca := NodeInfo{NodeType: NodeCA, NumPorts: 2, NodeGUID: 1, LocalPortNum: 0}
	if ca.Validate() == nil {
		t.Errorf("CA with LocalPortNum 0 accepted")
	}
}

func TestNodeDescription(t *testing.T) {
	long := strings.Repeat("a", 63) + "é" // 65 bytes: é would be split at 64
	tests := []struct {
		in, want string
	}{
		{"leaf01 HCA-1", "leaf01 HCA-1"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{strings.Repeat("x", 70), strings.Repeat("x", 64)},
		{long, strings.Repeat("a", 63)},
		{"", ""},
		{"ノード", "ノード"},
	}
	for _, tt := range tests {
		b := make([]byte, SMPDataSize)
		for i := range b {
			b[i] = 0xee // MarshalAttr must clear the padding
		}
		d := NodeDescription{Text: tt.in}
		if err := d.MarshalAttr(b); err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		var got NodeDescription
		if err := got.UnmarshalAttr(b); err != nil {
			t.Fatal(err)
		}
		if got.Text != tt.want {
			t.Errorf("%q: round trip %q, want %q", tt.in, got.Text, tt.want)
		}
	}
	var fe *FieldError
	if err := (&NodeDescription{Text: "bad\xff"}).MarshalAttr(make([]byte, 64)); !errors.As(err, &fe) || fe.Field != "NodeDescription.Text" {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := (&NodeDescription{Text: "a\x00b"}).MarshalAttr(make([]byte, 64)); !errors.As(err, &fe) {
		t.Errorf("NUL: %v", err)
	}
	// decoding: stops at NUL, replaces invalid bytes one for one
	b := make([]byte, 64)
	copy(b, "sw\xff\xfe1\x00junk")
	var d NodeDescription
	if err := d.UnmarshalAttr(b); err != nil || d.Text != "sw??1" {
		t.Errorf("decode invalid: %q %v", d.Text, err)
	}
	full := bytes.Repeat([]byte{'z'}, 64)
	if err := d.UnmarshalAttr(full); err != nil || d.Text != string(full) {
		t.Errorf("64 bytes without NUL: %q %v", d.Text, err)
	}
}

func TestShortInput(t *testing.T) {
	attrs := []Attribute{&NodeInfo{}, &NodeDescription{}, &PortInfo{}, &SwitchInfo{}, &LFTBlock{}, &MlnxExtPortInfo{}}
	for _, a := range attrs {
		var fe *FieldError
		if err := a.UnmarshalAttr(make([]byte, 3)); !errors.As(err, &fe) {
			t.Errorf("%T short decode: %v", a, err)
		} else if fe.Field == "" || !strings.Contains(fe.Error(), "need") {
			t.Errorf("%T: %v", a, fe)
		}
		if err := a.MarshalAttr(make([]byte, 3)); !errors.As(err, &fe) {
			t.Errorf("%T short encode: %v", a, err)
		}
	}
}

func TestPortInfoMarshalRejectsOverflow(t *testing.T) {
	cases := map[string]PortInfo{
		"PortInfo.PortState":            {PortState: 16},
		"PortInfo.LMC":                  {LMC: 8},
		"PortInfo.HOQLife":              {HOQLife: 32},
		"PortInfo.LinkSpeedExtEnabled":  {LinkSpeedExtEnabled: 32},
		"PortInfo.LinkRoundTripLatency": {LinkRoundTripLatency: 1 << 24},
		"PortInfo.LinkSpeedExtActive2":  {LinkSpeedExtActive2: 4},
	}
	for field, p := range cases {
		var fe *FieldError
		if err := p.MarshalAttr(make([]byte, 64)); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	var fe *FieldError
	if err := (&NodeInfo{VendorID: 1 << 24}).MarshalAttr(make([]byte, 64)); !errors.As(err, &fe) || fe.Field != "NodeInfo.VendorID" {
		t.Errorf("VendorID: %v", err)
	}
	if err := (&SwitchInfo{LifeTimeValue: 32}).MarshalAttr(make([]byte, 64)); !errors.As(err, &fe) || fe.Field != "SwitchInfo.LifeTimeValue" {
		t.Errorf("LifeTimeValue: %v", err)
	}
}

func TestGoldenHandSMInfo(t *testing.T) {
	var si SMInfo
	raw := readHex(t, "hand_sminfo.hex")
	if err := si.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	want := SMInfo{GUID: 0xb83fd20300000002, SMKey: 0x0123456789abcdef, ActCount: 123456, Priority: 14, State: SMMaster}
	if si != want {
		t.Errorf("SMInfo\n got %+v\nwant %+v", si, want)
	}
	out := make([]byte, SMPDataSize)
	if err := si.MarshalAttr(out); err != nil || !bytes.Equal(out, raw) {
		t.Errorf("SMInfo re-encoded (%v)\n got % x\nwant % x", err, out, raw)
	}
	if err := si.UnmarshalAttr(raw[:SMInfoSize-1]); err == nil {
		t.Error("SMInfo decoded from 20 bytes")
	}
	for s, name := range map[SMState]string{SMNotActive: "NotActive", SMDiscovering: "Discovering", SMStandby: "Standby", SMMaster: "Master", 9: "SMState(9)"} {
		if s.String() != name {
			t.Errorf("SMState(%d) = %q, want %q", s, s.String(), name)
		}
	}
}

func TestGoldenHandPKeyTable(t *testing.T) {
	var pk PKeyTable
	raw := readHex(t, "hand_pkeytable.hex")
	if err := pk.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	var want PKeyTable
	want.Keys[0], want.Keys[1], want.Keys[2], want.Keys[31] = 0xffff, 0x8001, 0x0002, 0x7abc
	if pk != want {
		t.Errorf("P_KeyTable\n got %v\nwant %v", pk.Keys, want.Keys)
	}
	out := make([]byte, SMPDataSize)
	if err := pk.MarshalAttr(out); err != nil || !bytes.Equal(out, raw) {
		t.Errorf("P_KeyTable re-encoded (%v)\n got % x\nwant % x", err, out, raw)
	}
	if err := pk.UnmarshalAttr(raw[:63]); err == nil {
		t.Error("P_KeyTable decoded from 63 bytes")
	}
	k := pk.Keys
	if !k[0].Full() || k[0].Partition() != 0x7fff || !k[1].Full() || k[1].Partition() != 1 || k[2].Full() || k[2].Partition() != 2 ||
		k[3].Valid() || PKey(0x8000).Valid() || !k[31].Valid() || k[1].String() != "0x8001" {
		t.Errorf("P_Key fields: %v", k[:4])
	}
	if m := PKeyTableMod(17, 3); m != 0x00110003 {
		t.Errorf("PKeyTableMod(17, 3) = %#x", m)
	}
	for c, n := range map[uint16]int{0: 0, 1: 1, 16: 1, 32: 1, 33: 2, 128: 4} {
		if PKeyBlocks(c) != n {
			t.Errorf("PKeyBlocks(%d) = %d, want %d", c, PKeyBlocks(c), n)
		}
	}
}

func TestGoldenHandSLtoVL(t *testing.T) {
	var tb SLtoVLTable
	raw := readHex(t, "hand_sl2vl.hex")
	if err := tb.UnmarshalAttr(raw); err != nil {
		t.Fatal(err)
	}
	want := SLtoVLTable{VL: [16]uint8{3, 10, 0, 15, 1, 2, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14}}
	if tb != want {
		t.Errorf("SLtoVLMappingTable\n got %v\nwant %v", tb.VL, want.VL)
	}
	out := make([]byte, SMPDataSize)
	if err := tb.MarshalAttr(out); err != nil || !bytes.Equal(out, raw) {
		t.Errorf("SLtoVLMappingTable re-encoded (%v)\n got % x\nwant % x", err, out, raw)
	}
	if err := tb.UnmarshalAttr(raw[:SLtoVLSize-1]); err == nil {
		t.Error("SLtoVLMappingTable decoded from 7 bytes")
	}
	// VL15 (SL3) carries no data: it is not in the set.
	if got := tb.VLs(); got != 0x7fff {
		t.Errorf("VLs() = %#x, want 0x7fff (VL0-14, VL15 dropped)", got)
	}
	if got := (&SLtoVLTable{}).VLs(); got != 1 {
		t.Errorf("all-zero table: VLs() = %#x, want VL0 only", got)
	}
	bad := want
	bad.VL[9] = 16
	var fe *FieldError
	if err := bad.MarshalAttr(out); !errors.As(err, &fe) || fe.Field != "SLtoVLMappingTable.SL9toVL" {
		t.Errorf("VL 16 for SL9: %v", err)
	}
	if m := SLtoVLMod(17, 3); m != 0x1103 {
		t.Errorf("SLtoVLMod(17, 3) = %#x, want 0x1103", m)
	}
	if n := AttrName(ClassSubnDR, AttrSLtoVLMappingTable); n != "SLtoVLMappingTable" {
		t.Errorf("AttrName = %q", n)
	}
	if s := (&SLtoVLTable{VL: [16]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7}}).String(); s != "| 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14| 7|" {
		t.Errorf("String() = %q", s)
	}
}
