package checks_test

import (
	"strings"
	"testing"
)

// TestMissingHCAFQDNIsSameHost: four of gpu001's HCAs describe themselves
// as "gpu001.cluster.local mlx5_N" (rdma-ndd renaming some devices after
// a hostname change) beside the short-named four, every link up. They are
// one host: before, topology.missing-hca said "gpu001 has 4 HCAs where
// its peers have 8" (an error, exit 1) with every cable fine (trial B10).
func TestMissingHCAFQDNIsSameHost(t *testing.T) {
	var b strings.Builder
	for _, d := range []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"} {
		b.WriteString("desc \"gpu001 " + d + "\" text=\"gpu001.cluster.local " + d + "\"\n")
	}
	all := sampleWith(t, b.String(), false)
	if fs := byCheck(all, "topology.missing-hca"); len(fs) > 0 {
		t.Errorf("FQDN-named HCAs of gpu001 reported missing:%s", titles(fs))
	}
}
