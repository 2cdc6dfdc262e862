package checks

import (
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkSwitchLoops50k is routing.loop's walk to every switch LID
// from every switch (findSwitchLoops) on a min-hop routed FatTree50k:
// 3,840 × 3,840 routes. The route graph is built outside the timer.
func BenchmarkSwitchLoops50k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	g := s.routeGraph()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		if ls := s.findSwitchLoops(g); len(ls) != 0 {
			b.Fatalf("%d loops on min-hop routes", len(ls))
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}
