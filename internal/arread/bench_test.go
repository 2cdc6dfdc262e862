package arread

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkRead49k reads AdaptiveRoutingInfo from every switch of FatTree50k
// through the in-process simulator: the cost the adaptive-routing stage adds to
// a sweep at that size (one SMP per switch). Time is the machine's (see
// docs for figures with load).
func BenchmarkRead49k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	e, live := simtest.Discovered(b, f)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		before := e.Stats().Sent
		v := Read(ctx, e, live)
		if len(v.Unread) != 0 || len(v.Info) == 0 {
			b.Fatalf("%d unread, %d read", len(v.Unread), len(v.Info))
		}
		b.ReportMetric(float64(e.Stats().Sent-before), "MADs/op")
	}
	sws := 0
	for _, n := range live.Nodes {
		if n.Switch != nil {
			sws++
		}
	}
	b.ReportMetric(float64(sws), "switches")
}
