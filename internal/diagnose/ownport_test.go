package diagnose

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
)

// TestSweepOwnPortDownReachesNoFabric (trial A11): a sweep from a host
// whose own port is down sees a one-node "fabric"; the sweep exited 0 and
// kept it as the baseline, against which later sweeps said healthy while
// check said link.polling. checks.FabricNotReached tells such a sweep
// (nothing beyond its own node, none of its ports with a link) from a
// fabric, naming the ports and their states; a sweep with its own port up
// is a fabric however much else is down.
func TestSweepOwnPortDownReachesNoFabric(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(*testing.T, *sim.Sim)
		want  string
	}{
		{"polling", func(t *testing.T, s *sim.Sim) {
			if err := s.Polling("gpu001 mlx5_0/1"); err != nil {
				t.Fatal(err)
			}
		}, "gpu001 mlx5_0/1 is Down/Polling"},
		{"disabled", func(t *testing.T, s *sim.Sim) {
			if err := s.Down("gpu001 mlx5_0/1"); err != nil {
				t.Fatal(err)
			}
		}, "gpu001 mlx5_0/1 is Down/Disabled"},
		{"leaf down", func(t *testing.T, s *sim.Sim) {
			// Its own link is up: what is behind the leaf is partial,
			// not "no fabric".
			for _, p := range []string{"leaf01/9", "leaf01/10", "leaf01/11", "leaf01/12"} {
				if err := s.Polling(p); err != nil {
					t.Fatal(err)
				}
			}
		}, ""},
		{"healthy", func(*testing.T, *sim.Sim) {}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sw, _ := sweep(t, simFabric(t, func(s *sim.Sim, _ *fabric.Fabric) { c.fault(t, s) }))
			got := checks.FabricNotReached(sw.Fabric)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("FabricNotReached = %q, want %q (%d nodes)", got, c.want, len(sw.Fabric.Nodes))
			}
		})
	}
}
