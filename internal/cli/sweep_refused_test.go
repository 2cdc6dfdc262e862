package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
