package cli

import (
	"strings"
	"testing"
)

// TestTraceToALIDNoPortHolds (trial E11): "trace --sim 13 9999" exited 1,
// "the route does not deliver", as if the fabric were at fault, for a LID
// no port holds and no switch routes: a typo in DST. That is bad input:
// exit 2, one line naming the LID. A LID the tables still route to a port
// that lost its link (the sample's LID 104, gpu012 mlx5_3 Polling: a
// routing.lost-lid) stays a route that does not deliver, exit 1.
func TestTraceToALIDNoPortHolds(t *testing.T) {
	for _, args := range [][]string{{"13", "9999"}, {"gpu001 mlx5_0", "9999"}} {
		code, out, stderr := run(append([]string{"trace", "--sim", "--no-color"}, args...)...)
		if code != ExitUndecided || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%q: exit %d, want 2, nothing on stdout and one line:\n%s%s", args, code, out, stderr)
		}
		for _, w := range []string{"DST", "LID 9999", "no port"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: lacks %q:\n%s", args, w, stderr)
			}
		}
	}
	code, out, stderr := run("trace", "--sim", "--no-color", "13", "104")
	if code != ExitFindings {
		t.Errorf("trace to the sample's lost LID 104: exit %d, want 1 (the route ends at a down port):\n%s%s", code, out, stderr)
	}
}

// TestTraceToALostLIDWithoutRoute (review R4): a LID whose port lost its
// link and whose route the subnet manager then took out of the tables
// (OpenSM does at its next heavy sweep; here a blackhole at leaf01 for the
// sample's LID 104, gpu012 mlx5_3 Polling) looks to trace as a typo does:
// no port discovery reached holds it, no route. Exit 2 stands (which of
// the two it is cannot be told), but the line must not say that no port
// of the fabric holds the LID: a port without a link is not seen, and
// the LID may be its.
func TestTraceToALostLIDWithoutRoute(t *testing.T) {
	bh := writeFile(t, "bh.txt", "blackhole leaf01 dlid=104\n")
	code, out, stderr := run("trace", "--sim", "--faults", bh, "--no-color", "13", "104")
	if code != ExitUndecided || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("exit %d, want 2, nothing on stdout and one line:\n%s%s", code, out, stderr)
	}
	if strings.Contains(stderr, "no port of the fabric holds it") || !strings.Contains(stderr, "without a link") {
		t.Errorf("stderr %q: want it to say no port found holds LID 104 and that a port without a link is not seen, not that no port of the fabric holds it", stderr)
	}
}
