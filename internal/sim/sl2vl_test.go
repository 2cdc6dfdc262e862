package sim

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSLtoVL: every switch answers SLtoVLMappingTable for any pair of its
// ports with every SL on VL0 until the sl2vl fault spreads them; a CA
// answers for the port the SMP came in by; a modifier naming a port the
// switch lacks, or a Set, is refused; the drop fault silences it.
func TestSLtoVL(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	leaf := mad.Path{1} // gpu001 -> leaf01
	var tb mad.SLtoVLTable
	drAttr(t, c, leaf, mad.SLtoVLMod(1, 3), &tb)
	if tb != (mad.SLtoVLTable{}) {
		t.Errorf("default: %v, want every SL on VL0", tb.VL)
	}
	drAttr(t, c, mad.Path{}, 0, &tb)
	if tb != (mad.SLtoVLTable{}) {
		t.Errorf("CA default: %v", tb.VL)
	}
	for _, mod := range []uint32{mad.SLtoVLMod(9, 1), mad.SLtoVLMod(1, 9), 0x30000 | mad.SLtoVLMod(1, 3)} {
		if r := drGet(t, c, leaf, mad.AttrSLtoVLMappingTable, mod); r == nil || r.Status != statusInvalidField {
			t.Errorf("modifier %#x on an 8-port switch: %v, want invalid field", mod, r)
		}
	}
	faults, err := ParseFaults(strings.NewReader("sl2vl leaf01 map=0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,15\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(faults); err != nil {
		t.Fatal(err)
	}
	drAttr(t, c, leaf, mad.SLtoVLMod(2, 1), &tb)
	want := mad.SLtoVLTable{VL: [16]uint8{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 15}}
	if tb != want {
		t.Errorf("after the fault: %v, want %v", tb.VL, want.VL)
	}
	// The other leaf keeps the default.
	drAttr(t, c, mad.Path{1, 3, 2}, mad.SLtoVLMod(3, 1), &tb)
	if tb != (mad.SLtoVLTable{}) {
		t.Errorf("leaf02 after leaf01's fault: %v", tb.VL)
	}
	set, _ := mad.NewDRGet(leaf, mad.AttrSLtoVLMappingTable, mad.SLtoVLMod(1, 3))
	set.Method = mad.MethodSet
	if r := sendSMP(t, c, transport.DirectedRoute(), set); r == nil || r.Status != statusAttrUnsupported {
		t.Errorf("Set: %v, want refused", r)
	}
	if err := s.Drop("leaf01", "sltovlmappingtable"); err != nil {
		t.Fatal(err)
	}
	if r := drGet(t, c, leaf, mad.AttrSLtoVLMappingTable, mad.SLtoVLMod(1, 3)); r != nil {
		t.Errorf("dropped attribute answered: %v", r.Status)
	}
	for _, bad := range []string{"sl2vl leaf01 map=0,1", "sl2vl leaf01 map=0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,16", "sl2vl leaf01"} {
		if _, err := ParseFaults(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if err := s.SetSLtoVL("gpu001 mlx5_0", [16]uint8{}); err == nil {
		t.Error("sl2vl on a CA accepted")
	}
}
