package checks

import (
	"strings"
	"testing"
)

// TestAsymmetricShareIsNotOfPaths: edited LFT entries for the host
// sampled on leaf02 (gpu009: leaf01 -> spine01 -> leaf03 -> spine02 ->
// leaf02, two switches longer than the way back) make a sampled pair or
// two take a detour, but they move only a few leaves' paths to that one
// host: a handful of 992 host paths. The finding used to put the share
// of sampled pairs in the impact as a share of paths; it is of HCA
// port pairs (every pair now) and must be said so, not shown as paths.
func TestAsymmetricShareIsNotOfPaths(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "gpu009").Ports[1] // leaf02's first host: the one sampled
	// Leaf ports 9..12 go to spines 1..4; spine port l to leaf l.
	node(t, f, "leaf01").Switch.LFT.Set(dst.LID, 9)
	node(t, f, "spine01").Switch.LFT.Set(dst.LID, 3)
	node(t, f, "leaf03").Switch.LFT.Set(dst.LID, 10)
	node(t, f, "spine02").Switch.LFT.Set(dst.LID, 2)
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.asymmetric")
	if len(fs) != 1 {
		t.Fatalf("got %d routing.asymmetric findings, want 1: %+v", len(fs), fs)
	}
	a := fs[0]
	if limit := 24.0 / 992; a.Impact.PathShare > limit {
		t.Errorf("impact path share %.4f, above the %.4f of host paths the edited entries carry", a.Impact.PathShare, limit)
	}
	if !strings.Contains(a.Title, " of 496 HCA port pairs take more hops one way") || a.Severity != Warning {
		t.Errorf("%s %q: want a warning counting the HCA port pairs (of 496) with a detour", a.Severity, a.Title)
	}
}
