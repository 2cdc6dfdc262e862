package route

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestReadBlocks: only the blocks asked for are read (by LID or by path
// as asked), written into the tables (a missing table grows to hold
// them), and a failed block is a *SwitchError naming it.
func TestReadBlocks(t *testing.T) {
	want, got := lftRig(t)
	s := newFakeSMA(want)
	leaf, spine := node(got, "leaf01"), node(got, "spine02")
	s.fail = func(n *fabric.Node, attr mad.AttrID, mod uint32) error {
		if n.Description == "spine02" && mod == 1 {
			return errors.New("timed out")
		}
		return nil
	}
	err := ReadBlocks(context.Background(), s, []Block{{leaf, 2}, {spine, 0}, {spine, 1}}, true, 0)
	var se *SwitchError
	if !errors.As(err, &se) || se.Switch != spine || se.What != "LinearForwardingTable block 1" {
		t.Fatalf("err %v, want spine02's block 1", err)
	}
	slices.Sort(s.log)
	if w := []string{"lid:leaf01 LinearForwardingTable 2", "lid:spine02 LinearForwardingTable 0", "lid:spine02 LinearForwardingTable 1"}; !slices.Equal(s.log, w) {
		t.Errorf("reads %q, want %q", s.log, w)
	}
	wl := node(want, "leaf01").Switch.LFT.Bytes()
	if l := leaf.Switch.LFT.Bytes(); len(l) != 3*64 || !slices.Equal(l[128:len(wl)], wl[128:]) || l[0] != fabric.NoRoute {
		t.Errorf("leaf01's table after block 2: %v", l)
	}
	if l := spine.Switch.LFT.Bytes(); len(l) != 64 || !slices.Equal(l, node(want, "spine02").Switch.LFT.Bytes()[:64]) {
		t.Errorf("spine02's table after block 0: %v", l)
	}

	s.log = nil
	if err := ReadBlocks(context.Background(), s, []Block{{leaf, 0}}, false, 0); err != nil {
		t.Fatal(err)
	}
	if w := []string{"leaf01 LinearForwardingTable 0"}; !slices.Equal(s.log, w) {
		t.Errorf("by path: reads %q, want %q", s.log, w)
	}
}
