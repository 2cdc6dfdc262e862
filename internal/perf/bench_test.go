package perf

import (
	"context"
	"runtime"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
)

// BenchmarkSweep reads one sample of a 256-host two-level fat tree on the
// in-process simulator (wall clock, no latency): the cost of the sweep
// itself (planning, engine, decoding, merging) per port.
func BenchmarkSweep(b *testing.B) {
	f := simtest.FatTree256(b)
	eng := simtest.Attached(b, f, sim.Options{})
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

// BenchmarkSweepHeld reads one sample of the same fabric with the PMAs
// ibsim has (64-bit data counters, no 64-bit error counters: PortCounters
// and PortCountersExtended per port, as 'counters --all' reads them) and
// reports the heap the Result holds per port read: a sweep holds every
// port's reading, 49,152 on FatTree8k.
func BenchmarkSweepHeld(b *testing.B) {
	f := simtest.FatTree256(b)
	pmas := simtest.IBSimPMAs
	eng := simtest.Attached(b, f, sim.Options{PMA: &pmas})
	ports := linkedPorts(f)
	var held uint64
	b.ReportAllocs()
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		res, err := Sweep(context.Background(), eng, f, Options{})
		if err != nil || len(res.Errors) != 0 || len(res.Last.Ports) != ports || res.Last.Ports[0].Extended() == nil {
			b.Fatalf("%v %d errors %d ports", err, len(res.Errors), len(res.Last.Ports))
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		runtime.KeepAlive(res)
		held = m1.HeapAlloc - min(m1.HeapAlloc, m0.HeapAlloc)
	}
	b.ReportMetric(float64(held)/float64(ports), "held-B/port")
}
