package checks_test

import (
	"strings"
	"testing"
)

// TestUnreadSwitchBeyondTop: leaf03's LID is 3000, past every table's
// LinearFDBTop (trial A16), so its PMA cannot be reached by LID. The
// could-not-read entry gives that reason (as it names a down egress),
// not a bare timeout that reads like a dead PMA.
func TestUnreadSwitchBeyondTop(t *testing.T) {
	_, sw := incidentWith(t, "lid leaf03 lid=3000\n")
	found := false
	for _, u := range sw.Unreached {
		if strings.HasPrefix(u.Where, "leaf03") {
			found = true
			if !strings.Contains(u.Reason, "stops at LinearFDBTop") || !strings.Contains(u.Reason, "LID 3000 is beyond it") {
				t.Errorf("%s at %s: %q, want the LinearFDBTop reason", u.What, u.Where, u.Reason)
			}
		}
	}
	if !found {
		t.Errorf("leaf03 not in what could not be read: %+v", sw.Unreached)
	}
}
