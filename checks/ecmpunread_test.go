package checks_test

import (
	"strings"
	"testing"
)

// TestECMPSwitchPortsAllUnread: every PortInfo of spine02 went unanswered
// (its NodeInfo answers, so it is discovered), as in trial A5 on ibsim
// ('Error "spine2" 100 21'). Its table was read, so its equal-cost groups
// are counted, but no port of a group was read: the group is empty. Before,
// judgeGroup divided by the group's size and the whole check panicked
// ("integer divide by zero"), in check and in every cron sweep. Could not
// look: spine02's spread is undecided (or not judged), never a crash.
func TestECMPSwitchPortsAllUnread(t *testing.T) {
	res, sw := incidentWith(t, "drop spine02 attr=PortInfo\n")
	if sw.Complete {
		t.Fatal("spine02's PortInfo was dropped, yet the sweep read everything")
	}
	for _, f := range byCheck(res.Findings, "routing.ecmp-imbalance") {
		if f.Entities[0].Node == "spine02" {
			t.Errorf("ecmp-imbalance on spine02, whose ports were not read: %s", f.Title)
		}
	}
	for _, u := range res.Undecided {
		if u.Check == "routing.ecmp-imbalance" && u.Subject.Node == "spine02" && !strings.Contains(u.Reason, "not read") {
			t.Errorf("spine02 undecided without saying what was not read: %q", u.Reason)
		}
	}
}
