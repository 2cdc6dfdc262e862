package snapshot

import (
	"os"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestIndexKeepsXmitWait is trial T8's state: gate.idx keeps each port's
// PortXmitWait (and whether it was saturated) beside its error counters,
// so that a later sweep or a gate judges the share of time stalled since
// this sweep; a port read without it saves none.
func TestIndexKeepsXmitWait(t *testing.T) {
	f := routedSmall(t)
	s, err := New(f, everyPort{f}, time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC), "sim:small", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	x, err := OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	want := map[string]uint64{}
	everyPort{f}.Ports(func(r checks.PortReading) { want[Key(r.Port)] = r.XmitWait.Value })
	var v Saved
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			w, read := want[Key(p)]
			if !read {
				continue
			}
			if !x.savedInto(n.GUID, p.Num, &v) {
				t.Fatalf("%s: nothing saved", Key(p))
			}
			if got, sat, ok := v.XmitWait(); !ok || got != w || sat {
				t.Errorf("%s: PortXmitWait %d %v %v, want %d", Key(p), got, sat, ok, w)
			}
			if _, _, ok := v.Error(xmitWaitName); !ok {
				t.Errorf("%s: the name set lacks PortXmitWait", Key(p))
			}
			c, _ := x.SavedCounters(n.GUID, p.Num)
			if _, isErr := c.Errors[xmitWaitName]; isErr || c.XmitWait == nil || *c.XmitWait != w {
				t.Errorf("%s: SavedCounters %+v: want PortXmitWait %d as XmitWait, not an error counter", Key(p), c, w)
			}
		}
	}
}

// TestIndexBeforeXmitWait: a gate.idx an ibdoctor wrote before it kept
// PortXmitWait (testdata/gate-733c71b.idx, written by 733c71b's encoder
// from readings that had PortXmitWait) still loads, its error counters
// are there, and no port has a saved PortXmitWait: a later sweep judges
// the value (the absolute info), never a share from an invented 0.
func TestIndexBeforeXmitWait(t *testing.T) {
	data, err := os.ReadFile("testdata/gate-733c71b.idx")
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil {
		t.Fatalf("an older gate.idx is refused: %v", err)
	}
	f, err := x.Whole()
	if err != nil {
		t.Fatal(err)
	}
	var v Saved
	saved := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || !x.savedInto(n.GUID, p.Num, &v) {
				continue
			}
			saved++
			if _, _, ok := v.Error("SymbolErrorCounter"); !ok {
				t.Errorf("%s: error counters lost", Key(p))
			}
			if w, _, ok := v.XmitWait(); ok {
				t.Errorf("%s: PortXmitWait %d from a file that never kept it", Key(p), w)
			}
			if c, _ := x.SavedCounters(n.GUID, p.Num); c.XmitWait != nil {
				t.Errorf("%s: SavedCounters gives PortXmitWait %d from a file that never kept it", Key(p), *c.XmitWait)
			}
		}
	}
	if saved == 0 {
		t.Fatal("no port's counters in the older file")
	}
}
