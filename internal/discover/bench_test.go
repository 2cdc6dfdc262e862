package discover

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// BenchmarkDiscoverFatTree discovers a 1,072-node two-level fat tree (16
// spines, 32 leaves, 32 hosts each) through the fake fabric, each answer
// delayed by up to 100µs (Go timers make that about 1ms here, see the
// rtt-p50 metric), with libibnetdisc's 2 SMPs in flight and with
// ibdoctor's default windows.
func BenchmarkDiscoverFatTree(b *testing.B) {
	for _, bc := range []struct {
		name string
		eo   transport.Options
	}{
		{"window2", transport.Options{Window: 2, PerDest: 2}},
		{"window64", transport.Options{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, _ := fatTree(16, 32, 32)
			f.latency = 100 * time.Microsecond
			var nodes int
			var smps uint64
			var p50 time.Duration
			for b.Loop() {
				e := transport.NewEngine(f.conn(), bc.eo)
				fab, err := Run(context.Background(), e, Options{})
				if err != nil {
					b.Fatal(err)
				}
				nodes = len(fab.Nodes)
				smps = e.Stats().Sent
				p50 = e.Stats().Latency.P50
				e.Close()
			}
			if nodes != 16+32+32*32 {
				b.Fatalf("%d nodes", nodes)
			}
			b.ReportMetric(float64(smps), "SMPs/op")
			b.ReportMetric(float64(p50.Microseconds()), "rtt-p50-µs")
			b.ReportMetric(float64(nodes)/(b.Elapsed().Seconds()/float64(b.N)), "nodes/s")
		})
	}
}
