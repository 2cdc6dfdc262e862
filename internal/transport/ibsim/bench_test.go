package ibsim_test

import (
	"context"
	"encoding/binary"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
)

// Fabric of the benchmarks: the 1,072-node two-level fat tree (32 leaves
// x 32 hosts + 16 spines), seen from h0001.
const benchLeaves, benchHosts, benchSpines = 32, 32, 16

// benchPaths returns a directed route to every node of the fabric from
// h0001 (leaves and hosts beyond leaf001 are reached through spine001).
func benchPaths() []mad.Path {
	ps := []mad.Path{{}, {1}}
	for s := range benchSpines {
		ps = append(ps, mad.Path{1, uint8(benchHosts + s + 1)})
	}
	for l := range benchLeaves {
		if l > 0 {
			ps = append(ps, mad.Path{1, benchHosts + 1, uint8(l + 1)})
		}
		for h := range benchHosts {
			if l == 0 && h == 0 {
				continue
			}
			if l == 0 {
				ps = append(ps, mad.Path{1, uint8(h + 1)})
			} else {
				ps = append(ps, mad.Path{1, benchHosts + 1, uint8(l + 1), uint8(h + 1)})
			}
		}
	}
	return ps
}

// BenchmarkEngine measures MADs per second through Engine + ibsim Conn,
// with window 1 (one MAD on the wire at a time) and the default window,
// for directed-route NodeInfo Gets spread over all 1,072 nodes and for
// LID-routed PerfMgt PortCounters Gets to every switch port 1.
func BenchmarkEngine(b *testing.B) {
	s := ibsimtest.Start(b, ibsimtest.FatTree(benchLeaves, benchHosts, benchSpines))
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: "h0001"})

	type req struct {
		addr transport.Addr
		mad  []byte
	}
	var dr []req
	for _, p := range benchPaths() {
		m, err := mad.NewDRGet(p, mad.AttrNodeInfo, 0)
		if err != nil {
			b.Fatal(err)
		}
		dr = append(dr, req{transport.DirectedRoute(), m.Marshal()})
	}
	if len(dr) != benchLeaves*benchHosts+benchLeaves+benchSpines {
		b.Fatalf("%d paths", len(dr))
	}
	// Switch LIDs, read by directed route.
	var perf []req
	{
		c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: s.SockName, Host: "h0001"})
		if err != nil {
			b.Fatal(err)
		}
		e := transport.NewEngine(c, transport.Options{})
		for _, p := range benchPaths()[1 : 2+benchSpines] {
			m, _ := mad.NewDRGet(p, mad.AttrPortInfo, 0)
			r, err := e.Do(context.Background(), transport.DirectedRoute(), m.Marshal())
			if err != nil {
				b.Fatal(err)
			}
			lid := uint16(r.MAD[64+16])<<8 | uint16(r.MAD[64+17])
			g := &mad.GMP{Header: mad.Header{BaseVersion: 1, Class: mad.ClassPerfMgt, ClassVersion: 1, Method: mad.MethodGet, AttrID: mad.AttrPortCounters}}
			g.Data[1] = 1
			perf = append(perf, req{transport.PerfAt(lid, 0, 0), g.Marshal()})
		}
		e.Close()
	}

	for _, kind := range []struct {
		name string
		reqs []req
	}{{"DRNodeInfo", dr}, {"PerfPortCounters", perf}} {
		for _, window := range []int{1, transport.DefaultWindow} {
			b.Run(kind.name+"/window="+strconv.Itoa(window), func(b *testing.B) {
				c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: s.SockName, Host: "h0001"})
				if err != nil {
					b.Fatal(err)
				}
				e := transport.NewEngine(c, transport.Options{Window: window, Timeout: 2 * time.Second})
				defer e.Close()
				ctx := context.Background()
				var next atomic.Int64
				var failed atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				cpu0 := cpuTime(b)
				start := time.Now()
				for range 2 * window {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							r := kind.reqs[int(i)%len(kind.reqs)]
							if _, err := e.Do(ctx, r.addr, r.mad); err != nil {
								failed.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				el := time.Since(start)
				cpu := cpuTime(b) - cpu0
				b.StopTimer()
				if n := failed.Load(); n > 0 {
					b.Errorf("%d of %d requests failed", n, b.N)
				}
				b.ReportMetric(float64(b.N)/el.Seconds(), "MADs/s")
				b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/MAD")
				st := e.Stats()
				b.ReportMetric(float64(st.MaxInFlight), "max-in-flight")
			})
		}
	}
}

// cpuTime is the user+system CPU time of this process so far (ibsim runs
// in its own process and is not included).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConn measures the Conn alone (no Engine): bursts of 64
// directed-route NodeInfo Gets are sent, then their 64 answers received.
// cpu-µs/MAD is this process's CPU per MAD (ibsim's is not counted).
func BenchmarkConn(b *testing.B) {
	s := ibsimtest.Start(b, ibsimtest.FatTree(benchLeaves, benchHosts, benchSpines))
	var reqs [][]byte
	for _, p := range benchPaths() {
		m, err := mad.NewDRGet(p, mad.AttrNodeInfo, 0)
		if err != nil {
			b.Fatal(err)
		}
		reqs = append(reqs, m.Marshal())
	}
	const burst = 64
	b.Run("DRNodeInfo/burst="+strconv.Itoa(burst), func(b *testing.B) {
		c, err := ibsim.Dial(context.Background(), ibsim.Options{SockName: s.SockName, Host: "h0001"})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b.ResetTimer()
		cpu0 := cpuTime(b)
		start := time.Now()
		for i := 0; i < b.N; i += burst {
			n := min(burst, b.N-i)
			for j := range n {
				m := reqs[(i+j)%len(reqs)]
				binary.BigEndian.PutUint64(m[8:16], uint64(i+j+1))
				if err := c.Send(ctx, &transport.Packet{Addr: transport.DirectedRoute(), MAD: m}); err != nil {
					b.Fatal(err)
				}
			}
			for range n {
				p, err := c.Recv(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if p.Status != 0 || mad.TIDLow(binary.BigEndian.Uint64(p.MAD[8:16])) <= uint32(i) {
					b.Fatalf("answer status %d tid %x", p.Status, p.MAD[8:16])
				}
			}
		}
		el := time.Since(start)
		cpu := cpuTime(b) - cpu0
		b.StopTimer()
		b.ReportMetric(float64(b.N)/el.Seconds(), "MADs/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/MAD")
		if st := c.Stats(); st != (ibsim.Stats{}) {
			b.Errorf("stats %+v", st)
		}
	})
}
