package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusGateRailSwapFixedSinceSweep (trial B17, the DGX variant): the
// sweep of the DGX dump reports "error topology.rail-miswired
// b08-p1-dgx-08-c01: HCA-5 and HCA-6 are cabled to each other's rail";
// on-call swaps the two cables back and the SM re-routes. The gate found
// both host cables leading elsewhere than the snapshot has them, and
// still exited 1 on the snapshot's rail-miswired, judged on the cable map
// it had just found stale. The verdict is now could-not-decide, naming
// the cable, and the gate exits 2: run 'ibdoctor sweep'.
func TestCorpusGateRailSwapFixedSinceSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	sim := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	state := filepath.Join(t.TempDir(), "state")
	rep := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run("sweep", "--sim="+sim, "--state-dir", state, "--out", rep); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	if r := readFile(t, rep); !strings.Contains(r, "b08-p1-dgx-08-c01: HCA-5 and HCA-6 are cabled to each other's rail") {
		t.Fatalf("sweep: no rail-miswired on b08-p1-dgx-08-c01 to start from")
	}
	fix := writeFile(t, "railfix.faults", "miswire 0x2c5eab0300c26540/1 \"b08-p1-dgx-08-c01 HCA-6\"/1\nsweep\n")
	if code, out, _ := run("check", "--sim="+sim, "--faults", fix, "--json"); strings.Contains(out, "b08-p1-dgx-08-c01: HCA-") {
		t.Fatalf("check after the fix (exit %d) still names the host's rails", code)
	}
	code, out, stderr := run("gate", "--sim="+sim, "--faults", fix, "--state-dir", state, "--nodes", "b08-p1-dgx-08-c01", "--json")
	d := chkParse(t, out)
	for _, f := range d.Findings {
		if f.Check == "topology.rail-miswired" || f.Check == "routing.unreachable" {
			t.Errorf("gate: %s %s %q: judged on the snapshot's cables, which the gate found moved", f.Severity, f.Check, f.Title)
		}
	}
	undecided := false
	for _, u := range d.Undecided {
		if u.Check == "topology.rail-miswired" && strings.Contains(u.Reason, "the cabling changed since the sweep") {
			undecided = true
		}
	}
	if !undecided {
		t.Errorf("gate: topology.rail-miswired not undecided for the cable moved: %+v", d.Undecided)
	}
	if code != ExitUndecided {
		t.Errorf("gate: exit %d, want %d (undecided)\n%s", code, ExitUndecided, stderr)
	}
}
