package top

import (
	"context"
	"runtime"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
)

// BenchmarkSamplerHeld refreshes a Sampler twice over a 256-host fat tree
// with ibsim's PMAs (each port then has a row and a previous reading, as
// at top's last refresh) and reports the heap the Sampler holds per
// watched port: top watches 49,152 ports on FatTree8k.
func BenchmarkSamplerHeld(b *testing.B) {
	f := simtest.FatTree256(b)
	pmas := simtest.IBSimPMAs
	eng := simtest.Attached(b, f, sim.Options{PMA: &pmas})
	var err error
	var ports []*fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 && p.Remote != nil {
				ports = append(ports, p)
			}
		}
	}
	var held uint64
	b.ReportAllocs()
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		sm := NewSampler(eng, f, Options{Ports: ports})
		var fr *Frame
		for range 2 {
			if fr, err = sm.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		if v := fr.View("", ByErrors); v.Len() != len(ports) || !v.Row(0).Measured {
			b.Fatalf("%d rows for %d ports", v.Len(), len(ports))
		}
		fr = nil
		runtime.GC()
		runtime.ReadMemStats(&m1)
		runtime.KeepAlive(sm)
		held = m1.HeapAlloc - min(m1.HeapAlloc, m0.HeapAlloc)
	}
	b.ReportMetric(float64(held)/float64(len(ports)), "held-B/port")
}
