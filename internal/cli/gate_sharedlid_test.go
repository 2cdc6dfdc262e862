package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateSharedLIDReadByDirectedRoute is reviewer V2: with gpu017's LID
// also gpu001's (a duplicate LID), the gate read gpu017's PortInfo by that
// LID, got gpu001's answer (its link degraded to 1X) and failed the job
// with "Link gpu017 mlx5_0/1 <-> leaf05/1 trained at 1X": a false error
// from another node's data. A node whose LID another port owns is read by
// a directed route from the gate's port.
func TestGateSharedLIDReadByDirectedRoute(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	dup := "lid \"gpu017 mlx5_0\"/1 lid=13\n"
	if code, _, stderr := run("sweep", "--sim", "--faults", writeFile(t, "dl1.faults", dup), "--state-dir", state, "--out", filepath.Join(t.TempDir(), "s.json")); code != ExitHealthy && code != ExitFindings && code != 3 {
		t.Fatalf("sweep: exit %d, %s", code, stderr)
	}
	faults := writeFile(t, "dl2.faults", dup+"degrade \"gpu001 mlx5_0\"/1 width=1x\n")
	code, stdout, stderr := run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu003,gpu017", "--json")
	if code != ExitHealthy && code != ExitFindings && code != ExitUndecided {
		t.Fatalf("gate: exit %d, %s", code, stderr)
	}
	d := chkParse(t, stdout)
	for _, f := range d.Findings {
		if strings.HasPrefix(f.Check, "link.") && strings.Contains(f.Title, "gpu017") {
			t.Errorf("gpu017's link judged from another port's PortInfo: %s %s", f.Severity, f.Title)
		}
	}
}
