package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// summaryLineOf returns the summary line that starts with label.
func summaryLineOf(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, label+":") {
			return l
		}
	}
	return ""
}

// TestGateOwnSweepSaid (trial C6): a gate with no snapshot sweeps the
// fabric itself; its Scope line says its own sweep, not "snapshot".
func TestGateOwnSweepSaid(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--no-counters")
	sc := summaryLineOf(out, "Scope")
	if code == ExitUndecided || !strings.Contains(sc, "own sweep") || strings.Contains(sc, "snapshot") {
		t.Errorf("exit %d, Scope line %q: want its own sweep named\n%s\n%s", code, sc, out, stderr)
	}
}

// TestGateFabricLineIsThePart (trial C5): a gate answering from a
// snapshot loads the part of it the job needs; the Fabric line says its
// counts are of that part, not the fabric's. Before: "Fabric: 36 nodes (4
// switches, 32 CAs)" beside "Scope: 2 hosts (16 HCAs), 1 switch".
func TestGateFabricLineIsThePart(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--no-counters")
	fab := summaryLineOf(out, "Fabric")
	if code == ExitUndecided || !strings.Contains(fab, "loaded for the job") {
		t.Errorf("exit %d, Fabric line %q: want the part loaded for the job said\n%s\n%s", code, fab, out, stderr)
	}
	if sc := summaryLineOf(out, "Scope"); strings.Contains(sc, "own sweep") || !strings.Contains(sc, "snapshot") {
		t.Errorf("Scope line %q: want the snapshot named", sc)
	}
}
