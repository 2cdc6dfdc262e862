package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestRoutesSaysWhatQuestionMarkIs: on the sample, LID 104 (gpu012
// mlx5_3, its port Polling) is held by no port found, and its rows read
// "?" as their destination. A line says what that means, once (trial E6:
// nothing did; only check's routing.lost-lid explained it).
func TestRoutesSaysWhatQuestionMarkIs(t *testing.T) {
	code, out, stderr := run("routes", "--sim")
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^ 104 +\d+ +\? `).MatchString(out) {
		t.Fatalf("no row of LID 104 with destination \"?\":\n%s", out)
	}
	legend := regexp.MustCompile(`(?m)^\? as DESTINATION: no port found holds the LID.*routing\.lost-lid`)
	if n := len(legend.FindAllString(out, -1)); n != 1 {
		t.Errorf("%d lines say what \"?\" means, want 1; tail:\n%s", n, out[max(0, strings.LastIndex(out, "\n 2")-200):])
	}
	// A fabric where every LID is held says nothing of it.
	_, out, _ = run("routes", "--sim", "--switch", "leaf01", "--all=false")
	if !strings.Contains(out, " ? ") == legend.MatchString(out) {
		t.Errorf("the legend is there %v, a \"?\" row %v", legend.MatchString(out), strings.Contains(out, " ? "))
	}
}
