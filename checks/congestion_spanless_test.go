package checks

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCongestionWithoutSpanSummarised: an ibdiagnet2.db_csv's PM_DELTA
// gives each port's PortXmitWait increase during ibdiagnet's run but not
// how long the run was, so no share of time stalled can be computed. One
// info finding per port over the count floor (192 on the Quantum-2
// capture, the largest +4026 ticks) is noise an operator dismisses: the
// ports over the floor (xmitwait.absolute) become one info finding
// naming how many, the largest few as evidence and every one of them as
// an entity (largest first); below the floor, none. 'counters' still
// judges each port (CounterVerdicts).
func TestCongestionWithoutSpanSummarised(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	ticks := []uint64{1200, 4026, 900, 2500, 1500, 3000, 2000} // 900: below the floor
	var rs []PortReading
	for i, d := range ticks {
		rs = append(rs, PortReading{Port: leaf.Ports[1+i], SpanUnknown: true, XmitWaitTicksPerSecond: 1 / 64e-9,
			XmitWait: &CounterValue{Name: "PortXmitWait", Value: 10 * d, Delta: d}})
	}
	s := &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}}
	fs := byCheck(run(t, s), "counters.congestion")
	if len(fs) != 1 {
		var titles []string
		for _, f := range fs {
			titles = append(titles, f.Title)
		}
		t.Fatalf("%d congestion findings, want one summary:\n  %s", len(fs), strings.Join(titles, "\n  "))
	}
	g := fs[0]
	if g.Severity != Info || g.Basis != "delta" {
		t.Errorf("severity %s basis %q, want info on the increase", g.Severity, g.Basis)
	}
	if !strings.Contains(g.Title, "6 ports") || !strings.Contains(g.Title, "4026") {
		t.Errorf("title %q: want the count of ports over the floor and the largest increase", g.Title)
	}
	if len(g.Entities) != 6 || g.Entities[0].Port != 2 || g.Entities[1].Port != 6 {
		t.Errorf("entities %+v: want the 6 ports over the floor, largest first (port 2: 4026, port 6: 3000)", g.Entities)
	}
	var ev []string
	for _, e := range g.Evidence {
		ev = append(ev, e.String())
	}
	all := strings.Join(ev, "\n")
	if !strings.Contains(all, "4026") || !strings.Contains(all, "258") || !strings.Contains(all, "1000") || strings.Contains(all, "+900") {
		t.Errorf("evidence:\n%s\nwant the largest (+4026 ticks, about 258 µs at 64 ns a tick), the floor 1000, not the port below it", all)
	}
	if len(g.Evidence) > 6 {
		t.Errorf("%d evidence lines: want the count and the top few, not every port", len(g.Evidence))
	}
	if !strings.Contains(all+g.Title, "span") {
		t.Errorf("the finding does not say the span is not recorded:\n%s", all)
	}
	// 'counters' lists each port: the same six are over threshold.
	v, _ := s.CounterVerdicts()
	n := 0
	for _, fs := range v {
		for _, f := range fs {
			if f.Check == "counters.congestion" {
				n++
			}
		}
	}
	if n != 6 {
		t.Errorf("CounterVerdicts: %d ports judged congested, want the 6 over the floor", n)
	}

	// With a span, or on values, each port is its own finding, as
	// before (the sample fabric's golden report pins the absolute ones).
	spanned, absolute := slices.Clone(rs), slices.Clone(rs)
	for i := range rs {
		spanned[i].SpanUnknown = false
		spanned[i].XmitWait = &CounterValue{Name: "PortXmitWait", Delta: 60_000_000 * uint64(i+1)}
		absolute[i].SpanUnknown = false
		absolute[i].XmitWait = &CounterValue{Name: "PortXmitWait", Value: rs[i].XmitWait.Delta}
	}
	if fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: fakeCounters{iv: 30 * time.Second, rs: spanned}}), "counters.congestion"); len(fs) != 7 {
		t.Errorf("with a 30 s span: %d findings, want one per port (7, stalled 13%%..90%%)", len(fs))
	}
	if fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: fakeCounters{rs: absolute}}), "counters.congestion"); len(fs) != 6 || fs[0].Basis != "absolute" {
		t.Errorf("on values: %d findings, want one per port over 1000 (6)", len(fs))
	}

	// All below the floor: no finding.
	for i := range rs {
		rs[i].XmitWait = &CounterValue{Name: "PortXmitWait", Value: 5000, Delta: 1000}
	}
	if fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}}), "counters.congestion"); len(fs) != 0 {
		t.Errorf("increases at the floor: %d findings, want none", len(fs))
	}
}
