package checks

import (
	"strings"
	"testing"
	"time"
)

// TestCongestionSinceSweep is trial T8: a later sweep (or a gate) pairs
// each port's PortXmitWait with the previous sweep's and judges the share
// of time stalled since then, with --interval's thresholds and wording,
// instead of an absolute info that says to run --interval. A reading whose
// sweep saved no PortXmitWait (an older state dir), or whose counter was
// cleared since, keeps the absolute info: no share is invented.
func TestCongestionSinceSweep(t *testing.T) {
	f := fatTree(t)
	at := time.Date(2026, 11, 27, 2, 30, 0, 0, time.UTC)
	port := node(t, f, "leaf01").Ports
	reading := func(n int, w CounterValue) PortReading {
		w.Name, w.Bits = "PortXmitWait", 64
		return PortReading{Port: port[n], Saved: true, SavedAgo: 10 * time.Second, SavedAt: at, XmitWait: &w, XmitWaitTicksPerSecond: 1e6}
	}
	c := fakeCounters{rs: []PortReading{
		reading(9, CounterValue{Value: 50_000_000, Growth: 7_500_000}),  // 75%
		reading(10, CounterValue{Value: 50_000_000, Growth: 1_000_000}), // 10%: info
		reading(11, CounterValue{Value: 50_000_000, Growth: 100_000}),   // 1%: nothing
		reading(12, CounterValue{Value: 50_000_000, Unsaved: true}),     // old index: absolute
		reading(13, CounterValue{Value: 5_000, ClearedFrom: 90_000}),    // cleared: absolute
		reading(14, CounterValue{Value: 4_294_967_295, Bits: 32, Saturated: true, GrowthUnknown: "the 32-bit field was stuck at its maximum in both samples"}),
		reading(15, CounterValue{Value: 4_294_967_295, Growth: 4_000_000, Saturated: true}), // at least 40%
	}}
	c.rs[5].XmitWait.Bits, c.rs[6].XmitWait.Bits = 32, 32
	res, err := Run(&Snapshot{Fabric: f, Counters: c})
	if err != nil {
		t.Fatal(err)
	}
	fs := byCheck(res.Findings, "counters.congestion")
	got := map[int]Finding{}
	for _, g := range fs {
		got[g.Entities[0].Port] = g
	}
	if g, ok := got[9]; !ok || g.Severity != Warning || g.Basis != "since-snapshot" ||
		!strings.Contains(g.Title, "could not send 75% of the time since the last sweep") ||
		!strings.Contains(g.Evidence[0].Text, "PortXmitWait +7500000 ticks in 10s since the previous sweep at 2026-11-27T02:30:00Z = 75.0% of the time stalled (warn at 20%)") {
		t.Errorf("75%% stalled since the sweep: %v %s %q / %q", g.Severity, g.Basis, g.Title, g.Evidence)
	}
	if g, ok := got[10]; !ok || g.Severity != Info || g.Basis != "since-snapshot" || !strings.Contains(g.Title, "could not send 10% of the time since the last sweep") {
		t.Errorf("10%% stalled since the sweep: %v %s %q", g.Severity, g.Basis, g.Title)
	}
	if g, ok := got[11]; ok {
		t.Errorf("1%% stalled since the sweep is below xmitwait.info: %q", g.Title)
	}
	if g, ok := got[12]; !ok || g.Severity != Info || g.Basis != "absolute" || !strings.Contains(g.Title, "since its counters were cleared") {
		t.Errorf("no PortXmitWait saved (older state dir): want today's absolute info, got %v %s %q", g.Severity, g.Basis, g.Title)
	}
	if g, ok := got[13]; !ok || g.Basis != "absolute" || !strings.Contains(g.Evidence[0].Text, "cleared since the sweep") {
		t.Errorf("cleared since the sweep: want the absolute value, said cleared; got %s %q / %q", g.Basis, g.Title, g.Evidence)
	}
	if g, ok := got[15]; !ok || g.Severity != Warning || !strings.Contains(g.Title, "at least 40%") || !strings.Contains(g.Evidence[0].Text, "saturated") {
		t.Errorf("saturated 32-bit PortXmitWait: want 'at least 40%%' said saturated, got %v %q / %q", g.Severity, g.Title, g.Evidence)
	}
	undecided := false
	for _, u := range res.Undecided {
		if u.Check == "counters.congestion" && u.Subject.Port == 14 && strings.Contains(u.Reason, "since the saved sweep") {
			undecided = true
		}
	}
	if !undecided {
		t.Errorf("PortXmitWait stuck at its maximum at both sweeps: want the port undecided for counters.congestion")
	}

	// --interval judges the same port by the same rule: one judgement.
	iv := fakeCounters{iv: 10 * time.Second, rs: []PortReading{{Port: port[9], XmitWait: &CounterValue{Name: "PortXmitWait", Delta: 7_500_000}, XmitWaitTicksPerSecond: 1e6}}}
	fs = byCheck(run(t, &Snapshot{Fabric: f, Counters: iv}), "counters.congestion")
	if len(fs) != 1 || fs[0].Severity != Warning || fs[0].Basis != "delta" || !strings.Contains(fs[0].Title, "could not send 75% of the time (congestion)") ||
		!strings.Contains(fs[0].Evidence[0].Text, "PortXmitWait +7500000 ticks in 10s = 75.0% of the time stalled (warn at 20%)") {
		t.Errorf("--interval: %+v", fs)
	}
}

