package diagnose

import (
	"context"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestCountersInitPortListedNotRead (trial A13): a host port whose link
// is up but left in Init (a link flap with no SM sweeping since) has its
// LID, but PerfMgt cannot reach it: the counter read skipped it without a
// word, so counters said not_read 0 and check "Reached: everything"
// while its SymbolErrorCounter was never read. It is a port not read,
// with that reason, and the sweep is not complete.
func TestCountersInitPortListedNotRead(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	var host string
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA && strings.HasPrefix(n.Description, "gpu012 ") {
			host = n.Description
			for _, p := range []*mad.PortState{&n.Ports[1].State, &n.Ports[1].Remote.State} {
				*p = mad.PortStateInit
			}
		}
	}
	if host == "" {
		t.Fatal("no gpu012")
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Attach("gpu001 mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: 200e6, Retries: 1})
	t.Cleanup(func() { e.Close(); c.Close() })
	sw, err := Run(context.Background(), e, Options{Routes: true, Counters: true})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Complete {
		t.Errorf("sweep complete, though %s/1's counters were not read", host)
	}
	var lines []string
	for _, u := range sw.Unreached {
		if strings.Contains(u.Where, "gpu012") && strings.HasPrefix(u.What, "PortCounters") {
			lines = append(lines, u.What+" at "+u.Where+": "+u.Reason)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "port is Init: PerfMgt cannot reach it") {
		t.Errorf("counters entries of gpu012: %q, want one saying the port is Init and PerfMgt cannot reach it\nall: %+v", lines, sw.Unreached)
	}

}
