package mad

import (
	"bytes"
	"testing"
)

// generalInfoGolden is a ConnectX-7 (device 0x1021) on firmware
// 28.39.1002, PSID MT_0000000838, up 0x12345 s, written byte by byte from
// ibis' VendorSpec_GeneralInfo layout (HWInfo 0-31: DeviceID, revision,
// UpTime at 28; FWInfo 32-95: reserved, Major, Minor, SubMinor, BuildID
// at 36, PSID at 48-63, Extended Major/Minor/SubMinor at 68-79), not by
// the encoder under test.
func generalInfoGolden() []byte {
	b := make([]byte, GeneralInfoSize)
	b[0], b[1] = 0x10, 0x21
	b[28], b[29], b[30], b[31] = 0x00, 0x01, 0x23, 0x45
	b[33], b[34], b[35] = 28, 39, 0xea // 1002 & 0xff
	b[36], b[37], b[38], b[39] = 0, 0, 0x01, 0x02
	copy(b[48:], "MT_0000000838")
	b[71] = 28
	b[75] = 39
	b[78], b[79] = 0x03, 0xea
	return b
}

func TestGeneralInfoGolden(t *testing.T) {
	want := GeneralInfo{DeviceID: 0x1021, UpTime: 0x12345, Major: 28, Minor: 39, SubMinor: 0xea, BuildID: 0x102,
		PSID: "MT_0000000838", ExtMajor: 28, ExtMinor: 39, ExtSubMinor: 1002}
	var g GeneralInfo
	if err := g.UnmarshalAttr(generalInfoGolden()); err != nil {
		t.Fatal(err)
	}
	if g != want {
		t.Errorf("decoded %+v\nwant    %+v", g, want)
	}
	if v := g.Version(); v != "28.39.1002" {
		t.Errorf("version %q, want 28.39.1002 (the extended fields)", v)
	}
	out := make([]byte, GMPDataSize)
	if err := want.MarshalAttr(out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:GeneralInfoSize], generalInfoGolden()) {
		t.Errorf("encoded\n% x\nwant\n% x", out[:GeneralInfoSize], generalInfoGolden())
	}
	old := GeneralInfo{Major: 2, Minor: 9, SubMinor: 1200 & 0xff}
	if v := old.Version(); v != "2.9.0176" {
		t.Errorf("old firmware without extended fields: %q", v)
	}
	if err := (&GeneralInfo{PSID: "MT_00000008380000X"}).MarshalAttr(out); err == nil {
		t.Error("a 17-byte PSID encoded")
	}
	if err := g.UnmarshalAttr(make([]byte, 100)); err == nil {
		t.Error("100 bytes decoded")
	}
}

// TestVendorGetGolden: a GeneralInfo Get in the vendor class, byte by
// byte: base version 1, class 0x0A, class version 1, method Get, the
// attribute ID at 16-17, V_Key and reserved zero to byte 63.
func TestVendorGetGolden(t *testing.T) {
	g := NewVendorGet(AttrGeneralInfo, 0)
	g.TID = 0x1122334455667788
	want := make([]byte, Size)
	want[0], want[1], want[2], want[3] = 1, 0x0a, 1, 0x01
	copy(want[8:16], []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88})
	want[16], want[17] = 0x00, 0x17
	if got := g.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("got\n% x\nwant\n% x", got[:64], want[:64])
	}
	back, err := UnmarshalGMP(want)
	if err != nil || back.Class != ClassMlnxVendor || back.AttrID != AttrGeneralInfo {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
