package cli

import (
	"strings"
	"testing"
)

// TestTraceInitLink: the destination's leaf port (or its last hop) in
// Init or Armed: the link is up but never activated and carries no data,
// so the route is a dead end naming the state, exit 1, as ibtracert
// fails ("can't reach"). Before (trial A2), trace said "delivered after 3
// switch hops" and exited 0.
func TestTraceInitLink(t *testing.T) {
	topo, _ := simTopology(t)
	for _, fault := range []string{"init leaf03/4\n", "armed leaf03/4\n"} {
		faults := writeFile(t, "faults", fault)
		code, out, stderr := run("trace", "--sim="+topo, "--faults", faults, "--no-color", "gpu001", "gpu012")
		st := "Init"
		if strings.HasPrefix(fault, "armed") {
			st = "Armed"
		}
		if code != ExitFindings || !strings.Contains(out, "Dead end at leaf03") || !strings.Contains(out, "out of port 4, which is "+st) {
			t.Errorf("%s: exit %d:\n%s%s", strings.TrimSpace(fault), code, out, stderr)
		}
	}
}
