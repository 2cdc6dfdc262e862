package gate

import (
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
	"github.com/ibdoctor/ibdoctor/internal/topology"
)

// waitReadings reads every port of f with one error counter and, when
// wait is set, PortXmitWait = wait(i) of the given width.
type waitReadings struct {
	f    *fabric.Fabric
	bits int
	wait func(i int) (value uint64, saturated bool)
}

func (waitReadings) Interval() time.Duration { return 0 }

func (c waitReadings) Ports(fn func(checks.PortReading)) {
	i := 0
	for _, n := range c.f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 {
				continue
			}
			i++
			r := checks.PortReading{Port: p, XmitWaitTicksPerSecond: 1e6,
				Errors: []checks.CounterValue{{Name: "SymbolErrorCounter", Bits: c.bits}}}
			if c.wait != nil {
				v, sat := c.wait(i)
				r.XmitWait = &checks.CounterValue{Name: "PortXmitWait", Value: v, Bits: c.bits, Saturated: sat}
			}
			fn(r)
		}
	}
}

// TestSweepPairsXmitWait is trial T8's pairing: a later sweep's (or a
// gate's) PortXmitWait is paired with the previous sweep's by perf.Increase,
// the rule for the error counters: its growth since; cleared since (below
// the saved value) → ClearedFrom; a 32-bit field stuck at its maximum
// both times, or a width that changed → unknown; a sweep that saved none
// (an ibdoctor before it was kept) → Unsaved, so checks judges the value.
func TestSweepPairsXmitWait(t *testing.T) {
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 3}.Build()
	if err != nil {
		t.Fatal(err)
	}
	const max32 = 1<<32 - 1
	taken := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	save := func(c checks.Counters) *snapshot.Snapshot {
		s, err := snapshot.New(f, c, taken, "sim:pair", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		prev, err := snapshot.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { prev.Close() })
		return prev
	}
	walk := func(prev *snapshot.Snapshot, later checks.Counters) map[int]checks.CounterValue {
		got := map[int]checks.CounterValue{}
		i := 0
		SinceSweep(later, prev, taken.Add(15*time.Minute)).Ports(func(r checks.PortReading) {
			i++
			if !r.Saved || r.XmitWait == nil {
				t.Fatalf("port %d: not paired (saved %v) or no PortXmitWait", i, r.Saved)
			}
			got[i] = *r.XmitWait
		})
		return got
	}

	// 64-bit: grown, cleared.
	prev := save(waitReadings{f: f, bits: 64, wait: func(i int) (uint64, bool) { return uint64(1000 * i), false }})
	got := walk(prev, waitReadings{f: f, bits: 64, wait: func(i int) (uint64, bool) {
		if i == 2 {
			return 5, false // cleared since
		}
		return uint64(1000*i + 700*i), false
	}})
	if c := got[1]; c.Growth != 700 || c.Unsaved || c.GrowthUnknown != "" || c.ClearedFrom != 0 {
		t.Errorf("grown by 700: %+v", c)
	}
	if c := got[2]; c.ClearedFrom != 2000 || c.Growth != 0 {
		t.Errorf("cleared since the sweep: %+v", c)
	}

	// 32-bit PortCounters: stuck at the maximum both times → unknown;
	// reaching it since → the growth up to it (checks says saturated).
	prev = save(waitReadings{f: f, bits: 32, wait: func(i int) (uint64, bool) {
		if i == 1 {
			return max32, true
		}
		return 100, false
	}})
	got = walk(prev, waitReadings{f: f, bits: 32, wait: func(int) (uint64, bool) { return max32, true }})
	if c := got[1]; c.GrowthUnknown == "" {
		t.Errorf("32-bit field stuck at its maximum both times: want the growth unknown, got %+v", c)
	}
	if c := got[2]; c.Growth != max32-100 || c.GrowthUnknown != "" {
		t.Errorf("32-bit field saturated since: %+v", c)
	}
	// The extended 64-bit counter now, the 32-bit one then: no increase.
	got = walk(prev, waitReadings{f: f, bits: 64, wait: func(int) (uint64, bool) { return 1 << 40, false }})
	if c := got[2]; c.GrowthUnknown == "" {
		t.Errorf("32-bit then, 64-bit now: want the growth unknown, got %+v", c)
	}

	// A sweep that saved no PortXmitWait (as every gate.idx before it was
	// kept): unsaved, no invented growth from 0.
	prev = save(waitReadings{f: f, bits: 64})
	got = walk(prev, waitReadings{f: f, bits: 64, wait: func(i int) (uint64, bool) { return 1 << 30, false }})
	if c := got[1]; !c.Unsaved || c.Growth != 0 {
		t.Errorf("no PortXmitWait saved: want unsaved, got %+v", c)
	}
}

// waitReadingsAt is waitReadings whose counter pass started at started.
type waitReadingsAt struct {
	waitReadings
	started time.Time
}

func (c waitReadingsAt) CountersStarted() time.Time { return c.started }

// TestSinceSweepSpanFromCounterPasses (review V5): a counter's growth
// since the previous sweep is timed from that sweep's counter pass, not
// its start: at 49k nodes discovery and the tables take minutes, which
// made the span too long and a port stalled 60% read 15%. The pass's
// start is kept in snapshot.json (counters_at), read back by Load and
// LoadForGate; a snapshot without it falls back to its sweep's start.
func TestSinceSweepSpanFromCounterPasses(t *testing.T) {
	f, err := topology.FatTree2{Common: topology.Common{SwitchPorts: 8}, Leaves: 2, Spines: 2, HostsPerLeaf: 3}.Build()
	if err != nil {
		t.Fatal(err)
	}
	taken := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	wr := waitReadings{f: f, bits: 64, wait: func(i int) (uint64, bool) { return 1000, false }}
	later := waitReadingsAt{wr, taken.Add(15*time.Minute + 30*time.Second)}
	for _, c := range []struct {
		name  string
		saved checks.Counters
		want  time.Duration
	}{
		{"pass recorded", waitReadingsAt{wr, taken.Add(90 * time.Second)}, 14 * time.Minute},
		{"older snapshot", wr, 15*time.Minute + 30*time.Second},
	} {
		s, err := snapshot.New(f, c.saved, taken, "sim:pair", "test", true)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := s.Save(dir); err != nil {
			t.Fatal(err)
		}
		for _, load := range []struct {
			name string
			fn   func(string) (*snapshot.Snapshot, error)
		}{{"Load", snapshot.Load}, {"LoadForGate", snapshot.LoadForGate}} {
			prev, err := load.fn(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			SinceSweep(later, prev, taken.Add(15*time.Minute)).Ports(func(r checks.PortReading) {
				if n++; r.SavedAgo != c.want {
					t.Fatalf("%s, %s: SavedAgo %v, want %v (from one counter pass to the other)", c.name, load.name, r.SavedAgo, c.want)
				}
			})
			prev.Close()
			if n == 0 {
				t.Fatalf("%s: no readings", c.name)
			}
		}
	}
}
