package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateDualPortHCAWithLostRail (trial A15): every port of a CA is read
// now, so a job's dual-port HCA whose port 2 lost its cable is in the
// snapshot with the LID it kept, which leads nowhere. The gate re-read
// that port by that LID, got no answer and exited 2 ('PortInfo at dual
// HCA-1 port 2: no response'); it reads it through the adapter's port 1.
func TestGateDualPortHCAWithLostRail(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dir := t.TempDir()
	topo := filepath.Join(dir, "dual.net")
	net := `Hca 1 "a1" # "a1 HCA-1"
[1] "odda"[1]

Hca 2 "dual" # "dual HCA-1"
[1] "odda"[3]
[2] "oddb"[3]

Switch 8 "odda" # "odda"
[1] "a1"[1]
[3] "dual"[1]
[7] "core"[1]

Switch 8 "oddb" # "oddb"
[3] "dual"[2]
[8] "core"[2]

Switch 4 "core" # "core"
[1] "odda"[7]
[2] "oddb"[8]
`
	if err := os.WriteFile(topo, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	faults := writeFile(t, "rail.faults", "polling \"dual HCA-1\"/2\n")
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code == ExitUndecided {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "a1,dual", "--no-color")
	if code == ExitUndecided || strings.Contains(out+stderr, "Could not read") {
		t.Errorf("exit %d, want a verdict on what was read\n%s%s", code, out, stderr)
	}
}
