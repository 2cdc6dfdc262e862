package checks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// TestUnreachableCountsHostsNotPorts: a host with 8 HCAs on leaf01 that
// has lost its route to gpu017 is one host (8 HCA ports), not "8 hosts"
// (trial T11: "223 hosts cannot reach" on a 32-host fabric).
func TestUnreachableCountsHostsNotPorts(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	i := 0
	for _, p := range leaf.Ports {
		if p != nil && p.Remote != nil && toHost(p) {
			p.Remote.Node.Description = fmt.Sprintf("gpu001 mlx5_%d", i)
			i++
		}
	}
	dst := node(t, f, "gpu017").Ports[1]
	leaf.Switch.LFT.Set(dst.LID, fabric.NoRoute)
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.unreachable")
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Title, "8 HCA ports (1 host) cannot reach gpu017") {
		t.Fatalf("got %+v, want one finding titled '8 HCA ports (1 host) cannot reach gpu017 ...'", fs)
	}
}
