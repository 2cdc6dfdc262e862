package cli

import (
	"strings"
	"testing"
)

// TestTraceBeyondTop: leaf03's LID moved to 3000, past every switch's
// LinearFDBTop (trial A16: ibsim 'Baselid "leaf3"[0] 200'). The first
// switch has no entry for it at all: trace says so with the top, not
// "its forwarding table entry is 255", and exits 1.
func TestTraceBeyondTop(t *testing.T) {
	topo, _ := simTopology(t)
	faults := writeFile(t, "faults", "lid leaf03 lid=3000\n")
	code, out, stderr := run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", "3000")
	if code != ExitFindings || !strings.Contains(out, "No route to LID 3000 at leaf01") || !strings.Contains(out, "beyond its LinearFDBTop ") || strings.Contains(out, "entry is 255") {
		t.Errorf("exit %d:\n%s%s", code, out, stderr)
	}
}
