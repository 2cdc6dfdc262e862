package mad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSpeedActiveRules(t *testing.T) {
	const ext = CapIsExtendedSpeedsSupported
	const ext2 = CapIsExtendedSpeedsSupported | CapIsCapabilityMask2Supported
	tests := []struct {
		name   string
		port   PortInfo
		caps   *PortInfo // nil: port itself
		fdr10  bool
		want   Speed
		signal float64
	}{
		{"SDR", PortInfo{LinkSpeedActive: 1}, nil, false, SpeedSDR, 2.5},
		{"DDR", PortInfo{LinkSpeedActive: 2}, nil, false, SpeedDDR, 5},
		{"QDR", PortInfo{LinkSpeedActive: 4}, nil, false, SpeedQDR, 10},
		{"FDR10 via MLNX ExtPortInfo", PortInfo{LinkSpeedActive: 4}, nil, true, SpeedFDR10, 10.3125},
		{"FDR", PortInfo{CapabilityMask: ext, LinkSpeedActive: 4, LinkSpeedExtActive: 1}, nil, false, SpeedFDR, 14.0625},
		{"EDR", PortInfo{CapabilityMask: ext, LinkSpeedExtActive: 2}, nil, false, SpeedEDR, 25.78125},
		{"HDR", PortInfo{CapabilityMask: ext, LinkSpeedExtActive: 4}, nil, false, SpeedHDR, 53.125},
		{"NDR", PortInfo{CapabilityMask: ext, LinkSpeedExtActive: 8}, nil, false, SpeedNDR, 106.25},
		{"NDR wins over FDR10 flag", PortInfo{CapabilityMask: ext, LinkSpeedExtActive: 8}, nil, true, SpeedNDR, 106.25},
		{"XDR", PortInfo{CapabilityMask: ext2, CapabilityMask2: Cap2IsExtendedSpeeds2Supported, LinkSpeedExtActive: 8, LinkSpeedExtActive2: 1}, nil, false, SpeedXDR, 212.5},
		{"XDR ignored without CapMask2 bit", PortInfo{CapabilityMask: ext2, LinkSpeedExtActive: 8, LinkSpeedExtActive2: 1}, nil, false, SpeedNDR, 106.25},
		{"XDR ignored without IsCapabilityMask2Supported", PortInfo{CapabilityMask: ext, CapabilityMask2: Cap2IsExtendedSpeeds2Supported, LinkSpeedExtActive: 8, LinkSpeedExtActive2: 1}, nil, false, SpeedNDR, 106.25},
		{"ext ignored without IsExtendedSpeedsSupported", PortInfo{LinkSpeedActive: 1, LinkSpeedExtActive: 8}, nil, false, SpeedSDR, 2.5},
		{"ext active 0 falls back to base", PortInfo{CapabilityMask: ext, LinkSpeedActive: 4}, nil, false, SpeedQDR, 10},
		// a switch's external port has CapabilityMask 0: port 0's masks apply
		{"switch port uses port 0 caps", PortInfo{LinkSpeedActive: 1, LinkSpeedExtActive: 2}, &PortInfo{CapabilityMask: ext}, false, SpeedEDR, 25.78125},
		{"switch XDR from port 0 caps", PortInfo{LinkSpeedExtActive: 8, LinkSpeedExtActive2: 1}, &PortInfo{CapabilityMask: ext2, CapabilityMask2: Cap2IsExtendedSpeeds2Supported}, false, SpeedXDR, 212.5},
		{"port's own caps ignored when caps given", PortInfo{CapabilityMask: ext, LinkSpeedActive: 1, LinkSpeedExtActive: 2}, &PortInfo{}, false, SpeedSDR, 2.5},
		{"nothing active", PortInfo{}, nil, false, 0, 0},
	}
	for _, tt := range tests {
		got := tt.port.SpeedActive(tt.caps, tt.fdr10)
		if got != tt.want {
			t.Errorf("%s: SpeedActive = %v, want %v", tt.name, got, tt.want)
		}
		if got.SignalGbps() != tt.signal {
			t.Errorf("%s: SignalGbps = %v, want %v", tt.name, got.SignalGbps(), tt.signal)
		}
	}
}

