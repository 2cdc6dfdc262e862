package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateVerbose: the summary's "Not run" line ends "--verbose says
// why"; gate has the flag, and with it lists each check not run and why.
func TestGateVerbose(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu001,gpu009")
	if code != ExitHealthy || !strings.Contains(out, "--verbose says why") || strings.Contains(out, "Checks not run (") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = run("gate", "--sim", "--state-dir", state, "--nodes", "gpu001,gpu009", "-v")
	if code != ExitHealthy || !strings.Contains(out, "Checks not run (") || !strings.Contains(out, "counters.utilization") || !strings.Contains(out, "--interval") {
		t.Errorf("-v: exit %d\n%s\n%s", code, out, stderr)
	}
}
