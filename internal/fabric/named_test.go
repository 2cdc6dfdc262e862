package fabric

import (
	"fmt"
	"testing"
)

// FuzzSplitNamed: SplitNamed reads back every "DESC (0xGUID)" NameFor
// writes, and never panics on other text.
func FuzzSplitNamed(f *testing.F) {
	f.Add("Quantum-2 Mellanox Technologies", uint64(0xfc6a1c030091f600), "x (0x)")
	f.Add("leaf01 (0x1)", uint64(1), "a (0xzz)")
	f.Add("", uint64(0), " (0x1)")
	f.Fuzz(func(t *testing.T, desc string, guid uint64, other string) {
		SplitNamed(other)
		if desc == "" {
			return
		}
		d, g, ok := SplitNamed(fmt.Sprintf("%s (0x%016x)", desc, guid))
		if !ok || d != desc || g != guid {
			t.Fatalf("SplitNamed(%q (%#x)) = %q, %#x, %v", desc, guid, d, g, ok)
		}
	})
}

// TestNodesNamed: a shared description names both nodes, "DESC (0xGUID)"
// one of them, and a GUID under another node's description none.
func TestNodesNamed(t *testing.T) {
	a := &Node{GUID: 0xa, Description: "sw"}
	b := &Node{GUID: 0xb, Description: "sw"}
	c := &Node{GUID: 0xc, Description: "other"}
	f := &Fabric{Nodes: []*Node{a, b, c}}
	if ns := f.NodesNamed("sw"); len(ns) != 2 {
		t.Errorf("sw: %d nodes", len(ns))
	}
	for _, n := range []*Node{a, b} {
		if ns := f.NodesNamed(f.NameOf(n)); len(ns) != 1 || ns[0] != n {
			t.Errorf("%s: %v", f.NameOf(n), ns)
		}
	}
	if ns := f.NodesNamed("sw (0x000000000000000c)"); len(ns) != 0 {
		t.Errorf("another node's GUID: %v", ns)
	}
}
