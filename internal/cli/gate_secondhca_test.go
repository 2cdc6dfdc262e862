package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateSecondHCADownAtFirstSweep is review R4's residual: gpu001's
// second one-port HCA (mlx5_1, rail 1) is down at the first sweep, so the
// state dir's own baseline lacks it, and the four hosts alike are too few
// for the per-host rule's four peers. The sweep said only routing.lost-lid
// ("rail1/1 ... a node was lost there", no host) and the gate of a job on
// gpu001 passed. The three other gpu* hosts all have mlx5_1 and rail 1's
// leaf port among its host ports has no link: the gate reports gpu001's
// missing HCA, exit 1; a job on the same leaves without gpu001 passes.
func TestGateSecondHCADownAtFirstSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	topo := filepath.Join(dir, "rails.net")
	if err := os.WriteFile(topo, []byte(twoRailsNet), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := writeFile(t, "rail.faults", "down \"gpu001 mlx5_1\"/1\n")
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "gpu001,gpu002", "--no-color")
	if code != ExitFindings || !strings.Contains(out, "gpu001 has 1 HCA where its peers have 2: mlx5_1 missing") {
		t.Errorf("exit %d, want 1 with gpu001's missing mlx5_1\n%s%s", code, out, stderr)
	}
	if code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "gpu002,gpu003", "--no-color"); code != ExitHealthy {
		t.Errorf("gpu002,gpu003: exit %d, want 0\n%s%s", code, out, stderr)
	}
}

// twoRailsNet: four hosts gpu001..gpu004, each with two one-port HCAs,
// mlx5_0 on leaf rail0 and mlx5_1 on leaf rail1, both leaves under one
// spine.
const twoRailsNet = `
Hca 1 "h1r0" # "gpu001 mlx5_0"
[1] "rail0"[1]

Hca 1 "h1r1" # "gpu001 mlx5_1"
[1] "rail1"[1]

Hca 1 "h2r0" # "gpu002 mlx5_0"
[1] "rail0"[2]

Hca 1 "h2r1" # "gpu002 mlx5_1"
[1] "rail1"[2]

Hca 1 "h3r0" # "gpu003 mlx5_0"
[1] "rail0"[3]

Hca 1 "h3r1" # "gpu003 mlx5_1"
[1] "rail1"[3]

Hca 1 "h4r0" # "gpu004 mlx5_0"
[1] "rail0"[4]

Hca 1 "h4r1" # "gpu004 mlx5_1"
[1] "rail1"[4]

Switch 8 "rail0" # "rail0"
[1] "h1r0"[1]
[2] "h2r0"[1]
[3] "h3r0"[1]
[4] "h4r0"[1]
[7] "spine"[1]
[8] "spine"[3]

Switch 8 "rail1" # "rail1"
[1] "h1r1"[1]
[2] "h2r1"[1]
[3] "h3r1"[1]
[4] "h4r1"[1]
[7] "spine"[2]
[8] "spine"[4]

Switch 8 "spine" # "spine"
[1] "rail0"[7]
[2] "rail1"[7]
[3] "rail0"[8]
[4] "rail1"[8]
`
