package route

import (
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/discover"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/ibsimtest"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/internal/transport"
	"github.com/ibdoctor/ibdoctor/internal/transport/ibsim"
	"github.com/ibdoctor/ibdoctor/mad"
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
					lfts += n.Switch.LFT.Len()
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

// BenchmarkReadLFTsIBSim reads every switch's table (SwitchInfo and the
// blocks up to LinearFDBTop) of the 1,072-node two-level fat tree on ibsim
// after OpenSM routed it, with the engine's global window and ReadLFTs'
// Parallel both set to each window size. Per SMP it reports this
// process's CPU (cpu-µs/SMP) and ibsim's (ibsim-µs/SMP, from
// /proc/PID/stat): which of the two bounds the table stage when they share
// the cores. CPU per SMP holds under load; SMPs/s does not.
//
//	go test -run '^$' -bench ReadLFTsIBSim1k -benchmem ./internal/route/
func BenchmarkReadLFTsIBSim1k(b *testing.B) {
	benchReadLFTsIBSim(b, ibsimtest.FatTree(32, 32, 16), "h0001")
}

// BenchmarkReadLFTsIBSim8k is BenchmarkReadLFTsIBSim1k on topology.FatTree8k
// (1,280 switches, directed routes of up to 5 hops); OpenSM's first sweep
// takes a minute on a loaded host, so it runs only when -bench names it.
//
//	go test -run '^$' -bench ReadLFTsIBSim8k -benchtime 2x -benchmem -timeout 30m ./internal/route/
func BenchmarkReadLFTsIBSim8k(b *testing.B) {
	ibsimtest.RequireNamedBench(b, "8k", "-bench ReadLFTsIBSim8k -benchtime 2x -timeout 30m")
	_, net, host := ibsimtest.NetFile(b, topology.FatTree8k())
	benchReadLFTsIBSim(b, net, host)
}

func benchReadLFTsIBSim(b *testing.B, net, host string) {
	r := startIBSim(b, net, host, 0)
	smps := 0
	for _, n := range r.f.Nodes {
		if n.Type == mad.NodeSwitch {
			smps++ // SwitchInfo
		}
	}
	if err := ReadLFTs(r.ctx, r.eng, r.f, ReadOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, n := range r.f.Nodes {
		if n.Switch != nil {
			smps += mad.LFTBlockCount(n.Switch.LinearFDBTop)
		}
	}
	r.eng.Close()
	paths := map[*fabric.Node]mad.Path{}
	for _, n := range r.f.Nodes {
		if n.Type == mad.NodeSwitch {
			paths[n] = n.Path
		}
	}
	for _, mode := range []string{"dr", "lid"} {
		for _, w := range []int{8, 16, 64, 256} {
			b.Run(mode+"/window="+strconv.Itoa(w), func(b *testing.B) {
				// By LID: ReadLFTs addresses a switch without a Path
				// by its LID.
				for n, p := range paths {
					if mode == "lid" {
						p = nil
					}
					n.Path = p
				}
				defer func() {
					for n, p := range paths {
						n.Path = p
					}
				}()
				c, err := ibsim.Dial(r.ctx, ibsim.Options{SockName: r.sim.SockName, Host: host})
				if err != nil {
					b.Fatal(err)
				}
				eng := transport.NewEngine(c, transport.Options{Timeout: 2 * time.Second, Window: w})
				defer eng.Close()
				b.ReportAllocs()
				b.ResetTimer()
				cpu0, sim0, sys0, sw0, simw0 := processCPU(b), r.sim.CPU(), sysCPU(b), ctxSwitches(b), r.sim.Waits()
				for range b.N {
					if err := ReadLFTs(r.ctx, eng, r.f, ReadOptions{Parallel: w}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				cpu, sim, sys, sw, simw := processCPU(b)-cpu0, r.sim.CPU()-sim0, sysCPU(b)-sys0, ctxSwitches(b)-sw0, r.sim.Waits()-simw0
				n := float64(b.N * smps)
				b.ReportMetric(n/b.Elapsed().Seconds(), "SMPs/s")
				b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/SMP")
				b.ReportMetric(float64(sys.Microseconds())/n, "sys-µs/SMP")
				b.ReportMetric(float64(sim.Microseconds())/n, "ibsim-µs/SMP")
				b.ReportMetric(float64(sw)/n, "waits/SMP")
				b.ReportMetric(float64(simw)/n, "ibsim-waits/SMP")
				b.ReportMetric(float64(eng.Stats().MaxInFlight), "max-in-flight")
				if st := eng.Stats(); st.Retried > 0 || st.TimedOut > 0 {
					b.Logf("engine %v", st)
				}
			})
		}
	}
}

// processCPU is this process's user and system time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sysCPU is this process's system time so far.
func sysCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Stime.Nano())
}

// ctxSwitches is how many times this process's threads blocked (voluntary
// context switches): a wake-up each, the main kernel cost of a MAD here.
func ctxSwitches(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Nvcsw
}
