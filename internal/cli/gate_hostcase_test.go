package cli

import (
	"path/filepath"
	"testing"
)

// TestGateHostNamesIgnoreCase (trial F5): host names are case-insensitive
// (DNS): a Slurm NodeName GPU001 is the fabric's gpu001 (rdma-ndd writes
// the hostname as the host has it). From the snapshot's index and from
// the gate's own sweep, --nodes GPU001,GPU002 finds both hosts and prints
// their HCAs as the fabric names them. Before: exit 2, "hosts not in the
// snapshot ...: GPU001, GPU002".
func TestGateHostNamesIgnoreCase(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for name, dir := range map[string]string{"snapshot": state, "own sweep": filepath.Join(t.TempDir(), "empty")} {
		code, out, stderr := run("gate", "--sim", "--state-dir", dir, "--nodes", "GPU001,Gpu002", "--json")
		d := chkParse(t, out)
		if code != ExitHealthy || d.Scope == nil || d.Scope.JobHosts != 2 || len(d.Scope.Unmatched) != 0 || len(d.Scope.Hosts) != 16 {
			t.Errorf("%s: exit %d, scope %+v\n%s", name, code, d.Scope, stderr)
			continue
		}
		if d.Scope.Hosts[0] != "gpu001 mlx5_0" {
			t.Errorf("%s: hosts %v, want the fabric's names (gpu001 mlx5_0 first)", name, d.Scope.Hosts)
		}
	}
}
