package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepOfAnotherFabricRefused: a state dir holds the sample fabric's
// sweep and baseline; a sweep of another fabric (the sx6036 dump: another
// subnet on the same host, both cron lines on the default --state-dir)
// is not compared against that baseline (trial T6: 12 critical
// topology.changed 'Switch leaf01 from the expected topology is
// missing, and the 32 hosts behind it'). Saving, it exits 2 touching
// nothing, with one line naming the state dir and the fix; with
// --no-save it judges without the baseline and says so.
func TestSweepOfAnotherFabricRefused(t *testing.T) {
	other := "/work/shared/external-fabrics/sx6036-fdr10-2014.ibnetdiscover"
	if _, err := os.Stat(other); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared dump: %v", err)
		}
		t.Skipf("shared dump not here: %v", err)
	}
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim", "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile(filepath.Join(state, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "r2.json")
	code, _, stderr := run("sweep", "--sim="+other, "--state-dir", state, "--out", out2)
	if code != ExitUndecided {
		t.Fatalf("sweep of another fabric: exit %d, want %d: %s", code, ExitUndecided, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	for _, w := range []string{state, "sim:sample", "another fabric", "--state-dir per fabric", "ibdoctor baseline accept"} {
		if !strings.Contains(last, w) {
			t.Errorf("stderr does not say %q: %s", w, stderr)
		}
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("a report was written")
	}
	if after, err := os.ReadFile(filepath.Join(state, "snapshot.json")); err != nil || string(after) != string(before) {
		t.Errorf("the state dir's snapshot changed (%v)", err)
	}
	code, stdout, stderr := run("sweep", "--sim="+other, "--state-dir", state, "--no-save")
	if code != ExitHealthy {
		t.Fatalf("--no-save: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "another fabric") || !strings.Contains(stderr, state) {
		t.Errorf("--no-save: stderr does not say the baseline was not used: %s", stderr)
	}
	d := chkParse(t, stdout)
	for _, f := range d.Findings {
		if f.Check == "topology.changed" || f.Check == "topology.miswired" {
			t.Errorf("judged against another fabric's baseline: %s %s", f.Severity, f.Title)
		}
	}
}
