package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateHCABackSinceSweep: new-user trial B1 as the trial ran it. The
// first sweep of a site sees gpu001 mlx5_0's cable out; it is reseated
// before the job. The gate re-reads leaf01/1 (a port of the job's leaf
// without a link in the snapshot), finds it up, and cannot decide
// (exit 2) where it failed the job (exit 1) on the sweep's error
// topology.missing-hca "leaf01/1 is Polling" with "Reached: everything".
func TestGateHCABackSinceSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	poll := writeFile(t, "poll.faults", "polling \"gpu001 mlx5_0\"/1\n")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", poll, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters")
	if code != ExitUndecided {
		t.Errorf("exit %d, want %d (undecided)\n%s%s", code, ExitUndecided, out, stderr)
	}
	if strings.Contains(out, "error     topology.missing-hca") || strings.Contains(out, "Reached:   everything") {
		t.Errorf("the sweep's verdict on leaf01/1 shown as current:\n%s", out)
	}
	if want := "undecided (exit 2): a port the sweep saw without a link is up now (leaf01/1)"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
