package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oversubFinding returns the topology.oversubscribed finding of a JSON
// report whose title names leaf, as title and evidence lines.
func oversubFinding(t *testing.T, out, leaf string) (string, []string) {
	t.Helper()
	for _, f := range chkParse(t, out).Findings {
		if f.Check == "topology.oversubscribed" && strings.Contains(f.Title, leaf) {
			var ev []string
			for _, e := range f.Evidence {
				ev = append(ev, e.Text)
			}
			return f.Title, ev
		}
	}
	return "", nil
}

// TestCorpusGateOversubscribedIsTheSweeps (trial T7): on the DGX dump the
// sweep says leaf IBLEAF-01-02 has 14 uplinks where its spines' other
// leaves have 18, 4 cables missing (to IBSPINE-01 and IBSPINE-04); a gate
// on two hosts, from the same state dir seconds later, judged the part of
// the snapshot it loaded and said 16 and 2 cables, "5 of its 5 leaves"
// of a spine that has 28. The gate's finding is now the sweep's, from
// the state dir and from its own sweep.
func TestCorpusGateOversubscribedIsTheSweeps(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	sim := corpusPath(t, "dgx-ndr-2025.ibnetdiscover")
	const leaf = "A09-P1-IBLEAF-01-02"
	state := filepath.Join(t.TempDir(), "state")
	rep := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := run("sweep", "--sim="+sim, "--state-dir", state, "--out", rep)
	if code != ExitHealthy && code != ExitFindings {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	want, wantEv := oversubFinding(t, string(b), leaf)
	if !strings.Contains(want, "where its spines' other leaves have 18: 4 cables missing or down") {
		t.Fatalf("sweep: %q, want the leaf 4 cables short of 18", want)
	}
	for _, dir := range []string{state, filepath.Join(t.TempDir(), "none")} {
		_, out, stderr := run("gate", "--sim="+sim, "--state-dir", dir, "--nodes", "a05-p1-dgx-01-c01,a06-p1-dgx-02-c01", "--json")
		got, ev := oversubFinding(t, out, leaf)
		if got != want {
			t.Errorf("gate --state-dir %s: %q, want the sweep's %q\n%s", filepath.Base(dir), got, want, stderr)
			continue
		}
		if len(ev) < len(wantEv) || strings.Join(ev[:len(wantEv)], "\n") != strings.Join(wantEv, "\n") {
			t.Errorf("gate --state-dir %s: evidence\n%s\nwant the sweep's\n%s", filepath.Base(dir), strings.Join(ev, "\n"), strings.Join(wantEv, "\n"))
		}
		if !strings.Contains(strings.Join(ev, "\n"), "the sweep's verdict of") {
			t.Errorf("gate --state-dir %s: the evidence does not say whose verdict it is:\n%s", filepath.Base(dir), strings.Join(ev, "\n"))
		}
	}
}
