package cli

import (
	"strings"
	"testing"
)

// TestCheckExpectTopologyOfAnotherFabric (trial C9, related): check of the
// DGX dump given the Quantum-2 capture as its plan said 3 critical "Switch
// ... from the expected topology is missing" and an info "622 nodes not in
// the expected topology", exit 1, where sweep refuses a state dir's
// baseline of another fabric. One judgement (snapshot's: the plan does not
// hold this port): exit 2, one line naming the flag and the fix, no report.
func TestCheckExpectTopologyOfAnotherFabric(t *testing.T) {
	dgx := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	q2 := corpusPath(t, "quantum2-ndr-ibdiagnet2.lst")
	code, out, stderr := run("check", "--sim="+dgx, "--expect-topology", q2)
	if code != ExitUndecided {
		t.Fatalf("exit %d, want %d:\n%s%s", code, ExitUndecided, out, stderr)
	}
	if out != "" {
		t.Errorf("a report was printed:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	for _, w := range []string{"--expect-topology " + q2, "another fabric", "give this fabric's expected topology"} {
		if !strings.Contains(last, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	// The same plan for its own fabric is used.
	if code, out, stderr := run("check", "--sim="+q2, "--expect-topology", q2); code == ExitUndecided || strings.Contains(stderr, "another fabric") {
		t.Errorf("own plan: exit %d: %s%s", code, out, stderr)
	}
}
