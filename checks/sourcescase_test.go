package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSourcesCountHostCase: a route finding's sources count a host whose
// adapters are spelled in two cases once, as topology.missing-hca and the
// gates match host names (fabric.HostKey, review R6b). Before: "3 hosts".
func TestSourcesCountHostCase(t *testing.T) {
	var ps []*fabric.Port
	for _, d := range []string{"gpu001 mlx5_0", "GPU001 mlx5_1", "gpu002 mlx5_0"} {
		n := &fabric.Node{Type: mad.NodeCA, Description: d}
		p := &fabric.Port{Node: n, Num: 1}
		n.Ports = []*fabric.Port{nil, p}
		ps = append(ps, p)
	}
	if got := sourcesCount(ps); got != "3 HCA ports (2 hosts)" {
		t.Errorf("sourcesCount = %q, want 3 HCA ports (2 hosts)", got)
	}
}
