package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateUnhealthyOneLine (trial F4): a gate that exits 1 says why on
// stderr in one line, as one that exits 2 does: slurmd logs a prolog's
// stderr, and `scontrol update ... reason=` wants a short reason naming
// the host. Before, exit 1 printed nothing on stderr (the report went to
// stdout, a multi-line table or --json).
func TestGateUnhealthyOneLine(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--nodes", "gpu012"},
		{"--nodes", "gpu[011-012]", "--json"},
	} {
		code, _, stderr := run(append([]string{"gate", "--sim", "--state-dir", state}, args...)...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != ExitFindings || len(lines) != 1 {
			t.Errorf("%v: exit %d, stderr %d lines, want 1 and one line:\n%s", args, code, len(lines), stderr)
			continue
		}
		const want = "ibdoctor: unhealthy (exit 1): 1 error finding: gpu012 has 7 HCAs where its peers have 8: mlx5_3 missing"
		if !strings.HasPrefix(lines[0], want) || !strings.HasSuffix(lines[0], "(topology.missing-hca); hosts of the job named: gpu012") {
			t.Errorf("%v: stderr %q, want it to start %q and end naming topology.missing-hca and gpu012", args, lines[0], want)
		}
	}
	// gpu009 mlx5_4's cable went down before the last sweep (the
	// baseline, the first sweep's, has it): link.down names an HCA the
	// snapshot lacks, of a host of the job all the same.
	down := writeFile(t, "down.txt", "down leaf03/5\n")
	if code, _, stderr := run("sweep", "--sim", "--faults", down, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, _, stderr := run("gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu009,gpu012")
	if code != ExitFindings || !strings.HasSuffix(stderr, "; hosts of the job named: gpu009, gpu012\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("gpu009 and gpu012: exit %d, stderr %q, want 1 naming both hosts in one line", code, stderr)
	}
	// Healthy: nothing on stderr.
	if code, _, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu001"); code != ExitHealthy || stderr != "" {
		t.Errorf("gpu001: exit %d, stderr %q, want 0 and nothing", code, stderr)
	}
}
