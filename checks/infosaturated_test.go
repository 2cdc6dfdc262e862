package checks

import "testing"

// TestSaturatedInfoCounterStaysInfo (trial A1): a live check judged every
// saturated counter on the absolute basis a warning, so a switch port's
// PortRcvSwitchRelayErrors stuck at 65535 (multicast relayed nowhere, common
// on real fabrics) and a VL15Dropped at 65535 were warnings while 65000 of
// them were info, and the db_csv path kept them at info. A counter at the
// top of its field is judged at its counter's severity floor, one rule for
// both paths: warning for the warning and error counters, info for the info
// counters (relay, remote physical, VL15/QP1 dropped).
func TestSaturatedInfoCounterStaysInfo(t *testing.T) {
	f := fatTree(t)
	leaf := node(t, f, "leaf01")
	rs := []PortReading{
		{Port: leaf.Ports[10], Errors: []CounterValue{{Name: "PortRcvSwitchRelayErrors", Value: 65535, Bits: 16, Saturated: true}}},
		{Port: leaf.Ports[11], Errors: []CounterValue{{Name: "VL15Dropped", Value: 65535, Bits: 16, Saturated: true}}},
		{Port: leaf.Ports[12], Errors: []CounterValue{{Name: "PortRcvRemotePhysicalErrors", Value: 65535, Bits: 16, Saturated: true}}},
		{Port: leaf.Ports[13], Errors: []CounterValue{{Name: "PortRcvSwitchRelayErrors", Value: 65000, Bits: 16}}},
		{Port: leaf.Ports[14], Errors: []CounterValue{{Name: "SymbolErrorCounter", Value: 65535, Bits: 16, Saturated: true}}},
		{Port: leaf.Ports[15], Errors: []CounterValue{{Name: "PortXmitDiscards", Value: 65535, Bits: 16, Saturated: true}}},
	}
	want := map[string]Severity{
		"PortRcvSwitchRelayErrors = 65535 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[10]) + " (saturated)":    Info,
		"VL15Dropped = 65535 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[11]) + " (saturated)":                 Info,
		"PortRcvRemotePhysicalErrors = 65535 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[12]) + " (saturated)": Info,
		"PortRcvSwitchRelayErrors = 65000 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[13]):                     Info,
		"SymbolErrorCounter = 65535 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[14]) + " (saturated)":          Warning,
		"PortXmitDiscards = 65535 on " + (&Snapshot{Fabric: f}).portName(leaf.Ports[15]) + " (saturated)":            Warning,
	}
	got := map[string]Severity{}
	for _, x := range byCheck(run(t, &Snapshot{Fabric: f, Counters: fakeCounters{rs: rs}}), "counters.errors") {
		got[x.Title] = x.Severity
	}
	for title, sev := range want {
		g, ok := got[title]
		if !ok {
			t.Errorf("no finding %q (got %v)", title, got)
			continue
		}
		if g != sev {
			t.Errorf("%q: %s, want %s", title, g, sev)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d findings, want %d: %v", len(got), len(want), got)
	}
}
