package checks

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/internal/topology"
	"github.com/ibdoctor/ibdoctor/mad"
)

// fatTree builds a routed 2-level fat tree: 4 leaves x 8 hosts, 4 spines.
func fatTree(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, err := topology.Routed(topology.FatTree2{Leaves: 4, Spines: 4, HostsPerLeaf: 8})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func node(t testing.TB, f *fabric.Fabric, name string) *fabric.Node {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Description == name || strings.HasPrefix(n.Description, name+" ") {
			return n
		}
	}
	t.Fatalf("no node %q", name)
	return nil
}

func run(t testing.TB, s *Snapshot) []Finding {
	t.Helper()
	res, err := Run(s)
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

func atLeast(fs []Finding, sev Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity >= sev {
			out = append(out, f)
		}
	}
	return out
}

func byCheck(fs []Finding, id string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

func TestHealthyFatTreeIsQuiet(t *testing.T) {
	f := fatTree(t)
	fs := run(t, &Snapshot{Fabric: f})
	if bad := atLeast(fs, Warning); len(bad) > 0 {
		for _, b := range bad {
			t.Errorf("false positive on a healthy fat tree: %s %s: %s", b.Severity, b.Check, b.Title)
		}
	}
}

func TestHealthyRailFabricMixedRatesIsQuiet(t *testing.T) {
	f := fatTree(t)
	// One leaf's hosts are HDR: fine when the expectation allows both.
	for _, p := range node(t, f, "leaf02").Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.Type == mad.NodeCA {
			for _, q := range []*fabric.Port{p, p.Remote} {
				q.SpeedActive, q.SpeedEnabled = mad.SpeedHDR, mad.SpeedHDR|mad.SpeedEDR
			}
		}
	}
	hdr, _ := mad.ParseRate("4xHDR")
	ndr, _ := mad.ParseRate("4xNDR")
	fs := run(t, &Snapshot{Fabric: f, Expect: Expectations{HostRates: []mad.Rate{hdr, ndr}}})
	if bad := atLeast(fs, Warning); len(bad) > 0 {
		t.Errorf("false positives with a mixed HDR/NDR expectation: %v", bad[0].Title)
	}
	// Without the expectation an NDR-only bar flags them.
	fs = run(t, &Snapshot{Fabric: f, Expect: Expectations{HostRates: []mad.Rate{ndr}}})
	if n := len(byCheck(fs, "link.degraded-speed")); n != 8 {
		t.Errorf("with an NDR-only expectation got %d degraded-speed findings, want 8", n)
	}
}

// degrade sets both ends of the link at n/port to width w (a retrained
// link keeps its enabled masks).
func degrade(t testing.TB, n *fabric.Node, port uint8, w mad.Width) *fabric.Port {
	t.Helper()
	p := n.Ports[port]
	if p == nil || p.Remote == nil {
		t.Fatalf("%s/%d has no link", n.Description, port)
	}
	p.WidthActive, p.Remote.WidthActive = w, w
	return p
}

func TestDegradedSpineLinkRanksAboveDegradedHostLink(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	degrade(t, leaf, 9, mad.Width1X) // first uplink
	degrade(t, leaf, 3, mad.Width1X) // a host link
	fs := run(t, &Snapshot{Fabric: f})
	w := byCheck(fs, "link.degraded-width")
	if len(w) != 2 {
		t.Fatalf("got %d degraded-width findings, want 2: %+v", len(w), fs)
	}
	if !strings.Contains(w[0].Title, "leaf01/9") || w[0].Severity != Critical {
		t.Errorf("first finding = %s %q, want the critical spine uplink leaf01/9", w[0].Severity, w[0].Title)
	}
	if !strings.Contains(w[1].Title, "leaf01/3") || w[1].Severity != Error {
		t.Errorf("second finding = %s %q, want the host link leaf01/3 as error", w[1].Severity, w[1].Title)
	}
	if w[0].Impact.Score <= w[1].Impact.Score {
		t.Errorf("spine uplink score %v not above host link score %v", w[0].Impact.Score, w[1].Impact.Score)
	}
	if w[0].Impact.Slowdown != 4 {
		t.Errorf("slowdown %v, want 4 (1X of 4X)", w[0].Impact.Slowdown)
	}
}

func TestDegradedBothEndsEnabledCaughtBySiblings(t *testing.T) {
	f := fatTree(t)
	p := degrade(t, node(t, f, "leaf03"), 10, mad.Width1X)
	// Someone lowered both ends' enabled masks: the enabled rule is blind.
	p.WidthEnabled, p.Remote.WidthEnabled = mad.Width1X, mad.Width1X
	w := byCheck(run(t, &Snapshot{Fabric: f}), "link.degraded-width")
	if len(w) != 1 || !strings.Contains(w[0].Evidence[0].Text, "other switch links run 4X NDR") {
		t.Fatalf("sibling rule did not catch the link: %+v", w)
	}
}

