package gate

import (
	"regexp"
	"strings"
	"testing"
)

// TestGateDeadSpineSaysBothWays (review V10): a switch that did not
// answer by LID (every attempt of the engine's retries) nor by the
// directed route around that way (sent once) is listed with both: before,
// the entry cited only the directed-route try, "after 1 attempt", and an
// operator who had set --retries read it as the retries ignored. The
// engine here retries once: 2 attempts by LID.
func TestGateDeadSpineSaysBothWays(t *testing.T) {
	doc, spine, _ := deadSpineGateTap(t)
	both := regexp.MustCompile(`by LID \d+ .*after 2 attempts.*, nor by directed route \(path [0-9,]+\).*after 1 attempt`)
	var lft, pi int
	for _, u := range doc.Unreached {
		if !strings.Contains(u.Where, spine) {
			continue
		}
		switch {
		case strings.HasPrefix(u.What, "LinearForwardingTable"):
			lft++
		case strings.HasPrefix(u.What, "PortInfo"):
			pi++
		default:
			continue
		}
		if !both.MatchString(u.Reason) {
			t.Errorf("%s at %s: %q does not say both ways (%s)", u.What, u.Where, u.Reason, both)
		}
		if u.Failure != "no-answer" {
			t.Errorf("%s at %s: failure %q, want no-answer", u.What, u.Where, u.Failure)
		}
	}
	if lft == 0 || pi == 0 {
		t.Errorf("%d LFT and %d PortInfo entries for %s; want both kinds: %+v", lft, pi, spine, doc.Unreached)
	}
}
