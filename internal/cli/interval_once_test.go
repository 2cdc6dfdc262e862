package cli

import (
	"strings"
	"testing"
)

// TestUnansweredInBothSamplesOnce: leaf02's PortCountersExtended never
// answers; with --interval it goes unanswered in both samples. Trial T11:
// check and counters listed the identical entry twice ("Reached: 2
// things"). Now one entry says it was so in both samples.
func TestUnansweredInBothSamplesOnce(t *testing.T) {
	faults := writeFile(t, "faults.txt", "drop leaf02 attr=PortCountersExtended\n")
	_, out, stderr := run("check", "--sim", "--faults", faults, "--interval", "200ms", "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if n := strings.Count(out, "PortCountersExtended at leaf02"); n != 1 || !strings.Contains(out, "Could not read (1):") {
		t.Errorf("check: %d entries for leaf02's PortCountersExtended, want 1:\n%s%s", n, out[strings.Index(out, "Reached"):], stderr)
	}
	if !strings.Contains(out, "in both samples") {
		t.Errorf("check: the entry does not say it was so in both samples:\n%s", out[strings.Index(out, "Could not"):])
	}
	_, _, stderr = run("counters", "--sim", "--faults", faults, "--interval", "200ms", "--all", "--timeout", deadTimeout, "--retries", "0", "--no-color")
	if n := strings.Count(stderr, "PortCountersExtended at leaf02"); n != 1 {
		t.Errorf("counters: %d entries for leaf02's PortCountersExtended, want 1:\n%s", n, stderr)
	}
}
