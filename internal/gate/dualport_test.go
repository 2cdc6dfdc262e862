package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

var tree4x2 = topology.FatTree2{Leaves: 4, Spines: 2, HostsPerLeaf: 4}

// dualPort is tree4x2 in which host x's HCA (on leaf02) is dual-port:
// its cable and LID become its port 2, and its port 1 is the cable host y
// had on leaf03 (y is gone; the tables still route y's old LID there).
func dualPort(t *testing.T, x, y string) *fabric.Fabric {
	t.Helper()
	f := build(t, tree4x2)
	h, o := f.NodesByHost(x)[0], f.NodesByHost(y)[0]
	xp, yp := h.Ports[1], o.Ports[1]
	xp.Num = 2
	yp.Node, yp.Num = h, 1
	h.Ports = []*fabric.Port{h.Ports[0], yp, xp}
	for i, n := range f.Nodes {
		if n == o {
			f.Nodes = append(f.Nodes[:i], f.Nodes[i+1:]...)
			break
		}
	}
	f.Reindex()
	return f
}

// TestGateDualPortLIDOnPort2 (review R8): a dual-port HCA whose port 1
// (leaf03) has no LID — the SM has not assigned it — and whose port 2
// (leaf02) has the HCA's LID. Since the sweep the cable between leaf02
// and spine A went down, A being the spine the gate's leaf sends the
// HCA's LID up to and leaf02 sends the gate's LID up to: the HCA's reads
// by LID are lost there both ways. The retry by directed route avoids
// the links of the request and of the response from the switch of the
// port that owns the LID (leaf02: the same links), and goes around A.
// Before, the response was taken from the switch of the HCA's first
// cabled port (leaf03) through the other spine: with two spines both of
// the gate leaf's uplinks were avoided, no directed route was left, and
// the HCA was listed unread (undecided) although it answers around A.
func TestGateDualPortLIDOnPort2(t *testing.T) {
	base := build(t, tree4x2)
	spineOf := func(leaf string, lid uint16) *fabric.Node {
		l := base.NodesByHost(leaf)[0]
		return l.Ports[l.Switch.LFT.At(lid)].Remote.Node
	}
	lidOf := func(host string) uint16 { return base.NodesByHost(host)[0].Ports[1].LID }
	// x on leaf02 (the HCA made dual-port), g on leaf04 (the gate's
	// host); leaf03 sends g's LID up the other spine (a table edit both
	// in the swept fabric and the live one: min-hop picks one spine per
	// destination LID everywhere).
	var x, y, g, down string
	var other uint8
	for i := 5; i <= 8 && g == ""; i++ {
		for k := 13; k <= 16 && g == ""; k++ {
			xi, gk := fmt.Sprintf("gpu%03d", i), fmt.Sprintf("gpu%03d", k)
			a := spineOf("leaf04", lidOf(xi))
			if spineOf("leaf02", lidOf(gk)) != a {
				continue
			}
			x, y, g = xi, "gpu009", gk
			down = fmt.Sprintf("leaf02/%d", base.NodesByHost("leaf02")[0].Switch.LFT.At(lidOf(gk)))
			for _, p := range base.NodesByHost("leaf03")[0].Ports {
				if p != nil && p.Remote != nil && p.Remote.Node.Type == a.Type && p.Remote.Node != a {
					other = p.Num
				}
			}
		}
	}
	if g == "" || other == 0 {
		t.Fatal("no host pair whose ways cross the spines as the case needs in tree4x2's min-hop routes")
	}
	fresh := func() *sim.Sim {
		s, err := sim.New(dualPort(t, x, y), sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetLID(x+" mlx5_0/1", 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.SetRoute("leaf03", lidOf(g), other); err != nil {
			t.Fatal(err)
		}
		return s
	}
	snap := sweptSim(t, fresh())
	sf, _ := snap.FabricModel()
	h := sf.NodesByHost(x)[0]
	if len(h.Ports) != 3 || h.Ports[1] == nil || h.Ports[1].LID != 0 || h.Ports[1].Remote == nil || h.Ports[2] == nil || h.Ports[2].LID == 0 || h.Ports[2].Remote == nil {
		t.Fatalf("the snapshot does not have %s with port 1 cabled without a LID and port 2 cabled with one", h.Description)
	}
	live := fresh()
	if err := live.Down(down); err != nil {
		t.Fatal(err)
	}
	c, err := live.Attach(g+" mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	o := job()
	o.Hosts, o.Counters = []string{"gpu001", x}, false
	doc, err := Run(context.Background(), snapAgain(t, snap), e, o)
	if err != nil {
		t.Fatal(err)
	}
	// Port 1 has no LID: its P_Key table is not read by LID (listed as
	// an address, folded under sm.no-master). Its PortInfo and port 2's
	// are read, by the directed route around A.
	for _, u := range doc.Unreached {
		if strings.Contains(u.Where, x) && strings.HasPrefix(u.What, "PortInfo") {
			t.Errorf("gated from %s with %s down: listed unread: %s at %s: %s", g, down, u.What, u.Where, u.Reason)
		}
	}
	named := false
	for _, fd := range doc.Findings {
		named = named || (fd.Check == "link.down" && strings.Contains(fd.Title, down))
	}
	if !named || doc.Status != "unhealthy" {
		t.Errorf("status %q; want unhealthy with link.down naming %s among:", doc.Status, down)
		for _, fd := range doc.Findings {
			t.Errorf("  %s %s %s", fd.Severity, fd.Check, fd.Title)
		}
	}
}
