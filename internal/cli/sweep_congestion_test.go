package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibdoctor/ibdoctor/checks"
)

// TestSweepCongestionSincePreviousSweep is trial T8: a cron sweep judged
// error counters on their growth since the previous sweep, but congestion
// only as an absolute info ("has waited to send N ticks since its counters
// were cleared ... run check --interval"), because gate.idx did not keep
// PortXmitWait: a cron sweep never warned of congestion that 'check
// --interval' calls a warning. The second sweep (and a gate from it) now
// gives each port's share of time stalled since the previous sweep, with
// --interval's thresholds and wording, and the textfile carries it as it
// carries an error counter's growth: a finding series.
func TestSweepCongestionSincePreviousSweep(t *testing.T) {
	dir := t.TempDir()
	state, out, prom := filepath.Join(dir, "state"), filepath.Join(dir, "r.json"), filepath.Join(dir, "q.prom")
	faults := writeFile(t, "t8.faults", "traffic ring-allreduce rate=200 stride=32\n")
	sweep := func() (*chkDoc, string) {
		t.Helper()
		args := []string{"sweep", "--sim", "--faults", faults, "--state-dir", state, "--out", out, "--prom", prom}
		if code, _, stderr := run(args...); code != ExitHealthy {
			t.Fatalf("%v: exit %d, stderr %s", args, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		return chkParse(t, string(data)), string(p)
	}
	// spine02/33 (to leaf05/41) is stalled about 87% of the time under
	// this traffic ('check --interval' says so).
	find := func(d *chkDoc, node string, port int) *checks.Finding {
		for i, g := range d.Findings {
			if g.Check == "counters.congestion" && g.Entities[0].Node == node && g.Entities[0].Port == port {
				return &d.Findings[i]
			}
		}
		return nil
	}
	d, _ := sweep()
	if f := find(d, "spine02", 33); f == nil || f.Severity != checks.Info || f.Basis != "absolute" {
		t.Fatalf("first sweep: want the absolute info (no previous sweep), got %+v", f)
	}
	// A span the simulator's counters grow measurably over.
	time.Sleep(time.Second)
	d, p := sweep()
	f := find(d, "spine02", 33)
	if f == nil || f.Severity != checks.Warning || f.Basis != "since-snapshot" || !strings.Contains(f.Title, "of the time since the last sweep (congestion)") ||
		!strings.Contains(f.Evidence[0].Text, "since the previous sweep at ") || !strings.Contains(f.Evidence[0].Text, "of the time stalled (warn at 20%)") {
		t.Fatalf("second sweep: want a warning on the share stalled since the previous sweep, got %+v\ncounters_basis %q", f, d.CountersBasis)
	}
	if !strings.Contains(d.CountersBasis, "congestion by the share of time stalled since") {
		t.Errorf("counters_basis %q does not say how congestion was judged", d.CountersBasis)
	}
	if !strings.Contains(p, `ibdoctor_finding_impact_score{check="counters.congestion",node="spine02",port="33"`) ||
		!regexp.MustCompile(`(?m)^ibdoctor_finding_severity\{check="counters.congestion",node="spine02",port="33",.*\} 2$`).MatchString(p) {
		t.Errorf("the textfile has no warning series for spine02/33's congestion:\n%s", p)
	}

	// The gate pairs with the sweep's snapshot the same way: gpu027's
	// own link is stalled about half the time.
	code, stdout, stderr := run("gate", "--sim", "--faults", faults, "--state-dir", state, "--nodes", "gpu027,gpu001")
	if code != ExitHealthy || !strings.Contains(stdout, "warning   counters.congestion   Port leaf07/23 (to gpu027 mlx5_6/1) could not send") ||
		!strings.Contains(stdout, "of the time since the last sweep (congestion)") {
		t.Errorf("gate: exit %d, want a congestion warning since the sweep on leaf07/23\n%s%s", code, stdout, stderr)
	}
}
