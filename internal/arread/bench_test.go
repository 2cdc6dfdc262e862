package arread

import (
	"context"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
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
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := s.Attach("", 0)
	if err != nil {
		b.Fatal(err)
	}
	e := transport.NewEngine(c, transport.Options{Timeout: time.Second, Retries: 1})
	defer e.Close()
	ctx := context.Background()
	live, err := discover.Run(ctx, e, discover.Options{})
	if err != nil {
		b.Fatal(err)
	}
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
