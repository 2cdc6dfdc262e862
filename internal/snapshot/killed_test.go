package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestSaveKilledAtEachRename: a sweep stopped before any one of Save's
// renames (a SIGKILL, a full disk) leaves either the previous state whole
// or the new one whole, never a mix. Before, Save renamed verdicts.json,
// then gate.idx, then snapshot.json over the old ones: stopped after the
// first, the old snapshot.json was left with a newer verdicts.json (trial
// B3, strace -e inject=renameat:signal=KILL:when=2), which Load and
// LoadForGate refuse, so gates swept the fabric themselves and the next
// sweep lost its counter pairing.
func TestSaveKilledAtEachRename(t *testing.T) {
	f := routedSmall(t)
	old := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	now := old.Add(time.Hour)
	snap := func(at time.Time) *Snapshot {
		s, err := New(f, everyPort{f}, at, "sim:test", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		s.SetFabricVerdicts(&checks.FabricVerdicts{})
		return s
	}
	stop := errors.New("killed")
	renames := 0
	for n := 1; ; n++ {
		dir := t.TempDir()
		if _, err := snap(old).Save(dir); err != nil {
			t.Fatal(err)
		}
		s := snap(now)
		s.beforeRename = func(i int) error {
			renames = max(renames, i)
			if i == n {
				return stop
			}
			return nil
		}
		_, err := s.Save(dir)
		if err != nil && !errors.Is(err, stop) {
			t.Fatal(err)
		}
		want := old
		if err == nil {
			want = now
		}
		for name, load := range map[string]func(string) (*Snapshot, error){"Load": Load, "LoadForGate": LoadForGate} {
			l, lerr := load(dir)
			if lerr != nil {
				t.Errorf("stopped before rename %d: %s: %v", n, name, lerr)
				continue
			}
			if !l.TakenAt.Equal(want) {
				t.Errorf("stopped before rename %d: %s gives the sweep of %s, want %s", n, name, l.TakenAt, want)
			}
			if v := l.FabricVerdicts(); v == nil || !v.Taken.Equal(want) {
				t.Errorf("stopped before rename %d: %s: verdicts %+v, want those of %s", n, name, v, want)
			}
			if sum, _ := l.HCASummary(); name == "LoadForGate" && sum == nil {
				t.Errorf("stopped before rename %d: %s: no census summary", n, name)
			}
			if _, ok := l.SavedCounters(f.Nodes[0].Ports[1]); !ok {
				t.Errorf("stopped before rename %d: %s: no saved counters", n, name)
			}
			l.Close()
		}
		if err == nil {
			break
		}
	}
	if renames < 5 {
		t.Errorf("Save renamed %d files, want the fabric file, gate.idx, the census, the verdicts and snapshot.json", renames)
	}
}

// TestSaveStageFailureRenamesNothing: a file that cannot be staged (here the
// verdicts' name taken by a folder) fails Save before any rename: the
// previous state stays whole and no file of the failed sweep is left.
func TestSaveStageFailureRenamesNothing(t *testing.T) {
	f := routedSmall(t)
	old := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	s, _ := New(f, everyPort{f}, old, "sim:test", "test", true)
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	before := stateFiles(t, dir)
	now := old.Add(time.Hour)
	if err := os.Mkdir(filepath.Join(dir, verdictsFileName(now)), 0o755); err != nil {
		t.Fatal(err)
	}
	s2, _ := New(f, everyPort{f}, now, "sim:test", "test", true)
	s2.SetFabricVerdicts(&checks.FabricVerdicts{})
	if _, err := s2.Save(dir); err == nil {
		t.Fatal("Save with its verdicts' name taken by a folder: no error")
	}
	os.Remove(filepath.Join(dir, verdictsFileName(now)))
	if after := stateFiles(t, dir); len(after) != len(before) {
		t.Errorf("state dir before %v, after the failed save %v", before, after)
	}
	l, err := LoadForGate(dir)
	if err != nil || !l.TakenAt.Equal(old) {
		t.Fatalf("LoadForGate after the failed save: %v", err)
	}
	l.Close()
}

// TestSaveReplacesSymlinkedStateFile (trial B7): a state file that is a
// symlink into another state dir is replaced in this dir by a regular
// file; the other dir is not written through it. Before, Save followed
// the link, so one fabric's sweep overwrote the other dir's
// snapshot.json with one naming files that exist only here.
func TestSaveReplacesSymlinkedStateFile(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	other, dir := t.TempDir(), t.TempDir()
	s, _ := New(f, everyPort{f}, taken, "sim:other", "test", true)
	if _, err := s.Save(other); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(other, FileName))
	for _, name := range []string{FileName, LastSweepName} {
		if err := os.Symlink(filepath.Join(other, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	s2, _ := New(f, everyPort{f}, taken.Add(time.Hour), "sim:here", "test", true)
	if _, err := s2.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := SaveLastSweep(dir, LastSweep{TakenAt: taken.Add(time.Hour), Saved: true}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(other, FileName)); !bytes.Equal(after, before) {
		t.Errorf("the other state dir's snapshot.json was written through the link:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(other, LastSweepName)); err == nil {
		t.Errorf("last-sweep.json was written through the link into the other dir")
	}
	for _, name := range []string{FileName, LastSweepName} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s in the state dir: %v %v, want a regular file", name, st, err)
		}
	}
	for d, src := range map[string]string{other: "sim:other", dir: "sim:here"} {
		l, err := LoadForGate(d)
		if err != nil || l.Source != src {
			t.Fatalf("%s: %v %v", d, l, err)
		}
		l.Close()
	}
}
