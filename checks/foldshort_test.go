package checks

import (
	"strings"
	"testing"
)

// A leaf short of an uplink whose missing cable a link.down already names
// is folded into that link.down, which says so, whichever of the two
// comes first.
func TestFoldShortUplinksNotesTheCause(t *testing.T) {
	const leaf = 0x10
	down := Finding{Check: "link.down", Title: "Link leaf01/33 <-> spine01/1 from the expected topology is down",
		Entities: []Entity{{NodeGUID: leaf, Node: "leaf01", Port: 33}, {NodeGUID: 0x20, Node: "spine01", Port: 1}}}
	short := Finding{Check: "topology.oversubscribed", Title: "Leaf leaf01 has 3 uplinks where its spines' other leaves have 4: 1 cable missing or down",
		Entities: []Entity{{NodeGUID: leaf, Node: "leaf01"}},
		Evidence: []Evidence{{Name: "uplinks", Value: 3, Threshold: 4}}}
	for _, order := range [][]Finding{{down, short}, {short, down}} {
		in := make([]Finding, len(order))
		for i, f := range order {
			f.Evidence = append([]Evidence(nil), f.Evidence...)
			in[i] = f
		}
		out := foldShortUplinks(in)
		if len(out) != 1 || out[0].Check != "link.down" {
			t.Fatalf("%s first: got %d findings (%v), want the link.down alone", order[0].Check, len(out), out)
		}
		if len(out[0].Evidence) != 1 || !strings.Contains(out[0].Evidence[0].Text, "folded here") {
			t.Errorf("%s first: the link.down's evidence %v does not say the count was folded into it", order[0].Check, out[0].Evidence)
		}
	}
}
