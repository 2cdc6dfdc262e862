package pkeyread

import (
	"context"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkRead49k reads the P_Key table of every host port of
// FatTree50k (45,056 HCAs) through the in-process simulator: the cost
// the partition stage adds to a sweep at that size. It reports MADs and
// ports per op; time is the machine's (see docs for figures with load).
func BenchmarkRead49k(b *testing.B) {
	f, err := topology.Routed(topology.FatTree50k())
	if err != nil {
		b.Fatal(err)
	}
	e, live := simtest.Discovered(b, f)
	ctx := context.Background()
	ports := Ports(live, nil)
	b.ResetTimer()
	for range b.N {
		before := e.Stats().Sent
		v := Read(ctx, e, live, ports, e.Local().PortNum, false)
		if len(v.Unread) != 0 || len(v.Tables) != len(ports) {
			b.Fatalf("%d unread, %d of %d read", len(v.Unread), len(v.Tables), len(ports))
		}
		b.ReportMetric(float64(e.Stats().Sent-before), "MADs/op")
	}
	b.ReportMetric(float64(len(ports)), "ports")
}
