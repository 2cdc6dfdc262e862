package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestDegradedByEnabledMaskSaysSo (trial A3): 'ibportstate 4 7 width 1'
// left leaf3/7 with only 1X enabled and the link at 1X; check said it
// "trained at 1X instead of 4X" (right, against its peers) but sent the
// operator to "reseat or replace the cable: a link that trains below its
// width has a bad lane or connector", and the evidence did not give the
// enabled masks ibdoctor had read. When one end's enabled mask is what
// limits the link, the evidence says so and the action is to re-enable
// it; the severity is unchanged. Same for the speed.
func TestDegradedByEnabledMaskSaysSo(t *testing.T) {
	f := fatTree(t)
	p := degrade(t, node(t, f, "leaf03"), 10, mad.Width1X)
	p.WidthEnabled = mad.Width1X
	q := node(t, f, "leaf02").Ports[12]
	q.SpeedActive, q.Remote.SpeedActive = mad.SpeedEDR, mad.SpeedEDR
	q.Remote.SpeedEnabled = mad.SpeedSDR | mad.SpeedEDR
	fs := run(t, &Snapshot{Fabric: f})
	for _, c := range []struct {
		check, link, enabled string
		sev                  Severity
	}{
		{"link.degraded-width", "leaf03/10", "leaf03/10 has only 1X enabled (LinkWidthEnabled; ", Critical},
		{"link.degraded-speed", "leaf02/12", "has only SDR,EDR enabled (LinkSpeedExtEnabled; ", Critical},
	} {
		w := byCheck(fs, c.check)
		if len(w) != 1 || !strings.Contains(w[0].Title, c.link) {
			t.Fatalf("%s: %+v", c.check, w)
		}
		x := w[0]
		var ev []string
		for _, e := range x.Evidence {
			ev = append(ev, e.Text)
		}
		if !strings.Contains(strings.Join(ev, "\n"), c.enabled) {
			t.Errorf("%s: evidence does not name the enabled mask %q:\n%s", c.check, c.enabled, strings.Join(ev, "\n"))
		}
		if strings.Contains(x.Action, "eplace the cable") || !strings.Contains(x.Action, "ibportstate") {
			t.Errorf("%s: action %q: want re-enabling the port, not a cable swap", c.check, x.Action)
		}
		if x.Severity != c.sev {
			t.Errorf("%s: severity %s, want %s (unchanged)", c.check, x.Severity, c.sev)
		}
	}
	// Both ends enable the wanted width: a cable fault, as before.
	g := fatTree(t)
	degrade(t, node(t, g, "leaf03"), 10, mad.Width1X)
	if w := byCheck(run(t, &Snapshot{Fabric: g}), "link.degraded-width"); len(w) != 1 || !strings.Contains(w[0].Action, "Reseat or replace the cable") {
		t.Errorf("a link below what both ends enable: %+v", w)
	}
}
