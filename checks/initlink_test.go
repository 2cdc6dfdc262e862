package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestInitLinkLosesRoutes: the uplink leaf03/33 <-> spine01/17 trained
// but was never activated (both ends Init: a flap with no SM sweeping,
// trial A2 on ibsim). A port in Init forwards no data, so every route the
// tables send over it is lost as over a Down port: routing.unreachable,
// critical, naming the Init link; link.down on the link carries those
// routes' path share and points at them. Before, the routes counted as
// delivered: link.down alone, unscored ("-"), and no routing.unreachable.
func TestInitLinkLosesRoutes(t *testing.T) {
	fs := sampleWith(t, "init leaf03/33\n", false)
	un := byCheck(fs, "routing.unreachable")
	if len(un) == 0 {
		t.Fatalf("no routing.unreachable over the Init link:%s", titles(fs))
	}
	for _, f := range un {
		if f.Severity != checks.Critical || !strings.Contains(f.Title, "egress link is Init") {
			t.Errorf("routing.unreachable %s %q, want critical naming the Init link", f.Severity, f.Title)
		}
		if !strings.Contains(f.Action, "activates it") {
			t.Errorf("action %q, want the SM's activation, not a cable", f.Action)
		}
	}
	down := byCheck(fs, "link.down")
	if len(down) != 1 || !strings.Contains(down[0].Title, "Init") {
		t.Fatalf("link.down %s, want one for the Init link", titles(down))
	}
	if down[0].Impact.PathShare <= 0 {
		t.Errorf("link.down's path share %v, want the lost routes'", down[0].Impact.PathShare)
	}
	found := false
	for _, e := range down[0].Evidence {
		found = found || (e.Name == "consequence" && strings.Contains(e.Text, "routing.unreachable"))
	}
	if !found {
		t.Errorf("link.down does not point at the lost routes: %+v", down[0].Evidence)
	}
}
