package snapshot

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// savedOf is v as a PortCounters, to compare with SavedCounters.
func savedOf(v *Saved) PortCounters {
	pc := PortCounters{Errors: map[string]uint64{}, From: v.From}
	for _, name := range v.names {
		x, sat, ok := v.Error(name)
		if !ok {
			panic(name)
		}
		if name == xmitWaitName {
			w, wsat, wok := v.XmitWait()
			if !wok || w != x || wsat != sat {
				panic(name)
			}
			pc.XmitWait = &w
		} else {
			pc.Errors[name] = x
		}
		if sat {
			pc.Saturated = append(pc.Saturated, name)
		}
	}
	return pc
}

// sameSaved says whether SavedInto's answer is SavedCounters' (a map
// without error counters is no saved reading to pair with).
func sameSaved(v *Saved, vok bool, c PortCounters, cok bool) bool {
	if vok != (cok && c.Errors != nil) {
		return false
	}
	if !vok {
		return true
	}
	got := savedOf(v)
	slices.Sort(got.Saturated)
	want := slices.Sorted(slices.Values(c.Saturated))
	return maps.Equal(got.Errors, c.Errors) && slices.Equal(got.Saturated, want) && got.From == c.From &&
		(got.XmitWait == nil) == (c.XmitWait == nil) && (got.XmitWait == nil || *got.XmitWait == *c.XmitWait)
}

// TestSavedIntoIsSavedCounters: SavedInto, the decoding a later sweep's
// pairing walks every port with (into one reused Saved), answers what
// SavedCounters answers, for each way a snapshot holds its counters: a
// loaded gate.idx (Load: a sweep's previous; LoadForGate), the encoding
// Save kept, and the map of a snapshot gate.idx cannot hold.
func TestSavedIntoIsSavedCounters(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	s, err := New(f, everyPort{f}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	forGate, err := LoadForGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer forGate.Close()
	unsaved, err := New(f, everyPort{f}, taken, "sim:test", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	// A map of counters, as a v1 snapshot.json or one gate.idx cannot
	// hold keeps them; one port saved without error counters.
	mapped := &Snapshot{Counters: map[string]PortCounters{}}
	for k, c := range unsaved.countersMap() {
		mapped.Counters[k] = c
	}
	var empty *fabric.Port
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && empty == nil && p.Num > 0 {
				empty = p
			}
		}
	}
	mapped.Counters[Key(empty)] = PortCounters{}
	sat := 0
	for k, c := range mapped.Counters {
		if c.Errors != nil && sat < 3 {
			sat++
			c.Saturated, c.From = []string{"VL15Dropped", "LinkDownedCounter"}, FromPortCounters
			mapped.Counters[k] = c
		}
	}
	for name, snap := range map[string]*Snapshot{"Load": loaded, "LoadForGate": forGate, "after Save": s, "map": mapped} {
		if snap == forGate {
			if _, err := snap.FabricFor([]string{"gpu001"}, nil); err != nil {
				t.Fatal(err)
			}
		}
		var v Saved
		n := 0
		for _, node := range f.Nodes {
			for _, p := range node.Ports {
				if p == nil {
					continue
				}
				vok := snap.SavedInto(p, &v)
				c, cok := snap.SavedCounters(p)
				if !sameSaved(&v, vok, c, cok) {
					t.Fatalf("%s: %s: SavedInto %v %+v, SavedCounters %v %+v", name, Key(p), vok, savedOf(&v), cok, c)
				}
				if vok {
					n++
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no port's counters saved", name)
		}
	}
}
