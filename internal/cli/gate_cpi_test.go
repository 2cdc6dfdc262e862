package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateClassPortInfoOnce (new-user trial T7): one PerfMgt
// ClassPortInfo to a switch that did not answer (its LID route from the
// gate's port leaves by a down link) is one thing not read, listed once
// with the ports whose counters it covers, not once per port.
func TestGateClassPortInfoOnce(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	down := writeFile(t, "down.faults", "down leaf01/49\n")
	_, stdout, stderr := run("gate", "--sim="+topo, "--faults", down, "--state-dir", state, "--nodes", "gpu003,gpu017", "--timeout", deadTimeout, "--retries", "0")
	if n := strings.Count(stdout, "ClassPortInfo at spine03"); n != 1 {
		t.Errorf("ClassPortInfo at spine03 listed %d times, want 1\n%s\n%s", n, stdout, stderr)
	}
	if !strings.Contains(stdout, "Reached:   1 thing could not be read") {
		t.Errorf("the one unanswered ClassPortInfo is not counted as 1\n%s", stdout)
	}
	if !strings.Contains(stdout, "ClassPortInfo at spine03 (LID 3): ") || !strings.Contains(stdout, "counters of ports 2-8,33-40 not read") {
		t.Errorf("the line does not name the node's agent and the ports it covers\n%s", stdout)
	}
}
