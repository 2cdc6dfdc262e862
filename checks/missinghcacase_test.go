package checks_test

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestMissingHCAHostCase: host names are matched without case (F5), so
// "gpu001 mlx5_0" and "GPU001 mlx5_1" are one host's adapters, as a gate
// for gpu001 judges them (review R6b). Before, topology.missing-hca
// grouped hosts by exact spelling: "gpu001 has 3 HCAs where its peers
// have 4: mlx5_1 missing" on a host with all four answering, or worse,
// a warning calling its adapter misnamed. A host really short of one is
// judged on all the others and named as the fabric spells it.
func TestMissingHCAHostCase(t *testing.T) {
	t.Run("all four answering", func(t *testing.T) {
		res := railSweep(t, `desc "gpu002 mlx5_1" text="GPU002 mlx5_1"`+"\n"+`desc "gpu006 mlx5_3" text="Gpu006.cluster.local mlx5_3"`+"\n")
		if fs := byCheck(res.Findings, "topology.missing-hca"); len(fs) > 0 {
			logFindings(t, res.Findings)
			t.Errorf("topology.missing-hca on hosts with every HCA answering:%s", titles(fs))
		}
	})
	t.Run("one missing", func(t *testing.T) {
		res := railSweep(t, `desc "gpu002 mlx5_1" text="Gpu002 mlx5_1"`+"\n"+`desc "gpu002 mlx5_0" text="GPU002 mlx5_0"`+"\n"+"down \"gpu002 mlx5_2\"/1\n")
		f := oneMissingHCA(t, res.Findings)
		if f.Severity != checks.Error || !strings.HasPrefix(f.Title, "gpu002 has 3 HCAs where its peers have 4: mlx5_2 missing; leaf03/2 without a link") || !strings.Contains(f.Evidence[0].Text, "gpu002 has mlx5_0, mlx5_1, mlx5_3") {
			t.Errorf("got %s %q (%s)\nwant an error naming gpu002 (as its mlx5_3 spells it), short of mlx5_2 alone", f.Severity, f.Title, f.Evidence[0].Text)
		}
	})
}
