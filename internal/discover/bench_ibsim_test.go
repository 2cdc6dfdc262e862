package discover

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkVsIbnetdiscover8k discovers a 9,472-node three-level fat tree
// (topology.FatTree8k: 32-port switches, 8,192 HCAs, 1,280 switches) on
// ibsim, alternately with infiniband-diags' ibnetdiscover (under
// libumad2sim) and with ibdoctor's own binary (`ibdoctor discover --ibsim
// ... --format ibnetdiscover`, built for the benchmark), both attached at
// the same HCA, both writing the topology text to a file. Both run as
// child processes and are measured the same way: wall time, and peak
// resident memory, both through GNU time (/usr/bin/time -f %M, what -v
// prints as "Maximum resident set size"; it forks the tool from its own
// small process, so the tool's figure is not floored at this test
// process's size, as a direct child's would be). It reports the medians and the ratios
// (targets: time <= 0.5x, memory <= 2x). No SM runs: directed-route
// discovery needs no LIDs. IBDOCTOR_BENCH_RUNS sets the number of runs
// (default 3). It takes minutes, so it runs only when -bench names it:
//
//	go test -run '^$' -bench VsIbnetdiscover8k -benchtime 1x -timeout 30m ./internal/discover/
//
// It skips without ibsim and infiniband-diags (fails with CI=true).
func BenchmarkVsIbnetdiscover8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench VsIbnetdiscover8k -benchtime 1x -timeout 30m")
	ibsimtest.Require(b, "ibnetdiscover")
	f, net, host := ibsimtest.NetFile(b, topology.FatTree8k())
	benchVsIbnetdiscover(b, net, host, len(f.Nodes))
}

// BenchmarkVsIbnetdiscover1k is the same on the 1,072-node two-level fat
// tree (32 leaves of 32 hosts, 16 spines).
func BenchmarkVsIbnetdiscover1k(b *testing.B) {
	ibsimtest.Require(b, "ibnetdiscover")
	benchVsIbnetdiscover(b, ibsimtest.FatTree(32, 32, 16), "h0517", 1072)
}

func benchVsIbnetdiscover(b *testing.B, net, host string, want int) {
	runs := ibsimtest.BenchRuns()
	s := ibsimtest.Start(b, net)
	bin := ibsimtest.BuildIbdoctor(b)

	measure := func(name string, args []string, preload bool) ibsimtest.Child {
		r := s.MeasureChild(b, args, ibsimtest.ChildOptions{Host: host, Preload: preload, GNUTime: true})
		if n := countNodeLines(b, r.Output); n != want {
			b.Fatalf("%s found %d nodes, want %d\n%s", name, n, want, r.Stderr)
		}
		return r
	}

	var ours, theirs []ibsimtest.Child
	b.ResetTimer()
	for i := range runs {
		doOurs := func() {
			ours = append(ours, measure("ibdoctor", []string{bin, "discover", "--ibsim=" + s.SockName, "--ibsim-host", host, "--format", "ibnetdiscover"}, false))
		}
		doTheirs := func() {
			theirs = append(theirs, measure("ibnetdiscover", []string{"ibnetdiscover"}, true))
		}
		if i%2 == 0 {
			doOurs()
			doTheirs()
		} else {
			doTheirs()
			doOurs()
		}
		b.Logf("run %d: ibdoctor %v %s (CPU %v, ibsim's %v), ibnetdiscover %v %s (CPU %v, ibsim's %v)", i+1,
			ours[i].Wall.Round(time.Millisecond), mb(ours[i].MaxRSS), ours[i].CPU.Round(time.Millisecond), ours[i].SimCPU.Round(10*time.Millisecond),
			theirs[i].Wall.Round(time.Millisecond), mb(theirs[i].MaxRSS), theirs[i].CPU.Round(time.Millisecond), theirs[i].SimCPU.Round(10*time.Millisecond))
	}
	b.StopTimer()
	wall := func(r ibsimtest.Child) float64 { return r.Wall.Seconds() }
	rss := func(r ibsimtest.Child) float64 { return float64(r.MaxRSS) }
	ot, tt := ibsimtest.MedianOf(ours, wall), ibsimtest.MedianOf(theirs, wall)
	om, tm := ibsimtest.MedianOf(ours, rss), ibsimtest.MedianOf(theirs, rss)
	b.ReportMetric(ot, "ibdoctor-s")
	b.ReportMetric(tt, "ibnetdiscover-s")
	b.ReportMetric(ot/tt, "time-ratio")
	b.ReportMetric(om/(1<<20), "ibdoctor-maxrss-MB")
	b.ReportMetric(tm/(1<<20), "ibnetdiscover-maxrss-MB")
	b.ReportMetric(om/tm, "mem-ratio")
	b.Logf("%d nodes; medians of %d runs: ibdoctor %.2f s %s, ibnetdiscover %.2f s %s; time ratio %.2f, memory ratio %.2f",
		want, runs, ot, mb(int64(om)), tt, mb(int64(tm)), ot/tt, om/tm)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// countNodeLines counts the node lines ("Switch\t..", "Ca\t..", "Rt\t..")
// of a topology file.
func countNodeLines(b *testing.B, path string) int {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Switch\t") || strings.HasPrefix(line, "Ca\t") || strings.HasPrefix(line, "Rt\t") {
			n++
		}
	}
	return n
}
