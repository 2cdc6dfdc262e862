package topology

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// peakHeap samples the heap's object bytes (live and not yet swept) every few milliseconds until stopped and
// returns the highest value seen, in bytes.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
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

// vmHWM returns the process's peak resident set size in bytes (Linux).
func vmHWM() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func benchBuild(b *testing.B, t FatTree3) {
	var peak uint64
	var nodes int
	var buildT, lidT, routeT time.Duration
	for i := 0; i < b.N; i++ {
		runtime.GC()
		stop := peakHeap()
		t0 := time.Now()
		f, err := t.Build()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := AssignLIDs(f); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := Route(f); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		peak = max(peak, stop())
		nodes = len(f.Nodes)
		buildT += t1.Sub(t0)
		lidT += t2.Sub(t1)
		routeT += t3.Sub(t2)
		runtime.KeepAlive(f)
	}
	n := float64(b.N)
	b.ReportMetric(float64(nodes), "nodes")
	b.ReportMetric(buildT.Seconds()/n, "build-s")
	b.ReportMetric(lidT.Seconds()/n, "lids-s")
	b.ReportMetric(routeT.Seconds()/n, "route-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(vmHWM())/(1<<20), "maxRSS-MB")
}

// BenchmarkBuild50k builds the ~50,000-node 3-level fat tree, assigns
// LIDs and routes it. Target: under 10 s and 2 GB on 2 cores.
func BenchmarkBuild50k(b *testing.B) { benchBuild(b, FatTree50k()) }

// BenchmarkBuild8k does the same for the 8,192-HCA fabric.
func BenchmarkBuild8k(b *testing.B) { benchBuild(b, FatTree8k()) }

// BenchmarkRoute50k is Route alone on the ~50,000-node fat tree (built
// and given LIDs outside the timer): min-hop tables for 3,840 switches
// over 48,896 LIDs, as `check --sim FILE` computes them.
func BenchmarkRoute50k(b *testing.B) {
	f, err := FatTree50k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpu()
	for b.Loop() {
		if err := Route(f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op")
}
