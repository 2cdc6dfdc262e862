package ibsimtest

import (
	"fmt"
	"strings"
)

// FatTree returns an ibsim net file for a two-level fat tree: leaves leaf
// switches with hostsPerLeaf single-port HCAs each, and spines spine
// switches, every leaf cabled once to every spine. Node ids are
// "h%04d" (hosts, numbered from 1 across leaves), "leaf%03d" and
// "spine%03d"; NodeDescriptions are "<id> HCA-1" for hosts and the id for
// switches. Leaf ports 1..hostsPerLeaf go to hosts and the next spines
// ports to spines 1..spines; spine port l goes to leaf l. Hosts come first,
// so ibsim's default port is h0001's.
//
// Examples: FatTree(2, 2, 1) is 7 nodes; FatTree(32, 32, 16) is the 1,072
// node case (1,024 hosts, 32 leaves, 16 spines).
func FatTree(leaves, hostsPerLeaf, spines int) string {
	var b strings.Builder
	host := func(l, h int) int { return l*hostsPerLeaf + h + 1 }
	for l := range leaves {
		for h := range hostsPerLeaf {
			id := fmt.Sprintf("h%04d", host(l, h))
			fmt.Fprintf(&b, "Hca 1 %q # %q\n[1] \"leaf%03d\"[%d]\n\n", id, id+" HCA-1", l+1, h+1)
		}
	}
	for l := range leaves {
		id := fmt.Sprintf("leaf%03d", l+1)
		fmt.Fprintf(&b, "Switch %d %q # %q\n", hostsPerLeaf+spines, id, id)
		for h := range hostsPerLeaf {
			fmt.Fprintf(&b, "[%d] \"h%04d\"[1]\n", h+1, host(l, h))
		}
		for s := range spines {
			fmt.Fprintf(&b, "[%d] \"spine%03d\"[%d]\n", hostsPerLeaf+s+1, s+1, l+1)
		}
		b.WriteByte('\n')
	}
	for s := range spines {
		id := fmt.Sprintf("spine%03d", s+1)
		fmt.Fprintf(&b, "Switch %d %q # %q\n", leaves, id, id)
		for l := range leaves {
			fmt.Fprintf(&b, "[%d] \"leaf%03d\"[%d]\n", l+1, l+1, hostsPerLeaf+s+1)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
