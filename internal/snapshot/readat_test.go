package snapshot

import (
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
)

// timedPorts is everyPort with each reading's request and answer times:
// port i was asked at taken+i×1.0005 s and answered 3 ms later; every
// 5th reading has no request time (its answer stands for it), every
// 7th none at all.
type timedPorts struct {
	everyPort
	taken time.Time
}

func (c timedPorts) Ports(fn func(checks.PortReading)) {
	i := 0
	c.everyPort.Ports(func(r checks.PortReading) {
		i++
		if i%7 != 0 {
			sent := c.taken.Add(time.Duration(i) * 1000500 * time.Microsecond)
			r.ReadAt = sent.Add(3 * time.Millisecond)
			if i%5 != 0 {
				r.ReadSent = sent
			}
		}
		fn(r)
	})
}

// near says got is want, or gate.idx's millisecond below it (never
// later: a span from it is not shorter than the true one).
func near(got, want time.Time) bool {
	if want.IsZero() {
		return got.IsZero()
	}
	d := want.Sub(got)
	return d >= 0 && d < time.Millisecond
}

// TestIndexKeepsReadAt: gate.idx keeps when the sweep read each port (its
// request, else its answer), to the millisecond rounded down, so a later
// sweep or a gate times each port's growth from its own reading
// (TestSinceSweepSpanPerPort); a port read without a time has none, and
// the walk's decode (Saved) says the same as SavedCounters, from the
// file, from the encoding kept after Save, and from snapshot.json's map
// (a fabric gate.idx cannot hold).
func TestIndexKeepsReadAt(t *testing.T) {
	f := routedSmall(t)
	taken := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	want := map[string]time.Time{}
	c := timedPorts{everyPort{f}, taken}
	c.Ports(func(r checks.PortReading) {
		at := r.ReadSent
		if at.IsZero() {
			at = r.ReadAt
		}
		want[Key(r.Port)] = at
	})
	check := func(what string, saved func(p *fabric.Port) (PortCounters, bool), into func(p *fabric.Port, v *Saved) bool) {
		t.Helper()
		var v Saved
		n := 0
		for _, nd := range f.Nodes {
			for _, p := range nd.Ports {
				if p == nil {
					continue
				}
				w, read := want[Key(p)]
				if !read {
					continue
				}
				n++
				pc, ok := saved(p)
				if !ok || !near(pc.ReadAt, w) {
					t.Fatalf("%s: %s: SavedCounters ReadAt %v (%v), want %v", what, Key(p), pc.ReadAt, ok, w)
				}
				if !into(p, &v) || !near(v.At, w) {
					t.Fatalf("%s: %s: Saved.At %v, want %v", what, Key(p), v.At, w)
				}
			}
		}
		if n == 0 {
			t.Fatalf("%s: no port", what)
		}
	}
	s, err := New(f, c, taken, "sim:small", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := s.Save(dir); err != nil {
		t.Fatal(err)
	}
	check("after Save", s.SavedCounters, s.SavedInto)
	x, err := OpenIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	check("gate.idx", func(p *fabric.Port) (PortCounters, bool) { return x.SavedCounters(p.Node.GUID, p.Num) },
		func(p *fabric.Port, v *Saved) bool { return x.savedInto(p.Node.GUID, p.Num, v) })

	// snapshot.json's map, and gate.idx encoded from it.
	m, err := New(f, nil, taken, "sim:small", "test", true)
	if err != nil {
		t.Fatal(err)
	}
	m.Counters = map[string]PortCounters{}
	c.Ports(func(r checks.PortReading) { m.Counters[Key(r.Port)] = portCountersOf(r) })
	check("map", m.SavedCounters, m.SavedInto)
	data, err := EncodeIndex(f, m.Counters, taken, "sim:small", true)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	check("EncodeIndex", func(p *fabric.Port) (PortCounters, bool) { return y.SavedCounters(p.Node.GUID, p.Num) },
		func(p *fabric.Port, v *Saved) bool { return y.savedInto(p.Node.GUID, p.Num, v) })
}
