package sim

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// maxRSS returns the process's peak resident set size (Linux).
func maxRSS() uint64 {
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

// BenchmarkSimNew50k builds the ~50,000-node 3-level fat tree with the
// topology package (LIDs, min-hop LFTs), then measures sim.New on top of
// it, and one full ring all-reduce over every HCA routed through the
// LFTs. Budget (with the build): under 10 s and 2 GB.
func BenchmarkSimNew50k(b *testing.B) {
	t0 := time.Now()
	f, err := topology.FatTree50k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		b.Fatal(err)
	}
	build := time.Since(t0)
	base := heapInUse()
	b.ResetTimer()
	var s *Sim
	var newT, trafT time.Duration
	var newHeap uint64
	for i := 0; i < b.N; i++ {
		t1 := time.Now()
		s, err = New(f, Options{Clock: NewManualClock(t0)})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		newHeap = heapInUse() - base
		b.StartTimer()
		t2 := time.Now()
		if _, err := s.AddTraffic(Traffic{Pattern: RingAllReduce, Stride: 32, RateGbps: 200}); err != nil {
			b.Fatal(err)
		}
		trafT += time.Since(t2)
		newT += t2.Sub(t1)
	}
	b.StopTimer()
	simHeap := heapInUse() - base
	// One discovery-style query at the far end, to be sure it works.
	c, err := s.Attach("", 0)
	if err != nil {
		b.Fatal(err)
	}
	smp, _ := mad.NewDRGet(mad.Path{1, 33, 33, 1}, mad.AttrNodeInfo, 0)
	if err := c.Send(context.Background(), &transport.Packet{Addr: transport.DirectedRoute(), MAD: smp.Marshal()}); err != nil {
		b.Fatal(err)
	}
	if p := poll(c.(*Conn)); p == nil {
		b.Fatal("4-hop NodeInfo lost in the 50k fabric")
	}
	n := float64(b.N)
	b.ReportMetric(float64(len(f.Nodes)), "nodes")
	b.ReportMetric(build.Seconds(), "topology-s")
	b.ReportMetric(newT.Seconds()/n, "simnew-s")
	b.ReportMetric(trafT.Seconds()/n, "traffic-s")
	b.ReportMetric(float64(newHeap)/(1<<20), "simnew-heap-MB")
	b.ReportMetric(float64(simHeap)/(1<<20), "sim+traffic-heap-MB")
	b.ReportMetric(float64(heapInUse())/(1<<20), "total-heap-MB")
	b.ReportMetric(float64(maxRSS())/(1<<20), "maxRSS-MB")
	runtime.KeepAlive(f)
	runtime.KeepAlive(s)
}

// BenchmarkDRNodeInfo is one directed-route NodeInfo over 4 hops.
func BenchmarkDRNodeInfo(b *testing.B) { benchDR(b, mad.Path{1, 5, 2, 1}, mad.AttrNodeInfo) }

// BenchmarkDRLFTBlock is one directed-route LinearForwardingTable block
// read from a switch 3 hops away (a sweep's most frequent SMP).
func BenchmarkDRLFTBlock(b *testing.B) { benchDR(b, mad.Path{1, 5, 2}, mad.AttrLinearForwardingTable) }

func benchDR(b *testing.B, path mad.Path, attr mad.AttrID) {
	s, _ := newSim(b, fatTree(b, 4, 4, 4), Options{})
	c := attach(b, s, "gpu001 mlx5_0", 1)
	smp, _ := mad.NewDRGet(path, attr, 0)
	raw := smp.Marshal()
	pkt := &transport.Packet{Addr: transport.DirectedRoute(), MAD: raw}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Send(ctx, pkt); err != nil {
			b.Fatal(err)
		}
		if poll(c) == nil {
			b.Fatal("lost")
		}
	}
}
