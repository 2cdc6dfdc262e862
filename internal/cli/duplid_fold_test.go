package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDuplicateLIDCountersFolded (trial T11, left undone by 3484e11):
// spine02's LID 2 is shared with gpu001 mlx5_1, so its PMA is not read by
// LID. That is one agent not read, listed once with the ports it covers
// (as T7's ClassPortInfo, by the same fold), not 64 "PortCounters at
// spine02 port N" lines: in check's text, the sweep's JSON, the HTML page
// (all from the one list), counters, top --once and a gate's.
func TestDuplicateLIDCountersFolded(t *testing.T) {
	t.Setenv("SLURM_JOB_NODELIST", "")
	faults := writeFile(t, "dl.faults", "lid \"gpu001 mlx5_1\"/1 lid=2\n")
	folded := regexp.MustCompile(`PortCounters at spine02 \(LID 2\): LID 2 is shared with gpu001 mlx5_1 port 1 \(addr.duplicate-lid\): a read by LID would be answered by either \(counters of ports [0-9,-]+ not read\)`)
	perPort := regexp.MustCompile(`PortCounters at spine02 port \d+`)
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	_, out, stderr := run("check", "--sim", "--faults", faults, "--html", page)
	if n := strings.Count(out, "PortCounters at spine02"); n != 1 || !folded.MatchString(out) || !strings.Contains(out, "Reached:   4 things could not be read") {
		t.Errorf("check: spine02's counters listed %d times, want once, folded, counted as 1 of 4:\n%s\n%s", n, out, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(perPort.FindAll(html, -1)); n != 0 || !folded.Match(html) {
		t.Errorf("HTML: %d per-port lines for spine02, or no folded one", n)
	}
	state := filepath.Join(dir, "state")
	js := filepath.Join(dir, "s.json")
	if code, _, stderr := run("sweep", "--sim", "--faults", faults, "--state-dir", state, "--out", js); code != ExitPartial {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	d := chkParse(t, string(b))
	n := 0
	for _, u := range d.Unreached {
		if u.What == "PortCounters" && strings.HasPrefix(u.Where, "spine02") {
			n++
			if u.Where != "spine02 (LID 2)" || !folded.MatchString(u.What+" at "+u.Where+": "+u.Reason) {
				t.Errorf("sweep JSON: %+v is not the folded entry", u)
			}
		}
	}
	if n != 1 {
		t.Errorf("sweep JSON: %d PortCounters entries for spine02, want 1", n)
	}
	for _, args := range [][]string{{"counters", "--sim"}, {"top", "--sim", "--once", "-n", "300ms"}} {
		_, out, stderr := run(append(args, "--faults", faults)...)
		if n := strings.Count(stderr, "PortCounters at spine02"); n != 1 || !folded.MatchString(stderr) {
			t.Errorf("%s: spine02 listed %d times, want once, folded:\n%s\n%s", args[0], n, out, stderr)
		}
	}
	_, out, stderr = run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu002,gpu030")
	if n := strings.Count(out, "PortCounters at spine02"); n != 1 || !folded.MatchString(out) {
		t.Errorf("gate: spine02's counters listed %d times, want once, folded:\n%s\n%s", n, out, stderr)
	}
}
