package checks

import (
	"strings"
	"testing"
)

// TestAsymmetricShareIsNotOfPaths: one edited LFT entry (leaf01's route
// to the host sampled on leaf02) makes 1 of the 6 sampled leaf pairs
// asymmetric, but it moves only leaf01's 8 hosts' paths to that one
// host: 8 of 992 host paths. The finding used to put 1/6 (16.7%) in the
// impact as a share of paths; the sample's share is of leaf pairs and
// must be said so, not shown as paths.
func TestAsymmetricShareIsNotOfPaths(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "gpu009").Ports[1] // leaf02's first host: the one sampled
	leaf := node(t, f, "leaf01")
	up := leaf.Switch.LFT.At(dst.LID)
	alt := uint8(9)
	if up == 9 {
		alt = 10
	}
	leaf.Switch.LFT.Set(dst.LID, alt)
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.asymmetric")
	if len(fs) != 1 {
		t.Fatalf("got %d routing.asymmetric findings, want 1: %+v", len(fs), fs)
	}
	a := fs[0]
	if limit := 8.0 / 992; a.Impact.PathShare > limit {
		t.Errorf("impact path share %.4f, above the %.4f of host paths the edited entry carries", a.Impact.PathShare, limit)
	}
	if !strings.HasPrefix(a.Title, "1 of 6 sampled leaf pairs") {
		t.Errorf("title %q: want the count of sampled leaf pairs (1 of 6)", a.Title)
	}
}
