package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestSweepUnwritableOutputRefused: an --out, --prom or --html that
// cannot be written (a folder the sweep may not create files in, a path
// under a regular file) is refused before the sweep, in one line naming
// the flag, the path and the fix, and the state is left as it was: a
// sweep used to run, replace snapshot.json, and only then fail (exit 2).
func TestSweepUnwritableOutputRefused(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(dir, "r.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	snap, err := os.ReadFile(filepath.Join(state, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []string{filepath.Join(afile, "x.out"), filepath.Join(afile, "sub", "x.out")}
	if st, err := os.Stat("/proc/version"); err == nil && st.Mode().IsRegular() {
		bad = append(bad, "/proc/version") // a regular file in a folder no one creates files in
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, filepath.Join(ro, "x.out"), filepath.Join(ro, "sub", "x.out"))
	}
	for _, flag := range []string{"--out", "--prom", "--html"} {
		for _, p := range bad {
			args := []string{"sweep", "--sim=" + topo, "--state-dir", state, flag, p}
			if flag != "--out" {
				args = append(args, "--out", filepath.Join(dir, "ok.json"))
			}
			code, stdout, stderr := run(args...)
			if code != ExitUndecided || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, flag+": "+p) || !strings.Contains(stderr, "give a") || strings.Contains(stderr, ".tmp-") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want 2 and one line naming the flag, the path and the fix", flag, p, code, stdout, stderr)
			}
			if now, _ := os.ReadFile(filepath.Join(state, "snapshot.json")); !bytes.Equal(now, snap) {
				t.Fatalf("%s %s: the state's snapshot was replaced although the output could not be written", flag, p)
			}
			if _, err := os.Stat(filepath.Join(dir, "ok.json")); err == nil {
				t.Errorf("%s %s: the sweep ran and wrote --out although %s was refused", flag, p, flag)
			}
		}
	}
	sweepFiles(t, dir)
	sweepFiles(t, state)
}

// TestSweepCollidingOutputsRefused: two outputs naming one file (the same
// path, a symlink to it, a hard link), or an output naming a file the
// state directory's sweeps own, are refused before the sweep in one line
// naming both; they used to be accepted, the HTML page replacing the
// JSON report and the textfile replacing snapshot.json.
func TestSweepCollidingOutputsRefused(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "st")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	snap, _ := os.ReadFile(filepath.Join(state, "snapshot.json"))
	report, _ := os.ReadFile(filepath.Join(state, "r.json"))
	if err := os.Symlink("r.json", filepath.Join(state, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(state, "r.json"), filepath.Join(dir, "hard.json")); err != nil {
		t.Fatal(err)
	}
	r := filepath.Join(state, "r.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", r, "--html", r}, "--html " + r + " is the same file as --out " + r},
		{[]string{"--out", filepath.Join(dir, "same"), "--prom", filepath.Join(dir, ".", "same")}, "--prom " + filepath.Join(dir, "same") + " is the same file as --out"},
		{[]string{"--out", r, "--prom", filepath.Join(state, "link.json")}, "is the same file as --out"},
		{[]string{"--out", filepath.Join(dir, "hard.json"), "--html", r}, "is the same file as --out"},
		{[]string{"--out", filepath.Join(dir, "o.json"), "--prom", filepath.Join(state, "snapshot.json")}, "--prom " + filepath.Join(state, "snapshot.json") + " is a file of the state directory"},
		{[]string{"--out", filepath.Join(state, "gate.idx")}, "--out " + filepath.Join(state, "gate.idx") + " is a file of the state directory"},
		// STATE/partial is where a partial sweep keeping the complete
		// snapshot saves itself (98a84a6): a report there made such a
		// sweep fail 'mkdir STATE/partial: not a directory' and the next
		// complete sweep removed it.
		{[]string{"--out", filepath.Join(state, "partial")}, "--out " + filepath.Join(state, "partial") + " is a file of the state directory"},
		{[]string{"--out", filepath.Join(dir, "o.json"), "--html", filepath.Join(dir, "st", "..", "st", "baseline.json.gz")}, "is a file of the state directory"},
	} {
		args := append([]string{"sweep", "--sim=" + topo, "--state-dir", state}, c.args...)
		code, stdout, stderr := run(args...)
		if code != ExitUndecided || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "give ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line with %q", c.args, code, stdout, stderr, c.want)
		}
		if now, _ := os.ReadFile(filepath.Join(state, "snapshot.json")); !bytes.Equal(now, snap) {
			t.Fatalf("%v: snapshot.json was replaced", c.args)
		}
		if now, _ := os.ReadFile(r); !bytes.Equal(now, report) {
			t.Fatalf("%v: the report was replaced", c.args)
		}
	}
	// A report kept in the state directory under a name of its own (the
	// README's cron line) is not a collision.
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", r, "--prom", filepath.Join(state, "x.prom")); code != ExitHealthy {
		t.Errorf("--out and --prom in the state dir under their own names: exit %d: %s", code, stderr)
	}
}

// TestBaselineAcceptAfterIncompleteSweep: a sweep that could not read
// everything does not replace a complete snapshot, so accepting after it
// used to accept the sweep before it, with a success line. Now accept
// refuses, naming the incomplete sweep and the one it would accept, and
// --previous accepts that one knowingly.
func TestBaselineAcceptAfterIncompleteSweep(t *testing.T) {
	topo := chkTopology(t)
	state := filepath.Join(t.TempDir(), "state")
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r1.json")); code != ExitHealthy {
		t.Fatalf("first sweep: exit %d: %s", code, stderr)
	}
	first, err := snapshot.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	firstAt := first.TakenAt.UTC().Format(time.RFC3339)
	first.Close()
	baseline, _ := os.ReadFile(filepath.Join(state, snapshot.BaselineName))
	faults := writeFile(t, "dead.faults", "dead \"gpu016 mlx5_0\"\n")
	if code, _, stderr := run("sweep", "--sim="+topo, "--faults", faults, "--timeout", deadTimeout, "--retries", "0",
		"--state-dir", state, "--out", filepath.Join(state, "r2.json")); code != ExitPartial {
		t.Fatalf("incomplete sweep: exit %d, want %d: %s", code, ExitPartial, stderr)
	}
	code, stdout, stderr := run("baseline", "accept", "--state-dir", state)
	if code != ExitUndecided || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "could not read everything") || !strings.Contains(stderr, firstAt) || !strings.Contains(stderr, "--previous") {
		t.Errorf("accept after an incomplete sweep: exit %d, stdout %q, stderr %q; want 2 naming the sweep it would accept (%s) and --previous", code, stdout, stderr, firstAt)
	}
	if now, _ := os.ReadFile(filepath.Join(state, snapshot.BaselineName)); !bytes.Equal(now, baseline) {
		t.Error("the refused accept replaced the baseline")
	}
	code, stdout, stderr = run("baseline", "accept", "--previous", "--state-dir", state)
	if code != ExitHealthy || !strings.Contains(stdout, "accepted the sweep of "+firstAt) || !strings.Contains(stdout, "incomplete") {
		t.Errorf("accept --previous: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A complete sweep again: accept takes it without --previous.
	if code, _, stderr := run("sweep", "--sim="+topo, "--state-dir", state, "--out", filepath.Join(state, "r3.json")); code != ExitHealthy {
		t.Fatalf("third sweep: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run("baseline", "accept", "--state-dir", state); code != ExitHealthy || strings.Contains(stdout, "incomplete") {
		t.Errorf("accept after a complete sweep: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
