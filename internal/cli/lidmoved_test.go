package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateMovedLIDsUndecided: the SM reassigned two HCAs' LIDs since the
// sweep (review V1's fault: gpu003 mlx5_1 and gpu017 mlx5_1 swapped,
// then an SM sweep). The gate of gpu003 cannot judge its routes, which it
// follows to the snapshot's LIDs: exit 2, the moved LID named, and no
// routing verdict from the old LIDs. Before, it exited 1 with critical
// routing.unreachable "delivered to the wrong host" (and spine01's
// ecmp-imbalance, which the route to LID 30, now gpu017's, crossed), and
// stderr called the HCA "a board changed since the sweep".
func TestGateMovedLIDsUndecided(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	swap := writeFile(t, "swap.faults", "lid \"gpu003 mlx5_1\" lid=142\nlid \"gpu017 mlx5_1\" lid=30\nsweep\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", swap, "--state-dir", state, "--nodes", "gpu003", "--verbose")
	if code != ExitUndecided {
		t.Errorf("gate: exit %d, want %d (undecided)", code, ExitUndecided)
	}
	for _, bad := range []string{"critical  routing.", "error  routing.", "a board changed", "duplicate-guid"} {
		if strings.Contains(out+stderr, bad) {
			t.Errorf("gate says %q:\n%s\n%s", bad, out, stderr)
		}
	}
	for _, want := range []string{
		"routing.unreachable        the LIDs changed since the sweep (LID 30 now answers as gpu017 mlx5_1)",
		"NodeGUID at gpu003 mlx5_1: LID 30 now answers as gpu017 mlx5_1: the LIDs changed since the sweep; run 'ibdoctor sweep'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("gate output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "undecided (exit 2): the LIDs changed since the sweep (the snapshot's LID of gpu003 mlx5_1 answers as another node)") {
		t.Errorf("stderr does not say the LIDs changed:\n%s", stderr)
	}
}

// TestGateLIDMovedToFreeLIDUndecided: the SM gave gpu003 mlx5_1 a LID
// nobody had (500, was 30) and re-routed. The gate exited 1 with critical
// routing.unreachable "cannot reach gpu003 mlx5_1 (LID 30): no route";
// it is undecided, and stderr says the LIDs changed.
func TestGateLIDMovedToFreeLIDUndecided(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	moved := writeFile(t, "moved.faults", "lid \"gpu003 mlx5_1\" lid=500\nsweep\n")
	code, out, stderr := run("gate", "--sim="+topo, "--faults", moved, "--state-dir", state, "--nodes", "gpu003,gpu004")
	if code != ExitUndecided {
		t.Errorf("gate: exit %d, want %d (undecided)\n%s\n%s", code, ExitUndecided, out, stderr)
	}
	if strings.Contains(out, "critical  routing.") {
		t.Errorf("gate judges routes to the snapshot's LID:\n%s", out)
	}
	if want := "the LIDs changed since the sweep (gpu003 mlx5_1 answers with another LID): routes and LIDs not judged; run 'ibdoctor sweep'"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
