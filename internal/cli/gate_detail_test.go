package cli

import (
	"path/filepath"
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

// TestGateUnreadPortOnce: a port on the job's routes whose PortInfo the
// gate could not re-read is named once, where it is: "PortInfo at
// spine02 port 2" (before: "PortInfo 2 at spine02 port 2", the
// attribute modifier repeating the port).
func TestGateUnreadPortOnce(t *testing.T) {
	state := t.TempDir()
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	faults := writeFile(t, "drop.txt", "drop spine02/2 attr=PortInfo\n")
	code, out, stderr := run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu[001-032]",
		"--retries", "0", "--timeout", deadTimeout)
	// The sample's incident is on these routes: exit 1 despite the unread port.
	if code != ExitFindings {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	if !strings.Contains(out, "\n  PortInfo at spine02 port 2: no response") || strings.Contains(out, "PortInfo 2 at") {
		t.Errorf("want the unread port named once:\n%s", out)
	}
}
