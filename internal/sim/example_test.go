package sim_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// A fat tree with a degraded uplink, read over directed route.
func Example() {
	f, _ := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 2, Common: topology.Common{SwitchPorts: 8}}.Build()
	topology.AssignLIDs(f)
	topology.Route(f)
	clk := sim.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := sim.New(f, sim.Options{Clock: clk})
	faults, _ := sim.ParseFaults(strings.NewReader("degrade leaf01/3 width=1x\n"))
	s.ApplyFaults(faults)

	c, _ := s.Attach("gpu001 mlx5_0", 1)
	defer c.Close()
	// PortInfo of spine01 port 1: the far end of leaf01/3.
	req, _ := mad.NewDRGet(mad.Path{1, 3}, mad.AttrPortInfo, 1)
	req.TID = 1
	c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: req.Marshal()})
	p, _ := c.Recv(context.Background())
	resp, _ := mad.UnmarshalSMP(p.MAD)
	var pi mad.PortInfo
	resp.Decode(&pi)
	fmt.Println(pi.PortState, pi.LinkWidthActive, "of", pi.WidthEnabled())
	// Output: Active 1X of 1X,2X,4X
}
