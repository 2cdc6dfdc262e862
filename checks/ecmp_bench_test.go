package checks

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
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

// BenchmarkLostLIDs50k runs routing.ecmp-imbalance and routing.lost-lid
// in one Run, as check and sweep do, on FatTree50k with one host in 64
// unplugged (its leaf port Down/Polling, its LID still in every table):
// both take routing.lost-lid's judgement (findLostLIDs), made once per
// Run through its memo.
func BenchmarkLostLIDs50k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	f.Nodes = slices.DeleteFunc(f.Nodes, func(h *fabric.Node) bool {
		if h.Type == mad.NodeSwitch {
			return false
		}
		n++
		if n%64 != 0 {
			return false
		}
		for _, p := range h.Ports {
			if p != nil && p.Remote != nil {
				q := p.Remote
				q.Remote, q.State, q.PhysState = nil, mad.PortStateDown, mad.PhysPolling
			}
		}
		return true
	})
	f.Reindex()
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
		res, err := Run(s, "routing.ecmp-imbalance", "routing.lost-lid")
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Findings) == 0 || res.Findings[0].Check != "routing.lost-lid" {
			b.Fatalf("no routing.lost-lid first: %+v", res.Findings[:min(1, len(res.Findings))])
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}
