package cli

import (
	"strings"
	"testing"
)

// TestCheckHCACabledToHCA (new-user trial T3): this host's port cabled
// straight to another HCA (the simulator's swap of leaf01/1 and leaf02/1
// leaves gpu001 mlx5_0 on gpu005 mlx5_0). The other HCA is one directed
// hop away, so its P_Key table is read (not "no directed route"), and the
// cable is a finding naming both ends, not "No findings".
func TestCheckHCACabledToHCA(t *testing.T) {
	faults := writeFile(t, "swap.faults", "miswire leaf01/1 leaf02/1\n")
	code, stdout, stderr := run("check", "--sim", "--faults", faults, "--timeout", deadTimeout)
	if strings.Contains(stdout, "no directed route to the port") {
		t.Errorf("the HCA one hop away is said to have no directed route:\n%s", stdout)
	}
	if !strings.Contains(stdout, "link.hca-to-hca") || !strings.Contains(stdout, "gpu001 mlx5_0/1") || !strings.Contains(stdout, "gpu005 mlx5_0/1") {
		t.Errorf("exit %d: no link.hca-to-hca finding naming gpu001 mlx5_0/1 and gpu005 mlx5_0/1:\n%s\n%s", code, stdout, stderr)
	}
}