func TestDegradedSpeed(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf02").Ports[12]
	p.SpeedActive, p.Remote.SpeedActive = mad.SpeedEDR, mad.SpeedEDR
	s := byCheck(run(t, &Snapshot{Fabric: f}), "link.degraded-speed")
	if len(s) != 1 || !strings.Contains(s[0].Title, "EDR instead of NDR") {
		t.Fatalf("got %+v", s)
	}
}

// TestPollingSwitchPortOnlyWhereALinkIsExpected: an empty switch port
// polls (nothing is attached), so a Polling switch port is no finding by
// itself, even inside a leaf's host block: without an expected topology
// an unplugged host cannot be told from an unused port, and on real
// fabrics (the DGX SuperPOD dump) such gaps are part of the design. The
// expected topology decides (link.down); a port training with a far end
// (PortConfigurationTraining, LinkErrorRecovery) has a cable that does
// not come up. Before: an info for leaf04/5, none for the training port.
func TestPollingSwitchPortOnlyWhereALinkIsExpected(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf04").Ports[5]
	p.Remote.Remote = nil
	p.Remote = nil
	p.PhysState, p.State = mad.PhysPolling, mad.PortStateDown
	if fs := byCheck(run(t, &Snapshot{Fabric: f}), "link.polling"); len(fs) != 0 {
		t.Fatalf("a polling switch port without an expected topology: %+v", fs)
	}
	// With the expected topology it decides: the link it has here is
	// down (an error, reported once as link.down).
	base := fatTree(t)
	withBase := run(t, &Snapshot{Fabric: f, Baseline: BaselineOf(base)})
	if fs := byCheck(withBase, "link.polling"); len(fs) != 0 {
		t.Fatalf("with a baseline, link.polling: %+v", fs)
	}
	if fs := byCheck(withBase, "link.down"); len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Title, "leaf04/5") {
		t.Fatalf("with a baseline, link.down: %+v", fs)
	}
	// A port that sees a far end and does not finish training.
	for _, st := range []mad.PhysState{mad.PhysConfigTraining, mad.PhysLinkErrorRecovery} {
		q := node(t, f, "leaf04").Ports[40]
		q.PhysState, q.State = st, mad.PortStateDown
		fs := byCheck(run(t, &Snapshot{Fabric: f}), "link.polling")
		if len(fs) != 1 || fs[0].Entities[0].Port != 40 || fs[0].Severity != Warning || !strings.Contains(fs[0].Title, st.String()) {
			t.Fatalf("leaf04/40 in %s: got %+v", st, fs)
		}
		q.PhysState = mad.PhysPolling
	}
}

// TestPollingHostPort: a host's port that does not train is a link that
// should be there (the host runs on fewer ports, or is cut off).
func TestPollingHostPort(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf02").Ports[3]
	h := p.Remote
	h.PhysState, h.State = mad.PhysPolling, mad.PortStateDown
	p.PhysState, p.State = mad.PhysPolling, mad.PortStateDown
	h.Remote, p.Remote = nil, nil
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "link.polling")
	if len(fs) != 1 || fs[0].Severity != Error || fs[0].Entities[0].NodeGUID != h.Node.GUID {
		t.Fatalf("got %+v, want one error on the host port %s/%d", fs, h.Node.Description, h.Num)
	}
}

func TestBlackHole(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "gpu017").Ports[1]
	leaf := node(t, f, "leaf01")
	leaf.Switch.LFT.Set(dst.LID, fabric.NoRoute)
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.unreachable")
	if len(fs) != 1 || fs[0].Severity != Critical || !strings.Contains(fs[0].Title, "8 hosts cannot reach gpu017") {
		t.Fatalf("got %+v", fs)
	}
}

func TestLoop(t *testing.T) {
	f := fatTree(t)
	dst := node(t, f, "gpu030").Ports[1]
	leaf := node(t, f, "leaf01")
	up := leaf.Switch.LFT.At(dst.LID)
	spine := leaf.Ports[up].Remote
	spine.Node.Switch.LFT.Set(dst.LID, spine.Num) // straight back down to leaf01
	fs := run(t, &Snapshot{Fabric: f})
	if l := byCheck(fs, "routing.loop"); len(l) != 1 {
		t.Fatalf("loop not found: %+v", l)
	}
}

