package cli

import (
	"strings"
	"testing"
)

// TestGateDetail: gate takes check's --detail, with check's meaning and
// help text, and renders its findings as check does. Before, 'gate
// --detail 0' was "unknown flag: --detail".
func TestGateDetail(t *testing.T) {
	args := []string{"gate", "--sim", "--nodes", "gpu[025-028]", "--state-dir", t.TempDir()}
	code, out, stderr := run(append(args, "--detail", "0")...)
	if code != ExitHealthy {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "link.slower-hardware") || strings.Contains(out, "evidence:") ||
		!strings.Contains(out, "(evidence and next steps of the other finding: --detail N, or --json)") {
		t.Errorf("--detail 0: want the table and no details:\n%s", out)
	}
	_, out, _ = run(args...)
	if !strings.Contains(out, "evidence: ") || !strings.Contains(out, "do: ") {
		t.Errorf("default --detail: want the finding's details:\n%s", out)
	}
	code, _, stderr = run(append(args, "--detail", "-1")...)
	if code != ExitUndecided || !strings.Contains(stderr, "--detail") {
		t.Errorf("--detail -1: exit %d: %s", code, stderr)
	}
	gate, check := newGateCmd(&app{}, nil).Flags().Lookup("detail"), newCheckCmd(&app{}, nil).Flags().Lookup("detail")
	if gate == nil || check == nil || gate.Usage != check.Usage {
		t.Errorf("gate's --detail %+v, check's %+v: want the same flag", gate, check)
	}
}
