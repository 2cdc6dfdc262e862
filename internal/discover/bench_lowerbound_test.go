package discover

import (
	"context"
	"flag"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/mad"
)

// countingConn counts the directed-route SMPs sent to each node (resolved
// by walking the model from the local node) and their hop counts.
type countingConn struct {
	transport.Conn
	local *fabric.Node

	mu       sync.Mutex
	perNode  map[*fabric.Node]int
	hops     int // sum of hop counts over all SMPs
	smps     int
	maxDepth int
}

func (c *countingConn) Send(ctx context.Context, p *transport.Packet) error {
	if smp, err := mad.UnmarshalSMP(p.MAD); err == nil && smp.DirectedRoute() {
		path := smp.Path()
		n := c.local
		for _, port := range path {
			if n == nil || int(port) >= len(n.Ports) || n.Ports[port] == nil || n.Ports[port].Remote == nil {
				n = nil
				break
			}
			n = n.Ports[port].Remote.Node
		}
		c.mu.Lock()
		if n != nil {
			c.perNode[n]++
		}
		c.smps++
		c.hops += len(path)
		c.maxDepth = max(c.maxDepth, len(path))
		c.mu.Unlock()
	}
	return c.Conn.Send(ctx, p)
}

// FatTree10k is a three-level fat tree of 10,240 HCAs: 40-port switches,
// 40 pods of 16 leaves and 16 spines, 16 HCAs per leaf, 256 cores (11,776
// nodes).
func fatTree10k() topology.FatTree3 {
	return topology.FatTree3{Common: topology.Common{SwitchPorts: 40}, Pods: 40, LeavesPerPod: 16, SpinesPerPod: 16, HostsPerLeaf: 16, Cores: 256}
}

