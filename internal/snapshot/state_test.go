package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

func stateFiles(t *testing.T, dir string) []string {
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
	if names := stateFiles(t, dir); len(names) != 3 || names[0] != s.FabricFile || names[1] != IndexName || names[2] != FileName {
		t.Errorf("state dir holds %v", names)
	}
	var doc map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, FileName))
	if err := json.Unmarshal(data, &doc); err != nil || doc["schema"] != Schema || doc["index_file"] != IndexName || doc["counters"] != nil {
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
	if err := SaveBaseline(dir, got); err != nil {
		t.Fatal(err)
	}
	if names, want := stateFiles(t, dir), []string{BaselineIndexName, BaselineName, s2.FabricFile, IndexName, FileName}; !slices.Equal(names, want) {
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
	for i, d := range []string{dir, other} {
		s, _ := New(f, everyPort{f}, taken.Add(time.Duration(i)*time.Hour), "sim:test", "test", true)
		if _, err := s.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(other, IndexName))
	if err := os.WriteFile(filepath.Join(dir, IndexName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte("newer sweep")) {
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