func TestECMPImbalance(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf02")
	// All uplink traffic through port 9 (the first spine).
	for lid, e := range leaf.Switch.LFT.Bytes() {
		if e >= 9 && e <= 12 {
			leaf.Switch.LFT.Set(uint16(lid), 9)
		}
	}
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "routing.ecmp-imbalance")
	if len(fs) != 1 {
		t.Fatalf("got %d imbalance findings: %+v", len(fs), fs)
	}
	if fs[0].Severity != Critical || fs[0].Impact.Slowdown != 4 || !strings.Contains(fs[0].Title, "3 ports idle") {
		t.Errorf("finding = %s slowdown %v %q", fs[0].Severity, fs[0].Impact.Slowdown, fs[0].Title)
	}
}

func TestTopologyFindings(t *testing.T) {
	f := fatTree(t)
	f.DuplicateGUIDs = []fabric.DuplicateGUID{{GUID: 0x1234, Paths: []mad.Path{{1, 3}, {1, 4}}, Descs: []string{"gpu001 mlx5_0", "gpu002 mlx5_0"}}}
	leaf := node(t, f, "leaf01")
	f.Unreachable = []fabric.Unreachable{{Path: mad.Path{1, 9}, FromGUID: leaf.GUID, FromPort: 9, What: "NodeInfo", Reason: "no response after 4 attempts"}}
	fs := run(t, &Snapshot{Fabric: f})
	if d := byCheck(fs, "topology.duplicate-guid"); len(d) != 1 || d[0].Severity != Critical {
		t.Errorf("duplicate guid: %+v", d)
	}
	// A node that did not answer is "could not look": listed in the
	// report, never a finding (issue 17).
	if len(fs) != 1 {
		t.Errorf("want only the duplicate GUID, got %+v", fs)
	}
}

func TestOversubscribed(t *testing.T) {
	f, err := topology.FatTree2{Leaves: 2, Spines: 2, HostsPerLeaf: 12}.Build()
	if err != nil {
		t.Fatal(err)
	}
	// Both leaves say the same: one finding naming them.
	fs := byCheck(run(t, &Snapshot{Fabric: f}), "topology.oversubscribed")
	if len(fs) != 1 || len(fs[0].Entities) != 2 || !strings.Contains(fs[0].Title, "2 leaves are oversubscribed 6.0:1 (12 hosts, 2 uplinks each): leaf01, leaf02") {
		t.Fatalf("got %+v", fs)
	}
}

func TestMiswiredAgainstBaseline(t *testing.T) {
	base := fatTree(t)
	f := fatTree(t)
	// Swap leaf01's cables on ports 9 and 10 (spine01 and spine02).
	leaf := node(t, f, "leaf01")
	a, b := leaf.Ports[9], leaf.Ports[10]
	ra, rb := a.Remote, b.Remote
	a.Remote, b.Remote, ra.Remote, rb.Remote = rb, ra, b, a
	fs := run(t, &Snapshot{Fabric: f, Baseline: BaselineOf(base)})
	m := byCheck(fs, "topology.miswired")
	// One swap, one finding (TestSwapIsOneFinding).
	if len(m) != 1 || m[0].Title != "leaf01/9 and leaf01/10 are swapped: cable at leaf01/9 goes to spine02/1 (expected spine01/1), cable at leaf01/10 goes to spine01/1 (expected spine02/1); swap them" {
		t.Fatalf("miswire: %+v", m)
	}
	// And a cable removed: link.down against the baseline.
	f2 := fatTree(t)
	p := node(t, f2, "leaf03").Ports[11]
	p.Remote.Remote, p.Remote = nil, nil
	p.PhysState, p.State = mad.PhysPolling, mad.PortStateDown
	d := byCheck(run(t, &Snapshot{Fabric: f2, Baseline: BaselineOf(base)}), "link.down")
	if len(d) != 1 || !strings.Contains(d[0].Title, "leaf03/11") {
		t.Fatalf("link.down: %+v", d)
	}
}

// fakeCounters serves fixed readings.
type fakeCounters struct {
	iv time.Duration
	rs []PortReading
}

func (c fakeCounters) Interval() time.Duration { return c.iv }
func (c fakeCounters) Ports(fn func(PortReading)) {
	for _, r := range c.rs {
		fn(r)
	}
}

func TestCounterErrors(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf01").Ports[10]
	clean := node(t, f, "leaf01").Ports[11]
	abs := fakeCounters{rs: []PortReading{
		{Port: p, Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 65535, Bits: 16, Saturated: true}, {Name: "LinkDownedCounter", Value: 3, Bits: 8}}},
		{Port: clean, Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 10, Bits: 16}}},
	}}
	fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: abs}), "counters.errors")
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "saturated") || fs[0].Basis != "absolute" {
		t.Fatalf("absolute: %+v", fs)
	}
	// Sampled: 600 symbol errors in 30 s on a 4X NDR link is a BER of
	// 600 / (4 x 106.25e9 x 30) = 4.7e-11 > 1e-12.
	delta := fakeCounters{iv: 30 * time.Second, rs: []PortReading{
		{Port: p, Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 1600, Delta: 600, Bits: 16}}},
		{Port: clean, Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 50000, Delta: 0, Bits: 16}}},
	}}
	fs = byCheck(run(t, &Snapshot{Fabric: f, Counters: delta}), "counters.errors")
	if len(fs) != 1 || fs[0].Severity != Error || fs[0].Basis != "delta" || !strings.Contains(fs[0].Title, "BER 4.7e-11") {
		t.Fatalf("delta: %+v", fs)
	}
}

