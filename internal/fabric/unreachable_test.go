package fabric

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/mad"
)

// TestUnreachableWheres: a read that failed on a node discovery knows
// names the node; a node that never answered is where it lies behind.
func TestUnreachableWheres(t *testing.T) {
	leaf := &Node{Type: mad.NodeSwitch, GUID: 0x10, Description: "leaf01", Path: mad.Path{1}}
	f := &Fabric{Nodes: []*Node{{Type: mad.NodeCA, GUID: 0x1, Description: "gpu001 mlx5_0", Path: mad.Path{}}, leaf}}
	f.Unreachable = []Unreachable{
		{Path: mad.Path{1}, FromGUID: 0x1, FromPort: 1, What: "PortInfo 5"},
		{Path: mad.Path{1, 5}, FromGUID: 0x10, FromPort: 5, What: "NodeInfo"},
	}
	got := f.UnreachableWheres()
	want := []string{"leaf01 (GUID 0x0000000000000010, path 0,1)", "path 0,1,5 (behind leaf01 port 5)"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %q, want %q", i, got[i], want[i])
		}
	}
}
