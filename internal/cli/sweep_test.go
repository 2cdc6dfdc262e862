package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/checks"
	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// sweepFiles lists a folder, failing on leftovers of atomic writes.
func sweepFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left in %s: %s", dir, e.Name())
		}
		names = append(names, e.Name())
	}
	return names
}

func skippedCheck(d *chkDoc, id string) bool {
	return slices.ContainsFunc(d.Skipped, func(s checks.Skipped) bool { return s.Check == id })
}

// TestSweepWritesReportPromAndSnapshot: a first sweep writes the report,
// the Prometheus textfile and a snapshot; a second one (after a spine
// link went down and the SM re-swept) compares against the first.
func TestSweepWritesReportPromAndSnapshot(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "report.json"), filepath.Join(dir, "ibdoctor.prom"), filepath.Join(dir, "state")

	code, stdout, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--state-dir", state)
	if code != ExitHealthy || stdout != "" {
		t.Fatalf("first sweep: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "\x1b[") || strings.Contains(stderr, "\r") {
		t.Errorf("sweep drew progress on a non-terminal: %q", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d := chkParse(t, string(data))
	if d.Command != "sweep" || d.FailOn != "none" || d.Status != "healthy" || !d.Complete || d.Fabric.Nodes != 24 {
		t.Errorf("first report: command %q fail_on %q status %q complete %v nodes %d", d.Command, d.FailOn, d.Status, d.Complete, d.Fabric.Nodes)
	}
	if !skippedCheck(d, "topology.changed") || !skippedCheck(d, "topology.miswired") {
		t.Errorf("first sweep had a baseline? skipped %v", d.Skipped)
	}
	for _, f := range []string{out, prom} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644 (node_exporter must read it)", f, st.Mode().Perm())
		}
	}
	p, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE ibdoctor_findings gauge\n",
		`ibdoctor_findings{severity="critical"} 0` + "\n",
		`ibdoctor_fabric_nodes{type="switch"} 8` + "\n",
		"ibdoctor_fabric_links 32\n",
		"ibdoctor_sweep_complete 1\n",
		"ibdoctor_unreached 0\n",
	} {
		if !strings.Contains(string(p), want) {
			t.Errorf("prom file lacks %q:\n%s", want, p)
		}
	}
	snap, err := snapshot.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	f, err := snap.FabricModel()
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Complete || snap.Source != "sim:fabric.txt" || len(f.Nodes) != 24 || len(snap.Counters) < 48 {
		t.Errorf("snapshot: complete %v source %q nodes %d counters %d", snap.Complete, snap.Source, len(f.Nodes), len(snap.Counters))
	}
	sweepFiles(t, dir)
	first := sweepFiles(t, state)

	// Second sweep: leaf02/6 (to spine02) is down and the SM re-routed.
	faults := writeFile(t, "down.faults", "down leaf02/6\nsweep\n")
	code, _, stderr = run("sweep", "--sim="+topo, "--faults", faults, "--out", out, "--prom", prom, "--state-dir", state)
	if code != ExitHealthy {
		t.Fatalf("second sweep: exit %d (no --fail-on: findings do not fail it); stderr %s", code, stderr)
	}
	data, _ = os.ReadFile(out)
	d = chkParse(t, string(data))
	if skippedCheck(d, "topology.changed") || !slices.Contains(d.ChecksRun, "topology.changed") {
		t.Errorf("second sweep did not use the first as baseline: ran %v skipped %v", d.ChecksRun, d.Skipped)
	}
	var down []string
	for _, f := range d.Findings {
		if f.Check == "link.down" && f.Basis == "baseline" {
			down = append(down, f.Title)
		}
	}
	if len(down) != 1 || !strings.Contains(down[0], "leaf02/6") || !strings.Contains(down[0], "spine02/2") || !strings.Contains(down[0], "expected topology") {
		t.Errorf("link.down from the baseline: %q", down)
	}
	if d.Status != "healthy" || d.FailOn != "none" {
		t.Errorf("without --fail-on: status %q fail_on %q", d.Status, d.FailOn)
	}
	second := sweepFiles(t, state)
	if len(second) != 2 || slices.Equal(first, second) {
		t.Errorf("state dir: first %v, second %v; want snapshot.json and one new fabric file", first, second)
	}

	// The same with --fail-on error: the missing link fails the sweep.
	// (The baseline is now the second sweep's fabric, so give the first
	// one's shape with --expect-topology.)
	code, stdout, _ = run("sweep", "--sim="+topo, "--faults", faults, "--fail-on", "error", "--no-save", "--state-dir", state, "--expect-topology", topo)
	if code != ExitFindings {
		t.Errorf("--fail-on error with a link down: exit %d, want 1", code)
	}
	d = chkParse(t, stdout)
	if d.Status != "unhealthy" || d.FailOn != "error" {
		t.Errorf("status %q fail_on %q", d.Status, d.FailOn)
	}
	if third := sweepFiles(t, state); !slices.Equal(third, second) {
		t.Errorf("--no-save changed the state dir: %v -> %v", second, third)
	}
}

func TestSweepBadOutput(t *testing.T) {
	topo := chkTopology(t)
	missingDir := filepath.Join(t.TempDir(), "no", "such")
	code, stdout, stderr := run("sweep", "--sim="+topo, "--out", filepath.Join(missingDir, "r.json"), "--no-save")
	if code != ExitUndecided || !strings.Contains(stderr, "--out") || !strings.Contains(stderr, missingDir) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if stdout != "" {
		t.Errorf("report printed to stdout although --out was given: %q", stdout)
	}
	code, _, stderr = run("sweep", "--sim="+topo, "--prom", filepath.Join(missingDir, "x.prom"), "--no-save", "--out", filepath.Join(t.TempDir(), "r.json"))
	if code != ExitUndecided || !strings.Contains(stderr, "--prom") {
		t.Errorf("--prom into a missing folder: exit %d, stderr %q", code, stderr)
	}
}
