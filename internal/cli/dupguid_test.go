package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuplicateGUIDAgainstBaseline: after a clean sweep, gpu017 mlx5_1
// reports gpu003 mlx5_1's NodeGUID (its port GUID stays its own). The
// sweep's critical topology.duplicate-guid is right; gpu017 mlx5_1 is
// still there, on its planned port leaf05/2, and gpu003 mlx5_1 on
// leaf01/18: known by their place, neither is "missing" nor miswired
// (trial T4: 'error topology.changed CA gpu017 mlx5_1 ... is missing'
// and 'error topology.miswired Cable at leaf05/2 goes to gpu017
// mlx5_1/1, expected gpu017 mlx5_1 ...'). The gate of a job on both
// hosts does not tell a cable to move either.
func TestDuplicateGUIDAgainstBaseline(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	dup := writeFile(t, "dup.faults", "dupguid \"gpu003 mlx5_1\" \"gpu017 mlx5_1\"\n")
	out2 := filepath.Join(state, "r2.json")
	code, _, stderr := run("sweep", "--sim="+topo, "--faults", dup, "--state-dir", state, "--out", out2)
	if code != ExitHealthy { // a sweep without --fail-on exits 0 whatever it found
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out2)
	if err != nil {
		t.Fatal(err)
	}
	d := chkParse(t, string(b))
	var got []string
	for _, f := range d.Findings {
		if f.Severity.String() != "info" {
			got = append(got, f.Severity.String()+" "+f.Check+" "+f.Title)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "critical topology.duplicate-guid 2 nodes claim NodeGUID") {
		t.Errorf("sweep findings:\n%s\nwant only the critical topology.duplicate-guid", strings.Join(got, "\n"))
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", dup, "--state-dir", state, "--nodes", "gpu003,gpu017", "--json")
	d = chkParse(t, out)
	for _, f := range d.Findings {
		if f.Check == "topology.miswired" || f.Check == "topology.changed" {
			t.Errorf("gate (exit %d): %s %s %s", code, f.Severity, f.Check, f.Title)
		}
	}
	_ = stderr
}

// TestGateClonedGUIDAfterCleanSweep: trial T4's last step. After a clean
// sweep, gpu017 mlx5_1 reports gpu003 mlx5_1's NodeGUID; the gate of a
// job on both hosts re-reads their HCAs' NodeInfo and fails (exit 1) on
// the critical topology.duplicate-guid, as the sweep a minute later
// does. Before, it exited 0 with no findings (it re-read PortInfo only).
func TestGateClonedGUIDAfterCleanSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	dup := writeFile(t, "dup.faults", "dupguid \"gpu003 mlx5_1\" \"gpu017 mlx5_1\"\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", dup, "--state-dir", state, "--nodes", "gpu003,gpu017", "--json")
	d := chkParse(t, out)
	var got []string
	for _, f := range d.Findings {
		got = append(got, f.Severity.String()+" "+f.Check+" "+f.Title)
	}
	if code != ExitFindings || len(got) != 1 || !strings.HasPrefix(got[0], "critical topology.duplicate-guid 2 nodes claim NodeGUID") {
		t.Errorf("gate: exit %d, findings:\n%s\nwant exit 1 on the critical topology.duplicate-guid alone\n%s", code, strings.Join(got, "\n"), stderr)
	}
}

// TestGateClonedGUIDNamesSnapshotNode: a gate of gpu017 alone, whose
// job's part of the snapshot does not hold gpu003, names the first
// claimant of the cloned GUID as the snapshot has it (description and
// directed route). Before, it was the bare GUID "at path 0", the path of
// the gate's own port (review V3).
func TestGateClonedGUIDNamesSnapshotNode(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	dup := writeFile(t, "dup.faults", "dupguid \"gpu003 mlx5_1\" \"gpu017 mlx5_1\"\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", dup, "--state-dir", state, "--nodes", "gpu017")
	if code != ExitFindings || !strings.Contains(out, `seen as "gpu003 mlx5_1" at path 0,1,18; "gpu017 mlx5_1" at path 0,1,33,33,2`) || strings.Contains(out, "at path 0;") {
		t.Errorf("gate: exit %d, want the claimants named with their snapshot paths:\n%s\n%s", code, out, stderr)
	}
}
