package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateTableEditedSinceSweep is trial B2 as run: the sample's headline
// fault (spine01 sending every leaf03 destination out of port 17) made
// after the cron sweep. check says critical routing.ecmp-imbalance; the
// gate from gate.idx passed the jobs with few destinations behind leaf03
// (gpu[001,009], gpu[001-004,009]: exit 0) and failed the one split 2+2
// (exit 1). Every job now exits 1: the gate re-reads spine01's entries
// for the destinations behind the job's leaves and weighs its groups
// against the sweep's per-port totals corrected by them. A state dir
// without the totals (an older ibdoctor's) leaves spine01's
// groups undecided, exit 2, not passed. A re-route around a link down
// since the sweep passes, as check does; an edit of a leaf's uplinks,
// which carry other leaves' destinations the gate does not count, is
// undecided.
func TestGateTableEditedSinceSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	lft := writeFile(t, "f-lft.txt", "lft spine01 behind=leaf03 port=17\n")
	if code, out, _ := run("check", "--sim="+topo, "--faults", lft); code != ExitFindings || !strings.Contains(out, "critical  routing.ecmp-imbalance  spine01") {
		t.Fatalf("check: exit %d\n%s", code, out)
	}
	for _, nodes := range []string{"gpu[001,009]", "gpu[001-004,009]", "gpu[001-002,009-010]"} {
		code, out, stderr := run("gate", "--sim="+topo, "--faults", lft, "--state-dir", state, "--nodes", nodes, "--no-counters")
		if code != ExitFindings || !strings.Contains(out, "critical  routing.ecmp-imbalance  spine01 spreads 32 destinations over 8 equal-cost ports unevenly: busiest port 17") {
			t.Errorf("%s: exit %d, want 1 with spine01's critical routing.ecmp-imbalance\n%s%s", nodes, code, out, stderr)
		}
	}
	// An SM re-route around a link down since the sweep changes spine01's
	// table too: judged on the ports up now, its group toward leaf01 is
	// even, as check says (on the snapshot's port states the dead
	// spine01/1 was an idle port of the group: critical).
	rr := writeFile(t, "f-rr.txt", "down leaf01/33\nsweep\n")
	if code, out, stderr := run("gate", "--sim="+topo, "--faults", rr, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters"); code != ExitHealthy {
		t.Errorf("re-routed around leaf01/33: exit %d, want 0\n%s%s", code, out, stderr)
	}
	// leaf01's uplinks carry every other leaf's destinations, which the
	// gate does not count: with their totals uneven now (check: error,
	// 'leaf01 spreads 224 destinations over 32 equal-cost ports') the
	// group is undecided, not passed.
	up := writeFile(t, "f-up.txt", "lft leaf01 behind=leaf03 port=33\n")
	if code, out, stderr := run("gate", "--sim="+topo, "--faults", up, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters"); code != ExitUndecided || !strings.Contains(out, "carry 224 destinations of which 32 lie behind the job's leaves") {
		t.Errorf("leaf01's uplinks edited: exit %d, want 2 with the group undecided\n%s%s", code, out, stderr)
	}

	// The state dir of an older ibdoctor: no per-port totals.
	path := filepath.Join(state, "snapshot.json")
	var doc map[string]any
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	name, _ := doc["totals_file"].(string)
	if err != nil || name == "" {
		t.Fatalf("snapshot.json: %v, totals_file %q", err, name)
	}
	delete(doc, "totals_file")
	delete(doc, "crc32c") // an older ibdoctor's, without the checksum
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(state, name)); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", lft, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters")
	if code != ExitUndecided || !strings.Contains(out, "the snapshot has no per-port destination totals") {
		t.Errorf("older verdicts: exit %d, want 2 with spine01 undecided\n%s%s", code, out, stderr)
	}
	// Without the edit, the older state dir gates as before.
	if code, out, stderr := run("gate", "--sim="+topo, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters"); code != ExitHealthy {
		t.Errorf("older verdicts, no edit: exit %d\n%s%s", code, out, stderr)
	}
}

// TestGateTotalsOfAnotherSweep (review R2): a state dir whose
// totals-<ns>.bin is another sweep's (copied in by hand, a partial
// restore) is not judged against: the file's stamp is not snapshot.json's
// sweep, so spine01, whose table changed since the sweep, is undecided
// with the file named and the fix, exit 2. Before, the gate weighed the
// other sweep's totals and gave its verdict. A totals file in the format
// of an ibdoctor before the stamp cannot say whose it is: undecided too.
func TestGateTotalsOfAnotherSweep(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	topo := "../../fixtures/sample/fabric.txt"
	state, other := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "other")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	// Another sweep, of the fabric with spine01's table edited.
	lft := writeFile(t, "f-lft.txt", "lft spine01 behind=leaf03 port=17\n")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", lft, "--state-dir", other, "--out", filepath.Join(other, "r.json")); code == ExitUndecided {
		t.Fatalf("other sweep: exit %d: %s", code, stderr)
	}
	totalsOf := func(dir string) string {
		var doc map[string]any
		data, err := os.ReadFile(filepath.Join(dir, "snapshot.json"))
		if err == nil {
			err = json.Unmarshal(data, &doc)
		}
		name, _ := doc["totals_file"].(string)
		if err != nil || name == "" {
			t.Fatalf("%s: %v, totals_file %q", dir, err, name)
		}
		return filepath.Join(dir, name)
	}
	mine := totalsOf(state)
	data, err := os.ReadFile(totalsOf(other))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The re-route around a link down since the sweep passes on the
	// sweep's own totals (TestGateTableEditedSinceSweep); the other
	// sweep's would judge spine01's groups on another table.
	rr := writeFile(t, "f-rr.txt", "down leaf01/33\nsweep\n")
	for _, faults := range []string{lft, rr} {
		code, out, stderr := run("gate", "--sim="+topo, "--faults", faults, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters")
		if code != ExitUndecided || !strings.Contains(out, filepath.Base(mine)+": is of the sweep taken at") || !strings.Contains(out, "run 'ibdoctor sweep'") {
			t.Errorf("%s with another sweep's totals: exit %d, want 2 with spine01 undecided naming %s\n%s%s", filepath.Base(faults), code, filepath.Base(mine), out, stderr)
		}
	}
	// An older ibdoctor's file: no stamp after the magic.
	old := append([]byte("IBDTOT1\n"), data[16:]...)
	if err := os.WriteFile(mine, old, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("gate", "--sim="+topo, "--faults", lft, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters")
	if code != ExitUndecided || !strings.Contains(out, filepath.Base(mine)+": written by an older ibdoctor") {
		t.Errorf("older totals file: exit %d, want 2 with spine01 undecided\n%s%s", code, out, stderr)
	}
	// Without a changed table the file is not read: the gate passes.
	if code, out, stderr := run("gate", "--sim="+topo, "--state-dir", state, "--nodes", "gpu[001,009]", "--no-counters"); code != ExitHealthy {
		t.Errorf("older totals file, no edit: exit %d\n%s%s", code, out, stderr)
	}
}