// BenchmarkSimLowerBound discovers a 10,240-HCA fat tree (11,776 nodes) on
// the in-process simulator with hardware-like timing — each node's agent
// serves one MAD at a time in 20µs, 1µs per cable each way — at the
// default window (64 SMPs in flight) and at ibnetdiscover's 2, and
// reports it against the simulator's lower bounds:
//
//   - busiest-ms: the most loaded node's total service time (the MADs
//     discovery sent it × 20µs): no discovery can finish before its agent
//     has served them;
//   - chain-ms: the round trips of the deepest path, which must follow
//     each other (NodeInfo at each depth before the next, then the last
//     node's own reads);
//   - window-ms: every SMP's unloaded round trip (20µs + 2µs per hop)
//     divided by the window: what that many SMPs in flight allow at best.
//
// lb-ms is the largest; ratio is the measured time over it. The simulator
// delivers answers on time (Recv takes them from a due-time heap, spinning
// for the last 2 ms), so a round trip beyond 20µs + hops (rtt-p50-µs) is
// time an answer waited for the process's CPU: the Engine's reader and the
// walk it drives, which share 2 cores with the simulator here.
// window-at-p50-ms is the window bound at that median round trip; it and
// window64-nolatency's time are the floor this host's CPU sets, which the
// lower bounds above ignore. cpu-s/op is the CPU the whole
// process (simulator included) used. window64-nolatency runs with no
// simulated latency: the walk's CPU cost alone. window64-x100 runs the
// walk on hardware 100 times slower, where the host's CPU no longer sets
// the pace, so its ratio is the walk's own. window2 and window64-x100 take
// a while and run only when -bench names this benchmark. Run:
//
//	go test -run '^$' -bench SimLowerBound -benchtime 3x ./internal/discover/
func BenchmarkSimLowerBound(b *testing.B) {
	const (
		service = 20 * time.Microsecond
		hop     = time.Microsecond
	)
	want, err := fatTree10k().Build()
	if err != nil {
		b.Fatal(err)
	}
	var local *fabric.Node
	for _, n := range want.Nodes {
		if n.Type != mad.NodeSwitch {
			local = n // sim.Attach("") takes the first CA with a port up
			break
		}
	}
	for _, bc := range []struct {
		name  string
		eo    transport.Options
		so    sim.Options
		scale time.Duration // latencies are this many times the hardware-like ones
	}{
		{"window64", transport.Options{}, sim.Options{HopLatency: hop, ServiceTime: service}, 1},
		{"window2", transport.Options{Window: 2, PerDest: 2}, sim.Options{HopLatency: hop, ServiceTime: service}, 1},
		// The same walk on hardware 100 times slower (2 ms per MAD,
		// 100 µs per cable): this host's CPU per SMP is then small next to
		// the simulated latency, so ratio measures the walk — its order,
		// its windows — rather than the host. Times scale with the
		// latency, so scaled-ms (time / 100) is what the walk would take
		// on the hardware-like fabric with a CPU that keeps up.
		{"window64-x100", transport.Options{Timeout: 10 * time.Second}, sim.Options{HopLatency: 100 * hop, ServiceTime: 100 * service}, 100},
		// No simulated latency at all: what the walk costs in CPU here
		// (simulator, engine and discovery share the process).
		{"window64-nolatency", transport.Options{}, sim.Options{}, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if fl := flag.Lookup("test.bench"); (bc.name == "window2" || bc.scale > 1) && (fl == nil || !strings.Contains(fl.Value.String(), "LowerBound")) {
				b.Skip("takes a while: run it by name, -bench SimLowerBound")
			}
			service, hop := service*bc.scale, hop*bc.scale
			var cc *countingConn
			var st transport.Stats
			var nodes int
			var took, cpu time.Duration
			for b.Loop() {
				s, err := sim.New(want, bc.so)
				if err != nil {
					b.Fatal(err)
				}
				c, err := s.Attach("", 0)
				if err != nil {
					b.Fatal(err)
				}
				cc = &countingConn{Conn: c, local: local, perNode: make(map[*fabric.Node]int)}
				e := transport.NewEngine(cc, bc.eo)
				start, cpu0 := time.Now(), cpuTime()
				got, err := Run(context.Background(), e, Options{})
				took += time.Since(start)
				cpu += cpuTime() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				nodes, st = len(got.Nodes), e.Stats()
				e.Close()
			}
			if nodes != len(want.Nodes) {
				b.Fatalf("%d nodes, want %d", nodes, len(want.Nodes))
			}
			busiest := 0
			for _, n := range cc.perNode {
				busiest = max(busiest, n)
			}
			busyT := time.Duration(busiest) * service
			var chain time.Duration
			for k := 0; k <= cc.maxDepth; k++ {
				chain += service + time.Duration(2*k)*hop
			}
			chain += service + time.Duration(2*cc.maxDepth)*hop
			window := bc.eo.Window
			if window == 0 {
				window = transport.DefaultWindow
			}
			windowT := (time.Duration(cc.smps)*service + time.Duration(2*cc.hops)*hop) / time.Duration(window)
			lb := max(busyT, chain, windowT)
			per := took / time.Duration(b.N)
			b.ReportMetric(float64(cc.smps), "SMPs/op")
			b.ReportMetric(float64(st.Latency.P50.Microseconds()), "rtt-p50-µs")
			b.ReportMetric((cpu / time.Duration(b.N)).Seconds(), "cpu-s/op")
			if bc.so.ServiceTime == 0 {
				return
			}
			// The same window bound with the round trip measured (the
			// median): how much of the gap is the host's CPU rather than
			// the walk's order.
			measured := time.Duration(cc.smps) * st.Latency.P50 / time.Duration(window)
			b.ReportMetric(ms(measured), "window-at-p50-ms")
			b.ReportMetric(float64(busiest), "busiest-node-SMPs")
			b.ReportMetric(ms(busyT), "busiest-ms")
			b.ReportMetric(ms(chain), "chain-ms")
			b.ReportMetric(ms(windowT), "window-ms")
			b.ReportMetric(ms(lb), "lb-ms")
			b.ReportMetric(per.Seconds()/lb.Seconds(), "ratio")
			if bc.scale > 1 {
				b.ReportMetric(ms(per/bc.scale), "scaled-ms")
				b.ReportMetric(ms(lb/bc.scale), "scaled-lb-ms")
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
