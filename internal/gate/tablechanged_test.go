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

// TestGateTableChangedRejudged: an LFT edit made after the sweep (trial
// B2: the sample's headline fault, spine01 sending every leaf03
// destination out of port 17). The gate re-reads the table blocks on the
// job's routes; one that differs from the snapshot's makes the sweep's
// routing.ecmp-imbalance verdict on that switch stale, so the gate reads
// the switch's entries for every destination behind the job's leaves and
// judges its groups toward them again, as check does. Before, a job with
// too few destinations of its own behind leaf03 passed (healthy) while
// check said critical, and a job split 2+2 failed.
func TestGateTableChangedRejudged(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptVerdicts(t, clean)
	for _, hosts := range [][]string{{"gpu001", "gpu009"}, {"gpu001", "gpu002", "gpu003", "gpu004", "gpu009"}, {"gpu001", "gpu002", "gpu009", "gpu010"}} {
		live, err := sim.SampleHealthy(sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ff := filepath.Join(t.TempDir(), "t.faults")
		if err := os.WriteFile(ff, []byte("lft spine01 behind=leaf03 port=17\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := live.ApplyFaultsFile(ff); err != nil {
			t.Fatal(err)
		}
		doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: hosts, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range doc.Findings {
			if f.Check == "routing.ecmp-imbalance" && strings.Contains(f.Title, "spine01") && f.Severity == checks.Critical {
				found = true
			}
		}
		if !found || doc.Status != "unhealthy" {
			t.Errorf("%v: status %q, no critical routing.ecmp-imbalance on spine01; findings %+v, undecided %+v", hosts, doc.Status, doc.Findings, doc.Undecided)
		}
	}
}
