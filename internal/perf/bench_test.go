package perf

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// BenchmarkSweep reads one sample of a 256-host two-level fat tree on the
// in-process simulator (wall clock, no latency): the cost of the sweep
// itself (planning, engine, decoding, merging) per port.
func BenchmarkSweep(b *testing.B) {
	f, err := topology.FatTree2{Leaves: 16, Spines: 8, HostsPerLeaf: 16, Common: topology.Common{SwitchPorts: 32}}.Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		b.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		b.Fatal(err)
	}
	eng := transport.NewEngine(c, transport.Options{})
	defer eng.Close()
	ports := linkedPorts(f)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Sweep(context.Background(), eng, f, Options{})
		if err != nil || len(res.Errors) != 0 || len(res.Last.Ports) != ports {
			b.Fatalf("%v %d errors %d ports", err, len(res.Errors), len(res.Last.Ports))
		}
	}
	b.ReportMetric(float64(ports), "ports/sweep")
	b.ReportMetric(float64(ports)*float64(b.N)/b.Elapsed().Seconds(), "ports/s")
}
