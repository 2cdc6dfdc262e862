package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateMKeyPolicyNotUndecidedByACableBack: the sweep's sm.mkey-policy
// verdict on a leaf with its own M_Key lease stays the gate's when a
// cable of that leaf, down at the sweep, is back: a cable has nothing to
// do with a port's M_Key policy. The gate took every sweep verdict
// naming such a leaf for a cable count and said "short of cables ...
// could not decide" under topology.oversubscribed instead.
func TestGateMKeyPolicyNotUndecidedByACableBack(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	lease := mkeyLeases(t, topo, func(ref string) int {
		if ref == "0xb83fd20400000005/0" { // leaf01: its own lease
			return 120
		}
		return 60
	})
	gateFaults := writeFile(t, "gate.faults", lease)
	sweepFaults := writeFile(t, "sweep.faults", lease+"down leaf01/20\n")
	state := filepath.Join(t.TempDir(), "state")
	rep := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", sweepFaults, "--state-dir", state, "--out", rep); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	sweep, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	swept := mkeyFindings(t, string(sweep))
	if len(swept) != 1 || !strings.Contains(swept[0], "leaf01") {
		t.Fatalf("sweep: sm.mkey-policy %q, want one naming leaf01", swept)
	}
	_, out, stderr := run("gate", "--sim="+topo, "--faults", gateFaults, "--state-dir", state, "--nodes", "gpu003", "--json")
	if got := mkeyFindings(t, out); len(got) != 1 || got[0] != swept[0] {
		t.Errorf("gate --nodes gpu003: sm.mkey-policy %q, want the sweep's %q\n%s", got, swept, stderr)
	}
	if strings.Contains(out, "found leaf01 short of cables") {
		t.Errorf("gate --nodes gpu003: the sweep's M_Key verdict on leaf01 taken for a cable count:\n%s", out)
	}
}