// A reading paired with the previous sweep's counters (a gate's, or a
// later sweep's without --interval): the increase since is judged against
// the per-interval thresholds, one finding per counter, growth first. A
// value since the clear that did not grow since the sweep is history, an
// info finding saying so (trial N10: 500 old PortRcvErrors were an error
// on every cron sweep, paging until someone cleared the counters); a
// counter the sweep did not save is judged on its value as without one.
func TestCounterErrorsSinceSnapshot(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf01").Ports[10]
	old := node(t, f, "leaf01").Ports[11]
	clean := node(t, f, "leaf01").Ports[12]
	unsaved := node(t, f, "leaf01").Ports[13]
	at := time.Date(2026, 11, 27, 2, 30, 0, 0, time.UTC)
	c := fakeCounters{rs: []PortReading{
		// new since the sweep: +500
		{Port: p, Saved: true, SavedAgo: 10 * time.Minute, SavedAt: at, Errors: []CounterValue{{Name: "PortRcvErrors", Value: 500, Growth: 500, Bits: 16}}},
		// old errors, not growing: history, info
		{Port: old, Saved: true, SavedAgo: 10 * time.Minute, SavedAt: at, Errors: []CounterValue{{Name: "LinkDownedCounter", Value: 50, Growth: 0, Bits: 8}}},
		// +1 symbol error is not over the per-interval threshold 1
		{Port: clean, Saved: true, SavedAgo: 10 * time.Minute, SavedAt: at, Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 3, Growth: 1, Bits: 16}}},
		// not in the saved reading: no growth known, the value judged
		{Port: unsaved, Saved: true, SavedAgo: 10 * time.Minute, SavedAt: at, Errors: []CounterValue{{Name: "PortRcvErrors", Value: 500, Unsaved: true, Bits: 16}}},
	}}
	fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: c}), "counters.errors")
	if len(fs) != 3 {
		t.Fatalf("want 3 findings, got %+v", fs)
	}
	got := map[string]Finding{}
	for _, f := range fs {
		got[f.Evidence[0].Name+" "+f.Basis] = f
	}
	g := got["PortRcvErrors since-snapshot"]
	if g.Severity != Error || !strings.Contains(g.Title, "+500 since the last sweep") {
		t.Errorf("growth: %+v", g)
	}
	for _, w := range []string{"grew by 500 in 10m0s since the previous sweep at 2026-11-27T02:30:00Z", "0.833/s", "now 500"} {
		if !strings.Contains(g.Evidence[0].Text, w) {
			t.Errorf("growth evidence lacks %q: %q", w, g.Evidence[0].Text)
		}
	}
	g = got["LinkDownedCounter absolute"]
	if g.Severity != Info || !strings.Contains(g.Title, "not growing since the last sweep") {
		t.Errorf("old errors not growing: want info, got %v %q", g.Severity, g.Title)
	}
	for _, w := range []string{"LinkDownedCounter = 50 since the counters were last cleared", "no growth since the previous sweep at 2026-11-27T02:30:00Z (10m0s before"} {
		if !strings.Contains(g.Evidence[0].Text, w) {
			t.Errorf("history evidence lacks %q: %q", w, g.Evidence[0].Text)
		}
	}
	if g.Impact.Score != g.Impact.PathShare*counterWeight[Info] {
		t.Errorf("history scored as %v: %v", g.Severity, g.Impact.Score)
	}
	if g := got["PortRcvErrors absolute"]; g.Severity != Error || len(g.Entities) == 0 || g.Entities[0].Port != 13 || strings.Contains(g.Evidence[0].Text, "previous sweep") {
		t.Errorf("a counter not saved: want an error on its value, got %+v", g)
	}
}

