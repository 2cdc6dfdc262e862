package cli

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestLaterSweepHoldsNoDecodedBaseline: what a later sweep keeps of the
// accepted baseline through its reading and checks is what the checks
// compare (checks.Baseline), not the decoded fabric: held beside the
// fabric the sweep reads, that was most of a later sweep's peak over a
// first one's (issue 13: 28 MiB live at 49k nodes). Fails if
// sweepBaseline keeps the *fabric.Fabric it decoded (or anything near
// its size).
func TestLaterSweepHoldsNoDecodedBaseline(t *testing.T) {
	// A quarter of FatTree8k (8 of its 32 pods, 2,560 nodes): the
	// decoded baseline is still over the 1 MiB below which the measure
	// is called broken, and a kept fabric far over the third.
	ft := topology.FatTree8k()
	ft.Pods = 8
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	nodes := len(f.Nodes)
	dir := t.TempDir()
	if err := snapshot.SaveBaseline(dir, f, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	f = nil

	h0 := liveHeap()
	dec, err := snapshot.LoadBaseline(dir)
	if err != nil || dec == nil {
		t.Fatalf("LoadBaseline: %v", err)
	}
	decoded := liveHeap() - h0
	runtime.KeepAlive(dec)
	dec = nil

	var out, errb bytes.Buffer
	a := &app{io: iostreams.New(nil, &out, &errb), stdout: &out, stderr: &errb}
	h1 := liveHeap()
	base, _, accepted, err := sweepBaseline(a, &sweepOptions{stateDir: dir, noSave: true})
	if err != nil || !accepted || base == nil {
		t.Fatalf("sweepBaseline: accepted %v, baseline %v, %v", accepted, base != nil, err)
	}
	held := liveHeap() - h1
	if base.Nodes() != nodes {
		t.Fatalf("baseline of %d nodes, saved %d", base.Nodes(), nodes)
	}
	runtime.KeepAlive(base)
	t.Logf("%d nodes: the decoded baseline %.1f MiB live, what the sweep keeps %.1f MiB", nodes, float64(decoded)/(1<<20), float64(held)/(1<<20))
	if decoded < 1<<20 {
		t.Fatalf("the decoded baseline is %d bytes live: the measure is broken", decoded)
	}
	if 3*held > decoded {
		t.Errorf("a later sweep keeps %.1f MiB of its baseline, the decoded fabric is %.1f MiB: want under a third", float64(held)/(1<<20), float64(decoded)/(1<<20))
	}
}
