package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

func routedSmall(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := topology.Routed(topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 3})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func stateFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestSaveLoadRoundTrip: what Load gives back from a saved state is the
// fabric saved, forwarding tables included (they are kept in gate.idx, not
// in the compressed fabric file), and every port's counters.
func TestSaveLoadRoundTrip(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	s, err := New(f, everyPort{f}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if names := stateFiles(t, dir); len(names) != 4 || s.CensusFile == "" || names[0] != s.CensusFile || names[1] != s.FabricFile || names[2] != s.IndexFile || names[3] != FileName {
		t.Errorf("state dir holds %v", names)
	}
	var doc map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, FileName))
	if err := json.Unmarshal(data, &doc); err != nil || doc["schema"] != Schema || doc["index_file"] != s.IndexFile || doc["counters"] != nil {
		t.Errorf("snapshot.json: %s (%v)", data, err)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := l.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fabric.Marshal(f)
	if have, _ := fabric.Marshal(got); !bytes.Equal(have, want) {
		t.Errorf("fabric differs after Save and Load:\n%.600s\nwant\n%.600s", have, want)
	}
	n := 0
	for _, node := range got.Nodes {
		for _, p := range node.Ports {
			if p == nil {
				continue
			}
			saved, ok := l.SavedCounters(p)
			if w, wok := s.SavedCounters(p); ok != wok || (ok && !reflect.DeepEqual(saved.Errors, w.Errors)) {
				t.Errorf("%s: saved %v %v, want %v %v", Key(p), saved, ok, w, wok)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no ports")
	}
}

// TestLoadV1State: a state dir an earlier ibdoctor wrote (v1: a plain
// fabric file with its tables, the counters in snapshot.json, an indented
// baseline.json) is still read; the next save and accept replace its
// files rather than leave them beside the new ones.
func TestLoadV1State(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	s, err := New(f, everyPort{f}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fabricV1, _ := fabric.MarshalWith(f, fabric.MarshalOptions{})
	baseV1, _ := fabric.MarshalWith(f, fabric.MarshalOptions{OmitLFT: true, Indent: true})
	s.Schema, s.FabricFile, s.Counters = SchemaV1, "fabric-1.json", s.countersMap()
	snapV1, _ := json.Marshal(s)
	for name, data := range map[string][]byte{"fabric-1.json": fabricV1, FileName: snapV1, BaselineV1Name: baseV1} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	if have, _ := fabric.Marshal(got); !bytes.Equal(have, mustMarshal(t, f)) {
		t.Error("v1 fabric differs")
	}
	p := got.Nodes[len(got.Nodes)-1].Ports[1]
	if c, ok := l.SavedCounters(p); !ok || !reflect.DeepEqual(c, s.Counters[Key(p)]) {
		t.Errorf("v1 counters of %s: %v %v", Key(p), c, ok)
	}
	b, err := LoadBaseline(dir)
	if err != nil || b == nil || len(b.Nodes) != len(f.Nodes) {
		t.Fatalf("v1 baseline: %v %v", b, err)
	}
	s2, _ := New(got, everyPort{got}, taken.Add(time.Hour), "sim:test", "test", true)
	if _, err := s2.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := SaveBaseline(dir, got, "sim:test", false); err != nil {
		t.Fatal(err)
	}
	if names, want := stateFiles(t, dir), []string{BaselineIndexName, BaselineName, BaselineTopologyName, s2.CensusFile, s2.FabricFile, s2.IndexFile, FileName}; !slices.Equal(names, want) {
		t.Errorf("after a save and an accept the state dir holds %v, want %v", names, want)
	}
	if b, err := LoadBaseline(dir); err != nil || b == nil || len(b.Nodes) != len(f.Nodes) || b.Nodes[0].Switch.LFT != nil {
		t.Errorf("baseline after accept: %v", err)
	}
}

// TestLoadIndexOfAnotherSweep: a gate.idx that is not the sweep
// snapshot.json names (a save between its two renames, or a file copied
// in) is not taken for it: Load waits for the sweep, then says to sweep.
func TestLoadIndexOfAnotherSweep(t *testing.T) {
	f := routedSmall(t)
	dir, other := t.TempDir(), t.TempDir()
	taken := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	var names []string
	for i, d := range []string{dir, other} {
		s, _ := New(f, everyPort{f}, taken.Add(time.Duration(i)*time.Hour), "sim:test", "test", true)
		if _, err := s.Save(d); err != nil {
			t.Fatal(err)
		}
		names = append(names, s.IndexFile)
	}
	data, _ := os.ReadFile(filepath.Join(other, names[1]))
	if err := os.WriteFile(filepath.Join(dir, names[0]), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte(names[0]+" is of the sweep taken at 2026-11-24T02:00:00Z, snapshot.json of the one at 2026-11-24T01:00:00Z")) {
		t.Errorf("Load with another sweep's gate.idx: %v", err)
	}
}

func mustMarshal(t *testing.T, f *fabric.Fabric) []byte {
	t.Helper()
	b, err := fabric.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadMissingIndexSaysSo: with gate.idx removed (no sweep running),
// Load and LoadForGate said "the fabric file (or gate.idx) it names is gone
// or from a newer sweep (sweeps replaced it 20 times while it was read)":
// nothing replaced anything, the file is missing, and they say that.
func TestLoadMissingIndexSaysSo(t *testing.T) {
	f := routedSmall(t)
	dir := t.TempDir()
	s, _ := New(f, everyPort{f}, time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC), "sim:test", "test", true)
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, s.IndexFile)); err != nil {
		t.Fatal(err)
	}
	for name, load := range map[string]func(string) (*Snapshot, error){"Load": Load, "LoadForGate": LoadForGate} {
		_, err := load(dir)
		if err == nil {
			t.Fatalf("%s without gate.idx: no error", name)
		}
		msg := err.Error()
		for _, want := range []string{"names " + s.IndexFile + ", which is missing", "no sweep replaced", "run 'ibdoctor sweep' again"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", name, msg, want)
			}
		}
		if strings.Contains(msg, "sweeps replaced it") || strings.Contains(msg, "newer sweep") {
			t.Errorf("%s: %q blames sweeps", name, msg)
		}
	}
}

