package cli

import (
	"strings"
	"testing"
)

// TestNotRunIntervalGiven (trial C10): check on a fabric file with
// --interval: the file has no subnet manager to read twice and no
// counters to sample twice, so no reason may advise adding the flag that
// was given. Before: "Not run: … (need --lfts, --interval, …)" and
// "sm.stalled  needs two SMInfo reads (add --interval)".
func TestNotRunIntervalGiven(t *testing.T) {
	topo := chkTopology(t)
	code, out, stderr := run("check", "--sim="+topo, "--interval", "1s", "--verbose")
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var notRun, stalled string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Not run:"):
			notRun = l
		case strings.HasPrefix(strings.TrimSpace(l), "sm.stalled "):
			stalled = l
		}
	}
	if notRun == "" || strings.Contains(notRun, "--interval") {
		t.Errorf("Not run line %q advises --interval, which was given\n%s", notRun, out)
	}
	if stalled == "" || strings.Contains(stalled, "add --interval") {
		t.Errorf("sm.stalled reason %q: want why it could not run, not the flag given\n%s", stalled, out)
	}
}
