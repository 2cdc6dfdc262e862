package gate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkGate10k measures a gate for a 64-host job on a 10,816-node
// 3-level fat tree (9,216 HCAs) from a fresh sweep snapshot on disk:
// loading the snapshot, matching hosts, scoping the routes, re-reading
// the scope's ports by LID through the simulator (PortInfo and PerfMgt
// counters), re-reading the LFT blocks of the job's LIDs along the live
// routes, and the checks. It reports the MADs one gate sends.
func BenchmarkGate10k(b *testing.B) {
	tree := topology.FatTree3{Pods: 9, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 1024}
	f, err := topology.Routed(tree)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e := engineAt(b, s, "gpu0001 mlx5_0")
	t0 := time.Now()
	sw, err := diagnose.Run(context.Background(), e, diagnose.Options{Routes: true, Counters: true})
	if err != nil {
		b.Fatal(err)
	}
	sweepTime := time.Since(t0)
	snap, err := snapshot.New(sw.Fabric, sw.Counters, sw.Taken, "sim:bench", "bench", sw.Complete)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if _, err := snap.Save(dir); err != nil {
		b.Fatal(err)
	}
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("gpu%04d", 1+i*137) // spread over the pods
	}
	tap := &classTap{}
	live := tappedEngine(b, s, "gpu9000 mlx5_0", tap)
	b.ReportMetric(float64(len(sw.Fabric.Nodes)), "nodes")
	b.ReportMetric(sweepTime.Seconds(), "sweep-s")
	b.ResetTimer()
	for b.Loop() {
		snap, err := snapshot.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := Run(context.Background(), snap, live, Options{Hosts: hosts, FailOn: checks.Error, ByLID: true, Counters: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("timings %v, scope %d ports %d switches, %d blocks, mads %+v", doc.Timings, doc.Scope.Ports, doc.Scope.Switches, doc.Scope.LFTBlocks, *doc.MADs)
		if doc.Status != "healthy" {
			b.Fatalf("status %s: %+v %+v", doc.Status, doc.Unreached, doc.Findings)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tap.smp.Load())/n, "SMPs/op")
	b.ReportMetric(float64(tap.perf.Load())/n, "PerfMgt/op")
}
