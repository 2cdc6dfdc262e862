package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// limitUplinks makes leaf01's uplinks (ports 9..) at the given port
// numbers HDR hardware: Supported and Enabled stop at HDR and the links
// train at HDR, the best both ends support.
func limitUplinks(t *testing.T, ports ...uint8) *Snapshot {
	t.Helper()
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	hdrDown := mad.SpeedHDR | (mad.SpeedHDR - 1)
	for _, n := range ports {
		p := leaf.Ports[n]
		if p == nil || p.Remote == nil || p.Remote.Node.Type != mad.NodeSwitch {
			t.Fatalf("leaf01/%d is no uplink", n)
		}
		p.SpeedSupported &= hdrDown
		p.SpeedEnabled &= hdrDown
		p.SpeedActive, p.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	}
	return &Snapshot{Fabric: f}
}

// TestSlowerHardwareSwitchPort: one leaf port whose hardware stops at
// HDR, among NDR uplinks, is reported on the leaf's port; two are still a
// clear minority; all four of the leaf's uplinks are the leaf's design
// (a sub-fleet of 4 links sharing that hardware): no finding.
func TestSlowerHardwareSwitchPort(t *testing.T) {
	for _, c := range []struct {
		ports []uint8
		want  int
	}{{[]uint8{9}, 1}, {[]uint8{9, 10}, 2}, {[]uint8{9, 10, 11, 12}, 0}} {
		fs := run(t, limitUplinks(t, c.ports...))
		if d := append(byCheck(fs, "link.degraded-speed"), byCheck(fs, "link.degraded-width")...); len(d) > 0 {
			t.Errorf("%v: links at their hardware's best reported degraded: %v", c.ports, d[0].Title)
		}
		got := byCheck(fs, "link.slower-hardware")
		if len(got) != c.want {
			t.Errorf("%v: got %d link.slower-hardware, want %d", c.ports, len(got), c.want)
			continue
		}
		for _, f := range got {
			if f.Entities[0].Node != "leaf01" || f.Severity != Info || f.Impact.LostGbps != 200 {
				t.Errorf("%v: %s %q on %v lost %v", c.ports, f.Severity, f.Title, f.Entities, f.Impact.LostGbps)
			}
		}
	}
}

// TestSlowerHardwareNotWhenDegraded: a link below what its ports support
// is degraded (link.degraded-speed), not slower hardware.
func TestSlowerHardwareNotWhenDegraded(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf01").Ports[9]
	p.SpeedActive, p.Remote.SpeedActive = mad.SpeedHDR, mad.SpeedHDR
	fs := run(t, &Snapshot{Fabric: f})
	if s := byCheck(fs, "link.degraded-speed"); len(s) != 1 || !strings.Contains(s[0].Title, "HDR instead of NDR") {
		t.Errorf("degraded-speed: %+v", s)
	}
	if s := byCheck(fs, "link.slower-hardware"); len(s) > 0 {
		t.Errorf("a degraded link reported as slower hardware: %q", s[0].Title)
	}
}
