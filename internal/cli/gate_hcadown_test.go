package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// sampleSweep sweeps the built-in sample fabric (with faults, if given)
// into state; the sample's planted incident makes it exit 1.
func sampleSweep(t *testing.T, state string, faults ...string) {
	t.Helper()
	args := []string{"sweep", "--sim", "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")}
	for _, f := range faults {
		args = append(args, "--faults", f)
	}
	if code, _, stderr := run(args...); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
}

// hasLinkDown reports whether d has a link.down finding naming both ends.
func hasLinkDown(d *chkDoc, a string, ap int, b string, bp int) bool {
	for _, f := range d.Findings {
		if f.Check != "link.down" {
			continue
		}
		var ea, eb bool
		for _, e := range f.Entities {
			ea = ea || (e.Node == a && e.Port == ap)
			eb = eb || (e.Node == b && e.Port == bp)
		}
		if ea && eb {
			return true
		}
	}
	return false
}

// TestGateHCADown (#17): one HCA port of a job host is down. Whether the
// link went down before the sweep (the snapshot has no such HCA: only the
// accepted baseline knows it) or after it (the snapshot has the link, the
// live re-read finds it down), the gate fails with link.down naming the
// link — never "healthy" for the host's other HCAs, never "undecided"
// with a claim that the port had no link in the snapshot. (Failed before:
// (a) exit 0 "7 hosts healthy"; (b) exit 2 with link.polling leaf01/9 and
// "the port is up now but had no link in the snapshot".)
func TestGateHCADown(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	down := writeFile(t, "down.faults", "down \"gpu002 mlx5_0\"/1\n")
	clean := filepath.Join(t.TempDir(), "clean")
	sampleSweep(t, clean)
	before := filepath.Join(t.TempDir(), "before")
	sampleSweep(t, before)       // the accepted baseline: every HCA cabled
	sampleSweep(t, before, down) // the snapshot: gpu002 mlx5_0 is gone

	for _, c := range []struct{ name, state string }{
		{"down at sweep time", before},
		{"down after the sweep", clean},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := run("gate", "--sim", "--faults", down, "--state-dir", c.state, "--nodes", "gpu002", "--json", "--timeout", deadTimeout, "--retries", "0")
			d := chkParse(t, out)
			if code != ExitFindings || d.Status != "unhealthy" || !hasLinkDown(d, "leaf01", 9, "gpu002 mlx5_0", 1) {
				t.Fatalf("exit %d status %q, want 1 with link.down leaf01/9 <-> gpu002 mlx5_0/1\nfindings %+v\nunreached %+v\n%s", code, d.Status, d.Findings, d.Unreached, stderr)
			}
			for _, u := range d.Unreached {
				if strings.Contains(u.Reason, "had no link in the snapshot") {
					t.Errorf("false unreached claim: %+v", u)
				}
			}
			for _, f := range d.Findings {
				if f.Check == "link.polling" {
					t.Errorf("the down link is link.down's finding, not link.polling's: %+v", f)
				}
			}
		})
	}

	// A host the fabric does not have, beside the one with the down HCA:
	// named as unknown, and never healthy.
	code, out, stderr := run("gate", "--sim", "--faults", down, "--state-dir", before, "--nodes", "gpu002,gpu999", "--json", "--timeout", deadTimeout, "--retries", "0")
	d := chkParse(t, out)
	if code == ExitHealthy || d.Scope == nil || len(d.Scope.Unmatched) != 1 || d.Scope.Unmatched[0] != "gpu999" || !strings.Contains(stderr, "gpu999") {
		t.Errorf("unknown host: exit %d scope %+v stderr %q", code, d.Scope, stderr)
	}
	// Only the unknown host: undecided, naming it.
	code, out, stderr = run("gate", "--sim", "--state-dir", clean, "--nodes", "gpu999")
	if code != ExitUndecided || !strings.Contains(stderr+out, "gpu999") {
		t.Errorf("only an unknown host: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestGateExpectTopology: a state dir whose first sweep already had the
// host's link down accepted a baseline without that host, so the gate
// cannot know it ("not found", exit 2 — never healthy); a designed
// topology given with --expect-topology knows it: link.down, exit 1.
// (--expect-topology was accepted by gate and ignored before.)
func TestGateExpectTopology(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := chkTopology(t)
	down := writeFile(t, "down.faults", "down \"gpu002 mlx5_0\"/1\n")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", down, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	gate := []string{"gate", "--sim=" + topo, "--faults", down, "--state-dir", state, "--nodes", "gpu002", "--json", "--timeout", deadTimeout, "--retries", "0"}
	code, out, _ := run(gate...)
	if d := chkParse(t, out); code != ExitUndecided || d.Scope == nil || len(d.Scope.Unmatched) != 1 {
		t.Errorf("without a baseline that knows the host: exit %d status %q scope %+v", code, d.Status, d.Scope)
	}
	code, out, stderr := run(append(gate, "--expect-topology", topo)...)
	d := chkParse(t, out)
	if code != ExitFindings || len(d.Findings) == 0 || d.Findings[0].Check != "link.down" || !strings.Contains(d.Findings[0].Title, "gpu002 mlx5_0/1") {
		t.Errorf("--expect-topology: exit %d findings %+v unreached %+v\n%s", code, d.Findings, d.Unreached, stderr)
	}
}
