package checks

import (
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/fabric"
	"github.com/ibdoctor/ibdoctor/mad"
)

// TestSinceClearOutlierRule (trial H1): a physical-layer counter's value
// since an unknown clear is a finding when it is over 100 times its
// threshold and 10 times the 90th percentile of the same counter on 20 or
// more ports of its role; warning when it did not grow while sampled, its
// counter's own severity when it did. Too few peers, a fleet that reads
// as much, a value under the floor or a counter that routine operation
// drives (discards) are no finding.
func TestSinceClearOutlierRule(t *testing.T) {
	f := fatTree(t)
	var hosts []*fabric.Port
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			hosts = append(hosts, n.Ports[1])
		}
	}
	if len(hosts) != 32 {
		t.Fatalf("%d host ports, want 32", len(hosts))
	}
	judge := func(rs []PortReading) map[string]Finding {
		s := &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}, CountersBasis: "the increase during ibdiagnet's run (PM_DELTA), span not in the file"}
		got := map[string]Finding{}
		for _, x := range byCheck(run(t, s), "counters.errors") {
			got[x.Entities[0].String()+" "+x.Evidence[0].Name] = x
		}
		return got
	}
	fleet := func(n int) []PortReading {
		var rs []PortReading
		for _, p := range hosts[:n] {
			rs = append(rs, PortReading{Port: p, SpanUnknown: true, Errors: []CounterValue{
				{Name: "SymbolErrorCounter", Bits: 64}, {Name: "PortRcvErrors", Bits: 64}, {Name: "PortXmitDiscards", Bits: 64}}})
		}
		return rs
	}
	s := &Snapshot{Fabric: f}
	name := func(i int) string { return s.entityOf(hosts[i], "").String() }

	rs := fleet(32)
	rs[0].Errors[0].Value = 5000                           // outlier, +0: warning
	rs[1].Errors[1].Value, rs[1].Errors[1].Delta = 3000, 1 // outlier, grew: error
	rs[2].Errors[0].Value = 900                            // under 100 x 10
	rs[3].Errors[2].Value = 50000                          // discards: routine
	got := judge(rs)
	if x, ok := got[name(0)+" SymbolErrorCounter"]; !ok || x.Severity != Warning || !strings.HasSuffix(x.Title, "; not growing while sampled") {
		t.Errorf("5000 symbol errors, +0 while sampled: %v %s %q, want a warning", ok, x.Severity, x.Title)
	}
	if x, ok := got[name(1)+" PortRcvErrors"]; !ok || x.Severity != Error || !strings.HasSuffix(x.Title, "; +1 while sampled") || !strings.Contains(evidence(x), "still counting") {
		t.Errorf("3000 receive errors, +1 while sampled: %v %s %q, want an error that says it grew", ok, x.Severity, x.Title)
	}
	if len(got) != 2 {
		t.Errorf("%d findings, want 2: %v", len(got), got)
	}

	// A fleet where a tenth and more read 600: 5000 is not 10 times it.
	rs = fleet(32)
	for i := 0; i < 5; i++ {
		rs[i].Errors[0].Value = 600
	}
	rs[10].Errors[0].Value = 5000
	if got := judge(rs); len(got) != 0 {
		t.Errorf("5000 among ports reading 600: want no finding, got %v", got)
	}
	// Too few ports of the role to have a fleet.
	rs = fleet(19)
	rs[0].Errors[0].Value = 50000
	if got := judge(rs); len(got) != 0 {
		t.Errorf("19 host ports read: want no finding, got %v", got)
	}
	// A live reading of one sample is judged on its values, as before.
	rs = fleet(32)
	rs[0].Errors[0].Value = 5000
	for i := range rs {
		rs[i].SpanUnknown = false
	}
	if got := judge(rs); len(got) != 1 || got[name(0)+" SymbolErrorCounter"].Basis != "absolute" {
		t.Errorf("one live sample: want the one absolute finding, got %v", got)
	}
}

// TestSinceClearDisabledPortDrops: a disabled port's receive errors and
// discards are packets dropped toward it (24dae9b, trial G1), info on
// every basis: since an unknown clear too, full or not, and no outlier.
func TestSinceClearDisabledPortDrops(t *testing.T) {
	f := fatTree(t)
	var rs []PortReading
	var hosts []*fabric.Port
	for _, n := range f.Nodes {
		if n.Type == mad.NodeCA {
			hosts = append(hosts, n.Ports[1])
			rs = append(rs, PortReading{Port: n.Ports[1], SpanUnknown: true, Errors: []CounterValue{{Name: "PortRcvErrors", Bits: 64}}})
		}
	}
	hosts[0].PhysState, hosts[1].PhysState = mad.PhysDisabled, mad.PhysDisabled
	rs[0].Errors[0].Value = 5000                                   // an outlier were it linked
	rs[1].Errors[0].Value, rs[1].Errors[0].Saturated = 65535, true // full
	rs[1].Errors[0].Bits = 16
	s := &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}, CountersBasis: "the increase during ibdiagnet's run (PM_DELTA), span not in the file"}
	got := byCheck(run(t, s), "counters.errors")
	if len(got) != 1 || got[0].Entities[0].String() != s.entityOf(hosts[1], "").String() || got[0].Severity != Info || !strings.HasPrefix(got[0].Action, "Not a cable verdict") {
		for _, x := range got {
			t.Errorf("%s %s: %s", x.Severity, x.Title, x.Action)
		}
		t.Errorf("want one info finding, the full counter's, not a cable verdict")
	}
}
