package checks

import (
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkCounterReport8k judges one sample of every linked port of
// FatTree8k (49,152 ports) as 'counters --all' does (CounterReport, no
// routes: the share of host paths is estimated from the cabling): clean,
// every counter zero as on ibsim, and waiting, every port's PortXmitWait
// over its absolute threshold (a finding per port, as on a busy fabric).
func BenchmarkCounterReport8k(b *testing.B) {
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		wait uint64
	}{{"clean", 0}, {"waiting", 5000}} {
		b.Run(c.name, func(b *testing.B) {
			var rs []PortReading
			for _, n := range f.Nodes {
				for _, p := range n.Ports {
					if p == nil || p.Num == 0 || p.Remote == nil {
						continue
					}
					rs = append(rs, PortReading{Port: p, Errors: []CounterValue{{Name: "SymbolErrorCounter", Bits: 16}},
						XmitWait: &CounterValue{Name: "PortXmitWait", Value: c.wait, Bits: 32}})
				}
			}
			s := &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}}
			b.ReportAllocs()
			for b.Loop() {
				judged, _, _ := s.CounterReport()
				if c.wait > 0 && len(judged) != len(rs) {
					b.Fatalf("%d ports judged, want %d", len(judged), len(rs))
				}
			}
			b.ReportMetric(float64(len(rs)), "ports")
		})
	}
}
