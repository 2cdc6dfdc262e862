package sim

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestRefuse: the refuse fault makes a node answer one attribute (or one
// modifier of it) with status invalid field, by directed route and by
// LID alike, while everything else it answers as usual.
func TestRefuse(t *testing.T) {
	s, _ := newSim(t, fatTree(t, 2, 2, 2), Options{})
	c := attach(t, s, "gpu001 mlx5_0", 1)
	leaf := mad.Path{1} // gpu001 -> leaf01
	faults, err := ParseFaults(strings.NewReader("refuse leaf01/0 attr=LinearForwardingTable\nrefuse leaf01 attr=p_keytable\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFaults(faults); err != nil {
		t.Fatal(err)
	}
	if r := drGet(t, c, leaf, mad.AttrLinearForwardingTable, 0); r == nil || r.Status != statusInvalidField {
		t.Errorf("LFT block 0: %v, want status invalid field", r)
	}
	if r := drGet(t, c, leaf, mad.AttrPKeyTable, 1<<16); r == nil || r.Status != statusInvalidField {
		t.Errorf("P_Key table of port 1: %v, want status invalid field", r)
	}
	for _, a := range []struct {
		id  mad.AttrID
		mod uint32
	}{{mad.AttrNodeInfo, 0}, {mad.AttrPortInfo, 1}, {mad.AttrSwitchInfo, 0}} {
		if r := drGet(t, c, leaf, a.id, a.mod); r == nil || r.Status != mad.StatusOK {
			t.Errorf("%s: %v, want answered", mad.AttrName(mad.ClassSubnDR, a.id), r)
		}
	}
	if _, err := ParseFaults(strings.NewReader("refuse leaf01 attr=Bogus\n")); err == nil {
		t.Error("refuse of an unknown attribute parsed")
	}
	if err := s.Refuse("nosuchnode", "PortInfo"); err == nil {
		t.Error("refuse on an unknown node accepted")
	}
}