// TestLoadForGateReadsSnapshotJSON: a gate answered from gate.idx alone,
// so a snapshot.json replaced by garbage, or dated otherwise than gate.idx
// (taken_at edited to 2027), went unnoticed. The entry point is checked:
// garbage is refused, a date of another sweep is named.
func TestLoadForGateReadsSnapshotJSON(t *testing.T) {
	f := routedSmall(t)
	dir := t.TempDir()
	s, _ := New(f, everyPort{f}, time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC), "sim:test", "test", true)
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := LoadForGate(dir); err != nil {
		t.Fatalf("a sound state: %v", err)
	} else {
		g.Close()
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"garbage", []byte("{garbage"), "snapshot " + path + " is not valid JSON"},
		{"taken_at edited", bytes.Replace(good, []byte(`"2026-11-24T01:00:00Z"`), []byte(`"2027-11-24T01:00:00Z"`), 1),
			"snapshot " + path + " fails its checksum"},
		{"taken_at another sweep's", resealed(good, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"2026-11-24T01:00:00Z"`), []byte(`"2027-11-24T01:00:00Z"`), 1)
		}), ".idx is of the sweep taken at 2026-11-24T01:00:00Z, snapshot.json of the one at 2027-11-24T01:00:00Z"},
	} {
		if bytes.Equal(c.data, good) {
			t.Fatalf("%s: snapshot.json unchanged: %s", c.name, good)
		}
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := LoadForGate(dir)
		if err == nil {
			g.Close()
			t.Errorf("%s: the gate answered from gate.idx without a word", c.name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q lacks %q", c.name, err, c.want)
		}
	}
}

// TestMissingIndexWaitsOnlyForASweep: snapshot.json naming a missing
// gate.idx was read 20 times over about 3 s in case a sweep was between
// its renames, even with no sweep running: a gate in a job's prolog
// waited that long before sweeping itself. A sweep holds sweep.lock while
// it renames its files: with the lock free the reader looks once more
// under a shared lock and says at once that none holds it (the message
// tells the two paths apart); with the lock held it still waits, and
// reads the state the sweep completes.
func TestMissingIndexWaitsOnlyForASweep(t *testing.T) {
	f := routedSmall(t)
	for _, locked := range []bool{false, true} {
		dir := t.TempDir()
		s, _ := New(f, everyPort{f}, time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC), "sim:test", "test", true)
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		// A sweep that ran once and left its lock file behind, released.
		l, err := Acquire(context.Background(), dir, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		idx, aside := filepath.Join(dir, s.IndexFile), filepath.Join(t.TempDir(), IndexName)
		if err := os.Rename(idx, aside); err != nil {
			t.Fatal(err)
		}
		for name, load := range map[string]func(string) (*Snapshot, error){"Load": Load, "LoadForGate": LoadForGate} {
			if !locked {
				_, err := load(dir)
				if err == nil || !strings.Contains(err.Error(), "names "+s.IndexFile+", which is missing (no sweep replaced the snapshot while it was read, and none holds sweep.lock)") {
					t.Errorf("%s, no sweep: %v", name, err)
				}
				continue
			}
			// A sweep between its renames: gate.idx comes back before
			// the sweep lets go of the lock.
			l, err := Acquire(context.Background(), dir, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				s   *Snapshot
				err error
			}
			got := make(chan result)
			go func() {
				s, err := load(dir)
				got <- result{s, err}
			}()
			time.Sleep(100 * time.Millisecond)
			if err := os.Rename(aside, idx); err != nil {
				t.Fatal(err)
			}
			l.Release()
			r := <-got
			if r.err != nil {
				t.Errorf("%s beside a sweep's renames: %v", name, r.err)
			} else {
				r.s.Close()
			}
			if err := os.Rename(idx, aside); err != nil {
				t.Fatal(err)
			}
		}
	}
}
