package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateFabricWideECMP: the sample's spine01 and spine02 send every
// destination on leaf05 out of port 33 (check ranks it critical). A
// 2-host job's own destinations are too few for the group to be judged
// on them alone, yet its route gpu001 -> gpu017 crosses spine01/33: the
// gate must fail it with the sweep's fabric-wide finding and say the
// job's share. A job whose routes avoid both ports stays healthy.
func TestGateFabricWideECMP(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	for _, nodes := range []string{"gpu001,gpu017", "gpu025,gpu017"} {
		code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", nodes, "--json")
		if code != ExitFindings {
			t.Fatalf("%s: exit %d, want %d (routes cross spine01/33)\n%s\n%s", nodes, code, ExitFindings, out, stderr)
		}
		d := chkParse(t, out)
		var got bool
		for _, f := range d.Findings {
			if f.Check != "routing.ecmp-imbalance" {
				continue
			}
			got = true
			if f.Severity.String() != "critical" || !strings.Contains(f.Title, "32 destinations") {
				t.Errorf("%s: %s %q, want the fabric-wide critical (32 destinations)", nodes, f.Severity, f.Title)
			}
			var share bool
			for _, e := range f.Evidence {
				if e.Name == "job" && e.Value > 0 && strings.Contains(e.Text, "port 33") {
					share = true
				}
			}
			if !share {
				t.Errorf("%s: no evidence of the job's share of the port: %+v", nodes, f.Evidence)
			}
			if f.Impact.PathShare <= 0 {
				t.Errorf("%s: job path share %v", nodes, f.Impact.PathShare)
			}
		}
		if !got {
			t.Errorf("%s: no routing.ecmp-imbalance finding: %+v", nodes, d.Findings)
		}
	}
	// leaf01 <-> leaf03: neither spine01/33 nor spine02/33, nor leaf02/35
	// (its symbol errors climb since the sweep: an error for a job there).
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu001,gpu009", "--json")
	if code != ExitHealthy {
		t.Fatalf("gpu001,gpu009: exit %d, want 0\n%s\n%s", code, out, stderr)
	}
	for _, f := range chkParse(t, out).Findings {
		if f.Check == "routing.ecmp-imbalance" {
			t.Errorf("gpu001,gpu009: %s %q on routes that avoid the busiest ports", f.Severity, f.Title)
		}
	}
}
