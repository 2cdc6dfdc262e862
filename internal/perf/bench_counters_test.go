package perf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/route"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// BenchmarkCountersIbsim8k sweeps the counters of a 9,472-node
// three-level fat tree (topology.FatTree8k: 32-port switches, 8,192 HCAs,
// 1,280 switches) on ibsim after OpenSM gave it LIDs (PerfMgt is
// LID-routed; OpenSM's first sweep of it takes ~13 s here), alternately
// with infiniband-diags' ibqueryerrors (under libumad2sim, --skip-sl: the
// SA is gone after OpenSM -o, and SL 0 is ibdoctor's default too) and with
// ibdoctor's own binary (`ibdoctor counters --ibsim ...`, built for the
// benchmark), both attached at the same HCA. Both run as child processes
// and include their own discovery (ibqueryerrors always discovers), and
// are timed the same way, wall clock. ibdoctor runs twice per round: as
// `counters` (its default plan is ibqueryerrors': a switch's ports are read
// one by one only when its PortSelect=0xFF sum shows an error) and as
// `counters --all` (every port's error and 64-bit data counters read, which
// ibqueryerrors never does by default); `ibdoctor discover` alone is timed
// too, to attribute the time. It reports the medians and their ratios
// (target <= 0.5 x ibqueryerrors).
// IBDOCTOR_BENCH_RUNS sets the number of rounds (default 3). It takes
// minutes, so it runs only when -bench names it:
//
//	go test -run '^$' -bench CountersIbsim8k -benchtime 1x -timeout 40m ./internal/perf/
//
// It skips without ibsim and infiniband-diags (fails with CI=true).
func BenchmarkCountersIbsim8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench CountersIbsim8k -benchtime 1x -timeout 40m")
	f, net, host := ibsimtest.NetFile(b, topology.FatTree8k())
	benchCountersIbsim(b, net, host, len(f.Nodes))
}

// BenchmarkCountersIbsim1k is the same on a 1,072-node two-level fat tree
// (32 leaves of 32 hosts, 16 spines), quick to set up:
//
//	go test -run '^$' -bench CountersIbsim1k -benchtime 1x ./internal/perf/
func BenchmarkCountersIbsim1k(b *testing.B) {
	benchCountersIbsim(b, ibsimtest.FatTree(32, 32, 16), "h0001", 32*32+32+16)
}

var iqeSummary = regexp.MustCompile(`## Summary: (\d+) nodes checked, (\d+) bad nodes found\s+##\s+(\d+) ports checked`)

