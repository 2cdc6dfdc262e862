package route

import (
	"io"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkLFTDump8k dumps every switch's LFT of a 9,472-node 3-level fat
// tree (topology.FatTree8k: 32-port switches, 8,192 HCAs, 1,280 switches)
// on ibsim after OpenSM routed it, once through ibdoctor (discovery +
// ReadLFTs through the ibsim transport + dump_fts-format text to
// io.Discard) and once with infiniband-diags' dump_fts under libumad2sim
// (its output to /dev/null), alternating, several times in one run; it
// reports the medians and their ratio (target ibdoctor <= 0.5 x dump_fts).
// Set up once, so run it with -benchtime 1x; IBDOCTOR_BENCH_RUNS sets the
// number of runs (default 3):
//
//	go test -run '^$' -bench LFTDump8k -benchtime 1x -timeout 30m ./internal/route/
//
// It skips without ibsim (fails with CI=true) and takes minutes (OpenSM's
// first sweep alone is about 13 s here), so it runs only when -bench names
// it ("8k"), not under a catch-all `make bench`.
func BenchmarkLFTDump8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench LFTDump8k -benchtime 1x -timeout 30m")
	_, net, host := ibsimtest.NetFile(b, topology.FatTree8k())
	benchLFTDump(b, net, host)
}

// BenchmarkLFTDump1k is the same on a 1,072-node two-level fat tree
// (32 leaves of 32 hosts, 16 spines), quicker to set up.
func BenchmarkLFTDump1k(b *testing.B) {
	benchLFTDump(b, ibsimtest.FatTree(32, 32, 16), "h0001")
}

func benchLFTDump(b *testing.B, net, host string) {
	runs := ibsimtest.BenchRuns()
	setup := time.Now()
	r := startIBSim(b, net, host, 0)
	b.Logf("ibsim + OpenSM + first discovery: %v (%d nodes)", time.Since(setup).Round(time.Millisecond), len(r.f.Nodes))

	var ours, theirs, reads []time.Duration
	var lfts int
	b.ResetTimer()
	for i := range runs {
		doOurs := func() {
			start := time.Now()
			f, err := discover.Run(r.ctx, r.eng, discover.Options{})
			if err != nil {
				b.Fatal(err)
			}
			lftStart := time.Now()
			if err := ReadLFTs(r.ctx, r.eng, f, ReadOptions{}); err != nil {
				b.Fatal(err)
			}
			reads = append(reads, time.Since(lftStart))
			if err := fabric.WriteDumpFTS(io.Discard, f, fabric.DumpOptions{}); err != nil {
				b.Fatal(err)
			}
			ours = append(ours, time.Since(start))
			lfts = 0
			for _, n := range f.Nodes {
				if n.Switch != nil {
					lfts += len(n.Switch.LFT)
				}
			}
		}
		doTheirs := func() {
			start := time.Now()
			r.sim.MustRun(host, "sh", "-c", "dump_fts > /dev/null")
			theirs = append(theirs, time.Since(start))
		}
		if i%2 == 0 {
			doOurs()
			doTheirs()
		} else {
			doTheirs()
			doOurs()
		}
		b.Logf("run %d: ibdoctor %v (ReadLFTs %v), dump_fts %v", i+1, ours[i].Round(time.Millisecond), reads[i].Round(time.Millisecond), theirs[i].Round(time.Millisecond))
	}
	b.StopTimer()
	mo, mt := ibsimtest.Median(ours), ibsimtest.Median(theirs)
	b.ReportMetric(mo.Seconds(), "ibdoctor-s")
	b.ReportMetric(ibsimtest.Median(reads).Seconds(), "readlfts-s")
	b.ReportMetric(mt.Seconds(), "dump_fts-s")
	b.ReportMetric(mo.Seconds()/mt.Seconds(), "ratio")
	b.ReportMetric(float64(lfts), "lft-entries")
	b.Logf("%d nodes, %d LFT entries; medians of %d runs: ibdoctor %v, dump_fts %v, ratio %.2f; engine %v",
		len(r.f.Nodes), lfts, runs, mo.Round(time.Millisecond), mt.Round(time.Millisecond), mo.Seconds()/mt.Seconds(), r.eng.Stats())
}
