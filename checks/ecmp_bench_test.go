package checks

import (
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkECMPImbalance50k runs routing.ecmp-imbalance alone on a
// min-hop routed FatTree50k (3,840 switches, 45,056 hosts): it counts
// every switch's CA destinations per equal-cost group. Routing is
// outside the timer.
func BenchmarkECMPImbalance50k(b *testing.B) { benchCheck50k(b, "routing.ecmp-imbalance") }

// BenchmarkUnreachable50k is routing.unreachable alone on the same
// fabric: a walk to every host from every leaf.
func BenchmarkUnreachable50k(b *testing.B) { benchCheck50k(b, "routing.unreachable") }

// BenchmarkRouteChecks50k is the checks that judge the walk to every
// host from every leaf (routing.unreachable, routing.loop and
// routing.asymmetric, which compares every host pair's two directions
// on it), in one Run as check runs them.
func BenchmarkRouteChecks50k(b *testing.B) {
	benchCheck50k(b, "routing.unreachable", "routing.loop", "routing.asymmetric")
}

func benchCheck50k(b *testing.B, ids ...string) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		res, err := Run(s, ids...)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Findings) != 0 {
			b.Fatalf("%s on min-hop routes: %s", res.Findings[0].Check, res.Findings[0].Title)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}

// BenchmarkECMPImbalance8k is BenchmarkECMPImbalance50k on FatTree8k
// (9,472 nodes): the allocations per run in CI-sized time.
func BenchmarkECMPImbalance8k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree8k())
	if err != nil {
		b.Fatal(err)
	}
	s := &Snapshot{Fabric: f}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(s, "routing.ecmp-imbalance"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOversubscribed50k is topology.oversubscribed alone on the same
// fabric: every spine's bundles to its leaves.
func BenchmarkOversubscribed50k(b *testing.B) { benchCheck50k(b, "topology.oversubscribed") }
