package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGateMissingHCAFreshDeployment: the very first sweep already had
// gpu002's mlx5_0 cable down, so neither the snapshot nor the accepted
// baseline knows the host had 8 HCAs. Its 31 peers have 8 and leaf01/9,
// among its other HCAs' ports, is Polling: the gate judges the host
// against the whole snapshot's hosts (topology.missing-hca), exit 1.
// (Failed before: "1 host (7 HCAs) … healthy", exit 0.)
func TestGateMissingHCAFreshDeployment(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	down := writeFile(t, "down.faults", "down \"gpu002 mlx5_0\"/1\n")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--faults", down, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json")); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu002", "--json", "--timeout", deadTimeout, "--retries", "0")
	d := chkParse(t, out)
	var got string
	for _, f := range d.Findings {
		if f.Check == "topology.missing-hca" {
			got = f.Title
		}
	}
	if code != ExitFindings || d.Status != "unhealthy" || !strings.Contains(got, "mlx5_0 missing") || !strings.Contains(got, "leaf01/9") {
		t.Fatalf("exit %d status %q, want 1 with topology.missing-hca naming mlx5_0 and leaf01/9 (got %q)\nfindings %+v\nunreached %+v\n%s", code, d.Status, got, d.Findings, d.Unreached, stderr)
	}
	// A host of the same fabric with all its HCAs passes.
	if code, out, stderr := run("gate", "--sim", "--faults", down, "--state-dir", state, "--nodes", "gpu005", "--timeout", deadTimeout, "--retries", "0"); code != ExitHealthy {
		t.Errorf("gpu005: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestGateMissingHCAIncompleteSnapshot (trial T0): the state dir's first
// sweep did not read everything (spine03's agent was dead), so its
// snapshot is incomplete and there is no baseline. gpu012's mlx5_3 is
// missing (the incident) and leaf03/28, where its cable belongs, was read
// and is Polling: the gate must say so, exit 1. Before, an incomplete
// snapshot left the gate no hosts to compare gpu012 with: "Reached:
// everything", healthy, exit 0.
func TestGateMissingHCAIncompleteSnapshot(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dead := writeFile(t, "dead.faults", "dead spine03\n")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--faults", dead, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json"), "--timeout", deadTimeout, "--retries", "0"); code != ExitPartial {
		t.Fatalf("sweep: exit %d, want %d (incomplete): %s", code, ExitPartial, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[011-012]", "--json", "--timeout", deadTimeout, "--retries", "0")
	d := chkParse(t, out)
	var got string
	for _, f := range d.Findings {
		if f.Check == "topology.missing-hca" {
			got = f.Title
		}
	}
	if code != ExitFindings || d.Status != "unhealthy" || !strings.Contains(got, "gpu012") || !strings.Contains(got, "leaf03/28") {
		t.Fatalf("exit %d status %q, want 1 with topology.missing-hca naming gpu012 and leaf03/28 (got %q)\nfindings %+v\nundecided %+v\n%s", code, d.Status, got, d.Findings, d.Undecided, stderr)
	}
}

// TestGateReachedIncompleteSnapshot: the state dir's only sweep could not
// read spine03 (its agent was dead); the gate on gpu[001-002] re-reads
// its part live and all of it answers. What it was judged against is
// not all read: the Reached line says the job's part was and the
// snapshot's sweep was not complete, and the JSON scope says so. Before:
// "Reached: everything".
func TestGateReachedIncompleteSnapshot(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	dead := writeFile(t, "dead.faults", "dead spine03\n")
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--faults", dead, "--state-dir", state, "--out", filepath.Join(t.TempDir(), "r.json"), "--timeout", deadTimeout, "--retries", "0"); code != ExitPartial {
		t.Fatalf("sweep: exit %d, want %d (incomplete): %s", code, ExitPartial, stderr)
	}
	code, out, stderr := run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--timeout", deadTimeout, "--retries", "0")
	reached := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Reached:") {
			reached = l
		}
	}
	if strings.Contains(reached, "everything") || !strings.Contains(reached, "the job's part") || !strings.Contains(reached, "incomplete") {
		t.Errorf("exit %d, Reached line %q, want the job's part read and the snapshot incomplete\n%s\n%s", code, reached, out, stderr)
	}
	_, out, _ = run("gate", "--sim", "--state-dir", state, "--nodes", "gpu[001-002]", "--json", "--timeout", deadTimeout, "--retries", "0")
	if d := chkParse(t, out); d.Scope == nil || d.Scope.SnapshotComplete {
		t.Errorf("scope %+v: want snapshot_complete false", d.Scope)
	}
}
