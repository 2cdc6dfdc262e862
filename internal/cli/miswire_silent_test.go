package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMiswiredPeerSilentNotNoLink: the two host cables of gpu005 swapped
// at leaf02 since the sweep, and the adapter now at leaf02/1 silent. The
// port is up and its far end did not answer NodeInfo: topology.miswired
// must not say "leaf02/1 has no link" (could not look stated as a fact,
// review V4; its Action then moved a cable onto a port holding a live
// one), but that it is up and what is behind it did not answer. Nor is
// gpu005 mlx5_1, whose expected port now holds mlx5_0's cable, "missing"
// (topology.changed) while leaf02 has an up port whose far end did not
// answer: it may be there (could not look).
func TestMiswiredPeerSilentNotNoLink(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state); code > ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	faults := writeFile(t, "t.faults", "miswire leaf02/1 \"gpu005 mlx5_1/1\"\ndead \"gpu005 mlx5_1\"\n")
	_, out, stderr := run("sweep", "--sim", "--faults", faults, "--state-dir", state, "--no-save", "--timeout", deadTimeout, "--retries", "0", "--out", "-")
	d := chkParse(t, out)
	var got []string
	for _, f := range d.Findings {
		if f.Check == "topology.changed" && strings.Contains(f.Title, "gpu005") {
			// It may be the silent adapter at leaf02/1: could not look.
			t.Errorf("finding %s %q for an adapter that may be behind the port whose far end did not answer", f.Severity, f.Title)
		}
		if f.Check == "topology.miswired" && strings.Contains(f.Title, "leaf02/1") {
			got = append(got, f.Title)
		}
	}
	want := "Expected gpu005 mlx5_0/1 <-> leaf02/1 moved: gpu005 mlx5_0/1 goes to leaf02/2, leaf02/1 is up but what is behind it did not answer"
	if len(got) != 1 || got[0] != want {
		t.Errorf("miswired findings naming leaf02/1:\n%s\nwant %q\n%s", strings.Join(got, "\n"), want, stderr)
	}
}