func TestSpeedEnabledSupported(t *testing.T) {
	caps := &PortInfo{CapabilityMask: CapIsExtendedSpeedsSupported | CapIsCapabilityMask2Supported, CapabilityMask2: Cap2IsExtendedSpeeds2Supported}
	p := PortInfo{LinkSpeedSupported: 7, LinkSpeedEnabled: 15, LinkSpeedExtSupported: 0xf, LinkSpeedExtEnabled: 31, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 7}
	all := SpeedSDR | SpeedDDR | SpeedQDR | SpeedFDR | SpeedEDR | SpeedHDR | SpeedNDR | SpeedXDR
	if got := p.SpeedEnabled(caps); got != all {
		t.Errorf("enabled with 'set to supported' values = %v, want %v", got, all)
	}
	if got := p.SpeedSupported(caps); got != all {
		t.Errorf("supported = %v", got)
	}
	p.LinkSpeedExtEnabled = LinkSpeedExtEnabledDisable
	p.LinkSpeedExtEnabled2 = 0
	if got := p.SpeedEnabled(caps); got != SpeedSDR|SpeedDDR|SpeedQDR {
		t.Errorf("ext disabled (30) = %v", got)
	}
	p.LinkSpeedEnabled, p.LinkSpeedExtEnabled = 1, 0x6
	if got := p.SpeedEnabled(caps); got != SpeedSDR|SpeedEDR|SpeedHDR {
		t.Errorf("mask = %v", got)
	}
	if got := p.SpeedEnabled(&PortInfo{}); got != SpeedSDR {
		t.Errorf("without ext caps = %v", got)
	}
	if got := p.SpeedSupported(&PortInfo{}); got != SpeedSDR|SpeedDDR|SpeedQDR {
		t.Errorf("supported without ext caps = %v", got)
	}
}

func TestWidths(t *testing.T) {
	caps := &PortInfo{CapabilityMask: CapIsExtendedSpeedsSupported}
	tests := []struct {
		width Width
		lanes int
		str   string
		gbps  float64 // at NDR
	}{
		{Width1X, 1, "1X", 100},
		{Width2X, 2, "2X", 200},
		{Width4X, 4, "4X", 400},
		{Width8X, 8, "8X", 800},
		{Width12X, 12, "12X", 1200},
	}
	for _, tt := range tests {
		p := PortInfo{LinkWidthActive: tt.width, LinkSpeedExtActive: 8}
		r := p.Rate(caps, false)
		if r.Width.Lanes() != tt.lanes || r.Width.String() != tt.str || r.Gbps() != tt.gbps {
			t.Errorf("%v: lanes %d str %q gbps %v", tt.width, r.Width.Lanes(), r.Width.String(), r.Gbps())
		}
		if r.String() != tt.str+" NDR" {
			t.Errorf("rate string %q", r.String())
		}
	}
	p := PortInfo{LinkWidthEnabled: 255, LinkWidthSupported: Width1X | Width4X}
	if p.WidthEnabled() != Width1X|Width4X {
		t.Errorf("WidthEnabled 255 = %v", p.WidthEnabled())
	}
	p.LinkWidthEnabled = Width4X
	if p.WidthEnabled() != Width4X {
		t.Errorf("WidthEnabled = %v", p.WidthEnabled())
	}
	if (Width1X|Width2X|Width12X).String() != "1X,2X,12X" || Width(0).String() != "none" || Width(0x60).String() != "0x60" {
		t.Errorf("width mask strings: %q %q %q", (Width1X | Width2X | Width12X).String(), Width(0).String(), Width(0x60).String())
	}
	if (Width1X|Width12X).Max() != Width12X || (Width1X|Width2X).Max() != Width2X {
		t.Errorf("Max")
	}
}

func TestRateStrings(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		str  string
		gbps float64
	}{
		{"4xNDR", Rate{Width4X, SpeedNDR}, "4X NDR", 400},
		{"4X NDR", Rate{Width4X, SpeedNDR}, "4X NDR", 400},
		{"1x-edr", Rate{Width1X, SpeedEDR}, "1X EDR", 25},
		{"NDR", Rate{Width4X, SpeedNDR}, "4X NDR", 400},
		{"2X HDR", Rate{Width2X, SpeedHDR}, "2X HDR", 100},
		{"12x_qdr", Rate{Width12X, SpeedQDR}, "12X QDR", 96},
		{"4x fdr10", Rate{Width4X, SpeedFDR10}, "4X FDR10", 40},
		{"8xXDR", Rate{Width8X, SpeedXDR}, "8X XDR", 1600},
		{" 4x sdr ", Rate{Width4X, SpeedSDR}, "4X SDR", 8},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		if got.String() != tt.str || got.Gbps() != tt.gbps {
			t.Errorf("%q: %q %v Gb/s", tt.in, got.String(), got.Gbps())
		}
		if got.BytesPerSecond() != tt.gbps*1e9/8 {
			t.Errorf("%q: BytesPerSecond %v", tt.in, got.BytesPerSecond())
		}
	}
	for _, bad := range []string{"", "3xNDR", "4xFOO", "xNDR", "4x", "NDRX"} {
		if r, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) = %v, want error", bad, r)
		}
	}
	if SpeedNDR.SignalGbps() != 106.25 || SpeedNDR.DataGbps() != 100 || (SpeedNDR|SpeedHDR).SignalGbps() != 0 {
		t.Errorf("NDR signal/data")
	}
	if (SpeedEDR|SpeedHDR|SpeedNDR).String() != "EDR,HDR,NDR" || Speed(0).String() != "none" {
		t.Errorf("speed strings %q", (SpeedEDR | SpeedHDR | SpeedNDR).String())
	}
	if (SpeedSDR|SpeedNDR).Max() != SpeedNDR || !SpeedNDR.Has(SpeedNDR) {
		t.Errorf("Max/Has")
	}
	if !(Rate{Width4X, SpeedHDR}).Less(Rate{Width4X, SpeedNDR}) || (Rate{Width4X, SpeedNDR}).Less(Rate{Width2X, SpeedNDR}) {
		t.Errorf("Less")
	}
	for i, n := range speedNames {
		s, err := ParseSpeed(n)
		if err != nil || s != Speed(1)<<i || s.String() != n {
			t.Errorf("ParseSpeed(%q) = %v %v", n, s, err)
		}
	}
}

