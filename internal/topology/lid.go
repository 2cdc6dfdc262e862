package topology

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// MaxUnicastLID is the highest unicast LID (0xBFFF).
const MaxUnicastLID = 0xbfff

// AssignLIDs gives LIDs the way OpenSM does with LMC 0: every switch one
// LID (on port 0, mirrored on its other ports), every cabled, not-Down CA
// or router port its own LID, from 1 up in f.Nodes order (ports in port
// order). It returns the highest LID given. Existing LIDs are overwritten.
func AssignLIDs(f *fabric.Fabric) (uint16, error) {
	next := 1
	for _, n := range f.Nodes {
		if n.Type == mad.NodeSwitch {
			if len(n.Ports) == 0 || n.Ports[0] == nil {
				return 0, fmt.Errorf("topology: switch %q (GUID %#016x) has no port 0 to carry its LID", n.Description, n.GUID)
			}
			if next > MaxUnicastLID {
				return 0, fmt.Errorf("topology: more than %d LIDs needed; the fabric is too big for one subnet", MaxUnicastLID)
			}
			for _, p := range n.Ports {
				if p != nil {
					p.LID, p.LMC = uint16(next), 0
				}
			}
			next++
			continue
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			p.LID, p.LMC = 0, 0
			if p.Remote == nil || p.State == mad.PortStateDown {
				continue
			}
			if next > MaxUnicastLID {
				return 0, fmt.Errorf("topology: more than %d LIDs needed; the fabric is too big for one subnet", MaxUnicastLID)
			}
			p.LID = uint16(next)
			next++
		}
	}
	f.Reindex()
	return uint16(next - 1), nil
}
