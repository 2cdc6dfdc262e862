package cli

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/perf"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/sim/simtest"
)

// BenchmarkCountersAllJSON judges and writes 'counters --all --json' for
// one sample of a two-level fat tree (256 hosts), read from the
// in-process simulator with ibsim's PMA capabilities (PortCounters and
// the 64-bit data counters): held-B/port is the heap the verdicts hold
// beyond the sample while the document is written (peak RSS at 8.7k is
// what the command holds, per port: 49,152 on FatTree8k, issue 13),
// B/op what judging and writing allocate.
func BenchmarkCountersAllJSON(b *testing.B) {
	f := simtest.FatTree256(b)
	pmas := simtest.IBSimPMAs
	eng := simtest.Attached(b, f, sim.Options{PMA: &pmas})
	res, err := perf.Sweep(context.Background(), eng, f, perf.Options{})
	if err != nil || len(res.Errors) != 0 {
		b.Fatalf("%v, %d errors", err, len(res.Errors))
	}
	thr := checks.DefaultThresholds()
	o := countersOptions{all: true, json: true}
	var held uint64
	b.ReportAllocs()
	for b.Loop() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		v := judgeCounters(f, res, nil, thr, checks.Warning)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		held = m1.HeapAlloc - min(m1.HeapAlloc, m0.HeapAlloc)
		if err := writeCountersJSON(io.Discard, v, res, f, thr, o, "sim", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(held)/float64(len(res.Last.Ports)), "held-B/port")
	b.ReportMetric(float64(len(res.Last.Ports)), "ports")
}
