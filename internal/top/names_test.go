package top

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestRowsNameSharedDescriptions: trial C8. Two switches sharing a
// description (the Quantum-2 capture's 8 "Quantum-2 Mellanox
// Technologies") were one name in top's NODE and PEER columns; the rows
// name them as the findings do, "DESC (0xGUID)", which --switch takes.
func TestRowsNameSharedDescriptions(t *testing.T) {
	sess, f, _ := sample(t)
	// b and a switch it is cabled to, a, share a description.
	var a, b *fabric.Node
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if a == nil && n.Type == mad.NodeSwitch && p != nil && p.Num != 0 && p.Remote != nil && p.Remote.Node.Type == mad.NodeSwitch {
				a, b = p.Remote.Node, n
			}
		}
	}
	b.Description = a.Description
	f.Reindex()
	var ports []*fabric.Port
	for _, p := range b.Ports {
		if p != nil && p.Num != 0 && p.Remote != nil {
			ports = append(ports, p)
		}
	}
	s := NewSampler(sess.Engine, f, Options{Ports: ports})
	fr, err := s.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rowsOf(fr)) == 0 {
		t.Fatal("no rows")
	}
	peers := 0
	for _, r := range rowsOf(fr) {
		if r.Node != f.NameOf(b) || !strings.Contains(r.Node, " (0x") {
			t.Errorf("row %s/%d: node named %q, want %q", r.Node, r.Num, r.Node, f.NameOf(b))
		}
		if r.Port.Remote.Node == a {
			peers++
		}
		if r.Port.Remote.Node == a && r.Peer != f.NameOf(a)+"/"+itoa(int(r.Port.Remote.Num)) {
			t.Errorf("row %s/%d: peer %q, want %s", r.Node, r.Num, r.Peer, f.NameOf(a))
		}
	}
	if peers == 0 {
		t.Error("no row's far end is the other switch")
	}
}
