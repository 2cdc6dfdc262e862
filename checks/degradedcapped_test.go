package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestDegradedLinkOnSlowerHardware: an uplink whose port supports at
// most HDR (its peers run NDR) that also retrained at fewer lanes has
// two faults. Trial T12: the degraded finding measured the loss against
// the port's own ceiling ("100 of 200 Gb/s", 2.0x) and the HDR limit was
// reported nowhere, so reseating the cable looked like the whole fix.
// The loss is against what the peers run, and the evidence names the
// limit; at 2X and at 1X. The other order is another fabric: the limit
// retrains the link (a port swapped for an HDR one), which then runs its
// best, 4X HDR, and is the slower-hardware finding alone.
func TestDegradedLinkOnSlowerHardware(t *testing.T) {
	for _, c := range []struct {
		name, faults, width string
		active              string
		slowdown            float64
	}{
		{"limit then 2X", "limit leaf01/33 speed=HDR\ndegrade leaf01/33 width=2x\n", "2X", "100 of 400 Gb/s (75% lost)", 4},
		{"limit and 1X", "limit leaf01/33 speed=HDR\ndegrade leaf01/33 width=1x\n", "1X", "50 of 400 Gb/s (88% lost)", 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := sampleWith(t, c.faults, false)
			var got []checks.Finding
			for _, f := range fs {
				if strings.Contains(f.Title, "leaf01/33") {
					got = append(got, f)
				}
			}
			var deg *checks.Finding
			for i, f := range got {
				if f.Check == "link.degraded-width" {
					deg = &got[i]
				}
				if f.Check == "link.slower-hardware" {
					t.Errorf("the limit is a second finding with its own impact: %q %s", f.Title, f.Impact.Summary)
				}
			}
			if deg == nil {
				t.Fatalf("no link.degraded-width on leaf01/33:%s", titles(got))
			}
			if want := "trained at " + c.width + " instead of 4X"; !strings.Contains(deg.Title, want) {
				t.Errorf("title %q, want %q", deg.Title, want)
			}
			if !strings.Contains(deg.Impact.Summary, c.active) || deg.Impact.Slowdown != c.slowdown {
				t.Errorf("impact %q (%.1fx), want %q at %.1fx", deg.Impact.Summary, deg.Impact.Slowdown, c.active, c.slowdown)
			}
			var ev []string
			for _, e := range deg.Evidence {
				ev = append(ev, e.Text)
			}
			all := strings.Join(ev, "\n")
			if !strings.Contains(all, "leaf01/33 supports at most 4X HDR") || !strings.Contains(all, "4X NDR") {
				t.Errorf("evidence does not name the HDR limit:\n%s", all)
			}
			if !strings.Contains(deg.Action, "4X NDR") {
				t.Errorf("next step says nothing of the limit: %q", deg.Action)
			}
			t.Logf("%s\n%s\n%s\n%s", deg.Title, all, deg.Impact.Summary, deg.Action)
		})
	}
	t.Run("2X then limit", func(t *testing.T) {
		var got []checks.Finding
		for _, f := range sampleWith(t, "degrade leaf01/33 width=2x\nlimit leaf01/33 speed=HDR\n", false) {
			if strings.Contains(f.Title, "leaf01/33") && strings.HasPrefix(f.Check, "link.") {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].Check != "link.slower-hardware" || !strings.Contains(got[0].Impact.Summary, "200 of 400 Gb/s") {
			t.Errorf("want the slower-hardware finding alone at 200 of 400 Gb/s:%s", titles(got))
		}
	})
}
