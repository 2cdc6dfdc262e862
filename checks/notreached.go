package checks

import (
	"fmt"
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// FabricNotReached says why a discovery reached no fabric: it found only
// the node it ran from, and none of that node's ports has a link (each
// named with its state); "" when it reached one. Such a sweep saw its own
// adapter, not a fabric with everything gone: kept as a baseline, every
// later sweep compared the fabric with one node (trial A11), and judged
// as a fabric it is one link finding where nothing else was looked at.
func FabricNotReached(f *fabric.Fabric) string {
	if f == nil || len(f.Nodes) != 1 {
		return ""
	}
	n := f.Nodes[0]
	if n.Type == mad.NodeSwitch {
		return "" // its own management port: a switch alone is a fabric
	}
	var ports []string
	for _, p := range n.Ports {
		if p == nil || p.Num == 0 {
			continue
		}
		if p.Remote != nil {
			return ""
		}
		ports = append(ports, fmt.Sprintf("%s/%d is %s/%s", n.Description, p.Num, p.State, p.PhysState))
	}
	if len(ports) == 0 {
		return ""
	}
	return fmt.Sprintf("the sweep found only the node it runs on, without a link: %s", strings.Join(ports, ", "))
}
