// Package simtest brings up a fabric in the in-process simulator and
// discovers it through the request engine, for benchmarks of the read
// stages that run after discovery.
package simtest

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// Discovered simulates f, attaches an engine (1 s timeout, 1 retry) and
// discovers the fabric through it. The engine is closed on tb.Cleanup.
func Discovered(tb testing.TB, f *fabric.Fabric) (*transport.Engine, *fabric.Fabric) {
	tb.Helper()
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		tb.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: time.Second, Retries: 1})
	tb.Cleanup(func() { e.Close() })
	live, err := discover.Run(context.Background(), e, discover.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return e, live
}

// FatTree256 is the read benchmarks' fabric: a two-level fat tree of 256
// hosts (16 leaves of 16, 8 spines, 32-port switches), LIDs assigned and
// routed min-hop.
func FatTree256(tb testing.TB) *fabric.Fabric {
	tb.Helper()
	f, err := topology.FatTree2{Leaves: 16, Spines: 8, HostsPerLeaf: 16, Common: topology.Common{SwitchPorts: 32}}.Build()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		tb.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		tb.Fatal(err)
	}
	return f
}

// IBSimPMAs are the PMA capabilities ibsim's agents have: 64-bit data
// counters and PortXmitWait, AllPortSelect on switches, no 64-bit error
// counters.
var IBSimPMAs = sim.PMACaps{Switch: sim.PMAAllPortSelect | sim.PMAExtendedWidth | sim.PMAXmitWait, CA: sim.PMAExtendedWidth | sim.PMAXmitWait}

// Attached simulates f with opts and attaches an engine with default
// options (no discovery). The engine is closed on tb.Cleanup.
func Attached(tb testing.TB, f *fabric.Fabric, opts sim.Options) *transport.Engine {
	tb.Helper()
	s, err := sim.New(f, opts)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		tb.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{})
	tb.Cleanup(func() { e.Close() })
	return e
}