// A share of time stalled above 100% is not a reading: the saved
// PortXmitWait and the span disagree (a stepped clock, another host's
// state dir, a counter history that is not the saved one). So is a span
// that is not positive. Both are undecided, said so, never a finding.
func TestCongestionImplausibleSpan(t *testing.T) {
	f := fatTree(t)
	port := node(t, f, "leaf01").Ports
	w := func(g uint64) *CounterValue {
		return &CounterValue{Name: "PortXmitWait", Bits: 64, Value: 500_000_000, Growth: g}
	}
	c := fakeCounters{rs: []PortReading{
		{Port: port[9], Saved: true, SavedAgo: 10 * time.Second, XmitWait: w(80_000_000), XmitWaitTicksPerSecond: 1e6}, // 800%
		{Port: port[10], Saved: true, SavedAgo: -5 * time.Second, XmitWait: w(1_000_000), XmitWaitTicksPerSecond: 1e6},
		{Port: port[11], Saved: true, SavedAgo: 10 * time.Second, XmitWait: w(10_100_000), XmitWaitTicksPerSecond: 1e6}, // 101%: reading times
	}}
	res, err := Run(&Snapshot{Fabric: f, Counters: c})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Finding{}
	for _, g := range byCheck(res.Findings, "counters.congestion") {
		got[g.Entities[0].Port] = g
	}
	if g, ok := got[9]; ok {
		t.Errorf("800%% stalled is not a reading, got %v %q", g.Severity, g.Title)
	}
	if g, ok := got[10]; ok {
		t.Errorf("a negative span gives no share, got %v %q", g.Severity, g.Title)
	}
	if g, ok := got[11]; !ok || !strings.Contains(g.Title, "could not send 100% of the time") || g.Impact.Score > 1 {
		t.Errorf("101%% is within the reading times' tolerance: want 100%%, score <= 1; got %q %v", g.Title, g.Impact.Score)
	}
	for _, g := range res.Findings {
		if g.Impact.Score > 1 || g.Impact.Score < 0 {
			t.Errorf("score out of 0..1: %v %q", g.Impact.Score, g.Title)
		}
	}
	n := map[int]int{}
	for _, u := range res.Undecided {
		if u.Check != "counters.congestion" {
			continue
		}
		n[u.Subject.Port]++
		switch u.Subject.Port {
		case 9:
			for _, want := range []string{"80000000 ticks", "10s", "1000000 ticks/s", "not comparable"} {
				if !strings.Contains(u.Reason, want) {
					t.Errorf("port 9 reason %q lacks %q", u.Reason, want)
				}
			}
		case 10:
			if !strings.Contains(u.Reason, "clock") {
				t.Errorf("port 10 reason %q does not name the clock", u.Reason)
			}
		}
	}
	if n[9] != 1 || n[10] != 1 || n[11] != 0 {
		t.Errorf("want one could-not-decide for ports 9 and 10, none for 11; got %v (%+v)", n, res.Undecided)
	}

	// --interval, by the same rule.
	iv := fakeCounters{iv: 10 * time.Second, rs: []PortReading{{Port: port[9], XmitWait: &CounterValue{Name: "PortXmitWait", Delta: 80_000_000}, XmitWaitTicksPerSecond: 1e6}}}
	res, err = Run(&Snapshot{Fabric: f, Counters: iv})
	if err != nil {
		t.Fatal(err)
	}
	if fs := byCheck(res.Findings, "counters.congestion"); len(fs) != 0 {
		t.Errorf("--interval 800%%: want no finding, got %q", fs[0].Title)
	}
	var us []Undecided
	for _, u := range res.Undecided {
		if u.Check == "counters.congestion" {
			us = append(us, u)
		}
	}
	if len(us) != 1 || us[0].Subject.Port != 9 || !strings.Contains(us[0].Reason, "not comparable") {
		t.Errorf("--interval 800%%: want one could-not-decide, got %+v", us)
	}
}
