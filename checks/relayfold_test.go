package checks_test

import (
	"strings"
	"testing"
)

// TestRelayErrorsFoldedPerDownPort: with leaf05's two uplinks to spine01
// down (one cause), the eight ingress ports of spine01 whose packets its
// table sends out of the down port each count relay errors; they are one
// finding naming the ports, not eight with the same step (trial E14).
func TestRelayErrorsFoldedPerDownPort(t *testing.T) {
	all := sampleWith(t, "traffic ring-allreduce rate=200 stride=32\nlft spine01 behind=leaf05 port=33\npolling leaf05/33\npolling leaf05/34\n", false)
	var relay []string
	for _, f := range byCheck(all, "counters.errors") {
		if strings.Contains(f.Title, "PortRcvSwitchRelayErrors") && strings.Contains(f.Title, "spine01") {
			relay = append(relay, f.Title)
			t.Logf("%s %s\n    %v\n    do: %s", f.Severity, f.Title, f.Evidence, f.Action)
			if !strings.Contains(f.Action, "out of port 33") {
				t.Errorf("action does not name the down port 33: %s", f.Action)
			}
			if !strings.Contains(f.Title, "8 ports of spine01") || !strings.Contains(f.Title, "25-32") {
				t.Errorf("title %q: want the 8 ingress ports of spine01 named (25-32)", f.Title)
			}
			if n := len(f.Entities); n < 8 {
				t.Errorf("%d entities, want each ingress port's", n)
			}
		}
	}
	if len(relay) != 1 {
		t.Errorf("want one relay-error finding on spine01, got %d:\n  %s", len(relay), strings.Join(relay, "\n  "))
	}
}
