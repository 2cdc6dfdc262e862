package cli

import (
	"path/filepath"
	"testing"
)

// TestGateNoSM: after a clean sweep the subnet manager is gone (every
// port in Init, no LIDs). check says sm.no-master; the gate, judging the
// job's ports as they are now, must give the same critical root cause
// (exit 1), not one link.down per link or "undecided".
func TestGateNoSM(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	nosm := writeFile(t, "nosm.faults", "nosm\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", nosm, "--state-dir", state, "--nodes", "gpu[001-002],gpu017", "--json", "--timeout", deadTimeout, "--retries", "0")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFindings, out, stderr)
	}
	d := chkParse(t, out)
	if len(d.Findings) == 0 || d.Findings[0].Check != "sm.no-master" || d.Findings[0].Severity.String() != "critical" {
		t.Fatalf("findings %+v, want sm.no-master (critical) first", d.Findings)
	}
	for _, f := range d.Findings {
		if f.Check == "link.down" {
			t.Errorf("link.down %q not folded into sm.no-master", f.Title)
		}
	}
}
