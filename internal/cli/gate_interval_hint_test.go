package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateSkipHintNamesSweep (trial G9): a gate with --interval judges
// sm.stalled from the last sweep's verdict; when that sweep read SMInfo
// once, "add --interval" told the operator to add what the gate already
// had. The hint names the sweep that needs it.
func TestGateSkipHintNamesSweep(t *testing.T) {
	code, out, stderr := run("gate", "--sim", "--nodes", "gpu001,gpu002", "--state-dir", filepath.Join(t.TempDir(), "state"), "--interval", "1s", "--verbose", "--no-color")
	if code != ExitHealthy {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "sm.stalled") && strings.Contains(l, "did not judge it") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("sm.stalled not listed as not judged by the sweep:\n%s", out)
	}
	if strings.Contains(line, "(add --interval)") || !strings.Contains(line, "ibdoctor sweep --interval") {
		t.Errorf("the hint does not name the sweep: %s", line)
	}
}
