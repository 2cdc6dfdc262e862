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
