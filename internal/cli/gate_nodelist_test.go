package cli

import (
	"strings"
	"testing"
)

// TestGateNodelistErrorNamesVariable (new-user trial T13): without
// --nodes the hosts come from $SLURM_JOB_NODELIST; an error in it names
// the variable, not a --nodes flag the prolog does not give.
func TestGateNodelistErrorNamesVariable(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "gpu[002-001]")
	code, _, stderr := run("gate", "--sim", "--state-dir", t.TempDir())
	if code != ExitUndecided {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `SLURM_JOB_NODELIST (read because --nodes is absent): hostlist: "gpu[002-001]"`) || strings.Contains(stderr, "--nodes:") {
		t.Errorf("stderr does not name SLURM_JOB_NODELIST as the source:\n%s", stderr)
	}
	code, _, stderr = run("gate", "--sim", "--state-dir", t.TempDir(), "--nodes", "gpu[002-001]")
	if code != ExitUndecided || !strings.Contains(stderr, `--nodes: hostlist: "gpu[002-001]"`) {
		t.Errorf("--nodes given: exit %d, want 2 and the flag named\n%s", code, stderr)
	}
}
