package mad

import (
	"bytes"
	"testing"
)

// arInfoGolden is a Quantum-2's AdaptiveRoutingInfo with adaptive routing
// on for SLs 0-3 only, written byte by byte from ibis' adb layout of
// adaptive_routing_info (big-endian words, bit 0 the word's least
// significant bit), not by the encoder under test:
// word 0 = e(0) | is_arn_sup(1) | is_frn_sup(2) | is_fr_sup(3) |
// sub_grps_active 1 (bits 8-11) | direction_num_sup 4 (16-23) |
// by_sl_cap(27) | by_sl_en(28); word 1 = group_cap 2048 (0-11) |
// group_top 63 (12-23); word 2 = ar_version_cap 2 (0-3) |
// rn_version_cap 1 (4-7) | sub_grps_supported 4 (8-15) |
// enable_by_sl_mask 0x000f (16-31); word 3 = by_transport_disable 0x01
// (UD); word 4 = ageing time 30 µs.
func arInfoGolden() []byte {
	return []byte{
		0x18, 0x04, 0x01, 0x0f,
		0x00, 0x03, 0xf8, 0x00,
		0x00, 0x0f, 0x04, 0x12,
		0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x1e,
	}
}

func TestARInfoGolden(t *testing.T) {
	want := ARInfo{Enabled: true, ARNSupported: true, FRNSupported: true, FRSupported: true,
		SubGroupsActive: 1, DirectionNumSup: 4, BySLCap: true, BySLEnabled: true,
		GroupCap: 2048, GroupTop: 63, ARVersionCap: 2, RNVersionCap: 1, SubGroupsSupported: 4,
		EnableBySLMask: 0x000f, ByTransportDisable: 1, AgeingTime: 30}
	var a ARInfo
	if err := a.UnmarshalAttr(arInfoGolden()); err != nil {
		t.Fatal(err)
	}
	if a != want {
		t.Errorf("decoded %+v\nwant    %+v", a, want)
	}
	if a.SLs() != 0x000f {
		t.Errorf("SLs %#x, want 0x000f (by_sl_en)", a.SLs())
	}
	out := make([]byte, SMPDataSize)
	if err := want.MarshalAttr(out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out[:ARInfoSize], arInfoGolden()) {
		t.Errorf("encoded\n% x\nwant\n% x", out[:ARInfoSize], arInfoGolden())
	}
	off := ARInfo{GroupCap: 2048}
	if off.SLs() != 0xffff || off.Enabled {
		t.Errorf("AR off: %+v", off)
	}
	if err := (&ARInfo{GroupCap: 4096}).MarshalAttr(out); err == nil {
		t.Error("a 13-bit GroupCap encoded")
	}
	if err := a.UnmarshalAttr(make([]byte, 19)); err == nil {
		t.Error("19 bytes decoded")
	}
}