// A counter below what the sweep saved was cleared (or reset, or wrapped)
// since: every count it holds happened after the sweep, a lower bound of
// its growth since, so it is judged on the since-sweep thresholds and
// said "at least" (trial D2: LinkDowned cleared by perfquery -R, then one
// down, was judged on the absolute threshold 10 and said nothing, where
// the same down without the clear is a warning). No BER is made of it:
// the count's span is not known.
func TestCounterErrorsClearedSinceSnapshot(t *testing.T) {
	f := fatTree(t)
	at := time.Date(2026, 11, 27, 2, 30, 0, 0, time.UTC)
	leaf := node(t, f, "leaf01")
	reading := func(n int, c CounterValue) PortReading {
		c.Bits = 16
		return PortReading{Port: leaf.Ports[n], Saved: true, SavedAgo: 10 * time.Minute, SavedAt: at, Errors: []CounterValue{c}}
	}
	c := fakeCounters{rs: []PortReading{
		// 5000 at the sweep, 182 now
		reading(10, CounterValue{Name: "SymbolErrorCounter", Value: 182, ClearedFrom: 5000}),
		// 5000 at the sweep, 3 now: within the absolute threshold, over
		// the since-sweep one
		reading(11, CounterValue{Name: "SymbolErrorCounter", Value: 3, ClearedFrom: 5000}),
		// 3 link-downs at the sweep, cleared, then one down
		reading(12, CounterValue{Name: "LinkDownedCounter", Value: 1, ClearedFrom: 3}),
		// cleared, then two downs
		reading(13, CounterValue{Name: "LinkDownedCounter", Value: 2, ClearedFrom: 7}),
		// cleared, PortXmitDiscards 4 since: within its threshold 10
		reading(14, CounterValue{Name: "PortXmitDiscards", Value: 4, ClearedFrom: 90}),
	}}
	s := &Snapshot{Fabric: f, Counters: c}
	fs := byCheck(run(t, s), "counters.errors")
	got := map[int]Finding{}
	for _, g := range fs {
		got[g.Entities[0].Port] = g
	}
	want := map[int]struct {
		sev   Severity
		title string
		ev    string
	}{
		10: {Warning, "SymbolErrorCounter grew on " + s.portName(leaf.Ports[10]) + ": at least +182 since the last sweep", "SymbolErrorCounter cleared since the sweep; at least 182 since: it read 5000 at the previous sweep at 2026-11-27T02:30:00Z (10m0s before), 182 now since the clear (threshold 1 since the previous sweep)"},
		11: {Warning, "SymbolErrorCounter grew on " + s.portName(leaf.Ports[11]) + ": at least +3 since the last sweep", "cleared since the sweep; at least 3 since"},
		12: {Warning, "Link " + s.portName(leaf.Ports[12]) + " went down at least 1 time since the last sweep", "LinkDownedCounter cleared since the sweep; at least 1 since: it read 3 at"},
		13: {Error, "Link " + s.portName(leaf.Ports[13]) + " went down at least 2 times since the last sweep", "cleared since the sweep; at least 2 since"},
	}
	if len(fs) != len(want) {
		t.Errorf("want %d findings, got %d", len(want), len(fs))
	}
	for n, w := range want {
		g, ok := got[n]
		if !ok {
			t.Errorf("port %d: no finding (want %q)", n, w.title)
			continue
		}
		if g.Severity != w.sev || g.Basis != "since-snapshot" || g.Title != w.title || len(g.Evidence) != 1 || !strings.Contains(g.Evidence[0].Text, w.ev) {
			t.Errorf("port %d: %v %s %q\n  evidence %q\nwant %v since-snapshot %q, evidence with %q", n, g.Severity, g.Basis, g.Title, g.Evidence, w.sev, w.title, w.ev)
		}
	}
	if g, ok := got[14]; ok {
		t.Errorf("PortXmitDiscards 4 since a clear, within 10 since the sweep: %q", g.Title)
	}
	// 'counters' lists the same ports (one judgement).
	v, _ := s.CounterVerdicts()
	n := 0
	for _, x := range v {
		n += len(byCheck(x, "counters.errors"))
	}
	if n != len(want) {
		t.Errorf("CounterVerdicts: %d counters.errors verdicts, want %d", n, len(want))
	}
}

func TestCongestionIsNotAnError(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf01").Ports[9]
	c := fakeCounters{iv: 10 * time.Second, rs: []PortReading{
		{Port: p, XmitWait: &CounterValue{Name: "PortXmitWait", Delta: 3_000_000}, XmitWaitTicksPerSecond: 1e6},
	}}
	fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: c}), "counters.congestion")
	if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Title, "30%") {
		t.Fatalf("got %+v", fs)
	}
}

func TestThresholdsFile(t *testing.T) {
	th, err := ParseThresholds(strings.NewReader("# ours\nSymbolErrorCounter=100\ndelta.LinkDownedCounter = 0\nber=1e-15\n"))
	if err != nil {
		t.Fatal(err)
	}
	if th.Absolute["SymbolErrorCounter"] != 100 || th.Delta["LinkDownedCounter"] != 0 || th.BER != 1e-15 || th.Absolute["PortRcvErrors"] != 10 {
		t.Errorf("parsed %+v", th)
	}
	for _, bad := range []string{"Bogus=1", "SymbolErrorCounter", "SymbolErrorCounter=x", "ber=-1"} {
		if _, err := ParseThresholds(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: err = %v, want an error naming line 1", bad, err)
		}
	}
}

