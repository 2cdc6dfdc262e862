package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestClassPortInfoSaysWhy (trial T7 follow-up): a PMA that did not answer
// its ClassPortInfo is one line, and when what was read shows why — the
// LID route to it from the reading port leaves by a port that is down
// (`down leaf01/49`: the SM has not routed around it) — the line says so.
// Where nothing read shows a cause (the agent drops the attribute), the
// line says only that it did not answer, as before.
func TestClassPortInfoSaysWhy(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	because := regexp.MustCompile(`ClassPortInfo at spine03 \(LID 3\): .*\(counters of ports [0-9,-]+ not read\); the LID route to it from this port \(gpu001 mlx5_0/1\) leaves leaf01 by port 49, which is down\n`)
	down := writeFile(t, "down.faults", "down leaf01/49\n")
	_, out, stderr := runAt(400, "check", "--sim", "--faults", down, "--timeout", deadTimeout, "--retries", "0")
	if !because.MatchString(out) {
		t.Errorf("check: the ClassPortInfo line does not say the route leaves by the down port:\n%s\n%s", out, stderr)
	}
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	_, out, stderr = runAt(400, "gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu003,gpu017", "--timeout", deadTimeout, "--retries", "0")
	if !because.MatchString(out) {
		t.Errorf("gate: the ClassPortInfo line does not say the route leaves by the down port:\n%s\n%s", out, stderr)
	}
	// At 80 columns the longer lines wrap within the width.
	_, out, _ = runAt(80, "gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu003,gpu017", "--timeout", deadTimeout, "--retries", "0")
	if i := strings.Index(out, "Could not read"); i < 0 || len(wider(out[i:], 80)) > 0 || !strings.Contains(out[i:], "which is down") {
		t.Errorf("gate at 80 columns: Could not read missing, without its cause, or wider than 80:\n%s", out)
	}
	drop := writeFile(t, "drop.faults", "drop spine03 attr=ClassPortInfo\n")
	_, out, stderr = runAt(400, "check", "--sim", "--faults", drop, "--timeout", deadTimeout, "--retries", "0")
	line := regexp.MustCompile(`ClassPortInfo at spine03 \(LID 3\): transport: no response .*\(counters of ports [0-9,-]+ not read\)\n`)
	if !line.MatchString(out) || strings.Contains(out, "LID route") {
		t.Errorf("check: a dropped ClassPortInfo is said with a cause nothing read shows:\n%s\n%s", out, stderr)
	}
}
