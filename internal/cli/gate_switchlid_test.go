package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateSwitchMovedToFreeLID (review R4): the SM gave leaf01, on the
// job's routes, a LID no port had (900) and re-routed since the sweep.
// The gate was undecided (right) but said "leaf01 did not answer": it
// answers, at LID 900 and by directed route. It now says the LIDs
// changed, as for an HCA moved to a free LID.
func TestGateSwitchMovedToFreeLID(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	moved := writeFile(t, "moved.faults", "lid leaf01 lid=900\nsweep\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", moved, "--state-dir", state, "--nodes", "gpu003,gpu010", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitUndecided {
		t.Errorf("gate: exit %d, want %d (undecided)\n%s\n%s", code, ExitUndecided, out, stderr)
	}
	if want := "the LIDs changed since the sweep (leaf01 answers with another LID)"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if strings.Contains(stderr, "leaf01 did not answer") {
		t.Errorf("stderr says leaf01 did not answer; it answers at its new LID:\n%s", stderr)
	}
}
