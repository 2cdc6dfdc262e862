package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateOwnSweepFarEndDead: a gate with no snapshot sweeps the fabric
// itself and meets a dead spine01. Trial T4: it listed each leaf port to
// spine01 twice, once as "link at leaf01 port 33: the port is up now but
// had no link in the snapshot ...: run 'ibdoctor sweep'" (a cabling or
// staleness story; a sweep does not help a dead agent) and once as the
// sweep's NodeInfo entry, and stderr led with "a route leaves by a port
// the sweep saw without a cable". Now the port's far end is what did not
// answer: one entry per port, said to be on the job's routes.
func TestGateOwnSweepFarEndDead(t *testing.T) {
	faults := writeFile(t, "faults.txt", "dead spine01\n")
	state := filepath.Join(t.TempDir(), "st")
	code, out, stderr := run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu001,gpu017",
		"--fail-on", "error", "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if code != ExitUndecided {
		t.Errorf("exit %d, want %d\n%s", code, ExitUndecided, stderr)
	}
	// stderr's first line says "no snapshot at ...: run 'ibdoctor
	// sweep' first": that is about the state dir, and stays.
	for _, bad := range []string{"no link in the snapshot", "run 'ibdoctor sweep'"} {
		if strings.Contains(out, bad) {
			t.Errorf("says %q for ports whose far end did not answer:\n%s", bad, out)
		}
	}
	if strings.Contains(stderr, "without a cable") {
		t.Errorf("stderr blames a missing cable:\n%s", stderr)
	}
	if !strings.Contains(out, "behind ports 33-40 of leaf01, leaf05") || !strings.Contains(out, "on the job's routes: a route leaves toward it") {
		t.Errorf("the far end behind leaf01 port 33 not listed as on the job's routes:\n%s", out)
	}
}
