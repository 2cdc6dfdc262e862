package gate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestGateSeesVLMismatch (trial B16): leaf03/1 runs VL0-1 against its
// HCA's VL0-7. check and sweep warn config.vl-mismatch; the gate re-read
// the port's PortInfo but kept the snapshot's VLCap and OperationalVLs
// (the refresh did not copy them), so a change since the sweep was never
// seen while the check was listed as run.
func TestGateSeesVLMismatch(t *testing.T) {
	clean, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap := sweptSim(t, clean)
	live, err := sim.SampleHealthy(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ff := filepath.Join(t.TempDir(), "t.faults")
	if err := os.WriteFile(ff, []byte("vls leaf03/1 vls=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := live.ApplyFaultsFile(ff); err != nil {
		t.Fatal(err)
	}
	doc, err := Run(context.Background(), snapAgain(t, snap), engineAt(t, live, "gpu020 mlx5_0"), Options{Hosts: []string{"gpu001", "gpu009"}, FailOn: checks.Error, ByLID: true, Source: "sim:test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Findings {
		if f.Check == "config.vl-mismatch" && f.Severity == checks.Warning {
			return
		}
	}
	t.Errorf("no config.vl-mismatch warning; findings %+v", doc.Findings)
}
