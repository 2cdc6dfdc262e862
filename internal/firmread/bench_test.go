package firmread

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkRead49k reads GeneralInfo from every node of FatTree50k
// through the in-process simulator: the cost the firmware stage adds to
// a sweep at that size (one MAD per node). Time is the machine's (see
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
		if len(v.Unread) != 0 || len(v.Versions) != len(live.Nodes) {
			b.Fatalf("%d unread, %d of %d read", len(v.Unread), len(v.Versions), len(live.Nodes))
		}
		b.ReportMetric(float64(e.Stats().Sent-before), "MADs/op")
	}
	b.ReportMetric(float64(len(live.Nodes)), "nodes")
}
