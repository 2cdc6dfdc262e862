package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// leafFindings returns "severity check title" of the report's findings of
// topology.miswired and topology.oversubscribed that name leaf.
func leafFindings(t *testing.T, out, leaf string) []string {
	t.Helper()
	var got []string
	for _, f := range chkParse(t, out).Findings {
		if (f.Check == "topology.miswired" || f.Check == "topology.oversubscribed") && strings.Contains(f.Title, leaf) {
			got = append(got, f.Severity.String()+" "+f.Check+" "+f.Title)
		}
	}
	return got
}

// TestGateSwapIsTheSweepsFold (trial B5): two uplinks of leaf01 swapped
// and the SM re-routed. The sweep's report says "error topology.miswired
// leaf01/33 and spine02/1 are swapped", its topology.oversubscribed count
// folded in ("2 cables plugged elsewhere"); the gate showed the count
// unfolded, "warning topology.oversubscribed ... 2 cables missing or
// down" as "the sweep's verdict", and passed (exit 0). The gate now
// renders the finding the sweep folded the count into.
func TestGateSwapIsTheSweepsFold(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d\n%s", code, stderr)
	}
	faults := writeFile(t, "mis2.faults", "miswire leaf01/33 leaf01/41\nsweep\n")
	rep := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--state-dir", state, "--out", rep); code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	swept := leafFindings(t, readFile(t, rep), "leaf01/33")
	if len(swept) != 1 || !strings.HasPrefix(swept[0], "error topology.miswired") {
		t.Fatalf("sweep: %q, want one error topology.miswired naming leaf01/33", swept)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "gpu[001,005,009]", "--json")
	got := leafFindings(t, out, "leaf01")
	if !slices.Equal(got, swept) {
		t.Errorf("gate: %q, want the sweep's %q\n%s", got, swept, stderr)
	}
	for _, f := range chkParse(t, out).Findings {
		if f.Check != "topology.miswired" {
			continue
		}
		var ev []string
		for _, e := range f.Evidence {
			ev = append(ev, e.Name+": "+e.Text)
		}
		all := strings.Join(ev, "\n")
		if !strings.Contains(all, "2 cables plugged elsewhere") || !strings.Contains(all, "the sweep's verdict of") {
			t.Errorf("gate: topology.miswired evidence\n%s\nwant the sweep's folded count and whose verdict it is", all)
		}
	}
	if code != ExitFindings {
		t.Errorf("gate: exit %d, want %d (the sweep's error)\n%s", code, ExitFindings, stderr)
	}
}
