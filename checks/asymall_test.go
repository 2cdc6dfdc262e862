package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// TestAsymmetricEveryHostPair: a detour on the LID of a host that is not
// the first of its leaf (gpu010, leaf02's second) is seen by check as by
// a gate covering that host. check followed one host per leaf (gpu009 on
// leaf02) and said nothing, while a gate on gpu001,gpu010 warned: check
// and gate disagreed, and check's silence read as "no asymmetric routes".
func TestAsymmetricEveryHostPair(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "gpu010").Ports[1]
	// leaf01 -> spine01 -> leaf03 -> spine02 -> leaf02 -> gpu010: five
	// switches, three back. Leaf ports 9..12 go to spines 1..4; spine
	// port l to leaf l.
	node(t, f, "leaf01").Switch.LFT.Set(dst.LID, 9)
	node(t, f, "spine01").Switch.LFT.Set(dst.LID, 3)
	node(t, f, "leaf03").Switch.LFT.Set(dst.LID, 10)
	node(t, f, "spine02").Switch.LFT.Set(dst.LID, 2)
	checked := byCheck(run(t, &Snapshot{Fabric: f}), "routing.asymmetric")
	if len(checked) != 1 {
		t.Fatalf("check: %d routing.asymmetric findings, want 1 (gpu001..gpu008 -> gpu010 take a detour): %+v", len(checked), checked)
	}
	c := checked[0]
	// 32 hosts, one port each: 496 pairs; leaf01's eight hosts and any
	// leaf whose spine for gpu010 is spine01 take the detour.
	if !strings.Contains(c.Title, " of 496 HCA port pairs take more hops one way") || c.Severity != Warning {
		t.Errorf("check: %s %q, want a warning counting the detoured pairs of all 496", c.Severity, c.Title)
	}
	if ev := c.Evidence[0].Text; !strings.Contains(ev, "gpu010") || !strings.Contains(ev, "crosses 5 switches, back 3") {
		t.Errorf("check: evidence %q does not name a detoured pair with gpu010 (5 switches, back 3)", ev)
	}
	gated := byCheck(run(t, &Snapshot{Fabric: f, Scope: ScopeFor(f, []*fabric.Node{node(t, f, "gpu001"), node(t, f, "gpu010")})}), "routing.asymmetric")
	if len(gated) != 1 || !strings.Contains(gated[0].Title, "1 of 1 HCA port pair") {
		t.Errorf("gate on gpu001,gpu010: %d findings %q, want the pair's detour", len(gated), titlesOf(gated))
	}
}

func titlesOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Title)
	}
	return out
}
