package topology

import (
	"fmt"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// Ring is Switches switches cabled in a ring (switch i's last port to
// switch i+1's second-to-last), each with HostsPerSwitch one-port hosts
// on its first ports. Min-hop routing on a ring of five or more switches
// has a credit loop (each direction's channels depend on each other all
// the way round); up/down routing does not. It is the textbook case for
// the routing.credit-loop check.
type Ring struct {
	Common
	Hosts
	Switches       int
	HostsPerSwitch int
}

// Build generates the fabric: the ring's switches ("sw1".."swN"), then the
// hosts switch by switch.
func (r Ring) Build() (*fabric.Fabric, error) {
	r.Common = r.Common.withDefaults()
	r.Hosts = r.Hosts.withDefaults()
	if err := r.Common.validate(); err != nil {
		return nil, err
	}
	if r.Switches < 3 || r.HostsPerSwitch < 0 {
		return nil, fmt.Errorf("topology: a ring needs at least 3 switches (got %d)", r.Switches)
	}
	if need := r.HostsPerSwitch + 2; need > r.SwitchPorts {
		return nil, fmt.Errorf("topology: a ring switch needs %d ports (%d hosts + 2 ring links) but switches have %d", need, r.HostsPerSwitch, r.SwitchPorts)
	}
	b := newBuilder(r.Common, r.Switches*(1+r.HostsPerSwitch))
	sws := make([]*fabric.Node, r.Switches)
	for i := range sws {
		sws[i] = b.addSwitch(name("sw", i+1, r.Switches, 1))
	}
	west, east := r.SwitchPorts-1, r.SwitchPorts
	for i, s := range sws {
		if err := b.connect(s, east, sws[(i+1)%len(sws)], west); err != nil {
			return nil, err
		}
	}
	hcas := b.addHCAs(r.Hosts, r.Switches*r.HostsPerSwitch)
	for i, h := range hcas {
		if err := b.connect(sws[i/r.HostsPerSwitch], 1+i%r.HostsPerSwitch, h, 1); err != nil {
			return nil, err
		}
	}
	return b.f, nil
}
