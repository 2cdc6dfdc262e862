package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateCablingChangedUndecided: new-user trial B17 and B4, as the
// trial ran them. Cables moved on the job's routes since the cron sweep
// (two host cables swapped at a leaf, a spine cable moved to another port
// of the same spine, both with the SM re-routing; uplinks swapped with no
// re-route, a real loop): the gate cannot judge the routes it follows
// over the snapshot's cables, and says which cable moved. Before, the
// first two were exit 1 with critical routing.unreachable "delivered to
// the wrong host" and routing.loop on a fabric check calls clean, and the
// third passed (exit 0 without counters) or blamed "counters not read".
func TestGateCablingChangedUndecided(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		name, faults, nodes, said string
	}{
		{"host cables swapped", "miswire leaf01/1 \"gpu001 mlx5_1\"/1\nsweep\n", "gpu[001,009]",
			"undecided (exit 2): the cabling changed since the sweep on the job's routes (leaf01/1 and leaf01/2): routes not judged; run 'ibdoctor sweep'"},
		{"spine cable moved", "miswire leaf01/33 spine01/9\nsweep\n", "gpu[001,005]",
			"undecided (exit 2): the cabling changed since the sweep on the job's routes (spine01/1, spine01/9 and leaf01/33): routes not judged"},
		{"uplinks swapped, no re-route", "miswire leaf01/33 leaf01/41\n", "gpu[001,009]",
			"undecided (exit 2): the cabling changed since the sweep on the job's routes (spine01/1 and leaf01/33)"},
	} {
		ff := writeFile(t, "c.faults", c.faults)
		code, out, stderr := run("gate", "--sim="+topo, "--faults", ff, "--state-dir", state, "--nodes", c.nodes, "--no-counters")
		if code != ExitUndecided {
			t.Errorf("%s: exit %d, want %d (undecided)\n%s%s", c.name, code, ExitUndecided, out, stderr)
		}
		for _, bad := range []string{"critical  routing.", "error  routing.", "delivered to the wrong host"} {
			if strings.Contains(out+stderr, bad) {
				t.Errorf("%s: gate says %q:\n%s\n%s", c.name, bad, out, stderr)
			}
		}
		if !strings.Contains(stderr, c.said) {
			t.Errorf("%s: stderr lacks %q:\n%s", c.name, c.said, stderr)
		}
	}
}
