package checks

import (
	"strings"
	"testing"
)

// TestFileCountersSinceClear: an ibdiagnet2.db_csv gives each port's
// counters since the last clear (PM_INFO) and what they grew by during
// ibdiagnet's run (PM_DELTA), not when the clear was nor how long the run.
// Only the increase was judged, so the Quantum-2 capture's saturated
// SymbolErrorCounter=65535 on five host ports and PortRcvErrors of 35549
// and 1436771 were never mentioned. Now, when the increase is within its
// threshold, the value since the clear is judged too, but only when it
// has reached the top of the counter's PortCounters field (saturated, or
// as large in the extended counter): smaller counts pile up over months
// of routine operation (reboots down links, SM sweeps, multicast relay),
// and with no span no rate tells them from a fault.
func TestFileCountersSinceClear(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	host := func(i int) PortReading {
		return PortReading{Port: leaf.Ports[i].Remote, SpanUnknown: true}
	}
	rs := []PortReading{host(1), host(2), host(3), host(4), host(5), host(6)}
	// 1: saturated 16-bit SymbolErrorCounter, no growth while sampled.
	rs[0].Errors = []CounterValue{{Name: "SymbolErrorCounter", Value: 65535, Bits: 16, Saturated: true}}
	// 2: PortRcvErrors past the 16-bit field's top, read from the
	// extended counter (not saturated), and a small symbol count.
	rs[1].Errors = []CounterValue{{Name: "PortRcvErrors", Value: 1436771, Bits: 64}, {Name: "SymbolErrorCounter", Value: 67, Bits: 64}}
	// 3: routine history: 102 link downs (8-bit field), relay errors
	// within the 16-bit field, discards below it.
	rs[2].Errors = []CounterValue{{Name: "LinkDownedCounter", Value: 102, Bits: 64}, {Name: "PortRcvSwitchRelayErrors", Value: 20993, Bits: 64}, {Name: "PortXmitDiscards", Value: 1942, Bits: 64}}
	// 4: relay errors past the 16-bit top: an info counter stays info.
	rs[3].Errors = []CounterValue{{Name: "PortRcvSwitchRelayErrors", Value: 91778, Bits: 64}}
	// 5: growing while sampled: the increase is the finding, once.
	rs[4].Errors = []CounterValue{{Name: "SymbolErrorCounter", Value: 65535, Bits: 16, Saturated: true, Delta: 5}}
	// 6: an increase that could not be computed: undecided, and the
	// history still said.
	rs[5].Errors = []CounterValue{{Name: "SymbolErrorCounter", Value: 65535, Bits: 16, Saturated: true, DeltaUnknown: "(cleared during the run)"}}
	s := &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}, CountersBasis: "the increase during ibdiagnet's run (PM_DELTA), span not in the file"}
	got := map[string]Finding{}
	for _, x := range byCheck(run(t, s), "counters.errors") {
		got[x.Entities[0].String()+" "+strings.Fields(x.Title)[0]] = x
	}
	name := func(i int) string { return s.entityOf(leaf.Ports[i].Remote, "").String() }
	pname := func(i int) string { return s.portName(leaf.Ports[i].Remote) }
	want := map[string]struct {
		sev   Severity
		basis string
	}{
		name(1) + " SymbolErrorCounter":       {Warning, "absolute"},
		name(2) + " PortRcvErrors":            {Warning, "absolute"},
		name(4) + " PortRcvSwitchRelayErrors": {Info, "absolute"},
		name(5) + " SymbolErrorCounter":       {Warning, "delta"},
		name(6) + " SymbolErrorCounter":       {Warning, "absolute"},
	}
	for k, w := range want {
		x, ok := got[k]
		if !ok {
			t.Errorf("no finding for %s", k)
			continue
		}
		if x.Severity != w.sev || x.Basis != w.basis {
			t.Errorf("%s: %s on %q, want %s on %q (%s)", k, x.Severity, x.Basis, w.sev, w.basis, x.Title)
		}
	}
	for k, x := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected finding %s: %s %s", k, x.Severity, x.Title)
		}
	}
	sat := got[name(1)+" SymbolErrorCounter"]
	if want := "SymbolErrorCounter saturated on " + pname(1) + " since the last clear (at least 65535); not growing while sampled"; sat.Title != want {
		t.Errorf("title:\n%s\nwant:\n%s", sat.Title, want)
	}
	var ev []string
	for _, e := range sat.Evidence {
		ev = append(ev, e.String())
	}
	if x := got[name(2)+" PortRcvErrors"]; !strings.Contains(evidence(x), "also on this port since the last clear: SymbolErrorCounter 67") {
		t.Errorf("evidence does not name the port's other counters:\n%s", evidence(x))
	}
	for _, w := range []string{"+0 while the counters were sampled", "no rate", "since the counters were last cleared"} {
		if !strings.Contains(strings.Join(ev, "\n"), w) {
			t.Errorf("evidence does not say %q:\n%s", w, strings.Join(ev, "\n"))
		}
	}
	for _, w := range []string{"perfquery -x -R", "ibdiagnet --pc", "sample again"} {
		if !strings.Contains(sat.Action, w) {
			t.Errorf("action does not say %q: %s", w, sat.Action)
		}
	}
	if x := got[name(2)+" PortRcvErrors"]; x.Title != "PortRcvErrors = 1436771 on "+pname(2)+" since the last clear; not growing while sampled" {
		t.Errorf("title %q", x.Title)
	}
	if x := got[name(6)+" SymbolErrorCounter"]; x.Title != "SymbolErrorCounter saturated on "+pname(6)+" since the last clear (at least 65535)" {
		t.Errorf("with the increase unknown, title %q", x.Title)
	}
	// 'counters' lists the same ports (one judgement).
	v, _ := s.CounterVerdicts()
	n := 0
	for _, fs := range v {
		n += len(byCheck(fs, "counters.errors"))
	}
	if n != len(want) {
		t.Errorf("CounterVerdicts: %d counters.errors verdicts, want %d", n, len(want))
	}

	// A live reading of one sample (no increase at all) is judged on
	// its values with ibqueryerrors' thresholds, as before: the 102
	// link downs are a finding there.
	for i := range rs {
		rs[i].SpanUnknown = false
		for j := range rs[i].Errors {
			rs[i].Errors[j].Delta, rs[i].Errors[j].DeltaUnknown = 0, ""
		}
	}
	live := byCheck(run(t, &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}}), "counters.errors")
	found := false
	for _, x := range live {
		if strings.HasPrefix(x.Title, "LinkDownedCounter = 102") && x.Severity == Error {
			found = true
		}
	}
	if !found {
		t.Errorf("one live sample: want LinkDownedCounter = 102 judged on its value (error), got %d findings", len(live))
	}
}

func evidence(f Finding) string {
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.String())
	}
	return strings.Join(ev, "\n")
}
