package gate

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/diagnose"
	"github.com/ibdoctor/ibdoctor/internal/sim"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// BenchmarkGate10k measures a gate for a 64-host job on a 10,816-node
// 3-level fat tree (9,216 HCAs) from a fresh sweep snapshot on disk (with
// its counters): opening the state, matching hosts, scoping the routes,
// re-reading the scope's ports by LID through the simulator (PortInfo and
// PerfMgt counters), re-reading the LFT blocks of the job's LIDs along
// the live routes, and the checks. "index" reads gate.idx (what gate
// does), "json" snapshot.json and its fabric file (the format before).
// It reports the MADs one gate sends and the state's size per node.
// Figures in docs/architecture.md.
func BenchmarkGate10k(b *testing.B) {
	benchGate(b, topology.FatTree3{Pods: 9, LeavesPerPod: 32, SpinesPerPod: 32, HostsPerLeaf: 32, Cores: 1024}, 137)
}

// BenchmarkGate8k is the same on topology.FatTree8k (9,472 nodes, 8,192
// HCAs, one a host): what the gate's NodeInfo re-read of the job's HCAs
// adds is one SMP per HCA (SMPs/op).
func BenchmarkGate8k(b *testing.B) {
	benchGate(b, topology.FatTree8k(), 128)
}

// BenchmarkGate49k is the same on FatTree50k (48,896 nodes, 45,056 HCAs). Building and
// sweeping it takes minutes and several GB: it runs only with
// IBDOCTOR_BENCH_BIG=1.
func BenchmarkGate49k(b *testing.B) {
	if os.Getenv("IBDOCTOR_BENCH_BIG") != "1" {
		b.Skip("set IBDOCTOR_BENCH_BIG=1 to build the 49k-HCA fabric")
	}
	benchGate(b, topology.FatTree50k(), 700)
}

func benchGate(b *testing.B, tree topology.FatTree3, stride int) {
	f, err := topology.Routed(tree)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sim.New(f, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var cas []string // the HCAs' descriptions, in fabric order
	for _, n := range f.Nodes {
		if n.Switch == nil {
			cas = append(cas, n.Description)
		}
	}
	e := engineAt(b, s, cas[0])
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
	nodes := len(sw.Fabric.Nodes)
	size := func(names ...string) int64 {
		var n int64
		for _, name := range names {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			n += st.Size()
		}
		return n
	}
	idxSize, jsonSize := size(snap.IndexFile), size(snapshot.FileName, snap.FabricFile)
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = strings.Fields(cas[i*stride])[0] // spread over the pods
	}
	sw, snap, f = nil, nil, nil
	runtime.GC()
	for _, c := range []struct {
		name string
		load func(string) (*snapshot.Snapshot, error)
		size int64
	}{
		{"index", snapshot.LoadForGate, idxSize},
		{"json", snapshot.Load, jsonSize},
	} {
		b.Run(c.name, func(b *testing.B) {
			tap := &classTap{}
			live := tappedEngine(b, s, cas[len(cas)*97/100], tap)
			for b.Loop() {
				snap, err := c.load(dir)
				if err != nil {
					b.Fatal(err)
				}
				doc, err := Run(context.Background(), snap, live, Options{Hosts: hosts, FailOn: checks.Error, ByLID: true, Counters: true})
				snap.Close()
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("timings %v, scope %d ports %d switches, %d blocks, mads %+v", doc.Timings, doc.Scope.Ports, doc.Scope.Switches, doc.Scope.LFTBlocks, *doc.MADs)
				if doc.Status != "healthy" {
					b.Fatalf("status %s: %+v %+v", doc.Status, doc.Unreached, doc.Findings)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(sweepTime.Seconds(), "sweep-s")
			b.ReportMetric(float64(c.size)/float64(nodes), "state-B/node")
			b.ReportMetric(float64(tap.smp.Load())/n, "SMPs/op")
			b.ReportMetric(float64(tap.perf.Load())/n, "PerfMgt/op")
		})
	}
}
