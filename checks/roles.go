package checks

import (
	"strings"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Roles come from what a node is, not from where it sits: a SHARP
// Aggregation Node is a CA cabled to a switch port like a host, but it
// lives inside the switch (Quantum's port 65) and carries no job. Counting
// it as a host makes a spine look like a leaf and every empty port below
// it look like an unplugged host.

// isAggregationNode reports whether n is a SHARP Aggregation Node (or
// another CA built into a switch, such as its management HCA): its
// description says so, or it shares the system image GUID of the switch
// it is cabled to (one chassis).
func isAggregationNode(n *fabric.Node) bool {
	if n == nil || n.Type != mad.NodeCA {
		return false
	}
	if aggregationDesc(n.Description) {
		return true
	}
	if n.SystemImageGUID == 0 {
		return false
	}
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch && p.Remote.Node.SystemImageGUID == n.SystemImageGUID {
			return true
		}
	}
	return false
}

// aggregationDesc reports whether a CA's description names it a SHARP
// Aggregation Node: all an expected topology's node keeps of that (it has
// no SystemImageGUID).
func aggregationDesc(desc string) bool {
	return strings.Contains(strings.ToLower(desc), "aggregation node")
}

// isHostNode reports whether n is a compute host's adapter: a CA that is
// not built into a switch. Routers and switches are not hosts.
func isHostNode(n *fabric.Node) bool {
	return n != nil && n.Type == mad.NodeCA && !isAggregationNode(n)
}

// isLoopback reports whether p's cable comes back to its own node (a
// loopback plug or cable used for testing): it is neither an uplink nor a
// sibling of the node's other inter-switch links.
func isLoopback(p *fabric.Port) bool {
	return p != nil && p.Remote != nil && p.Remote.Node == p.Node
}

// toHost reports whether switch port p is cabled to a host.
func toHost(p *fabric.Port) bool {
	return p != nil && p.Num != 0 && p.Remote != nil && isHostNode(p.Remote.Node)
}

// interSwitch reports whether p is a link to another switch (not a
// loopback).
func interSwitch(p *fabric.Port) bool {
	return isSwitchLink(p) && !isLoopback(p)
}
