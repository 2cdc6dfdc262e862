package snapshot

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// saveState saves f with counters c taken at taken into a new folder,
// the fabric file written ahead when ahead, and returns every file's
// bytes by name.
func saveState(t *testing.T, f *fabric.Fabric, c checks.Counters, taken time.Time, ahead bool) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	s, err := New(f, c, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if ahead {
		s.WriteAhead(WriteFabricAhead(context.Background(), dir, f, taken, nil))
	}
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range stateFiles(t, dir) {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("temporary file left: %s", name)
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// TestSaveWrittenAheadSameBytes: a state saved with its fabric file
// written ahead (WriteFabricAhead) is byte for byte the state Save
// writes alone, every file; with counters gate.idx cannot hold too, for
// which the file written ahead without the tables is thrown away and
// written again with them.
func TestSaveWrittenAheadSameBytes(t *testing.T) {
	taken := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		counters func(*fabric.Fabric) checks.Counters
	}{
		{"indexed", func(f *fabric.Fabric) checks.Counters { return everyPort{f} }},
		{"not indexed", func(f *fabric.Fabric) checks.Counters { return manyCounters{f} }},
	} {
		f := routedSmall(t)
		want := saveState(t, f, c.counters(f), taken, false)
		got := saveState(t, f, c.counters(f), taken, true)
		if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
			t.Fatalf("%s: written ahead the state holds %v, else %v", c.name, sortedKeys(got), sortedKeys(want))
		}
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Errorf("%s: %s differs written ahead (%d bytes, else %d)", c.name, name, len(got[name]), len(b))
			}
		}
	}
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestFabricAheadAbortedLeavesState: a fabric file being written ahead
// whose sweep is interrupted (ctx ends) or fails (Abort) leaves no file
// behind, and the previous state loads as it was.
func TestFabricAheadAbortedLeavesState(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 16}, Leaves: 8, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prevTaken := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	prev, err := New(f, everyPort{f}, prevTaken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prev.Save(dir); err != nil {
		t.Fatal(err)
	}
	before := stateFiles(t, dir)
	taken := prevTaken.Add(time.Hour)

	// Interrupted: the context ends before the write is done.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := WriteFabricAhead(ctx, dir, f, taken, nil)
	if err := a.Wait(); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("written ahead under an ended context: %v, want context canceled", err)
	}
	a.Abort()
	// Failed: Abort while it writes, or after it wrote.
	for _, wait := range []bool{false, true} {
		a := WriteFabricAhead(context.Background(), dir, f, taken, nil)
		if wait {
			if err := a.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		a.Abort()
		a.Abort() // twice, as a sweep's deferred Abort after an explicit one
	}
	if got := stateFiles(t, dir); !slices.Equal(got, before) {
		t.Errorf("state dir after aborted writes: %v, want %v", got, before)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.TakenAt.Equal(prevTaken) {
		t.Errorf("snapshot taken at %v, want the previous one's %v", l.TakenAt, prevTaken)
	}
	if _, err := l.FabricModel(); err != nil {
		t.Error(err)
	}
}

// TestFabricAheadBesideChecks: the fabric file is written while the
// checks judge the same fabric (as a sweep does); under the race
// detector any write either makes to what the other reads fails it. The
// file then holds the fabric as Save writes it.
func TestFabricAheadBesideChecks(t *testing.T) {
	f, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 16}, Leaves: 8, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	taken := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	a := WriteFabricAhead(context.Background(), dir, f, taken, nil)
	defer a.Abort()
	snap := &checks.Snapshot{Fabric: f, Counters: everyPort{f}}
	res, err := checks.Run(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) == 0 && len(res.Ran) == 0 {
		t.Fatal("no check ran")
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	want := saveState(t, f, everyPort{f}, taken, false)
	if err := a.staged.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, fabricFileName(taken)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[fabricFileName(taken)]) {
		t.Error("the fabric file written beside the checks is not Save's")
	}
}

// TestSaveRemovesStaleTemporaries: a sweep killed with SIGKILL (cron's
// timeout -s KILL, the OOM killer) leaves its staged fabric file; the
// next Save, under the lock, removes such temporaries of state files, and
// only regular files with a state file's temporary name.
func TestSaveRemovesStaleTemporaries(t *testing.T) {
	f := routedSmall(t)
	dir := t.TempDir()
	stale := []string{".fabric-1795771358912020880.json.gz.tmp-416033148", ".gate.idx.tmp-12", ".snapshot.json.tmp-7"}
	for _, n := range stale {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("half a file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := []string{".report.json.tmp-5", "fabric-notes.txt"} // not a state file's temporary
	for _, n := range keep {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other := t.TempDir()
	if err := os.Symlink(filepath.Join(other, "target"), filepath.Join(dir, ".verdicts.json.tmp-3")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".fabric-1.json.gz.tmp-4"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, ".verdicts.json.tmp-3", ".fabric-1.json.gz.tmp-4")
	s, err := New(f, everyPort{f}, time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a killed sweep's temporary is still there after Save (%v)", n, err)
		}
	}
	for _, n := range keep {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: not a state file's regular temporary, removed: %v", n, err)
		}
	}
}
