package checks

import (
	"strings"
	"testing"
)

// TestLoopToSwitchLID: a loop in the tables on a switch's own LID (the
// trial's `loop leaf01 spine01 dlid=leaf02`) is a routing.loop: the
// tables were read and they loop, whether or not a host's route crosses
// it. trace reports the same loop; check used to walk host LIDs only.
func TestLoopToSwitchLID(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "leaf02")
	lid := dst.Ports[0].LID
	leaf := node(t, f, "leaf01")
	up := leaf.Switch.LFT.At(lid)
	spine := leaf.Ports[up].Remote
	spine.Node.Switch.LFT.Set(lid, spine.Num) // straight back down to leaf01
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.loop")
	if len(fs) != 1 {
		t.Fatalf("got %d routing.loop findings, want 1: %+v", len(fs), fs)
	}
	l := fs[0]
	if l.Severity != Critical || !strings.Contains(l.Title, "leaf02") || !strings.Contains(l.Title, "leaf01") || !strings.Contains(l.Title, spine.Node.Description) {
		t.Errorf("finding %s %q: want critical naming leaf02 and the loop leaf01 <-> %s", l.Severity, l.Title, spine.Node.Description)
	}
}