func TestMlnxExtPortInfo(t *testing.T) {
	b := make([]byte, SMPDataSize)
	b[3], b[7], b[11], b[15] = 1, 1, 1, 1
	var m MlnxExtPortInfo
	if err := m.UnmarshalAttr(b); err != nil {
		t.Fatal(err)
	}
	if !m.FDR10Active() || !m.FDR10Supported() || !m.FDR10Enabled() || m.StateChangeEnable != 1 {
		t.Errorf("%+v", m)
	}
	p := PortInfo{LinkSpeedActive: 4, LinkWidthActive: Width4X}
	if r := p.Rate(nil, m.FDR10Active()); r.String() != "4X FDR10" || r.Gbps() != 40 {
		t.Errorf("FDR10 rate %v %v", r, r.Gbps())
	}
}

func TestLFTArithmetic(t *testing.T) {
	for _, tt := range []struct {
		top    uint16
		blocks int
	}{{0, 1}, {1, 1}, {63, 1}, {64, 2}, {127, 2}, {128, 3}, {0xbfff, 768}} {
		if got := LFTBlockCount(tt.top); got != tt.blocks {
			t.Errorf("LFTBlockCount(%d) = %d, want %d", tt.top, got, tt.blocks)
		}
		// the last block must contain LID top
		if b, _ := LFTBlockOf(tt.top); int(b) != tt.blocks-1 {
			t.Errorf("top %d in block %d, want last block %d", tt.top, b, tt.blocks-1)
		}
	}
	if b, i := LFTBlockOf(130); b != 2 || i != 2 {
		t.Errorf("LFTBlockOf(130) = %d,%d", b, i)
	}
	if l, err := LFTBlockFirstLID(2); err != nil || l != 128 {
		t.Errorf("first LID of 2 = %d %v", l, err)
	}
	if _, err := LFTBlockFirstLID(768); err == nil {
		t.Errorf("block 768 accepted")
	}
	var blk LFTBlock
	blk.Ports[2] = 7
	if p, ok := blk.PortFor(2, 130); !ok || p != 7 {
		t.Errorf("PortFor = %d %v", p, ok)
	}
	if _, ok := blk.PortFor(1, 130); ok {
		t.Errorf("PortFor of a LID outside the block")
	}
	si := SwitchInfo{LinearFDBTop: 0xbfff, LinearFDBCap: 64}
	if si.LFTBlocks() != 1 {
		t.Errorf("LFTBlocks capped by LinearFDBCap = %d", si.LFTBlocks())
	}
}

func TestEnumStrings(t *testing.T) {
	checks := map[string]string{
		NodeCA.String(): "CA", NodeSwitch.String(): "Switch", NodeRouter.String(): "Router", NodeType(9).String(): "NodeType(9)",
		PortStateActive.String(): "Active", PortStateDown.String(): "Down", PortState(9).String(): "PortState(9)",
		PhysLinkUp.String(): "LinkUp", PhysPolling.String(): "Polling", PhysState(12).String(): "PhysState(12)",
		MTU4096.String(): "4096", MTU256.String(): "256", MTU(9).String(): "MTU(9)",
		ClassPerfMgt.String(): "PerfMgt", ClassSubnDR.String(): "SubnMgt(DR)", Class(0x55).String(): "Class(0x55)",
		MethodGetResp.String(): "GetResp", MethodSet.String(): "Set", Method(0x44).String(): "Method(0x44)",
		Status(0).String(): "ok", Status(0x1c).String(): "invalid attribute or attribute modifier (0x001c)",
		Status(0x0001).String():             "busy (0x0001)",
		AttrName(ClassSubnDR, AttrPortInfo): "PortInfo", AttrName(ClassPerfMgt, AttrPortCountersExtended): "PortCountersExtended",
		AttrName(ClassPerfMgt, AttrClassPortInfo): "ClassPortInfo", AttrName(ClassPerfMgt, 0x77): "0x0077",
	}
	for got, want := range checks {
		if got != want {
			t.Errorf("got %q want %q", got, want)
		}
	}
	for _, s := range []PortState{0, 1, 2, 3, 4, 5} {
		if s.String() == "" {
			t.Errorf("empty")
		}
	}
}

