package checks

import (
	"slices"
	"strings"
)

// Place is where a finding is, named by one node, port and far end: what
// a renderer that gives a finding one place (the textfile's labels)
// shows. Port is 0 and Peer "" when the finding has none.
type Place struct {
	Node string
	Port int
	Peer string
}

// Place names where f is from its group and entities, by their roles, so
// the JSON report's reader can tell it too (docs/schema-report.md):
//   - a finding about a group of hosts, or one fault at several places
//     (one blackhole at two leaves), is at the group (Group: the hosts'
//     pattern, or every place as the title lists them), with no port or
//     peer;
//   - otherwise its subject is its first "egress" entity (the port its
//     routes leave by, where a routing fault is), else its first entity
//     that is not a "destination" or "source" (the switch of a routing
//     finding without an egress port), else its first entity;
//   - Node is the subject's node (a "host" entity's host, not the adapter
//     that stands for it); Port its port or, when the subject is a whole
//     switch, the first port of that switch the finding names (an ECMP
//     group's busiest port);
//   - Peer is the entity playing "peer", else the first "end" on another
//     node (the leaf port where a missing HCA's cable belongs).
//
// Before, the first entity was the subject whatever its role: a grouped
// routing.unreachable was placed at its first destination, and two down
// uplinks on two leaves at one host.
func (f Finding) Place() Place {
	if f.Group != "" {
		return Place{Node: f.Group}
	}
	if len(f.Entities) == 0 {
		return Place{}
	}
	at := 0
	if i := slices.IndexFunc(f.Entities, func(e Entity) bool { return e.Role == "egress" }); i >= 0 {
		at = i
	} else if i := slices.IndexFunc(f.Entities, func(e Entity) bool { return e.Role != "destination" && e.Role != "source" }); i >= 0 {
		at = i
	}
	subj := f.Entities[at]
	pl := Place{Node: subj.Node, Port: subj.Port}
	if subj.Role == "host" {
		pl.Node, _, _ = strings.Cut(subj.Node, " ")
	}
	for i, e := range f.Entities {
		if pl.Port > 0 {
			break
		}
		if i != at && e.Port > 0 && e.Node == subj.Node && e.NodeGUID == subj.NodeGUID && e.Role != "peer" {
			pl.Port = e.Port
		}
	}
	for _, role := range []string{"peer", "end"} {
		for i, e := range f.Entities {
			if i != at && e.Role == role && (role == "peer" || e.Node != subj.Node) {
				pl.Peer = e.String()
				break
			}
		}
		if pl.Peer != "" {
			break
		}
	}
	return pl
}
