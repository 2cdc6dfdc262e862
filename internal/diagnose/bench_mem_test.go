package diagnose

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
)

// peakHeap samples the heap's object bytes (live and not yet swept) every
// 2 ms until stopped and returns the highest value seen.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// allocated is what the process has allocated so far: bytes and objects.
func allocated() (bytes, objects uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// cpuSeconds is the process's CPU time so far and the collector's share of
// it (runtime/metrics' estimates, updated at each collection).
func cpuSeconds() (total, gc float64) {
	s := []metrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64()
}

// liveHeap is the heap after a collection: what is reachable.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCheckFatTree8k is `ibdoctor check` (discovery, SMInfo, P_Key
// tables, every forwarding table, every port's counters, every check, the
// report) over topology.FatTree8k (9,472 nodes) in the in-process
// simulator, which shares the process: sim-heap-MB is what the simulator
// holds before the sweep, live-MB what is reachable once the report is
// built (the simulator included), peak-heap-MB the highest heap seen
// during the run (garbage included), ibdoctor-peak-MB that peak less
// the simulator's share, and sweep-peak-MB / checks-peak-MB the peaks of
// the sweep (discovery to counters) and of the checks and report, less
// the simulator's share; checks-alloc-MB and checks-allocs are what the
// checks and the report allocate (garbage included), the rest of B/op
// being the sweep's and the simulator's; gc-cpu-% and checks-gc-cpu-% are
// the collector's share of the run's CPU (the simulator's included) and
// of the checks and report's. IBDOCTOR_HEAPPROFILE=DIR writes
// DIR/sweep.pprof (after the sweep) and DIR/checks.pprof (report built)
// for `go tool pprof -sample_index=inuse_space`.
func BenchmarkCheckFatTree8k(b *testing.B) {
	benchCheckMem(b, topology.FatTree8k(), "sim:FatTree8k")
}

// BenchmarkCheckFatTree50k is BenchmarkCheckFatTree8k over
// topology.FatTree50k (49k nodes, the size of issue 13's ibsim fabric),
// only with IBDOCTOR_BENCH_BIG=1: building and routing it takes minutes.
func BenchmarkCheckFatTree50k(b *testing.B) {
	if os.Getenv("IBDOCTOR_BENCH_BIG") != "1" {
		b.Skip("set IBDOCTOR_BENCH_BIG=1 to build the 49k-node fabric")
	}
	benchCheckMem(b, topology.FatTree50k(), "sim:FatTree50k")
}

func benchCheckMem(b *testing.B, ft topology.FatTree3, source string) {
	f, err := topology.Routed(ft)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f = nil // the simulator keeps what it needs
	simHeap := liveHeap()
	profDir := os.Getenv("IBDOCTOR_HEAPPROFILE")
	writeProfile := func(name string) {
		if profDir == "" {
			return
		}
		runtime.GC()
		out, err := os.Create(filepath.Join(profDir, name))
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		if err := pprof.Lookup("heap").WriteTo(out, 0); err != nil {
			b.Fatal(err)
		}
	}
	var peak, sweepPeak, checksPeak, live uint64
	var findings int
	var checksBytes, checksObjects uint64
	var cpuTotal, cpuGC, checksCPU, checksGC float64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		stop, stopSweep := peakHeap(), peakHeap()
		t0, g0 := cpuSeconds()
		c, err := s.Attach("", 0)
		if err != nil {
			b.Fatal(err)
		}
		e := transport.NewEngine(c, transport.Options{})
		sw, err := Run(context.Background(), e, Options{Routes: true, Counters: true})
		if err != nil {
			b.Fatal(err)
		}
		sweepPeak = max(sweepPeak, stopSweep())
		if !sw.Complete {
			b.Fatalf("sweep incomplete: %v", sw.Unreached[:min(3, len(sw.Unreached))])
		}
		stopChecks := peakHeap()
		writeProfile("sweep.pprof")
		b0, o0 := allocated()
		tc, gc := cpuSeconds()
		res, err := checks.Run(sw.Snapshot(checks.Expectations{}, nil, nil))
		if err != nil {
			b.Fatal(err)
		}
		doc := sw.Document("check", source, res, checks.Error)
		b1, o1 := allocated()
		checksBytes, checksObjects = b1-b0, o1-o0
		t1, g1 := cpuSeconds()
		cpuTotal, cpuGC = cpuTotal+t1-t0, cpuGC+g1-g0
		checksCPU, checksGC = checksCPU+t1-tc, checksGC+g1-gc
		checksPeak = max(checksPeak, stopChecks())
		peak = max(peak, stop())
		b.StopTimer()
		writeProfile("checks.pprof")
		live = liveHeap()
		findings = len(doc.Findings)
		runtime.KeepAlive(doc)
		e.Close()
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(simHeap)/(1<<20), "sim-heap-MB")
	b.ReportMetric(float64(live)/(1<<20), "live-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak-min(peak, simHeap))/(1<<20), "ibdoctor-peak-MB")
	b.ReportMetric(float64(sweepPeak-min(sweepPeak, simHeap))/(1<<20), "sweep-peak-MB")
	b.ReportMetric(float64(checksPeak-min(checksPeak, simHeap))/(1<<20), "checks-peak-MB")
	b.ReportMetric(float64(checksBytes)/(1<<20), "checks-alloc-MB")
	b.ReportMetric(float64(checksObjects), "checks-allocs")
	if cpuTotal > 0 {
		b.ReportMetric(100*cpuGC/cpuTotal, "gc-cpu-%")
	}
	if checksCPU > 0 {
		b.ReportMetric(100*checksGC/checksCPU, "checks-gc-cpu-%")
	}
	b.ReportMetric(float64(findings), "findings")
}