// TestThresholdsXmitWaitOrder is trial B6: xmitwait.info above
// xmitwait.warn was accepted, and a port stalled 50% of the time under
// "xmitwait.info=0.6, xmitwait.warn=0.2" got no finding at all. An inverted
// pair is refused naming the line that set the offending value (or the
// default it crosses) and the fix; an equal pair (no info band) is fine.
func TestThresholdsXmitWaitOrder(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"xmitwait.info=0.6\nxmitwait.warn=0.2\n", "thresholds line 1: xmitwait.info 0.6 is above xmitwait.warn 0.2 (line 2)"},
		{"xmitwait.warn=0.2\n# c\nxmitwait.info=0.6\n", "thresholds line 3: xmitwait.info 0.6 is above xmitwait.warn 0.2 (line 1)"},
		{"xmitwait.info=0.3\n", "thresholds line 1: xmitwait.info 0.3 is above xmitwait.warn 0.2 (the default)"},
		{"xmitwait.warn=0.01\n", "thresholds line 1: xmitwait.warn 0.01 is below xmitwait.info 0.05 (the default)"},
	} {
		_, err := ParseThresholds(strings.NewReader(tc.file))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "lower xmitwait.info or raise xmitwait.warn") {
			t.Errorf("%q: err = %v, want %q and the fix", tc.file, err, tc.want)
		}
	}
	for _, ok := range []string{"xmitwait.info=0.2\nxmitwait.warn=0.2\n", "xmitwait.warn=0.5\nxmitwait.info=0.3\n", "xmitwait.info=0\n"} {
		if _, err := ParseThresholds(strings.NewReader(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestThresholdsDeltaGovernsSince is reviewer V4: a site's delta. line
// stopped applying to the growth since the previous sweep when since.
// thresholds were split off (a sweep reported +5 PortRcvErrors under
// delta.PortRcvErrors=1000). A delta. line sets since. too unless the file
// gives since. for that counter, before or after it.
func TestThresholdsDeltaGovernsSince(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[string]uint64
	}{
		{"delta.PortRcvErrors=1000\n", map[string]uint64{"PortRcvErrors": 1000, "LinkDownedCounter": 0, "SymbolErrorCounter": 1}},
		{"since.PortRcvErrors=7\ndelta.PortRcvErrors=1000\n", map[string]uint64{"PortRcvErrors": 7}},
		{"delta.PortRcvErrors=1000\nsince.PortRcvErrors=7\n", map[string]uint64{"PortRcvErrors": 7}},
		{"delta.LinkDownedCounter=3\n", map[string]uint64{"LinkDownedCounter": 3, "LinkErrorRecoveryCounter": 0}},
	} {
		th, err := ParseThresholds(strings.NewReader(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range tc.want {
			if th.Since[name] != want {
				t.Errorf("%q: since.%s = %d, want %d", tc.file, name, th.Since[name], want)
			}
		}
	}
}

func TestRunSkipsMissingInputsAndRejectsUnknownChecks(t *testing.T) {
	f := fatTree(t)
	res, err := Run(&Snapshot{Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]bool{}
	for _, s := range res.Skipped {
		skipped[s.Check] = true
	}
	for _, id := range []string{"counters.errors", "topology.miswired", "counters.utilization"} {
		if !skipped[id] {
			t.Errorf("%s not skipped without its input", id)
		}
	}
	if _, err := Run(&Snapshot{Fabric: f}, "link.bogus"); err == nil {
		t.Error("unknown check accepted")
	}
	if res, _ := Run(&Snapshot{Fabric: f}, "link"); len(res.Ran) != 7 {
		t.Errorf("selecting the link group ran %v", res.Ran)
	}
}

func TestScopeForJob(t *testing.T) {
	f := fatTree(t)
	hosts := []*fabric.Node{node(t, f, "gpu001"), node(t, f, "gpu009")} // leaf01 and leaf02
	sc := ScopeFor(f, hosts)
	if !sc.Switches[node(t, f, "leaf01")] || !sc.Switches[node(t, f, "leaf02")] || sc.Switches[node(t, f, "leaf03")] {
		t.Errorf("scope switches wrong: leaf03 in scope or a job leaf missing")
	}
	spines := 0
	for sw := range sc.Switches {
		if strings.HasPrefix(sw.Description, "spine") {
			spines++
		}
	}
	if spines < 1 || spines > 2 {
		t.Errorf("%d spines on the routes between two hosts, want 1 or 2", spines)
	}
	// A degraded link elsewhere is out of scope; one on the route is in.
	degrade(t, node(t, f, "leaf04"), 9, mad.Width1X)
	if fs := byCheck(run(t, &Snapshot{Fabric: f, Scope: sc}), "link.degraded-width"); len(fs) != 0 {
		t.Errorf("out-of-scope link reported: %v", fs[0].Title)
	}
	g := newRouteGraph(f)
	dst := node(t, f, "gpu009").Ports[1]
	up := g.a.WalkTo(dst).Path(node(t, f, "leaf01"))[0]
	degrade(t, node(t, f, "leaf01"), up.Num, mad.Width1X)
	if fs := byCheck(run(t, &Snapshot{Fabric: f, Scope: sc}), "link.degraded-width"); len(fs) != 1 {
		t.Errorf("in-scope degraded uplink: got %d findings", len(fs))
	}
}

// Routing findings on routes ibdoctor computed are what-if: labelled,
// no advice about the subnet manager.
func TestWhatIfOnComputedRoutes(t *testing.T) {
	fs := []Finding{
		{Check: "routing.unreachable", Severity: Critical, Title: "LID 5 unreachable", Action: "Have the subnet manager recompute routes"},
		{Check: "link.degraded-speed", Severity: Error, Title: "slow", Action: "reseat"},
	}
	whatIf(fs)
	r := fs[0]
	if !r.WhatIf || r.Severity != Critical || !strings.HasPrefix(r.Title, "What-if") || strings.Contains(r.Action, "subnet manager recompute") || !strings.Contains(r.Action, "--lfts") {
		t.Errorf("routing finding: %+v", r)
	}
	if l := fs[1]; l.WhatIf || l.Severity != Error || l.Title != "slow" {
		t.Errorf("link finding changed: %+v", l)
	}
}

// TestRouteWalkShared: routing.unreachable and routing.loop share one walk
// within a Run; run together they give what each gives alone, on a fabric
// with a black hole, a loop and a dead end.
func TestRouteWalkShared(t *testing.T) {
	f := fatTree(t)
	node(t, f, "leaf01").Switch.LFT.Set(node(t, f, "gpu017").Ports[1].LID, fabric.NoRoute)
	dst := node(t, f, "gpu030").Ports[1]
	leaf := node(t, f, "leaf01")
	spine := leaf.Ports[leaf.Switch.LFT.At(dst.LID)].Remote
	spine.Node.Switch.LFT.Set(dst.LID, spine.Num)
	dead := node(t, f, "leaf02")
	p := dead.Ports[dead.Switch.LFT.At(node(t, f, "gpu001").Ports[1].LID)]
	p.State, p.Remote.State = mad.PortStateDown, mad.PortStateDown
	only := func(ids ...string) []Finding {
		res, err := Run(&Snapshot{Fabric: f}, ids...)
		if err != nil {
			t.Fatal(err)
		}
		return res.Findings
	}
	both := only("routing.unreachable", "routing.loop")
	alone := append(only("routing.unreachable"), only("routing.loop")...)
	Rank(alone)
	if len(byCheck(both, "routing.loop")) != 1 || len(byCheck(both, "routing.unreachable")) < 2 {
		t.Fatalf("want a loop and two unreachable findings, got %+v", both)
	}
	if !reflect.DeepEqual(both, alone) {
		t.Fatalf("together:\n%+v\nalone:\n%+v", both, alone)
	}
}

// TestCounterErrorsSinceSnapshotSubSecond (trial C12): a gate right after
// the sweep says how long ago it was, not "0s": 312ms. Before: "grew by
// 500 since the sweep 0s before".
func TestCounterErrorsSinceSnapshotSubSecond(t *testing.T) {
	f := fatTree(t)
	p := node(t, f, "leaf01").Ports[10]
	c := fakeCounters{rs: []PortReading{
		{Port: p, Saved: true, SavedAgo: 312 * time.Millisecond, Errors: []CounterValue{{Name: "PortRcvErrors", Value: 500, Growth: 500, Bits: 16}}},
	}}
	fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: c}), "counters.errors")
	if len(fs) != 1 || !strings.Contains(fs[0].Evidence[0].Text, "since the sweep 312ms before") {
		t.Fatalf("want the sweep 312ms before, got %+v", fs)
	}
}

// TestMergeKeepsLowerBound: findings folded into one keep the largest
// share and, when that share counts only the routes followed, say so.
func TestMergeKeepsLowerBound(t *testing.T) {
	fs := mergeIdentical([]Finding{
		{Check: "x.y", Title: "same", Impact: Impact{PathShare: 0.01}, Entities: []Entity{{Node: "a"}}},
		{Check: "x.y", Title: "same", Impact: Impact{PathShare: 0.02, PathShareLowerBound: true}, Entities: []Entity{{Node: "b"}}},
	})
	if len(fs) != 1 || fs[0].Impact.PathShare != 0.02 || !fs[0].Impact.PathShareLowerBound {
		t.Errorf("merged impact %+v", fs[0].Impact)
	}
}

// TestCounterEventsSinceSweep is trial T1: the growth since the previous
// sweep was judged against the per-interval thresholds ("over" meaning
// strictly greater, LinkDowned 1), so a link that went down once, or
// retrained once, between two cron sweeps (or since the sweep, on a gate's
// own host link) was reported by nothing. Any such event since the sweep
// is now a warning naming the link, the count and the span; two or more
// link-downs are an error (flapping). A PortRcvErrors +1 within its
// threshold is info and says it grew, not "history".
func TestCounterEventsSinceSweep(t *testing.T) {
	f := fatTree(t)
	at := time.Date(2026, 11, 27, 2, 30, 0, 0, time.UTC)
	port := func(n int) *fabric.Port { return node(t, f, "leaf01").Ports[n] }
	reading := func(n int, c CounterValue) PortReading {
		c.Bits = 16
		return PortReading{Port: port(n), Saved: true, SavedAgo: 15 * time.Minute, SavedAt: at, Errors: []CounterValue{c}}
	}
	c := fakeCounters{rs: []PortReading{
		reading(10, CounterValue{Name: "LinkDownedCounter", Value: 4, Growth: 1}),
		reading(11, CounterValue{Name: "LinkErrorRecoveryCounter", Value: 1, Growth: 1}),
		reading(12, CounterValue{Name: "LinkDownedCounter", Value: 5, Growth: 2}),
		reading(13, CounterValue{Name: "PortRcvErrors", Value: 51, Growth: 1}),
	}}
	fs := byCheck(run(t, &Snapshot{Fabric: f, Counters: c}), "counters.errors")
	got := map[int]Finding{}
	for _, f := range fs {
		got[f.Entities[0].Port] = f
	}
	if len(fs) != 4 {
		t.Fatalf("want 4 findings, got %d: %+v", len(fs), fs)
	}
	if g := got[10]; g.Severity != Warning || g.Basis != "since-snapshot" || !strings.Contains(g.Title, "went down 1 time since the last sweep") ||
		!strings.Contains(g.Evidence[0].Text, "since the previous sweep at 2026-11-27T02:30:00Z") {
		t.Errorf("one link-down since the sweep: %v %s %q / %q", g.Severity, g.Basis, g.Title, g.Evidence)
	}
	if g := got[11]; g.Severity != Warning || g.Basis != "since-snapshot" || !strings.Contains(g.Title, "retrained 1 time since the last sweep") {
		t.Errorf("one link error recovery since the sweep: %v %s %q", g.Severity, g.Basis, g.Title)
	}
	if g := got[12]; g.Severity != Error || !strings.Contains(g.Title, "went down 2 times since the last sweep") {
		t.Errorf("two link-downs since the sweep: %v %q", g.Severity, g.Title)
	}
	if g := got[13]; g.Severity != Info || strings.Contains(g.Evidence[0].Text, "history") || strings.Contains(g.Impact.Summary, "not since") ||
		!strings.Contains(g.Evidence[0].Text, "+1 since the previous sweep") {
		t.Errorf("PortRcvErrors +1 within its threshold: %v %q / %q / %q", g.Severity, g.Title, g.Evidence[0].Text, g.Impact.Summary)
	}

	// since.NAME in a thresholds file sets the threshold on the growth
	// since the sweep: 1 lets one link-down pass again.
	th, err := ParseThresholds(strings.NewReader("since.LinkDownedCounter=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs = byCheck(run(t, &Snapshot{Fabric: f, Counters: c, Expect: Expectations{Thresholds: th}}), "counters.errors")
	for _, g := range fs {
		if g.Entities[0].Port == 10 {
			t.Errorf("since.LinkDownedCounter=1: one link-down still reported: %q", g.Title)
		}
	}
}

// TestDuplicateGUIDWithoutPaths: a file that records a cloned GUID by its
// claimants' descriptions only (ibnetdiscover -p has no paths) still names
// both claimants and counts them, not "0 nodes claim".
func TestDuplicateGUIDWithoutPaths(t *testing.T) {
	f := fatTree(t)
	f.DuplicateGUIDs = []fabric.DuplicateGUID{{GUID: 0x1234, Descs: []string{"agg1", "agg2"}}}
	d := byCheck(run(t, &Snapshot{Fabric: f}), "topology.duplicate-guid")
	if len(d) != 1 || !strings.HasPrefix(d[0].Title, "2 nodes claim") || len(d[0].Entities) != 2 ||
		!strings.Contains(d[0].Evidence[0].Text, `"agg1"`) || strings.Contains(d[0].Evidence[0].Text, "at path") {
		t.Errorf("duplicate guid without paths: %+v", d)
	}
}
