package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestGateSeesLIDRangeOverlap: since the sweep a job HCA's port took an
// LMC whose LID range covers another port's LID (the README prolog on the
// sample with `lid "gpu003 mlx5_0" lmc=1`: LIDs 29-30, and 30 is gpu003
// mlx5_1's). check calls it a critical addr.duplicate-lid; the gate re-read
// the LMC live but judged LID sharing on the index of the snapshot's LIDs,
// built before the re-read, and passed the job (exit 0).
func TestGateSeesLIDRangeOverlap(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	for _, c := range []struct{ faults, lid string }{
		{"lid \"gpu003 mlx5_0\" lmc=1\n", "LID 30 "},
		{"lid \"gpu003 mlx5_7\" lmc=2\n", "LID 37"},
	} {
		live, err := sim.SampleHealthy(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ff := filepath.Join(t.TempDir(), "t.faults")
		if err := os.WriteFile(ff, []byte(c.faults), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := live.ApplyFaultsFile(ff); err != nil {
			t.Fatal(err)
		}
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu002", "gpu003"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range doc.Findings {
			if f.Check == "addr.duplicate-lid" && f.Severity == checks.Critical && strings.HasPrefix(f.Title, c.lid) {
				found = true
			}
		}
		if !found || doc.Status != "unhealthy" {
			t.Errorf("%q: status %q, want unhealthy with a critical addr.duplicate-lid naming %q; findings %+v", c.faults, doc.Status, c.lid, doc.Findings)
		}
	}
}
