package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/iostreams"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// TestDesignedSweepDoesNotDecodeBaseline: a sweep given --expect-topology
// compares against the designed topology; of the state dir's baseline it
// needs only to know that one exists (so that it takes none), which a
// stat says. Decoding it for that was seconds of CPU at 49k nodes
// (issue 13). The baseline here is not JSON at all: a decode fails the
// sweep, a stat does not; the file is left as it was. Without
// baseline.idx (a state dir from before it) it is still decoded, to
// write that, and its damage fails the sweep as before.
func TestDesignedSweepDoesNotDecodeBaseline(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 2, Spines: 1, HostsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	designed := checks.BaselineOf(f)
	garbage := []byte("not a gzip stream: the baseline an interrupted copy left")
	for _, c := range []struct {
		name   string
		noSave bool
		noIdx  bool
		fails  bool
	}{
		{"save", false, false, false},
		{"no-save", true, false, false},
		{"no-save without baseline.idx", true, true, false},
		{"save without baseline.idx", false, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := snapshot.SaveBaseline(dir, f, "sim:test", false); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, snapshot.BaselineName)
			if err := os.WriteFile(path, garbage, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.noIdx {
				if err := os.Remove(filepath.Join(dir, snapshot.BaselineIndexName)); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb bytes.Buffer
			a := &app{io: iostreams.New(nil, &out, &errb), stdout: &out, stderr: &errb}
			base, prev, exists, err := sweepBaseline(a, &sweepOptions{stateDir: dir, noSave: c.noSave, designed: designed})
			if prev != nil {
				prev.Close()
			}
			if c.fails {
				if err == nil {
					t.Fatalf("no error: the damaged baseline was needed for baseline.idx")
				}
				return
			}
			if err != nil {
				t.Fatalf("sweepBaseline: %v (the baseline was decoded)", err)
			}
			if base != designed || !exists {
				t.Errorf("baseline designed %v, exists %v: want the designed one, and the state dir's seen", base == designed, exists)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, garbage) {
				t.Errorf("%s was rewritten", snapshot.BaselineName)
			}
			if errb.Len() > 0 {
				t.Errorf("stderr: %s", errb.String())
			}
		})
	}
	// No baseline at all: none exists, and none is made from nothing.
	dir := t.TempDir()
	var out, errb bytes.Buffer
	a := &app{io: iostreams.New(nil, &out, &errb), stdout: &out, stderr: &errb}
	if _, _, exists, err := sweepBaseline(a, &sweepOptions{stateDir: dir, designed: designed}); err != nil || exists {
		t.Errorf("empty state dir: exists %v, %v", exists, err)
	}
}

// BenchmarkDesignedSweepBaseline is what a sweep given --expect-topology
// spends on the state dir's baseline (IBDOCTOR_BENCH_STATE, e.g. a 49k
// sweep's; else a FatTree8k baseline), --no-save so the dir is not
// touched.
func BenchmarkDesignedSweepBaseline(b *testing.B) {
	f, err := topology.FatTree8k().Build()
	if err != nil {
		b.Fatal(err)
	}
	dir := os.Getenv("IBDOCTOR_BENCH_STATE")
	if dir == "" {
		dir = b.TempDir()
		if err := snapshot.SaveBaseline(dir, f, "sim:bench", false); err != nil {
			b.Fatal(err)
		}
	}
	designed := checks.BaselineOf(f)
	var out, errb bytes.Buffer
	a := &app{io: iostreams.New(nil, &out, &errb), stdout: &out, stderr: &errb}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, prev, exists, err := sweepBaseline(a, &sweepOptions{stateDir: dir, noSave: true, designed: designed})
		if err != nil || !exists {
			b.Fatal(exists, err)
		}
		if prev != nil {
			prev.Close()
		}
	}
}