func TestPortInfoValidate(t *testing.T) {
	ok := PortInfo{PortState: PortStateActive, PhysState: PhysLinkUp, LinkWidthActive: Width4X, LinkSpeedActive: 4}
	if err := ok.Validate(nil); err != nil {
		t.Fatal(err)
	}
	down := PortInfo{PortState: PortStateDown, PhysState: PhysPolling, LinkWidthActive: 0x33}
	if err := down.Validate(nil); err != nil {
		t.Errorf("a Down port's garbage must not matter: %v", err)
	}
	for field, p := range map[string]PortInfo{
		"PortInfo.PortState":         {PortState: 9},
		"PortInfo.PortPhysicalState": {PortState: PortStateActive, PhysState: 8},
		"PortInfo.LinkWidthActive":   {PortState: PortStateActive, LinkWidthActive: Width1X | Width4X, LinkSpeedActive: 1},
		"PortInfo.LinkSpeedActive":   {PortState: PortStateInit, LinkWidthActive: Width4X},
	} {
		var fe *FieldError
		if err := p.Validate(nil); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
	// a switch port's NDR is valid only with port 0's masks
	sw := PortInfo{PortState: PortStateActive, LinkWidthActive: Width4X, LinkSpeedExtActive: 8}
	if sw.Validate(nil) == nil || sw.Validate(&PortInfo{CapabilityMask: CapIsExtendedSpeedsSupported}) != nil {
		t.Errorf("caps not applied")
	}
}

// TestParseRateErrorSaysMadOnce: a bad speed inside a rate is reported
// with one "mad:" prefix, naming the rate and the speed.
func TestParseRateErrorSaysMadOnce(t *testing.T) {
	for _, s := range []string{"4xFAST", "3xHDR", "QxNDR"} {
		_, err := ParseRate(s)
		if err == nil {
			t.Fatalf("%q: no error", s)
		}
		if n := strings.Count(err.Error(), "mad:"); n != 1 || !strings.Contains(err.Error(), `rate "`+s+`"`) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// The data rate per lane is the signalling rate less the line code: 8b/10b
// up to QDR, 64b/66b for FDR10, FDR and EDR. FDR printed 13.64 per lane
// (54.56 for 4X) where 14.0625*64/66 is 13.636 (54.55 for 4X).
func TestSpeedDataRateIsSignalLessEncoding(t *testing.T) {
	for _, tt := range []struct {
		s   Speed
		num float64
		den float64
	}{
		{SpeedSDR, 8, 10}, {SpeedDDR, 8, 10}, {SpeedQDR, 8, 10},
		{SpeedFDR10, 64, 66}, {SpeedFDR, 64, 66}, {SpeedEDR, 64, 66},
	} {
		want := tt.s.SignalGbps() * tt.num / tt.den
		if got := tt.s.DataGbps(); got != want {
			t.Errorf("%v: DataGbps = %v, want %v (%v x %v/%v)", tt.s, got, want, tt.s.SignalGbps(), tt.num, tt.den)
		}
	}
	if got := fmt.Sprintf("%.2f", (Rate{Width4X, SpeedFDR}).Gbps()); got != "54.55" {
		t.Errorf("4X FDR = %s Gb/s, want 54.55", got)
	}
}

// TestRateStringNoAlloc: a rate of one width and one speed is named
// without making a string (top names every watched port's rate at each
// refresh), and the same as from its parts.
func TestRateStringNoAlloc(t *testing.T) {
	for _, w := range widthOrder {
		for j := range speedNames {
			r := Rate{Width: w, Speed: Speed(1 << j)}
			if got, want := r.String(), w.String()+" "+r.Speed.String(); got != want {
				t.Errorf("%#v: %q, want %q", r, got, want)
			}
		}
	}
	r := Rate{Width: Width4X, Speed: SpeedNDR}
	if n := testing.AllocsPerRun(100, func() { _ = r.String() }); n != 0 {
		t.Errorf("Rate.String allocates %v times", n)
	}
}
