package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibdoctor/ibdoctor/internal/snapshot"
)

// TestSweepRefusedWritesFailedProm: every exit 2 of a sweep whose --prom
// path is known writes ibdoctor_sweep_success 0 with this attempt's
// time, as a sweep failing on its --sim file does (trial T3: a bad flag
// value or --thresholds file left 'ibdoctor_sweep_success 1' of the last
// good sweep, so the README's IBDoctorSweepFailing never fired for the
// commonest cron failure). A negative --max-age is refused.
func TestSweepRefusedWritesFailedProm(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.prom"), filepath.Join(dir, "state")
	good := []string{"sweep", "--sim=" + topo, "--out", out, "--prom", prom, "--state-dir", state}
	badThr := writeFile(t, "badthr.txt", "SymbolErrorCounter=abc\n")
	for _, c := range []struct {
		name string
		args []string // before the good ones, or after when after
		want string   // in stderr
	}{
		{"thresholds", []string{"--thresholds", badThr}, "thresholds line 1"},
		{"prom-min-severity", []string{"--prom-min-severity", "bogus"}, "--prom-min-severity"},
		{"fail-on", []string{"--fail-on", "bogus"}, "--fail-on"},
		{"expect-rate", []string{"--expect-rate", "4xFOO"}, "--expect-rate"},
		{"expect-topology", []string{"--expect-topology", filepath.Join(dir, "nonexist")}, "--expect-topology"},
		{"imbalance", []string{"--imbalance", "0"}, "--imbalance 0 is out of range"},
		{"max-age", []string{"--max-age", "-5m"}, "--max-age -5m0s"},
		{"unparsed after --prom", []string{"--lock-wait", "abc"}, "invalid argument \"abc\""},
		{"unparsed before --prom", nil, "invalid argument \"abc\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, _, stderr := run(good...); code != ExitHealthy {
				t.Fatalf("good sweep: exit %d: %s", code, stderr)
			}
			before, _ := os.ReadFile(prom)
			args := append(append([]string{}, good...), c.args...)
			if c.args == nil {
				args = append([]string{"sweep", "--max-age", "abc"}, good[1:]...)
			}
			code, _, stderr := run(args...)
			if code != ExitUndecided || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("exit %d, want 2 and one line with %q: %s", code, c.want, stderr)
			}
			p, _ := os.ReadFile(prom)
			okAt := promLine(string(before), "ibdoctor_sweep_last_success_timestamp_seconds")
			// The kept series stay the good sweep's, its completeness too.
			for _, want := range []string{"ibdoctor_sweep_success 0", promLine(string(before), "ibdoctor_sweep_complete"), okAt} {
				if okAt == "" || promLine(string(p), strings.Fields(want)[0]) != want {
					t.Errorf("textfile after the refusal lacks %q:\n%s", want, p)
				}
			}
			if promLine(string(p), "ibdoctor_sweep_timestamp_seconds") == "" {
				t.Errorf("no ibdoctor_sweep_timestamp_seconds:\n%s", p)
			}
		})
	}
	// A --prom that is itself refused is not written.
	code, _, stderr := run("sweep", "--sim="+topo, "--out", out, "--prom", out, "--state-dir", state)
	if code != ExitUndecided || !strings.Contains(stderr, "same file") {
		t.Fatalf("--prom = --out: exit %d: %s", code, stderr)
	}
	if r, _ := os.ReadFile(out); strings.Contains(string(r), "ibdoctor_sweep_success") {
		t.Error("a refused --prom path was written over --out")
	}
}

// promLine is the sample line of the series name in a textfile, "" if none.
func promLine(text, name string) string {
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimSuffix(l, "\n")
		}
	}
	return ""
}

// TestSweepRefusedLeavesPromToLockHolder: a refused command line (a
// second cron entry, a typo) while a sweep holds the state dir's lock
// leaves the textfile to that sweep, as a sweep finding the lock busy
// does: a read-modify-write of it now could put back the older sweep's
// counts over the fresh ones. With the lock free it writes as before.
func TestSweepRefusedLeavesPromToLockHolder(t *testing.T) {
	topo := chkTopology(t)
	dir := t.TempDir()
	out, prom, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.prom"), filepath.Join(dir, "state")
	good := []string{"sweep", "--sim=" + topo, "--out", out, "--prom", prom, "--state-dir", state}
	if code, _, stderr := run(good...); code != ExitHealthy {
		t.Fatalf("good sweep: exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(prom)
	lock, err := snapshot.Acquire(context.Background(), state, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]string{}, good...), "--fail-on", "bogus")
	if code, _, stderr := run(bad...); code != ExitUndecided || !strings.Contains(stderr, "--fail-on") {
		t.Fatalf("refused line, lock held: exit %d: %s", code, stderr)
	}
	if p, _ := os.ReadFile(prom); string(p) != string(before) {
		t.Errorf("refused line rewrote the textfile while a sweep held the lock:\n%s", p)
	}
	lock.Release()
	if code, _, stderr := run(bad...); code != ExitUndecided {
		t.Fatalf("refused line, lock free: exit %d: %s", code, stderr)
	}
	if p, _ := os.ReadFile(prom); promLine(string(p), "ibdoctor_sweep_success") != "ibdoctor_sweep_success 0" {
		t.Errorf("refused line with the lock free: textfile not marked failed:\n%s", p)
	}
	// A state dir that does not exist is not created by a refusal.
	gone := filepath.Join(dir, "nostate")
	if code, _, _ := run("sweep", "--sim="+topo, "--out", out, "--prom", prom, "--state-dir", gone, "--fail-on", "bogus"); code != ExitUndecided {
		t.Fatalf("refused line, no state dir: exit %d", code)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("a refused line created its --state-dir %s", gone)
	}
}
