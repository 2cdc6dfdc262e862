package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGatePartialSnapshotFarEndDead: an HCA whose agent died after a
// complete sweep, then a partial sweep past --max-age replaces the
// snapshot (saved marked partial). Trial B8: the gate said "link at
// leaf01 port 9: the port is up now but had no link in the snapshot ...:
// run 'ibdoctor sweep'" and stderr "a route leaves by a port the sweep
// saw without a cable", though that sweep recorded the port's far end as
// unanswered: a new sweep cannot help a dead HCA. The index a gate reads
// carries no Unreachable list; the far ends the sweep got no answer from
// now travel with the snapshot.
func TestGatePartialSnapshotFarEndDead(t *testing.T) {
	faults := writeFile(t, "faults.txt", "dead \"gpu002 mlx5_0\"\n")
	state := filepath.Join(t.TempDir(), "st")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != 0 && code != 1 {
		t.Fatalf("clean sweep: exit %d\n%s", code, stderr)
	}
	code, _, stderr := run("sweep", "--sim", "--faults", faults, "--state-dir", state, "--max-age", "1ns",
		"--out", filepath.Join(state, "r2.json"), "--timeout", deadTimeout, "--retries", "0")
	if code != ExitPartial || !strings.Contains(stderr, "saved marked partial") {
		t.Fatalf("partial sweep: exit %d, want %d and the snapshot replaced\n%s", code, ExitPartial, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu[001-002]",
		"--fail-on", "error", "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if code != ExitUndecided {
		t.Errorf("exit %d, want %d\n%s\n%s", code, ExitUndecided, out, stderr)
	}
	if strings.Contains(out, "had no link in the snapshot") || strings.Contains(stderr, "without a cable") {
		t.Errorf("blames a missing cable for a far end that did not answer the sweep:\n%s\n%s", out, stderr)
	}
	if !strings.Contains(out, "link at leaf01 port 9: the port is up now but its far end (path 0,1,9 (behind leaf01 port 9)) did not answer the snapshot's sweep") {
		t.Errorf("leaf01 port 9's far end not said to be unanswered in the sweep:\n%s", out)
	}
	const want = "undecided (exit 2): gpu002 mlx5_0 (behind leaf01/9) did not answer the snapshot's sweep: a new sweep does not help"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