func benchCountersIbsim(b *testing.B, net, host string, nodes int) {
	ibsimtest.Require(b, "opensm", "ibqueryerrors")
	runs := ibsimtest.BenchRuns()
	setup := time.Now()
	s := ibsimtest.Start(b, net)
	s.StartOpenSM(ibsimtest.OpenSMOptions{Host: host, Once: true})
	b.Logf("ibsim + OpenSM: %v (%d nodes)", time.Since(setup).Round(time.Millisecond), nodes)
	bin := ibsimtest.BuildIbdoctor(b)

	// measure runs one child; exit 0 or 1 (ports over threshold) is a
	// complete sweep, anything else fails the benchmark.
	measure := func(args []string, preload bool) (time.Duration, string) {
		c := s.MeasureChild(b, args, ibsimtest.ChildOptions{Host: host, Preload: preload, ExitOK: []int{1}})
		data, err := os.ReadFile(c.Output)
		if err != nil {
			b.Fatal(err)
		}
		return c.Wall, string(data)
	}
	ours := func(extra ...string) (time.Duration, int) {
		args := append([]string{bin, "counters", "--ibsim=" + s.SockName, "--ibsim-host", host, "--json"}, extra...)
		wall, out := measure(args, false)
		var d struct {
			Summary map[string]int `json:"summary"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			b.Fatalf("ibdoctor counters: %v", err)
		}
		if d.Summary["not_read"] != 0 {
			b.Fatalf("ibdoctor counters could not read %d ports or nodes", d.Summary["not_read"])
		}
		return wall, d.Summary["ports_read"]
	}
	theirs := func() (time.Duration, int) {
		wall, out := measure([]string{"ibqueryerrors", "--skip-sl"}, true)
		m := iqeSummary.FindStringSubmatch(out)
		if m == nil {
			b.Fatalf("ibqueryerrors printed no summary:\n%s", out[max(0, len(out)-2000):])
		}
		if n, _ := strconv.Atoi(m[1]); n != nodes {
			b.Fatalf("ibqueryerrors checked %d nodes, want %d", n, nodes)
		}
		if strings.Contains(out, "PMA query failures") {
			b.Fatalf("ibqueryerrors: %s", out[max(0, len(out)-500):])
		}
		p, _ := strconv.Atoi(m[3])
		return wall, p
	}

	// discovery alone, to attribute the time (not part of the ratio)
	discover := func() time.Duration {
		wall, _ := measure([]string{bin, "discover", "--ibsim=" + s.SockName, "--ibsim-host", host, "--format", "ibnetdiscover"}, false)
		return wall
	}

	var tOurs, tSkip, tTheirs, tDisc []time.Duration
	var portsOurs, portsSkip, portsTheirs int
	b.ResetTimer()
	for i := range runs {
		steps := []func(){
			func() { w, p := ours(); tOurs, portsOurs = append(tOurs, w), p },
			func() { w, p := ours("--all"); tSkip, portsSkip = append(tSkip, w), p },
			func() { tDisc = append(tDisc, discover()) },
			func() { w, p := theirs(); tTheirs, portsTheirs = append(tTheirs, w), p },
		}
		if i%2 == 1 {
			slices.Reverse(steps)
		}
		for _, st := range steps {
			st()
		}
		b.Logf("round %d: ibdoctor %v, ibdoctor --all %v, ibqueryerrors %v (ibdoctor discover alone %v)", i+1,
			tOurs[i].Round(time.Millisecond), tSkip[i].Round(time.Millisecond), tTheirs[i].Round(time.Millisecond), tDisc[i].Round(time.Millisecond))
	}
	b.StopTimer()
	mo, ms, mt := ibsimtest.Median(tOurs), ibsimtest.Median(tSkip), ibsimtest.Median(tTheirs)
	b.ReportMetric(mo.Seconds(), "ibdoctor-s")
	b.ReportMetric(ms.Seconds(), "ibdoctor-all-s")
	b.ReportMetric(mt.Seconds(), "ibqueryerrors-s")
	b.ReportMetric(mo.Seconds()/mt.Seconds(), "ratio")
	b.ReportMetric(ms.Seconds()/mt.Seconds(), "ratio-all")
	md := ibsimtest.Median(tDisc)
	b.ReportMetric(md.Seconds(), "ibdoctor-discover-s")
	b.Logf("%d nodes; ports read: ibdoctor %d (--all %d), ibqueryerrors says %d checked; medians of %d rounds: ibdoctor %v (ratio %.2f), ibdoctor --all %v (ratio %.2f), ibqueryerrors %v; ibdoctor discover alone %v",
		nodes, portsOurs, portsSkip, portsTheirs, runs, mo.Round(time.Millisecond), mo.Seconds()/mt.Seconds(),
		ms.Round(time.Millisecond), ms.Seconds()/mt.Seconds(), mt.Round(time.Millisecond), md.Round(time.Millisecond))
}

// perNodeConn counts the requests sent to each node: a directed-route SMP
// by walking its path through the model from the local node, a LID-routed
// MAD (PerfMgt, LID-routed SMPs) by its DLID.
type perNodeConn struct {
	transport.Conn
	f     *fabric.Fabric
	local *fabric.Node

	mu      sync.Mutex
	perNode map[*fabric.Node]int
	byClass map[mad.Class]int
}

func (c *perNodeConn) Send(ctx context.Context, p *transport.Packet) error {
	var n *fabric.Node
	class := mad.Class(p.MAD[1])
	if smp, err := mad.UnmarshalSMP(p.MAD); err == nil && smp.DirectedRoute() {
		n = c.local
		for _, port := range smp.Path() {
			if n == nil || int(port) >= len(n.Ports) || n.Ports[port] == nil || n.Ports[port].Remote == nil {
				n = nil
				break
			}
			n = n.Ports[port].Remote.Node
		}
	} else if pt := c.f.PortByLID(p.Addr.DLID); pt != nil {
		n = pt.Node
	}
	c.mu.Lock()
	if n != nil {
		c.perNode[n]++
	}
	c.byClass[class]++
	c.mu.Unlock()
	return c.Conn.Send(ctx, p)
}

// fatTree10k is a three-level fat tree of 10,240 HCAs: 40-port switches,
// 40 pods of 16 leaves and 16 spines, 16 HCAs per leaf, 256 cores (11,776
// nodes), as internal/discover's lower-bound benchmark uses.
func fatTree10k() topology.FatTree3 {
	return topology.FatTree3{Common: topology.Common{SwitchPorts: 40}, Pods: 40, LeavesPerPod: 16, SpinesPerPod: 16, HostsPerLeaf: 16, Cores: 256}
}

// BenchmarkFullSweepLatency10k runs a full sweep — discovery, every
// switch's LFT, every port's PerfMgt counters (diagnose.Run with Routes
// and Counters, as `ibdoctor sweep` does) — of a 10,240-HCA fat tree
// (11,776 nodes) on the in-process simulator with hardware-like latency:
// each node's agents serve one MAD at a time in 20 µs, 1 µs per cable each
// way. It reports the wall time and the lower bound no sweep can beat: the
// busiest node's total service time (its discovery SMPs + LFT blocks +
// PerfMgt ClassPortInfo + per-port counters, served one after another;
// requests counted per destination node, retries included), and the
// window bound (all requests × 20 µs / 64 in flight). Run:
//
//	go test -run '^$' -bench FullSweepLatency10k -benchtime 1x -timeout 20m ./internal/perf/
func BenchmarkFullSweepLatency10k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "10k", "-bench FullSweepLatency10k -benchtime 1x -timeout 20m")
	const (
		service = 20 * time.Microsecond
		hop     = time.Microsecond
	)
	f, err := fatTree10k().Build()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := topology.AssignLIDs(f); err != nil {
		b.Fatal(err)
	}
	if err := topology.Route(f); err != nil {
		b.Fatal(err)
	}
	var local *fabric.Node
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			local = n // sim.Attach("") takes the first CA with a port up
			break
		}
	}
	var (
		took    time.Duration
		sw      *diagnose.Sweep
		pc      *perNodeConn
		timings = map[string]time.Duration{}
		wide    time.Duration
	)
	for b.Loop() {
		s, err := sim.New(f, sim.Options{ServiceTime: service, HopLatency: hop})
		if err != nil {
			b.Fatal(err)
		}
		c, err := s.Attach("", 0)
		if err != nil {
			b.Fatal(err)
		}
		pc = &perNodeConn{Conn: c, f: f, local: local, perNode: map[*fabric.Node]int{}, byClass: map[mad.Class]int{}}
		e := transport.NewEngine(pc, transport.Options{})
		start := time.Now()
		sw, err = diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
		took += time.Since(start)
		e.Close()
		if err != nil || !sw.Complete {
			b.Fatalf("%v; complete %v: %v", err, sw != nil && sw.Complete, sw.Unreached[:min(3, len(sw.Unreached))])
		}
		for k, v := range sw.Timings {
			timings[k] += v
		}
		// The LFTs again with enough goroutines that the engine's window
		// (not the per-node limit on one switch at a time) bounds them:
		// what an interleaved block order would give (see the report).
		c2, err := s.Attach("", 0)
		if err != nil {
			b.Fatal(err)
		}
		e2 := transport.NewEngine(c2, transport.Options{})
		start = time.Now()
		if err := route.ReadLFTs(context.Background(), e2, sw.Fabric, route.ReadOptions{Parallel: 1 << 14}); err != nil {
			b.Fatal(err)
		}
		wide += time.Since(start)
		e2.Close()
	}
	if len(sw.Fabric.Nodes) != len(f.Nodes) {
		b.Fatalf("%d nodes, want %d", len(sw.Fabric.Nodes), len(f.Nodes))
	}
	var busiest *fabric.Node
	total := 0
	for n, k := range pc.perNode {
		total += k
		if busiest == nil || k > pc.perNode[busiest] {
			busiest = n
		}
	}
	busyT := time.Duration(pc.perNode[busiest]) * service
	windowT := time.Duration(total) * (service + 2*hop) / transport.DefaultWindow
	lb := max(busyT, windowT)
	per := took / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "sweep-s")
	b.ReportMetric(float64(pc.perNode[busiest]), "busiest-node-MADs")
	b.ReportMetric(ms(busyT), "busiest-ms")
	b.ReportMetric(ms(windowT), "window-ms")
	b.ReportMetric(per.Seconds()/lb.Seconds(), "ratio-to-lb")
	b.ReportMetric(float64(total), "MADs")
	b.ReportMetric(float64(sw.Stats.Latency.P50.Microseconds()), "rtt-p50-µs")
	b.ReportMetric((timings["routes"] / time.Duration(b.N)).Seconds(), "routes-s")
	b.ReportMetric((wide / time.Duration(b.N)).Seconds(), "routes-wide-s")
	var st []string
	for _, k := range []string{"discovery", "routes", "counters"} {
		st = append(st, fmt.Sprintf("%s %v", k, (timings[k]/time.Duration(b.N)).Round(time.Millisecond)))
	}
	b.Logf("LFTs re-read with 16384 goroutines (the window, not one switch at a time, the limit): %v", (wide / time.Duration(b.N)).Round(time.Millisecond))
	b.Logf("%d nodes, %d MADs (SMP %d, PerfMgt %d); %s; busiest node %q: %d MADs = %v; window bound %v; lower bound %v; measured %v (%.1fx); engine %v",
		len(f.Nodes), total, pc.byClass[mad.ClassSubnDR]+pc.byClass[mad.ClassSubnLID], pc.byClass[mad.ClassPerfMgt], strings.Join(st, ", "),
		busiest.Description, pc.perNode[busiest], busyT, windowT.Round(time.Millisecond), lb.Round(time.Millisecond), per.Round(time.Millisecond), per.Seconds()/lb.Seconds(), sw.Stats)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
